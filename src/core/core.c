/* The one path every wrapper takes: enter (guard), before (describe, check, decide), the
 * front-end forwards, after (update the model, runtime-error, record), leave. */
#define _GNU_SOURCE
#include "core.h"
#include "fallback.h"
#include "frontend.h"
#include "hostmem.h"
#include "ordering.h"
#include "record.h"
#include "regions.h"
#include "report.h"
#include "shadow.h"
#include "stacks.h"
#include "streams.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

extern bool hs_ready;       /* init.c: set once everything is initialised */
extern atomic_bool hs_disabled;
extern atomic_bool hs_used; /* a wrapped call happened: the exit summary is worth printing */
extern atomic_int hs_pause_depth; /* public_api.c */

/* Set while this thread is inside a wrapper: the runtime's own calls back into wrapped entry
 * points are forwarded without being checked twice. */
static HS_TLS int in_wrapper;

/* Checked calls, for the exit summary: counted per thread, added up in batches (no shared
 * cache line per call). */
atomic_uint_fast64_t hs_checked_calls;
static HS_TLS unsigned calls_here;

bool hs_enter(void)
{
    if (in_wrapper)
        return false;
    hs_ensure_init();
    if (HS_UNLIKELY(!hs_ready || atomic_load_explicit(&hs_disabled, memory_order_relaxed)))
        return false;
    in_wrapper = 1;
    if (HS_UNLIKELY(!atomic_load_explicit(&hs_used, memory_order_relaxed)))
        atomic_store(&hs_used, true);
    if (HS_UNLIKELY(++calls_here == 256)) {
        atomic_fetch_add_explicit(&hs_checked_calls, calls_here, memory_order_relaxed);
        calls_here = 0;
    }
    return true;
}

void hs_leave(void) { in_wrapper = 0; }

uint64_t hs_calls_seen(void)
{
    uint64_t n = atomic_load(&hs_checked_calls) + calls_here; /* other threads' last < 256 are not counted */
    return n;
}

/* ---- facts ---- */

static void describe_side(hs_side *s, uintptr_t ptr, size_t extent)
{
    s->ptr = ptr;
    s->extent = extent;
    if (!ptr)
        return;
    s->where = hs_shadow_lookup(ptr, &s->alloc);
    if (s->where == HS_WHERE_LIVE && HS_UNLIKELY(hs_regions_any()))
        s->in_region = hs_region_find(ptr, &s->region);
}

/* Cold-ish: only for pointers the shadow map does not know. */
static void ask_runtime(hs_side *s)
{
    if (!s->ptr || s->where != HS_WHERE_NONE || !hs_opts()->query_runtime || !hs_frontend_active.query_pointer)
        return;
    hs_span span = {0};
    if (hs_frontend_active.query_pointer(s->ptr, &span)) {
        span.kind = HS_MEM_EXTERNAL_DEVICE;
        span.api = 0xffff;
        s->alloc = span;
        s->runtime_known = true;
    }
}

static void probe_host(hs_side *s, bool write)
{
    if (!s->ptr || s->where == HS_WHERE_LIVE || s->runtime_known || !hs_opts()->check_host)
        return;
    hs_host_fact fact;
    hs_host_check(s->ptr, s->extent, write, &fact);
    if (s->where == HS_WHERE_FREED) {
        /* With unified addressing, malloc may hand out addresses a freed device allocation had:
         * accessible host memory there is host memory, not a use-after-free. */
        if (fact.status != HS_HOST_OK)
            return;
        s->where = HS_WHERE_NONE;
    }
    s->host_checked = true;
    s->host = fact;
}

static void gather_memory_facts(const hs_call *c, hs_facts *f)
{
    describe_side(&f->dst, c->dst, c->dst_extent ? c->dst_extent : c->bytes);
    if (c->op == HS_OP_COPY)
        describe_side(&f->src, c->src, c->src_extent ? c->src_extent : c->bytes);
    if (c->bytes == 0)
        return;
    if (c->op == HS_OP_MEMSET) {
        ask_runtime(&f->dst);
        return;
    }
    /* hipMemcpyDefault needs to know every side before it can pick a direction. */
    if (c->dir == HS_DIR_DEFAULT) {
        ask_runtime(&f->dst);
        ask_runtime(&f->src);
    }
    f->dir = hs_effective_direction(c->dir, &f->dst, &f->src);
    if (hs_role_of(f->dir, HS_SIDE_SRC) == 1)
        ask_runtime(&f->src);
    else
        probe_host(&f->src, false);
    if (hs_role_of(f->dir, HS_SIDE_DST) == 1)
        ask_runtime(&f->dst);
    else
        probe_host(&f->dst, true);
}

