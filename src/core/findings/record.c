#include "findings/record.h"
#include "findings/report.h"
#include "runtime/frontend.h"
#include "kernels/kernel_info.h"
#include "process/log.h"
#include "process/util.h"

#include <stdatomic.h>
#include <string.h>

static atomic_uint finding_seq;

/* A record of `type` with every field after the header zeroed; NULL when logging is off. */
static void *begin_zeroed(uint16_t type, uint32_t size)
{
    uint8_t *r = hs_log_begin(type, size);
    if (r)
        memset(r + sizeof(hs_log_record_header), 0, size - sizeof(hs_log_record_header));
    return r;
}

static uint64_t alloc_id_of(const hs_side *s)
{
    return s->where == HS_WHERE_LIVE || s->where == HS_WHERE_FREED ? s->alloc.id : 0;
}
static uint64_t offset_of(const hs_side *s)
{
    return (s->where != HS_WHERE_NONE || s->runtime_known || s->unmapped) && s->ptr >= s->alloc.base
               ? s->ptr - s->alloc.base
               : 0;
}

void hs_record_start(hs_call_state *st)
{
    if (hs_log_on())
        hs_call_time(st); /* no clock read on the copy path when nothing is logged */
}

void hs_record_copy_start(const hs_call *c, hs_call_state *st, bool paused)
{
    if (!hs_log_on())
        return;
    hs_log_copy *r = hs_log_begin(c->op == HS_OP_COPY ? HS_LOG_COPY : HS_LOG_MEMSET, sizeof *r);
    if (!r)
        return;
    const hs_facts *f = &st->facts;
    r->start_ns = st->start_ns;
    r->end_ns = 0;
    r->thread = hs_thread_id();
    r->api = c->api;
    r->direction = (uint8_t)(paused || c->op == HS_OP_MEMSET ? c->dir : f->dir);
    r->flags = (uint8_t)((c->async ? 1 : 0) | (st->decision == HS_BLOCK ? 2 : 0) | (paused ? 4 : 0));
    r->stream = c->stream;
    r->dst = c->dst;
    r->src = c->src;
    r->bytes = c->bytes;
    r->dst_alloc = alloc_id_of(&f->dst);
    r->dst_offset = offset_of(&f->dst);
    r->src_alloc = c->op == HS_OP_COPY ? alloc_id_of(&f->src) : 0;
    r->src_offset = c->op == HS_OP_COPY ? offset_of(&f->src) : 0;
    r->result = HS_LOG_RESULT_PENDING;
    r->first_finding = st->first_finding;
    hs_log_commit(r);
    st->log_record = r;
}

void hs_record_copy_end(const hs_call *c, hs_call_state *st, int result)
{
    (void)c;
    if (!hs_log_on() || !hs_log_still_mine(st->log_record))
        return;
    hs_log_copy *r = st->log_record;
    r->end_ns = hs_now_ns();
    r->result = result;
    if (st->fallback_used)
        r->flags |= 8;
    if (!r->first_finding)
        r->first_finding = st->first_finding;
}

void hs_record_alloc(const hs_call *c, hs_call_state *st, int result)
{
    hs_log_alloc *r = begin_zeroed(HS_LOG_ALLOC, sizeof *r);
    if (!r)
        return;
    r->time_ns = st->start_ns;
    r->thread = hs_thread_id();
    r->api = c->api;
    r->mem_kind = (uint8_t)c->mem_kind;
    r->device = st->allocated.device;
    r->stack = st->allocated.stack;
    r->id = st->allocated.id;
    r->base = st->allocated.base;
    r->size = st->allocated.size;
    r->stream = c->stream;
    r->result = result;
    hs_log_commit(r);
}

