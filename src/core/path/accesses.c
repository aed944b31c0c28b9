/* A call's accesses of device memory, for stream-race and initcheck (see accesses.h and
 * streams/access.h).  Copies and memsets are exact: the destination written, the source read.
 * A kernel's pointer arguments are its accesses: from the pointer to the end of its allocation
 * (of its PyTorch block, or annotated region, when one holds it), read or written as the AMD
 * code object's metadata says; where it says nothing, a possible write ("assumed").  A pointer
 * inside an allocation, not its base, that no block or region holds (a sub-buffer of a pool
 * allocator's arena: JAX's BFC, ggml, PyTorch with torch_blocks=0) is an open access: its end
 * is not known, and it meets only an access at the same address or a copy or memset containing
 * that address (hs_access_find_first_race), so two kernels on disjoint sub-buffers are no race. */
#include "path/accesses.h"
#include "kernels/kernel_info.h"
#include "kernels/ledger.h"
#include "process/stacks.h"
#include "process/stats.h"
#include "process/util.h"
#include "shadow/regions.h"
#include "streams/waiting_accesses.h"
#include "torch/blocks.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

enum { MAX_ACCESSES = HS_LAUNCH_MAX_ARGS + 2 };

typedef struct one {
    uint64_t id;
    uintptr_t base;
    uint64_t size;
    bool reads; /* may read the bytes already there (initcheck) */
    hs_access a;
} one;

/* This thread's call: from its gather to its model update (calls do not nest).  Mapped at the
 * thread's first tracked call and given back when the thread exits: as thread-local storage its
 * kilobytes would come off every thread's stack, which a thread made with a small one (16 KiB)
 * cannot spare. */
typedef struct call_accesses {
    hs_access_facts facts;
    int n;
    bool built; /* v[0..n) are the call's accesses (a deferrable launch with nothing to search: not yet) */
    bool defer; /* a launch whose accesses may wait in its ledger record (deferrable) */
    one v[MAX_ACCESSES];
    hs_vclock clock;
} call_accesses;
static HS_TLS call_accesses *cur;
static HS_TLS bool cur_failed;
static pthread_key_t cur_key;
static pthread_once_t cur_key_once = PTHREAD_ONCE_INIT;

static void unmap_accesses(void *p) { munmap(p, sizeof(call_accesses)); }
static void make_key(void) { pthread_key_create(&cur_key, unmap_accesses); }

/* This thread's record; NULL when it could not be mapped (the call is then not tracked). */
static call_accesses *mine(void)
{
    if (HS_LIKELY(cur) || cur_failed)
        return cur;
    pthread_once(&cur_key_once, make_key);
    void *p = mmap(NULL, sizeof(call_accesses), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        cur_failed = true;
        return NULL;
    }
    cur = p;
    pthread_setspecific(cur_key, p);
    return cur;
}

static bool tracked_kind(uint32_t kind) { return hs_mem_kind_is_device(kind) && kind != HS_MEM_MANAGED; }

/* What every access of one call shares. */
static void call_access(hs_access *a, uint64_t bytes, uintptr_t stream, uintptr_t caller, const hs_stream *s,
                        uint16_t api, hs_op op)
{
    memset(a, 0, sizeof *a);
    a->stamp = hs_order_stamp();
    a->bytes = bytes;
    a->stream = stream;
    a->caller = caller;
    a->stream_index = s ? s->index : UINT32_MAX;
    a->thread = hs_thread_id();
    a->api = api;
    a->op = (uint8_t)op;
}

static void base_access(const hs_call *c, const hs_call_state *st, hs_access *a)
{
    call_access(a, c->bytes, c->has_stream ? c->stream : 0, c->caller, st->stream, c->api, c->op);
}

/* A copy's or memset's range [ptr, ptr + ext) of a live allocation, read or written. */
HS_HOT static one *add_range(const hs_access *call, const hs_span *alloc, uintptr_t ptr, uint64_t ext, bool write)
{
    if (!tracked_kind(alloc->kind) || cur->n == MAX_ACCESSES)
        return NULL;
    uint64_t lo = ptr - alloc->base;
    if (lo >= alloc->size || !ext)
        return NULL;
    one *o = &cur->v[cur->n++];
    o->id = alloc->id;
    o->base = alloc->base;
    o->size = alloc->size;
    o->a = *call;
    o->a.lo = lo;
    o->a.hi = ext > alloc->size - lo ? alloc->size : lo + ext;
    o->a.write = write;
    o->reads = !write;
    return o;
}