/* ---- findings ---- */

static bool suppressed(const hs_call *c, hs_call_state *st, hs_kind kind)
{
    if (!st->stack)
        st->stack = hs_stack_capture();
    return hs_policy_suppressed(kind, hs_frontend_active.api_names[c->api], st->stack);
}

static void report(const hs_call *c, hs_call_state *st, const hs_finding *fi, hs_action action,
                   bool has_result, int result)
{
    hs_policy_count(fi);
    hs_event e = {
        .call = c, .facts = &st->facts, .finding = fi, .action = action, .has_result = has_result,
        .result = result, .earlier = st->findings, .n_earlier = fi->kind == HS_KIND_RUNTIME_ERROR ? st->n_findings : 0,
        .stack = st->stack, .thread = hs_thread_id(), .time_ns = hs_now_ns(),
    };
    hs_record_finding(&e, st);
    hs_report_finding(&e);
}

static void finish_findings(const hs_call *c, hs_call_state *st)
{
    /* Suppressed findings neither count nor decide: drop them first. */
    int kept = 0;
    for (int i = 0; i < st->n_findings; i++)
        if (!suppressed(c, st, st->findings[i].kind))
            st->findings[kept++] = st->findings[i];
    st->n_findings = kept;
    st->decision = hs_policy_decide(st->findings, kept);
    hs_action action = st->decision == HS_FORWARD ? HS_ACTION_FORWARDED
                     : st->decision == HS_BLOCK   ? HS_ACTION_BLOCKED
                                                  : HS_ACTION_ABORTED;
    for (int i = 0; i < kept; i++)
        report(c, st, &st->findings[i], action, false, 0);
    if (st->decision == HS_ABORT) {
        hs_report_flush();
        abort();
    }
}

static void add_finding(hs_call_state *st, hs_kind kind, hs_side_id side)
{
    if (st->n_findings < HS_MAX_FINDINGS_PER_CALL)
        st->findings[st->n_findings++] = (hs_finding){kind, hs_kind_severity(kind), side, 0, 0};
}

/* Info notes are said once per call site (the program's return address). */
static bool first_time_at(uintptr_t caller)
{
    enum { SLOTS = 4096 };
    static _Atomic uintptr_t seen[SLOTS];
    if (!caller)
        return true;
    for (unsigned i = 0, h = (unsigned)(caller >> 4) % SLOTS; i < 64; i++, h = (h + 1) % SLOTS) {
        uintptr_t expected = 0;
        if (atomic_load_explicit(&seen[h], memory_order_relaxed) == caller)
            return false;
        if (atomic_compare_exchange_strong(&seen[h], &expected, caller))
            return true;
        if (expected == caller)
            return false;
    }
    return false; /* table crowded: stay quiet rather than flood */
}

/* ---- streams: capture, pending work, overlaps ---- */

static uintptr_t any_capturing_stream(void)
{
    uint32_t n = hs_stream_count();
    for (uint32_t i = 0; i < n; i++) {
        hs_stream *s = hs_stream_by_index(i);
        if (s && atomic_load(&s->capturing))
            return s->handle;
    }
    return 0;
}

static bool is_sync_like(const hs_call *c)
{
    return ((c->op == HS_OP_COPY || c->op == HS_OP_MEMSET) && !c->async) ||
           (c->op == HS_OP_SYNC && c->sync != HS_SYNC_EVENT);
}