void hs_record_free(const hs_call *c, hs_call_state *st, int result)
{
    hs_log_free *r = begin_zeroed(HS_LOG_FREE, sizeof *r);
    if (!r)
        return;
    r->time_ns = st->start_ns;
    r->thread = hs_thread_id();
    r->api = c->api;
    r->stack = st->released ? st->freed.end_stack : st->stack;
    r->result = result;
    r->id = st->released ? st->freed.id : 0;
    r->base = c->free_ptr;
    r->stream = c->stream;
    hs_log_commit(r);
}

void hs_record_sync(const hs_call *c, hs_call_state *st, int result)
{
    hs_log_sync *r = begin_zeroed(HS_LOG_SYNC, sizeof *r);
    if (!r)
        return;
    r->start_ns = st->start_ns;
    r->end_ns = hs_now_ns();
    r->thread = hs_thread_id();
    r->api = c->api;
    r->stream = c->stream;
    r->result = result;
    hs_log_commit(r);
}

void hs_record_stream(const hs_call *c, hs_call_state *st, int result)
{
    hs_log_stream *r = begin_zeroed(HS_LOG_STREAM, sizeof *r);
    if (!r)
        return;
    r->time_ns = st->start_ns;
    r->thread = hs_thread_id();
    r->api = c->api;
    r->op = c->op == HS_OP_STREAM_CREATE ? HS_LOG_STREAM_CREATE : HS_LOG_STREAM_DESTROY;
    r->stream = c->op == HS_OP_STREAM_CREATE ? (c->out_stream && result == 0 ? *(uintptr_t *)c->out_stream : 0)
                                             : c->stream;
    r->stack = st->stack;
    r->result = result;
    hs_log_commit(r);
}

static void record_event(const hs_call *c, hs_call_state *st, int result, uint8_t op)
{
    hs_log_event *r = begin_zeroed(HS_LOG_EVENT, sizeof *r);
    if (!r)
        return;
    r->time_ns = st->start_ns;
    r->thread = hs_thread_id();
    r->api = c->api;
    r->op = op;
    r->event = op == HS_LOG_EVENT_CREATE ? (c->out_event && result == 0 ? *(uintptr_t *)c->out_event : 0) : c->event;
    r->stream = c->stream;
    r->result = result;
    hs_log_commit(r);
}

void hs_record_event_create(const hs_call *c, hs_call_state *st, int r) { record_event(c, st, r, HS_LOG_EVENT_CREATE); }
void hs_record_event_record(const hs_call *c, hs_call_state *st, int r) { record_event(c, st, r, HS_LOG_EVENT_RECORD); }
void hs_record_stream_wait(const hs_call *c, hs_call_state *st, int r) { record_event(c, st, r, HS_LOG_EVENT_WAIT); }
void hs_record_event_destroy(const hs_call *c, hs_call_state *st, int r)
{
    record_event(c, st, r, HS_LOG_EVENT_DESTROY);
}
void hs_record_capture_begin(const hs_call *c, hs_call_state *st, int r)
{
    record_event(c, st, r, HS_LOG_CAPTURE_BEGIN);
}
void hs_record_capture_end(const hs_call *c, hs_call_state *st, int r) { record_event(c, st, r, HS_LOG_CAPTURE_END); }

/* The core's launch enums are the log's numbers. */
_Static_assert((int)HS_LAUNCH_MAX_ARGS == (int)HS_LOG_LAUNCH_MAX_ARGS, "a launch's arguments fit its record");
_Static_assert((int)HS_KREF_STUB == (int)HS_LOG_KREF_STUB && (int)HS_KREF_FUNCTION == (int)HS_LOG_KREF_FUNCTION &&
                   (int)HS_KREF_GRAPH == (int)HS_LOG_KREF_GRAPH && (int)HS_KREF_HOST_FN == (int)HS_LOG_KREF_HOST_FN,
               "kernel_ref");
_Static_assert((int)HS_ARG_LIVE == (int)HS_LOG_ARG_LIVE && (int)HS_ARG_FREED == (int)HS_LOG_ARG_FREED &&
                   (int)HS_ARG_UNKNOWN == (int)HS_LOG_ARG_UNKNOWN && (int)HS_ARG_EXACT == (int)HS_LOG_ARG_EXACT &&
                   (int)HS_ARG_SCANNED == (int)HS_LOG_ARG_SCANNED,
               "argument state and how");

