/* The path every wrapped call takes, and nothing else: enter, gather facts, check, decide,
 * (the front-end forwards), update the model, record, leave.  Everything that depends on the
 * operation is its row in the operations table (ops.c); every rule is in check.c. */
#define _GNU_SOURCE
#include "path/core.h"
#include "rules/check.h"
#include "path/facts.h"
#include "kernels/fallback.h"
#include "runtime/frontend.h"
#include "path/gpu_faults.h"
#include "path/init.h"
#include "kernels/kernel_info.h"
#include "kernels/ledger.h"
#include "kernels/redzones.h"
#include "shadow/shadow.h"
#include "path/model.h"
#include "path/ops.h"
#include "runtime/own_calls.h"
#include "findings/policy.h"
#include "findings/record.h"
#include "findings/report.h"
#include "rules/runtime_rules.h"
#include "process/stacks.h"
#include "process/stats.h"
#include "torch/torch_bridge.h"
#include "process/util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Set while this thread is inside a wrapper: the runtime's own calls back into wrapped entry
 * points are forwarded without being checked twice. */
static HS_TLS int in_wrapper;

HS_HOT_PATH bool hs_enter(void)
{
    if (in_wrapper)
        return false;
    hs_ensure_init();
    if (HS_UNLIKELY(!hs_tool_active()))
        return false;
    in_wrapper = 1;
    hs_own_thread.saved = false; /* a state saved outside any wrapper is no longer the program's */
    hs_count_call();
    return true;
}

HS_HOT_PATH void hs_leave(void)
{
    hs_own_end(); /* what hipshadow's own calls changed, put back before the program sees it */
    hs_stack_entry(0);
    in_wrapper = 0;
    if (HS_UNLIKELY(hs_redzones_on()))
        hs_redzone_leave();
}

/* ---- decide and report ---- */

static bool suppressed(const hs_call *c, hs_call_state *st, hs_kind kind)
{
    if (!st->stack)
        st->stack = hs_stack_capture_for_finding();
    const hs_kernel_info *k = c->op == HS_OP_LAUNCH ? hs_kernel_info_of(c) : NULL;
    return hs_policy_suppressed(kind, hs_frontend_active.api_names[c->api], k ? k->name : NULL, st->stack);
}

static void report_with(const hs_call *c, hs_call_state *st, const hs_finding *fi, hs_action action, bool has_result,
                        int result, const hs_suspects *suspects, const hs_cause *cause)
{
    hs_policy_count(fi);
    bool moves_data = c->op == HS_OP_COPY || c->op == HS_OP_MEMSET || c->op == HS_OP_LAUNCH;
    hs_event e = {
        .call = c,
        .facts = &st->facts,
        .finding = fi,
        .action = action,
        .has_result = has_result,
        .result = result,
        .earlier = st->findings,
        .n_earlier = has_result ? st->n_findings : 0,
        .stack = st->stack,
        .thread = hs_thread_id(),
        .time_ns = hs_now_ns(),
        .suspects = suspects,
        .pystack = hs_torch_python_stack(moves_data), /* the interpreter's stack, if any */
        .cause = cause && cause->rule ? cause->text : NULL,
        .cause_rule = cause ? cause->rule : NULL,
    };
    hs_record_finding(&e, st);
    hs_report_finding(&e);
}

static void report(const hs_call *c, hs_call_state *st, const hs_finding *fi, hs_action action, bool has_result,
                   int result)
{
    hs_suspects suspects; /* a device fault's suspects: the launches that have not completed */
    bool fault = hs_finding_is_device_fault(fi);
    if (fault)
        hs_ledger_suspects(&suspects);
    report_with(c, st, fi, action, has_result, result, fault ? &suspects : NULL, NULL);
}

/* redzones=N: read back the redzones that launches may have touched (only_base: one
 * allocation's, at its free); each overwritten one is kernel-out-of-bounds-write, with the
 * launches that had a pointer into it as suspects. */