static void describe_pending(const hs_call *c, const hs_facts *f, hs_pending_op *op)
{
    memset(op, 0, sizeof *op);
    op->time_ns = hs_now_ns();
    op->thread = hs_thread_id();
    op->api = c->api;
    op->bytes = c->bytes;
    op->dir = (uint8_t)f->dir;
    const hs_side *sides[2] = {&f->dst, &f->src};
    for (int i = 0; i < 2; i++) {
        const hs_side *s = sides[i];
        if (!s->ptr)
            continue;
        bool device = s->where != HS_WHERE_NONE ? hs_mem_kind_is_device(s->alloc.kind) && s->alloc.kind != HS_MEM_MANAGED
                                                : s->runtime_known;
        if (s->where == HS_WHERE_LIVE)
            op->alloc_ids[i] = s->alloc.id;
        if (!device && op->host_hi == op->host_lo) { /* the host side: what others must not touch */
            op->host_lo = s->ptr;
            op->host_hi = s->ptr + s->extent;
            op->host_write = i == 0;
        }
    }
}

static void stream_checks(const hs_call *c, hs_call_state *st)
{
    if (st->facts.stream_state != HS_STREAM_OK)
        return;
    hs_stream *s = st->stream = hs_stream_get(c->has_stream ? c->stream : 0);
    if (!s)
        return;
    if (HS_UNLIKELY(hs_order_capturing_streams()) && is_sync_like(c)) {
        bool legacy = s == hs_stream_null();
        if (atomic_load(&s->capturing))
            st->facts.capturing_stream = s->handle;
        else if (legacy || (c->op == HS_OP_SYNC && c->sync == HS_SYNC_DEVICE))
            st->facts.capturing_stream = any_capturing_stream();
        if (st->facts.capturing_stream || atomic_load(&s->capturing))
            add_finding(st, HS_KIND_CAPTURE_VIOLATION, HS_SIDE_NONE);
    }
    if ((c->op == HS_OP_COPY || c->op == HS_OP_MEMSET) && c->async && c->bytes) {
        describe_pending(c, &st->facts, &st->pending);
        st->has_pending = true;
        hs_order_find_overlap(s, &st->pending, &st->facts.conflict);
        if (st->facts.conflict.found)
            add_finding(st, HS_KIND_ASYNC_OVERLAP, st->pending.host_write ? HS_SIDE_DST : HS_SIDE_SRC);
        const hs_side *d = &st->facts.dst;
        if (HS_UNLIKELY(hs_opts()->notes) && c->op == HS_OP_COPY && st->facts.dir == HS_DIR_D2H && d->host_checked &&
            d->host.status == HS_HOST_OK && first_time_at(c->caller))
            add_finding(st, HS_KIND_PAGEABLE_ASYNC, HS_SIDE_DST);
    }
    if (is_sync_like(c))
        hs_order_snapshot(s, &st->sync_clock);
}

/* ---- frees ---- */

static void before_free(const hs_call *c, hs_call_state *st)
{
    if (!c->free_ptr)
        return; /* freeing NULL is a no-op in both runtimes */
    uint32_t stack = hs_stack_capture();
    hs_span span;
    hs_release_result r = hs_shadow_release(c->free_ptr, stack, hs_thread_id(), hs_now_ns(), &span);
    st->facts.dst.ptr = c->free_ptr;
    if (r == HS_RELEASED) {
        st->freed = span;
        st->released = true;
        /* Memory still in use by async work that nothing orders before this free. */
        bool host = hs_mem_kind_is_host(span.kind) && span.kind != HS_MEM_MANAGED;
        if (host || c->async) {
            hs_stream *s = c->async && st->facts.stream_state == HS_STREAM_OK ? hs_stream_get(c->stream) : NULL;
            hs_order_find_user(host ? NULL : s, host ? 0 : span.id, host ? span.base : 0,
                               host ? span.base + span.size : 0, &st->facts.conflict);
            if (st->facts.conflict.found) {
                st->stack = stack;
                st->facts.dst.where = HS_WHERE_LIVE;
                st->facts.dst.alloc = span;
                add_finding(st, HS_KIND_FREE_WHILE_PENDING, HS_SIDE_DST);
            }
        }
        return;
    }
    st->stack = stack;
    st->facts.dst.alloc = span;
    st->facts.dst.where = r == HS_RELEASE_TWICE ? HS_WHERE_FREED : r == HS_RELEASE_INTERIOR ? HS_WHERE_LIVE : HS_WHERE_NONE;
    if (r == HS_RELEASE_UNKNOWN) {
        /* Memory from an unwrapped path (or from before hipshadow was loaded) is not an error. */
        ask_runtime(&st->facts.dst);
        if (st->facts.dst.runtime_known)
            return;
    }
    add_finding(st, HS_KIND_INVALID_FREE, HS_SIDE_DST);
}