/* The log's id of the launch's kernel name: asked of log.c once per kernel, then read from the
 * kernel cache (a lock-free lookup).  Two threads may both ask at first: they get the same id. */
static uint32_t kernel_name_id(const hs_call *c)
{
    hs_kernel_info *k = (hs_kernel_info *)hs_kernel_info_of(c);
    if (!k || !k->name)
        return 0;
    uint32_t id = __atomic_load_n(&k->log_name_id, __ATOMIC_RELAXED);
    if (HS_UNLIKELY(!id)) {
        id = hs_log_kernel_name_id(k->name);
        __atomic_store_n(&k->log_name_id, id, __ATOMIC_RELAXED);
    }
    return id;
}

void hs_record_launch(const hs_call *c, hs_call_state *st, int result)
{
    if (!hs_log_on())
        return;
    const hs_facts *f = &st->facts;
    unsigned n = f->n_args < HS_LOG_LAUNCH_MAX_ARGS ? f->n_args : HS_LOG_LAUNCH_MAX_ARGS;
    uint32_t name = kernel_name_id(c);
    hs_log_launch *r = begin_zeroed(HS_LOG_LAUNCH, (uint32_t)(sizeof *r + n * sizeof(hs_log_launch_arg)));
    if (!r)
        return;
    r->start_ns = st->start_ns;
    r->end_ns = hs_now_ns();
    r->thread = hs_thread_id();
    r->api = c->api;
    r->kernel_ref = c->kernel_ref;
    r->n_args = (uint8_t)n;
    r->stream = c->stream;
    r->seq = st->launch_seq;
    for (int i = 0; i < 3; i++) {
        r->grid[i] = c->grid[i];
        r->block[i] = c->block[i];
    }
    r->shmem = c->shmem > UINT32_MAX ? UINT32_MAX : (uint32_t)c->shmem;
    r->stack = st->stack;
    r->caller = c->caller;
    r->name = name;
    r->result = result;
    r->flags = st->decision == HS_BLOCK ? HS_LOG_LAUNCH_BLOCKED : 0;
    r->first_finding = st->first_finding;
    hs_log_launch_arg *a = (hs_log_launch_arg *)(r + 1);
    for (unsigned i = 0; i < n; i++) {
        const hs_launch_arg *x = &f->args[i];
        a[i] = (hs_log_launch_arg){.index = x->index,
                                   .state = x->state,
                                   .how = x->how,
                                   .alloc_id = x->alloc_id,
                                   .offset = x->offset,
                                   .value = x->value};
    }
    hs_log_commit(r);
}

/* ---- the parts a finding adds past its fixed fields (log_format.h, FINDING version 2) ---- */

static uint16_t text_bytes(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return (uint16_t)(n < HS_LOG_PART_TEXT_MAX ? n : HS_LOG_PART_TEXT_MAX);
}

static uint8_t access_op(uint8_t op)
{
    return op == HS_OP_LAUNCH ? HS_LOG_ACCESS_KERNEL : op == HS_OP_MEMSET ? HS_LOG_ACCESS_MEMSET : HS_LOG_ACCESS_COPY;
}

static hs_log_access log_access(const hs_access *a)
{
    return (hs_log_access){
        .lo = a->lo,
        .hi = a->hi,
        .seq = a->seq,
        .time_ns = hs_stamp_ns(a->stamp),
        .bytes = a->bytes,
        .stream = a->stream,
        .caller = a->caller,
        .stack = a->stack,
        .thread = a->thread,
        .api = a->api,
        .op = access_op(a->op),
        .arg = a->arg,
        .flags = (uint8_t)((a->write ? HS_LOG_ACCESS_WRITE : 0) | (a->assumed ? HS_LOG_ACCESS_ASSUMED : 0) |
                           (a->launch ? HS_LOG_ACCESS_LAUNCH : 0) | (a->open ? HS_LOG_ACCESS_OPEN : 0)),
        .kernel_bytes = a->launch ? text_bytes(a->kernel) : 0};
}

