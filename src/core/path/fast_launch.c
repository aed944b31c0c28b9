/* The fast path of a clean kernel launch (see fast_launch.h).
 *
 * The full path clears about 1.2 KiB of call state, dispatches through the operations table and
 * runs the after-call steps of every operation; a launch reads a few dozen bytes of that state
 * and has nothing to do after the call unless the runtime refused it.  Here the gather, the
 * rules and the model are the full path's own functions, called directly. */
#include "path/fast_launch.h"
#include "path/core.h"
#include "path/facts.h"
#include "path/gpu_faults.h"
#include "path/model.h"
#include "kernels/fallback.h"
#include "kernels/kernel_info.h"
#include "kernels/redzones.h"
#include "process/log.h"
#include "path/init.h"
#include "process/stats.h"
#include "rules/check.h"
#include "runtime/frontend.h"
#include "streams/streams.h"

/* Nothing switched on that the full path does more for at a launch. */
static bool full_path_not_needed(void)
{
    const hs_options *o = hs_opts();
    return !hs_log_on() && !hs_redzones_on() && !hs_fallback_always() && !o->serialize && !o->launch_stacks;
}

HS_HOT_PATH bool hs_fast_launch(const hs_call *c, uint64_t *launch_seq)
{
    hs_call_state state; /* only what a launch reads of it is set */
    hs_call_state *st = &state;
    if ((c->kernel_ref != HS_KREF_STUB && c->kernel_ref != HS_KREF_FUNCTION) || !c->kernel || !full_path_not_needed() ||
        !hs_kernel_info_known(c->kernel))
        return false; /* a kernel not seen before: the full path asks the runtime about it */
    /* what the gather, the rules and the model read of the state */
    hs_facts *f = &st->facts;
    f->n_args = 0;
    f->access = NULL;
    f->has_pending = false;
    f->capturing_stream = 0;
    f->own_stream_capturing = false;
    st->sides_stale = true;
    st->stack = 0;
    st->n_findings = 0;
    st->decision = HS_FORWARD;
    st->launch_seq = 0;
    st->host_box = NULL;
    f->stream_state = HS_STREAM_OK;
    if (!(st->stream = c->has_stream ? hs_stream_live(c->stream) : hs_stream_null()))
        return false; /* an invalid stream (the full path reports it), or one not modelled */
    /* A launch is not sync-like (no capture rule, no pending copy) and the unsearched gather holds
     * no access finding, so the rules can only flag an argument: one in freed memory, a freed
     * block or a freed region, and the gather readies the sides for each of those (note_arg).
     * While they stay untouched (the memo's arguments always: live allocations outside blocks
     * and regions), the rules would find nothing and are not run. */
    if (!hs_gather_launch_unsearched(c, st) ||
        (!st->sides_stale && hs_check_launch(c, f, st->findings, HS_MAX_FINDINGS_PER_CALL)))
        return false;
    if (HS_UNLIKELY(hs_stats_on)) {
        hs_stat_count(HS_STAT_launch); /* every launch, as the full path counts them */
        hs_stat_count(HS_STAT_launch_fast);
    }
    hs_model_launch(c, st); /* in the ledger before the device can fault on it */
    *launch_seq = st->launch_seq;
    return true;
}

HS_HOT_PATH int hs_fast_launch_done(const hs_call *c, uint64_t launch_seq, int result)
{
    if (HS_LIKELY(!hs_layer_of(c->api)->is_failure(result))) {
        hs_gpu_faults_after_success();
        return result;
    }
    return hs_after_refused_fast(c, launch_seq, result);
}