/* ---- before forwarding ---- */

hs_decision hs_before(const hs_call *c, hs_call_state *st)
{
    memset(st, 0, sizeof *st);
    bool paused = false;
    if (c->has_stream) {
        st->facts.stream_state = hs_stream_state_of(c->stream, &st->facts.stream_info);
        if (st->facts.stream_state != HS_STREAM_OK && c->op != HS_OP_STREAM_DESTROY)
            add_finding(st, HS_KIND_INVALID_STREAM, HS_SIDE_NONE);
    }
    switch (c->op) {
    case HS_OP_COPY:
    case HS_OP_MEMSET:
        if (HS_UNLIKELY(atomic_load_explicit(&hs_pause_depth, memory_order_relaxed) > 0)) {
            paused = true;
            break;
        }
        gather_memory_facts(c, &st->facts);
        st->n_findings += hs_check_memory_op(c, &st->facts, st->findings + st->n_findings,
                                             HS_MAX_FINDINGS_PER_CALL - st->n_findings);
        stream_checks(c, st);
        break;
    case HS_OP_SYNC:
        stream_checks(c, st);
        break;
    case HS_OP_FREE:
        before_free(c, st);
        break;
    case HS_OP_STREAM_DESTROY: {
        uint32_t stack = hs_stack_capture();
        st->facts.stream_state = hs_stream_destroyed(c->stream, stack, hs_thread_id(), hs_now_ns(), &st->facts.stream_info);
        if (st->facts.stream_state != HS_STREAM_OK) {
            st->stack = stack;
            add_finding(st, HS_KIND_INVALID_STREAM, HS_SIDE_NONE);
        }
        break;
    }
    default:
        break;
    }
    if (HS_UNLIKELY(st->n_findings))
        finish_findings(c, st);
    if (HS_UNLIKELY(hs_fallback_always()) && st->decision == HS_FORWARD && hs_fallback_applies(c, st)) {
        st->rescued_result = hs_fallback_stage(c, st); /* staged instead of forwarded */
        st->decision = HS_RESCUED;
    }
    /* A blocked free must not leave the allocation in quarantine. */
    if (st->decision != HS_FORWARD && st->released)
        hs_shadow_restore(&st->freed);
    hs_record_before(c, st, paused);
    return st->decision;
}

/* ---- after the call ---- */

static void after_alloc(const hs_call *c, hs_call_state *st)
{
    uintptr_t base = c->register_ptr ? c->register_ptr : (c->out_ptr ? (uintptr_t)*c->out_ptr : 0);
    if (!base)
        return;
    size_t size = c->out_pitch ? *c->out_pitch * c->alloc_rows : c->alloc_bytes;
    hs_span s = {
        .base = base, .size = size, .kind = c->mem_kind, .api = c->api, .device = 0, .owner = c->pool,
        .stack = hs_stack_capture(), .thread = hs_thread_id(), .time_ns = hs_now_ns(),
    };
    if (hs_shadow_add(&s) != 0)
        hs_disable("out of memory for the shadow map");
    st->allocated = s;
}