/* What this finding's parts need (0: none), and the race or uninit they say. */
static uint32_t parts_size(const hs_event *e, const hs_race **race, const hs_uninit **uninit)
{
    uint32_t n = 0;
    *race = NULL;
    *uninit = NULL;
    if (e->cause)
        n += (uint32_t)(sizeof(hs_log_cause) + text_bytes(e->cause_rule) + text_bytes(e->cause));
    const hs_access_facts *a = e->facts ? e->facts->access : NULL;
    if (a && e->finding->kind == HS_KIND_STREAM_RACE && a->has_race) {
        *race = &a->race;
        n += (uint32_t)(sizeof(hs_log_race) + (a->race.mine.launch ? text_bytes(a->race.mine.kernel) : 0) +
                        (a->race.other.launch ? text_bytes(a->race.other.kernel) : 0));
    } else if (a && e->finding->kind == HS_KIND_UNINITIALIZED_READ && a->has_uninit) {
        *uninit = &a->uninit;
        n += (uint32_t)(sizeof(hs_log_uninit) +
                        (a->uninit.last_write.launch ? text_bytes(a->uninit.last_write.kernel) : 0));
    }
    return n;
}

static uint8_t *put_text(uint8_t *p, const char *s, uint16_t n)
{
    if (n)
        memcpy(p, s, n);
    return p + n;
}

static void write_parts(uint8_t *p, const hs_event *e, const hs_race *race, const hs_uninit *uninit)
{
    if (e->cause) {
        hs_log_cause c = {.p = {.kind = HS_LOG_PART_CAUSE},
                          .rule_bytes = text_bytes(e->cause_rule),
                          .text_bytes = text_bytes(e->cause)};
        c.p.size = (uint32_t)(sizeof c + c.rule_bytes + c.text_bytes);
        memcpy(p, &c, sizeof c);
        p = put_text(put_text(p + sizeof c, e->cause_rule, c.rule_bytes), e->cause, c.text_bytes);
    }
    if (race) {
        hs_log_race r = {.p = {.kind = HS_LOG_PART_RACE},
                         .alloc_id = race->alloc_id,
                         .alloc_base = race->alloc_base,
                         .alloc_size = race->alloc_size,
                         .lo = race->lo,
                         .hi = race->hi,
                         .mine = log_access(&race->mine),
                         .other = log_access(&race->other)};
        r.p.size = (uint32_t)(sizeof r + r.mine.kernel_bytes + r.other.kernel_bytes);
        memcpy(p, &r, sizeof r);
        p = put_text(put_text(p + sizeof r, race->mine.kernel, r.mine.kernel_bytes), race->other.kernel,
                     r.other.kernel_bytes);
    }
    if (uninit) {
        hs_log_uninit u = {.p = {.kind = HS_LOG_PART_UNINIT},
                           .alloc_id = uninit->alloc_id,
                           .alloc_base = uninit->alloc_base,
                           .alloc_size = uninit->alloc_size,
                           .lo = uninit->lo,
                           .hi = uninit->hi,
                           .n_gaps = uninit->n_gaps,
                           .n_written = uninit->n_written,
                           .has_last_write = uninit->has_last_write,
                           .kernel = e->call->op == HS_OP_LAUNCH};
        _Static_assert((int)HS_GAPS_MAX == (int)HS_LOG_UNINIT_RANGES, "an uninitialized-read's ranges fit its part");
        for (int i = 0; i < HS_GAPS_MAX; i++) {
            u.gaps[i][0] = uninit->gaps[i].lo, u.gaps[i][1] = uninit->gaps[i].hi;
            u.written[i][0] = uninit->written[i].lo, u.written[i][1] = uninit->written[i].hi;
        }
        if (uninit->has_last_write)
            u.last_write = log_access(&uninit->last_write);
        u.p.size = (uint32_t)(sizeof u + u.last_write.kernel_bytes);
        memcpy(p, &u, sizeof u);
        put_text(p + sizeof u, uninit->last_write.kernel, u.last_write.kernel_bytes);
    }
}

