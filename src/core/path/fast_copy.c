/* The fast path of a clean copy (see fast_copy.h).
 *
 * The full path (core.c) clears a call state of about 1.6 KiB, copies each side's 80-byte
 * record out of the shadow map, and takes the legacy stream's lock for its clock: a few hundred
 * nanoseconds, most of it cache misses at a million allocations.  Here each side of a
 * synchronous copy is one brief lookup (hs_shadow_brief: the map's slot and bucket, no record)
 * and, for a host side, the host probe's per-thread cache; each side of an async device copy is
 * one lookup through the per-thread find cache (its allocation's id goes into the pending
 * operation, for a later free to be checked against).  The rules' brief form says whether
 * anything could be wrong.  Any doubt returns false and the full path decides, so findings never
 * depend on this file. */
#include "path/fast_copy.h"
#include "streams/access.h"
#include "torch/torch_bridge.h"
#include "rules/check.h"
#include "path/core.h"
#include "path/facts.h"
#include "kernels/fallback.h"
#include "runtime/frontend.h"
#include "path/gpu_faults.h"
#include "path/init.h"
#include "process/log.h"
#include "process/stats.h"
#include "streams/ordering.h"
#include "kernels/redzones.h"
#include "shadow/regions.h"
#include "shadow/shadow.h"
#include "shadow/vmm.h"

/* What describe_side and probe_host (facts.c) would find for one side, from the briefs; false
 * when they would need more (freed memory, a reservation, a range the brief cannot place). */
static bool brief_side(uintptr_t ptr, size_t extent, bool host_role, bool write, hs_brief_side *out)
{
    hs_where where;
    uint32_t kind = 0;
    if (!hs_shadow_brief(ptr, extent, &where, &kind))
        return false;
    *out = (hs_brief_side){.live = where == HS_WHERE_LIVE, .kind = kind};
    if (out->live)
        return true;
    hs_span reservation;
    if (hs_vmm_reservation_of(ptr, &reservation))
        return false; /* reserved but unmapped: the full path names the nearest map */
    if (!host_role)
        return true; /* a device side in no allocation: the rules refuse it, the full path asks the runtime */
    hs_host_fact fact;
    out->host_ok = !hs_opts()->check_host || hs_host_check(ptr, extent, write, &fact) == HS_HOST_OK;
    return true;
}

/* Nothing switched on that the full path does more for: the log, redzones, staging every copy,
 * a pause, annotated regions, allocations split into blocks, graph capture. */
static bool full_path_not_needed(void)
{
    return hs_opts()->fast_copies && !hs_log_on() && !hs_redzones_on() && !hs_fallback_always() && !hs_paused() &&
           !hs_regions_any() && !hs_torch_splits_allocations() && !hs_order_capturing_streams();
}

/* One side of an async device copy: a live device allocation holding the whole range. */
static bool device_side(uintptr_t ptr, size_t bytes, hs_brief_side *out, hs_span *alloc)
{
    if (hs_shadow_lookup(ptr, alloc) != HS_WHERE_LIVE || ptr + bytes < ptr || ptr + bytes > alloc->base + alloc->size)
        return false; /* freed, in none, or past its end (a mapped range may run on: the full path follows it) */
    *out = (hs_brief_side){.live = true, .kind = alloc->kind};
    return true;
}

/* An async copy between two device allocations: what describe_pending (facts.c) and the access
 * gather (accesses.c) make of it. */
static bool async_device_copy_clean(const hs_copy_args *a, hs_fast_copy *fc)
{
    if (a->dir != HS_DIR_D2D)
        return false; /* a host side: another stream's copy may overlap it, the full path looks */
    hs_stream *s = a->has_stream ? hs_stream_live(a->stream) : hs_stream_null();
    hs_brief_side dst, src;
    hs_access_copy *w = &fc->where;
    if (!s || !device_side(a->dst, a->bytes, &dst, &w->dst) || !device_side(a->src, a->bytes, &src, &w->src) ||
        !hs_check_copy_brief_clean(a->dir, &dst, &src))
        return false;
    if (HS_UNLIKELY(!hs_access_races()))
        hs_access_stream_seen(s, false); /* as the full path: a second stream turns the access history on */
    fc->accesses = hs_access_tracking();
    if (fc->accesses && !hs_accesses_copy_unsearched(s))
        return false; /* the full path searches the histories, and says what it finds */
    fc->stream = s;
    fc->op = hs_pending_of(a->api, a->bytes, a->dir);
    fc->op.alloc_ids[0] = w->dst.id;
    fc->op.alloc_ids[1] = w->src.id;
    w->dst_ptr = a->dst;
    w->src_ptr = a->src;
    w->stream = a->has_stream ? a->stream : 0;
    w->caller = a->caller;
    w->bytes = a->bytes;
    w->api = a->api;
    return true;
}

HS_HOT bool hs_fast_copy_clean(const hs_copy_args *a, hs_fast_copy *fc)
{
    if (!a->bytes || a->dst_extent || a->src_extent || !a->dst || !a->src || a->dir < HS_DIR_H2H ||
        a->dir > HS_DIR_D2D || !full_path_not_needed())
        return false;
    if (a->async)
        return async_device_copy_clean(a, fc);
    if (a->has_stream || hs_access_tracking())
        return false; /* a synchronous copy on a stream of its own: the full path takes its clock; with
                       * the access history kept, it remembers the copy's accesses */
    fc->stream = NULL;
    fc->accesses = false;
    hs_brief_side dst, src;
    return brief_side(a->dst, a->bytes, hs_role_of(a->dir, HS_SIDE_DST) == HS_ROLE_HOST, true, &dst) &&
           brief_side(a->src, a->bytes, hs_role_of(a->dir, HS_SIDE_SRC) == HS_ROLE_HOST, false, &src) &&
           hs_check_copy_brief_clean(a->dir, &dst, &src) && hs_order_legacy_idle();
}

HS_HOT bool hs_fast_copy_done(uint16_t api, hs_fast_copy *fc, int result)
{
    if (HS_UNLIKELY(hs_layer_of(api)->is_failure(result)))
        return false;
    hs_gpu_faults_after_success();
    hs_stat_count(fc->stream ? HS_STAT_copy_async_fast : HS_STAT_copy_fast);
    if (fc->stream) {
        if (result != 0)
            return true; /* a success other than 0 ("not ready"; copies give none): no model, as on the full path */
        hs_order_append(fc->stream, &fc->op); /* pending on its stream until it is synchronised */
        if (fc->accesses)
            hs_accesses_copy_forwarded(fc->stream, &fc->where, fc->op.seq);
        return true;
    }
    /* As the full path's model: a synchronous copy on the legacy stream drains it and every
     * blocking stream (work another thread enqueued during the copy included). */
    hs_order_complete_legacy();
    return true;
}