/* Keeps the stream model in step with what the runtime did. */
static void after_success(const hs_call *c, hs_call_state *st)
{
    hs_stream *s = st->stream;
    switch (c->op) {
    case HS_OP_ALLOC:
        after_alloc(c, st);
        break;
    case HS_OP_STREAM_CREATE:
        if (c->out_stream)
            hs_stream_created(*(uintptr_t *)c->out_stream, c->stream_flags, st->stack = hs_stack_capture(),
                              hs_thread_id(), hs_now_ns());
        break;
    case HS_OP_COPY:
    case HS_OP_MEMSET:
        if (st->has_pending && s)
            hs_order_append(s, &st->pending);
        else if (!c->async && s) { /* a synchronous copy: the stream's earlier work is done */
            hs_order_complete_clock(&st->sync_clock);
            if (s == hs_stream_null())
                hs_order_complete_legacy();
        }
        break;
    case HS_OP_SYNC:
        if (c->sync == HS_SYNC_DEVICE)
            hs_order_complete_device();
        else if (c->sync == HS_SYNC_EVENT) {
            hs_gpu_event *e = hs_event_get(c->event);
            if (e)
                hs_order_event_complete(e);
        } else if (s) {
            hs_order_complete_clock(&st->sync_clock);
            if (s == hs_stream_null())
                hs_order_complete_legacy();
        }
        break;
    case HS_OP_FREE:
        if (st->released && !c->async && hs_mem_kind_is_device(st->freed.kind))
            hs_order_complete_device(); /* hipFree / cudaFree synchronise the device */
        break;
    case HS_OP_EVENT_CREATE:
        if (c->out_event)
            hs_event_created(*(uintptr_t *)c->out_event);
        break;
    case HS_OP_EVENT_DESTROY:
        hs_event_destroyed(c->event);
        break;
    case HS_OP_EVENT_RECORD: {
        hs_gpu_event *e = hs_event_get(c->event);
        hs_stream *on = hs_stream_get(c->stream);
        if (e && on)
            hs_order_event_record(e, on);
        break;
    }
    case HS_OP_STREAM_WAIT: {
        hs_gpu_event *e = hs_event_get(c->event);
        hs_stream *on = hs_stream_get(c->stream);
        if (e && on)
            hs_order_stream_wait(on, e);
        break;
    }
    case HS_OP_CAPTURE_BEGIN: {
        hs_stream *on = hs_stream_get(c->stream);
        if (on)
            hs_order_capture(on, true, c->capture_mode);
        break;
    }
    case HS_OP_POOL_DESTROY:
        hs_shadow_release_owned(c->pool, hs_stack_capture(), hs_thread_id(), hs_now_ns());
        break;
    default:
        break;
    }
}

int hs_after(const hs_call *c, hs_call_state *st, int result)
{
    if (st->decision != HS_FORWARD) {
        hs_record_after(c, st, result);
        return result;
    }
    if (c->op == HS_OP_CAPTURE_END) { /* capture ends whatever the runtime says */
        hs_stream *on = hs_stream_get(c->stream);
        if (on)
            hs_order_capture(on, false, 0);
    }
    if (!hs_frontend_active.is_failure(result)) {
        if (result == 0) /* not a "not ready" answer: the call did what it says */
            after_success(c, st);
        hs_record_after(c, st, result);
        return result;
    }
    if (hs_fallback_applies(c, st) && hs_fallback_stage(c, st) == 0) {
        /* The runtime refused an in-bounds copy from a sub-buffer; hipshadow's kernel did it. */
        hs_finding fi = {HS_KIND_RUNTIME_ERROR, HS_SEV_WARNING, HS_SIDE_SRC, 0, 0};
        if (!suppressed(c, st, fi.kind))
            report(c, st, &fi, HS_ACTION_FALLBACK, true, result);
        hs_record_after(c, st, 0);
        return 0;
    }
    if (st->released)
        hs_shadow_restore(&st->freed); /* the runtime refused the free: the memory is still live */
    if (c->op == HS_OP_COPY || c->op == HS_OP_MEMSET) {
        /* Learn what the fast path skipped, so the record carries every fact. */
        ask_runtime(&st->facts.dst);
        ask_runtime(&st->facts.src);
    }
    hs_finding fi = {HS_KIND_RUNTIME_ERROR, HS_SEV_ERROR, HS_SIDE_NONE, 0, 0};
    for (int i = 0; i < st->n_findings; i++)
        if (st->findings[i].side) { /* point at the side the checks blamed */
            fi.side = st->findings[i].side;
            break;
        }
    bool silenced = suppressed(c, st, fi.kind);
    if (!silenced)
        report(c, st, &fi, HS_ACTION_FORWARDED, true, result);
    hs_record_after(c, st, result);
    if (!silenced && hs_opts()->mode == HS_MODE_ABORT) {
        hs_report_flush();
        abort();
    }
    return result;
}