uint32_t hs_record_finding(const hs_event *e, hs_call_state *st)
{
    uint32_t seq = atomic_fetch_add(&finding_seq, 1) + 1;
    if (st && !st->first_finding)
        st->first_finding = seq;
    if (!hs_log_on())
        return seq;
    const hs_race *race;
    const hs_uninit *uninit;
    uint32_t extra = parts_size(e, &race, &uninit);
    hs_log_finding *r = begin_zeroed(HS_LOG_FINDING, (uint32_t)sizeof *r + extra);
    if (!r)
        return seq;
    r->h.version = 2;
    write_parts((uint8_t *)(r + 1), e, race, uninit);
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    r->time_ns = e->time_ns;
    r->seq = seq;
    r->thread = e->thread;
    r->api = c->api;
    r->kind = (uint8_t)fi->kind;
    r->severity = (uint8_t)fi->severity;
    r->action = (uint8_t)e->action;
    r->direction = c->op == HS_OP_COPY ? (uint8_t)e->facts->dir : 255;
    r->stack = e->stack;
    r->result = e->has_result ? e->result : 0;
    r->dst = c->dst;
    r->src = c->src;
    r->bytes = c->bytes;
    r->stream = c->stream;
    r->overrun = fi->overrun;
    const hs_side *sub = hs_report_subject(e);
    if (sub) {
        r->alloc_base = sub->alloc.base;
        r->alloc_size = sub->alloc.size;
        r->alloc_offset = sub->ptr - sub->alloc.base;
        r->alloc_id = sub->alloc.id;
        r->alloc_stack = sub->alloc.stack;
        r->free_stack = sub->where == HS_WHERE_FREED ? sub->alloc.end_stack : 0;
    }
    hs_log_commit(r);
    return seq;
}

_Static_assert((int)HS_FAULT_INSIDE == (int)HS_LOG_FAULT_INSIDE &&
                   (int)HS_FAULT_PAST_END == (int)HS_LOG_FAULT_PAST_END &&
                   (int)HS_FAULT_BEFORE_START == (int)HS_LOG_FAULT_BEFORE_START &&
                   (int)HS_FAULT_FREED == (int)HS_LOG_FAULT_FREED &&
                   (int)HS_FAULT_RESERVED_UNMAPPED == (int)HS_LOG_FAULT_RESERVED_UNMAPPED,
               "fault places have the log's numbers");

void hs_record_gpu_fault(const hs_event *e, uint32_t finding_seq)
{
    const hs_gpu_fault *f = e->gpu_fault;
    hs_log_gpu_fault *r = begin_zeroed(HS_LOG_GPU_FAULT, sizeof *r);
    if (!r)
        return;
    r->time_ns = e->time_ns;
    r->finding_seq = finding_seq;
    r->reasons = f->reasons;
    r->address = f->address;
    r->agent = f->agent;
    r->where = f->where; /* hs_fault_where has the log's numbering */
    if (f->where != HS_FAULT_UNKNOWN) {
        r->alloc_id = f->where == HS_FAULT_RESERVED_UNMAPPED ? 0 : f->alloc.id;
        r->alloc_base = f->alloc.base;
        r->alloc_size = f->alloc.size;
        r->offset = f->offset;
    }
    if (f->has_below)
        r->below_id = f->below.id, r->below_base = f->below.base, r->below_size = f->below.size;
    if (f->has_above)
        r->above_id = f->above.id, r->above_base = f->above.base, r->above_size = f->above.size;
    hs_log_commit(r);
}