HS_HOT static one *add_side(const hs_call *c, const hs_access *call, const hs_side *s, bool write)
{
    if (!s->ptr || s->where != HS_WHERE_LIVE)
        return NULL;
    return add_range(call, &s->alloc, s->ptr, s->extent ? s->extent : c->bytes, write);
}

/* An argument's access, into *o: its allocation as the launch's gather found it (note_arg), no
 * second lookup.  now: at the launch itself, where a PyTorch block (block_end: the end of the
 * live one the gather found, 0: none) or a region may say where a sub-buffer ends (not for a
 * deferred launch added later: what they hold may have changed). */
static bool arg_access(const hs_access *call, const hs_launch_arg *x, uintptr_t block_end, const char *kernel, bool now,
                       one *o)
{
    if (x->state != HS_ARG_LIVE || !tracked_kind(x->kind))
        return false;
    hs_span span = {.base = x->value - (uintptr_t)x->offset, .size = x->alloc_size, .id = x->alloc_id};
    uint64_t lo = (uint64_t)x->offset, hi = span.size;
    hs_span inner;
    bool open = lo != 0; /* an interior pointer: open, unless a block or region says its end */
    if (now && x->block_state == HS_BLOCK_LIVE && block_end)
        hi = block_end - span.base, open = false;
    else if (now && HS_UNLIKELY(hs_regions_any()) && hs_shadow_lookup(x->value, &span) == HS_WHERE_LIVE &&
             hs_region_lookup(x->value, span.time_ns, &inner) == HS_REGION_LIVE)
        hi = inner.base + inner.size - span.base, open = false;
    if (hi > span.size)
        hi = span.size;
    if (lo >= hi)
        return false;
    o->id = span.id;
    o->base = span.base;
    o->size = span.size;
    o->a = *call;
    o->a.lo = lo;
    o->a.hi = hi;
    o->a.launch = true;
    o->a.open = open;
    o->a.kernel = kernel;
    o->a.arg = (uint8_t)x->index;
    bool known = x->how == HS_ARG_EXACT && x->access != HS_PARAM_ACCESS_UNKNOWN;
    o->a.write = !known || x->access != HS_PARAM_READ_ONLY;
    o->a.assumed = !known;
    o->reads = !known || x->access != HS_PARAM_WRITE_ONLY;
    return true;
}

/* The call's accesses, into cur->v. */
HS_HOT static void build(const hs_call *c, const hs_call_state *st)
{
    const hs_facts *f = &st->facts;
    hs_access call; /* what the call's accesses share: filled once */
    base_access(c, st, &call);
    if (c->op == HS_OP_LAUNCH) {
        const hs_kernel_info *k = hs_kernel_info_of(c);
        for (int i = 0; i < f->n_args && cur->n < MAX_ACCESSES; i++)
            cur->n += arg_access(&call, &f->args[i], f->arg_block_end[i], k ? k->name : NULL, true, &cur->v[cur->n]);
    } else {
        add_side(c, &call, &f->dst, true);
        if (c->op == HS_OP_COPY)
            add_side(c, &call, &f->src, false);
    }
    cur->built = true;
}

/* A deferred launch of s, still in flight, goes into the history (s's lock held): its
 * arguments one at a time, those whose allocation is still there (a stream-ordered free may
 * have taken one since). */
static void add_deferred_launch(hs_stream *s, const hs_launch *l)
{
    hs_access call;
    memset(&call, 0, sizeof call);
    call.stamp = l->stamp;
    call.stream = l->stream;
    call.caller = l->caller;
    call.stream_index = s->index;
    call.thread = l->thread;
    call.api = l->api;
    call.op = HS_OP_LAUNCH;
    call.seq = l->seq;
    call.stack = l->stack;
    for (int i = 0; i < l->n_args; i++) {
        one o;
        hs_span now;
        if (!arg_access(&call, &l->args[i], 0, l->name, false, &o) || hs_shadow_lookup(o.base, &now) != HS_WHERE_LIVE ||
            now.id != o.id)
            continue;
        const hs_access *a = &o.a;
        hs_access_add_all(&o.id, &a, 1);
    }
}

/* Another stream's call asked for s's deferred launch l. */
static void take_deferred_launch(hs_stream *s, const hs_launch *l)
{
    hs_stat_count(HS_STAT_access_late_asked);
    add_deferred_launch(s, l);
}