static void check_redzones(const hs_call *c, hs_call_state *st, uintptr_t only_base)
{
    hs_redzone_damage damage[HS_REDZONE_MAX_DAMAGE];
    const hs_layer *layer = hs_layer_of(c->api);
    int n = hs_redzones_verify(layer, hs_own_current_device(layer), only_base, damage, HS_REDZONE_MAX_DAMAGE);
    for (int i = 0; i < n; i++) {
        hs_finding fi = hs_check_redzone(&damage[i]);
        hs_call_state about = *st; /* the finding is about the allocation, not this call's ranges */
        about.sides_stale = false;
        about.facts.src = (hs_side){0};
        about.facts.dst = (hs_side){.ptr = damage[i].alloc.base + damage[i].alloc.size + damage[i].first,
                                    .extent = damage[i].last - damage[i].first + 1,
                                    .where = HS_WHERE_LIVE};
        hs_shadow_lookup(damage[i].alloc.base, &about.facts.dst.alloc);
        about.facts.redzone_by_kernel = damage[i].by_kernel;
        if (suppressed(c, &about, fi.kind))
            continue;
        hs_suspects users;
        hs_ledger_users(damage[i].alloc.id, &users);
        report_with(c, &about, &fi, HS_ACTION_FORWARDED, false, 0, &users, NULL);
    }
}

/* redzones=N: at exit, the redzones launches touched since the last check are checked once more
 * (a kernel's last overflow is found even when the program never synchronised after it).  It
 * runs from exit(), before the handlers registered earlier, the runtime's teardown among them. */
static uint16_t exit_check_api;

static void check_redzones_at_exit(void *arg)
{
    (void)arg;
    if (!hs_tool_active() || !hs_enter())
        return;
    hs_call c = {.api = exit_check_api, .op = HS_OP_OTHER};
    hs_call_state st;
    memset(&st, 0, sizeof st);
    check_redzones(&c, &st, 0);
    hs_leave();
}

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso_handle);

static void check_redzones_at_exit_too(const hs_call *c)
{
    static atomic_flag registered = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&registered))
        return;
    exit_check_api = c->api;
    __cxa_atexit(check_redzones_at_exit, NULL, NULL);
}

/* serialize=1: wait for the launch just made; a fault now is this launch's. */
static void serialize_launch(const hs_call *c, hs_call_state *st)
{
    const hs_layer *layer = hs_layer_of(c->api);
    hs_suspects one = {.serialized = true};
    if (!layer->stream_sync || !hs_ledger_last(st->stream, &one.launch[0]))
        return;
    int r = hs_own_stream_sync(layer, c->stream);
    if (r == 0) {
        hs_order_complete(st->stream, one.launch[0].seq);
        return;
    }
    hs_sides_ready(st);
    hs_gather_result(c, st, r);
    hs_finding fi;
    if (!st->facts.device_fault || !hs_check_result(c, &st->facts, false, NULL, 0, &fi) ||
        !hs_policy_first_device_fault() || suppressed(c, st, fi.kind))
        return;
    one.n = 1;
    report_with(c, st, &fi, HS_ACTION_FORWARDED, true, r, &one, NULL);
}

/* Drops what is not to be said (info notes already said at this call site, suppressions),
 * lets the policy decide, reports, and aborts if the mode says so. */
static void decide(const hs_call *c, hs_call_state *st)
{
    int kept = 0;
    for (int i = 0; i < st->n_findings; i++) {
        const hs_finding *fi = &st->findings[i];
        if (fi->severity == HS_SEV_INFO && !hs_policy_first_at_site(c->caller))
            continue;
        if (!suppressed(c, st, fi->kind)) /* suppressed findings neither count nor decide */
            st->findings[kept++] = *fi;
    }
    st->n_findings = kept;
    st->decision = hs_policy_decide(st->findings, kept);
    hs_action action = st->decision == HS_FORWARD ? HS_ACTION_FORWARDED
                       : st->decision == HS_BLOCK ? HS_ACTION_BLOCKED
                                                  : HS_ACTION_ABORTED;
    for (int i = 0; i < kept; i++)
        report(c, st, &st->findings[i], action, false, 0);
    if (st->decision == HS_ABORT) {
        hs_report_flush();
        abort();
    }
}

/* ---- before forwarding ---- */

/* stats=1: the event kind of each checked call on the full path. */
static void count_op(hs_op op)
{
    hs_stat k = op == HS_OP_LAUNCH   ? HS_STAT_launch
                : op == HS_OP_COPY   ? HS_STAT_copy
                : op == HS_OP_MEMSET ? HS_STAT_memset
                : op == HS_OP_ALLOC  ? HS_STAT_alloc
                : op == HS_OP_FREE   ? HS_STAT_free
                : op == HS_OP_SYNC   ? HS_STAT_sync
                : op == HS_OP_EVENT_RECORD || op == HS_OP_STREAM_WAIT || op == HS_OP_EVENT_CREATE ||
                        op == HS_OP_EVENT_DESTROY
                    ? HS_STAT_event
                : op == HS_OP_STREAM_CREATE || op == HS_OP_STREAM_DESTROY ? HS_STAT_stream
                                                                          : HS_STAT_other;
    hs_stat_count(k);
}

