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
#include "process/stacks.h"
#include "process/util.h"
#include "shadow/regions.h"
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

static void base_access(const hs_call *c, const hs_call_state *st, hs_access *a)
{
    memset(a, 0, sizeof *a);
    a->time_ns = hs_coarse_ns();
    a->bytes = c->bytes;
    a->stream = c->has_stream ? c->stream : 0;
    a->caller = c->caller;
    a->stream_index = st->stream ? st->stream->index : UINT32_MAX;
    a->thread = hs_thread_id();
    a->api = c->api;
    a->op = (uint8_t)c->op;
}

static one *add_side(const hs_call *c, const hs_access *call, const hs_side *s, bool write)
{
    if (!s->ptr || s->where != HS_WHERE_LIVE || !tracked_kind(s->alloc.kind) || cur->n == MAX_ACCESSES)
        return NULL;
    uint64_t lo = s->ptr - s->alloc.base, ext = s->extent ? s->extent : c->bytes;
    if (lo >= s->alloc.size || !ext)
        return NULL;
    one *o = &cur->v[cur->n++];
    o->id = s->alloc.id;
    o->base = s->alloc.base;
    o->size = s->alloc.size;
    o->a = *call;
    o->a.lo = lo;
    o->a.hi = ext > s->alloc.size - lo ? s->alloc.size : lo + ext;
    o->a.write = write;
    o->reads = !write;
    return o;
}

/* The argument's allocation as the launch's gather found it (note_arg): no second lookup. */
static one *add_arg(const hs_access *call, const hs_launch_arg *x, const char *kernel)
{
    if (x->state != HS_ARG_LIVE || !tracked_kind(x->kind) || cur->n == MAX_ACCESSES)
        return NULL;
    hs_span span = {.base = x->value - (uintptr_t)x->offset, .size = x->alloc_size, .id = x->alloc_id};
    uint64_t lo = (uint64_t)x->offset, hi = span.size;
    hs_span inner;
    bool open = lo != 0; /* an interior pointer: open, unless a block or region says its end */
    if (HS_UNLIKELY(hs_blocks_any()) && x->block_state == HS_BLOCK_LIVE &&
        hs_block_lookup(x->value, &inner) == HS_BLOCK_LIVE)
        hi = inner.base + inner.size - span.base, open = false;
    else if (HS_UNLIKELY(hs_regions_any()) && hs_shadow_lookup(x->value, &span) == HS_WHERE_LIVE &&
             hs_region_lookup(x->value, span.time_ns, &inner) == HS_REGION_LIVE)
        hi = inner.base + inner.size - span.base, open = false;
    if (hi > span.size)
        hi = span.size;
    if (lo >= hi)
        return NULL;
    one *o = &cur->v[cur->n++];
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
    return o;
}

void hs_gather_accesses(const hs_call *c, hs_call_state *st)
{
    hs_facts *f = &st->facts;
    if (!mine())
        return;
    cur->n = 0;
    memset(&cur->facts, 0, offsetof(hs_access_facts, race));
    if (c->op == HS_OP_LAUNCH ? !f->n_args : f->dst.where != HS_WHERE_LIVE && f->src.where != HS_WHERE_LIVE)
        return;     /* no device memory in it that is tracked */
    hs_access call; /* what the call's accesses share: filled once */
    base_access(c, st, &call);
    if (c->op == HS_OP_LAUNCH) {
        const hs_kernel_info *k = hs_kernel_info_of(c);
        for (int i = 0; i < f->n_args; i++)
            add_arg(&call, &f->args[i], k ? k->name : NULL);
    } else {
        add_side(c, &call, &f->dst, true);
        if (c->op == HS_OP_COPY)
            add_side(c, &call, &f->src, false);
    }
    if (!cur->n)
        return;
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
    if (c->op == HS_OP_LAUNCH && f->dst.where == HS_WHERE_NONE && (cur->facts.has_race || cur->facts.has_uninit)) {
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
}

void hs_model_accesses(const hs_call *c, hs_call_state *st, uint64_t seq)
{
    if (!st->facts.access || !cur)
        return;
    /* The earlier side of a race is reported with the stack its call had.  A copy's or memset's is
     * captured here; a launch keeps its caller's address only, unless launch_stacks=1 captured
     * the whole stack (a stack walk at every launch would cost more than the launch). */
    uint32_t stack = st->stack;
    if (!stack && seq && c->op != HS_OP_LAUNCH && hs_access_races())
        stack = hs_stack_capture();
    uint64_t ids[MAX_ACCESSES];
    const hs_access *all[MAX_ACCESSES];
    for (int i = 0; i < cur->n; i++) {
        one *o = &cur->v[i];
        o->a.seq = seq;
        o->a.stack = stack;
        ids[i] = o->id;
        all[i] = &o->a;
    }
    hs_access_add_all(ids, all, cur->n);
    cur->n = 0;
}