/* Before a call on `me` looks for races: the accesses of other streams' launches that wait in
 * their ledgers, and of their copies and memsets that wait (streams/waiting_accesses.h), still
 * in flight, go into the history. */
static void add_deferred_of_others(const hs_stream *me)
{
    bool launches = hs_ledger_others_deferred(me), copies = hs_waiting_others(me);
    if (!launches && !copies)
        return;
    uint32_t n = hs_stream_count();
    for (uint32_t i = 0; i < n; i++) {
        hs_stream *s = hs_stream_by_index(i);
        if (s && s != me && launches)
            hs_ledger_take_deferred(s, take_deferred_launch);
        if (s && s != me && copies)
            hs_waiting_take(s);
    }
}

/* Whether a launch's accesses may wait in its ledger record instead of going into the history
 * now: only races need them (initcheck needs every write at once), and only once another
 * stream's call could race with them.  An engine's compute stream between two synchronisations
 * (ggml) then adds nothing, and the other stream it copies inputs on finds its work complete. */
static bool deferrable(const hs_call *c)
{
    return c->op == HS_OP_LAUNCH && !hs_access_initcheck() && hs_access_races() && !HS_UNLIKELY(hs_blocks_any()) &&
           !HS_UNLIKELY(hs_regions_any());
}

/* search: whether the call's accesses may be looked up in the histories (a search marks the
 * race it finds as said); false returns false where one is needed. */
HS_HOT static bool gather(const hs_call *c, hs_call_state *st, bool search)
{
    hs_facts *f = &st->facts;
    if (!mine())
        return true;
    cur->n = 0;
    cur->built = cur->defer = false;
    memset(&cur->facts, 0, offsetof(hs_access_facts, race));
    if (c->op == HS_OP_LAUNCH ? !f->n_args : f->dst.where != HS_WHERE_LIVE && f->src.where != HS_WHERE_LIVE)
        return true; /* no device memory in it that is tracked */
    if (hs_access_races() && st->stream)
        add_deferred_of_others(st->stream);
    cur->defer = deferrable(c);
    if (cur->defer && (!st->stream || !hs_access_may_race(st->stream->index))) {
        f->access = &cur->facts; /* nothing to search; built later only if it cannot wait */
        return true;
    }
    if (!search)
        return false;
    build(c, st);
    if (!cur->n)
        return true;
    if (hs_access_races() && st->stream) {
        uint64_t ids[MAX_ACCESSES];
        const hs_access *all[MAX_ACCESSES];
        for (int i = 0; i < cur->n; i++)
            ids[i] = cur->v[i].id, all[i] = &cur->v[i].a;
        int at = hs_access_find_first_race(ids, all, cur->n, st->stream, &cur->clock, &cur->facts.race);
        if (at >= 0) {
            const one *o = &cur->v[at];
            cur->facts.has_race = true;
            cur->facts.race.alloc_base = o->base;
            cur->facts.race.alloc_size = o->size;
            cur->facts.race.side = o->a.launch ? HS_SIDE_DST : o->a.write ? HS_SIDE_DST : HS_SIDE_SRC;
            cur->facts.race.mine.stack = 0; /* the call's own: the finding's */
        }
    }
    /* initcheck: a copy's source read; a kernel's argument it may read */
    for (int i = 0; hs_access_initcheck() && i < cur->n && !cur->facts.has_uninit; i++) {
        const one *o = &cur->v[i];
        if (o->reads && hs_access_find_unwritten(o->id, o->base, o->size, o->a.lo, o->a.hi, o->a.launch, o->a.open,
                                                 &cur->facts.uninit)) {
            cur->facts.has_uninit = true;
            cur->facts.uninit.side = o->a.launch ? HS_SIDE_DST : HS_SIDE_SRC;
        }
    }
    /* A launch's finding names the allocation of the argument at fault. */
    if (c->op == HS_OP_LAUNCH && (cur->facts.has_race || cur->facts.has_uninit) &&
        (hs_sides_ready(st), f->dst.where == HS_WHERE_NONE)) {
        uint64_t id = cur->facts.has_race ? cur->facts.race.alloc_id : cur->facts.uninit.alloc_id;
        for (int i = 0; i < cur->n; i++)
            if (cur->v[i].id == id) {
                f->dst.ptr = cur->v[i].base + cur->v[i].a.lo;
                f->dst.extent = cur->v[i].a.hi - cur->v[i].a.lo;
                f->dst.where = HS_WHERE_LIVE;
                hs_shadow_lookup(f->dst.ptr, &f->dst.alloc);
                break;
            }
    }
    f->access = &cur->facts;
    return true;
}