HS_HOT static hs_decision before(const hs_call *c, hs_call_state *st, bool enqueue)
{
    if (HS_UNLIKELY(hs_stats_on))
        count_op(c->op);
    /* Every call pays this, so two parts are left as they are: the sync clock (512 bytes) and the
     * launch arguments (384), each valid only up to its count, which is cleared. */
    _Static_assert(offsetof(hs_call_state, facts) + offsetof(hs_facts, args) + sizeof st->facts.args <=
                       offsetof(hs_call_state, sync_clock),
                   "the launch arguments lie before the sync clock");
    _Static_assert(offsetof(hs_facts, src) == offsetof(hs_facts, dst) + sizeof(hs_side), "the sides are adjacent");
    const hs_op_row *row = &hs_ops[c->op];
    size_t args_at = offsetof(hs_call_state, facts) + offsetof(hs_facts, args);
    size_t args_end = args_at + sizeof st->facts.args;
    size_t sides_at = offsetof(hs_call_state, facts) + offsetof(hs_facts, dst);
    size_t sides_end = offsetof(hs_call_state, facts) + offsetof(hs_facts, src) + sizeof(hs_side);
    if (row->lazy_sides) {
        memset(st, 0, sides_at);
        memset((char *)st + sides_end, 0, args_at - sides_end);
    } else {
        memset(st, 0, args_at);
    }
    memset((char *)st + args_end, 0, offsetof(hs_call_state, sync_clock) - args_end);
    st->sides_stale = row->lazy_sides;
    st->sync_clock.n = 0;
    if (HS_UNLIKELY(hs_redzones_on())) {
        hs_redzone_enter(c);
        if (c->op == HS_OP_FREE && c->free_ptr)
            check_redzones(c, st, c->free_ptr); /* before the memory goes */
    }
    if (c->has_stream)
        hs_gather_stream_state(c, st);
    if (row->claim)
        row->claim(c, st);
    bool paused = row->pausable && HS_UNLIKELY(hs_paused());
    if (row->gather && !paused)
        row->gather(c, st);
    int n = hs_check_stream_handle(c, &st->facts, st->findings, HS_MAX_FINDINGS_PER_CALL);
    if (row->rules && !paused)
        n += row->rules(c, &st->facts, st->findings + n, HS_MAX_FINDINGS_PER_CALL - n);
    st->n_findings = n;
    if (HS_UNLIKELY(n)) {
        hs_sides_ready(st); /* the report reads them */
        decide(c, st);
    }
    if (HS_UNLIKELY(hs_fallback_always()) && st->decision == HS_FORWARD) {
        hs_sides_ready(st);
        if (hs_fallback_applies(c, st)) {
            st->rescued_result = hs_fallback_stage(c, st); /* staged instead of forwarded */
            st->decision = HS_RESCUED;
        }
    }
    if (st->decision != HS_FORWARD)
        hs_model_unclaim(c, st); /* a blocked free must not leave the allocation in quarantine */
    hs_record_start(st);
    if (row->log_before)
        row->log_before(c, st, paused);
    if (row->enqueue && st->decision == HS_FORWARD && enqueue)
        row->enqueue(c, st); /* a launch is in the ledger before the device can fault on it */
    return st->decision;
}

HS_HOT hs_decision hs_before(const hs_call *c, hs_call_state *st) { return before(c, st, true); }

int hs_after_refused_fast(const hs_call *c, uint64_t launch_seq, int result)
{
    hs_call_state st;
    before(c, &st, false);      /* the fast path made the enqueue (a launch's ledger record) */
    st.launch_seq = launch_seq; /* withdrawn, as the full path's refused launch is */
    return hs_after(c, &st, result);
}

/* ---- after the call ---- */

/* The runtime refused a call whose checks had already found an error in it: that finding is the
 * bug, and the refusal is said with it, not counted as a second one. */
static bool explained_by_findings(const hs_call *c, const hs_call_state *st, int result)
{
    const hs_finding *first = NULL; /* an error: a warning's call refused is still an error to count */
    for (int i = 0; i < st->n_findings && !first; i++)
        if (st->findings[i].severity == HS_SEV_ERROR)
            first = &st->findings[i];
    if (!first)
        return false;
    char line[256];
    snprintf(line, sizeof line, "%s then returned %s (%d), as the %s above explains",
             hs_frontend_active.api_names[c->api], hs_layer_of(c->api)->error_name(result), result,
             hs_kind_name(first->kind));
    hs_report_note(line);
    return true;
}