HS_HOT void hs_gather_accesses(const hs_call *c, hs_call_state *st) { gather(c, st, true); }
/* Nothing of another stream's waits to go into the histories, and every access remembered is
 * s's own: a search of the histories from s would find nothing. */
HS_INLINE_HOT static bool nothing_to_search(const hs_stream *s)
{
    return !hs_ledger_others_deferred(s) && !hs_waiting_others(s) && !hs_access_may_race(s->index);
}

/* gather's most common answer, in a few lines of its own: a launch whose accesses wait in its
 * ledger record, with nothing of another stream's to add first and no history to search. */
HS_HOT bool hs_gather_accesses_unsearched(const hs_call *c, hs_call_state *st)
{
    hs_stream *s = st->stream;
    if (HS_LIKELY(cur) && c->op == HS_OP_LAUNCH && st->facts.n_args && s && deferrable(c) && nothing_to_search(s)) {
        cur->n = 0;
        cur->built = false;
        cur->defer = true;
        memset(&cur->facts, 0, offsetof(hs_access_facts, race));
        st->facts.access = &cur->facts;
        return true;
    }
    return gather(c, st, false);
}

bool hs_accesses_deferrable(void) { return cur && cur->defer; }

void hs_accesses_add_overwritten(hs_stream *s, const hs_launch *l)
{
    if (l->deferred && l->seq > atomic_load(&s->done)) {
        hs_stat_count(HS_STAT_access_late_full);
        add_deferred_launch(s, l);
    }
}

void hs_accesses_deferred(void)
{
    hs_stat_count(HS_STAT_access_wait);
    if (cur)
        cur->n = 0;
}

/* The call's accesses cur->v[0..n), with its place in stream order (0: a synchronous call),
 * remembered: a copy's or memset's wait on its stream s while only races need them (initcheck:
 * every write at once). */
HS_HOT static void remember(hs_stream *s, hs_op op, uint32_t stack, uint64_t seq)
{
    uint64_t ids[MAX_ACCESSES];
    const hs_access *all[MAX_ACCESSES];
    for (int i = 0; i < cur->n; i++) {
        one *o = &cur->v[i];
        o->a.seq = seq;
        o->a.stack = stack;
        ids[i] = o->id;
        all[i] = &o->a;
    }
    bool waits = seq && op != HS_OP_LAUNCH && hs_access_races() && !hs_access_initcheck() &&
                 hs_waiting_add(s, ids, all, cur->n);
    hs_stat_count(waits ? HS_STAT_access_wait : HS_STAT_access_add);
    if (!waits)
        hs_access_add_all(ids, all, cur->n);
    cur->n = 0;
}

/* The earlier side of a race is reported with the stack its call had.  A copy's or memset's is
 * captured when it is remembered; a launch keeps its caller's address only, unless
 * launch_stacks=1 captured the whole stack (a stack walk at every launch would cost more than
 * the launch). */
static uint32_t copy_stack(uint32_t known, uint64_t seq)
{
    return !known && seq && hs_access_races() ? hs_stack_capture() : known;
}

HS_HOT void hs_model_accesses(const hs_call *c, hs_call_state *st, uint64_t seq)
{
    if (!st->facts.access || !cur)
        return;
    if (!cur->built)
        build(c, st); /* a deferrable launch that its ledger could not keep */
    remember(st->stream, c->op, c->op == HS_OP_LAUNCH ? st->stack : copy_stack(st->stack, seq), seq);
}

/* ---- the fast path's async copy between device allocations (fast_copy.c) ---- */

HS_HOT bool hs_accesses_copy_unsearched(const hs_stream *s) { return !hs_access_initcheck() && nothing_to_search(s); }

HS_HOT void hs_accesses_copy_forwarded(hs_stream *s, const hs_access_copy *x, uint64_t seq)
{
    if (!mine())
        return;
    hs_access call;
    call_access(&call, x->bytes, x->stream, x->caller, s, x->api, HS_OP_COPY);
    cur->n = 0;
    add_range(&call, &x->dst, x->dst_ptr, x->bytes, true);
    add_range(&call, &x->src, x->src_ptr, x->bytes, false);
    remember(s, HS_OP_COPY, copy_stack(0, seq), seq);
}