/* A refusal the checks found nothing wrong in (or only warnings): the runtime's rule that the
 * arguments break, from the table (runtime_rules.inc), with the current device's limits. */
static const hs_cause *explain_refusal(const hs_call *c, const hs_call_state *st, hs_cause *cause)
{
    const hs_layer *layer = hs_layer_of(c->api);
    int device = hs_own_current_device(layer);
    hs_rule_input in = {.call = c,
                        .facts = &st->facts,
                        .limits = hs_own_device_limits(layer, device),
                        .current_device = device,
                        .stream_device = hs_stream_device(c->has_stream ? c->stream : 0, device),
                        .event_device = c->event ? hs_event_device(c->event) : -1,
                        .kernels_on_current_device = layer->kernels_on_current_device};
    return hs_runtime_cause(&in, cause) ? cause : NULL;
}

HS_HOT int hs_after(const hs_call *c, hs_call_state *st, int result)
{
    const hs_op_row *row = &hs_ops[c->op];
    if (st->decision != HS_FORWARD)
        goto done;
    if (row->settle)
        row->settle(c, st);
    if (!hs_layer_of(c->api)->is_failure(result)) {
        hs_gpu_faults_after_success();
        if (result == 0 && row->apply) /* not a "not ready" answer: the call did what it says */
            row->apply(c, st);
        if (result == 0 && row->serialize && HS_UNLIKELY(hs_opts()->serialize))
            serialize_launch(c, st);
        if (result == 0 && c->op == HS_OP_LAUNCH && HS_UNLIKELY(hs_redzones_on()))
            check_redzones_at_exit_too(c);
        if (result == 0 && row->sync_point && HS_UNLIKELY(hs_redzones_on()) && (c->op == HS_OP_SYNC || !c->async))
            check_redzones(c, st, 0); /* the work before this point is done */
        goto done;
    }
    hs_sides_ready(st); /* a refusal is explained and reported from them */
    hs_finding fi;
    if (hs_fallback_applies(c, st) && hs_fallback_stage(c, st) == 0) {
        /* The runtime refused an in-bounds copy from a sub-buffer; hipshadow's kernel did it. */
        if (hs_check_result(c, &st->facts, true, st->findings, st->n_findings, &fi) && !suppressed(c, st, fi.kind))
            report(c, st, &fi, HS_ACTION_FALLBACK, true, result);
        result = 0;
        goto done;
    }
    hs_model_unclaim(c, st); /* the runtime refused a free: the memory is still live */
    hs_gather_result(c, st, result);
    if (row->explain)
        row->explain(c, st);
    hs_cause cause_buf;
    const hs_cause *cause = NULL;
    if (!hs_check_result(c, &st->facts, false, st->findings, st->n_findings, &fi)) {
        /* A refusal the program must expect (memory ran out), unless its arguments break one of
         * the runtime's rules: a negative size, a mapping of 0 bytes. */
        if (!(cause = explain_refusal(c, st, &cause_buf)))
            goto done;
        fi = (hs_finding){HS_KIND_RUNTIME_ERROR, HS_SEV_ERROR, HS_SIDE_NONE, 0, 0};
    }
    if (hs_finding_is_device_fault(&fi) && !hs_policy_first_device_fault())
        goto done; /* the same sticky fault, already reported with its suspects */
    if (fi.kind == HS_KIND_RUNTIME_ERROR && explained_by_findings(c, st, result))
        goto done; /* one bug, one finding: the refusal belongs to the finding made before forwarding */
    bool silenced = suppressed(c, st, fi.kind);
    if (!silenced && fi.kind == HS_KIND_RUNTIME_ERROR)
        report_with(c, st, &fi, HS_ACTION_FORWARDED, true, result, NULL,
                    cause ? cause : explain_refusal(c, st, &cause_buf));
    else if (!silenced)
        report(c, st, &fi, HS_ACTION_FORWARDED, true, result);
    if (row->log_after)
        row->log_after(c, st, result);
    if (!silenced && hs_opts()->mode == HS_MODE_ABORT) {
        hs_report_flush();
        abort();
    }
    return result;
done:
    if (row->log_after)
        row->log_after(c, st, result);
    return result;
}
