/* Fact gathering (see facts.h).  The hot part is describe_side: one lock-free shadow lookup
 * per side.  Asking the runtime and probing host memory happen only for pointers the shadow
 * map does not know. */
#include "path/facts.h"
#include "path/accesses.h"
#include "path/arg_memo.h"
#include "torch/blocks.h"
#include "process/stats.h"
#include "rules/check.h"
#include "runtime/frontend.h"
#include "path/init.h"
#include "kernels/kernel_info.h"
#include "runtime/own_calls.h"
#include "shadow/region_access.h"
#include "shadow/regions.h"
#include "process/util.h"
#include "shadow/vmm.h"

#include <string.h>

void hs_gather_stream_state(const hs_call *c, hs_call_state *st)
{
    st->facts.stream_state = hs_stream_state_of(c->stream, &st->facts.stream_info);
    if (st->facts.stream_state == HS_STREAM_NEVER_CREATED && hs_layer_of(c->api)->unannounced_streams)
        st->facts.stream_state = HS_STREAM_OK; /* valid, but not modelled: no record, no ordering */
}

/* ---- memory ---- */

/* Mapped memory runs on into the next map of the same reservation: how far, without a gap,
 * from a->base (looked at only when the range runs past a's end). */
static uint64_t mapped_run(const hs_span *a, uintptr_t want_end)
{
    uint64_t run = a->size;
    hs_span next;
    for (int i = 0; i < 4096 && a->base + run < want_end; i++) {
        uintptr_t at = a->base + run;
        if (hs_shadow_lookup(at, &next) != HS_WHERE_LIVE || next.base != at || next.kind != HS_MEM_MAPPED ||
            next.owner != a->owner)
            break;
        run += next.size;
    }
    return run;
}

/* A pointer in no allocation, inside a reservation: reserved but unmapped.  The nearest map of
 * the reservation (below if there is one) is what the range is out of bounds of. */
static void describe_unmapped(hs_side *s)
{
    if (!hs_vmm_reservation_of(s->ptr, &s->reservation))
        return;
    hs_span below, above;
    bool has_below, has_above;
    hs_shadow_nearest(s->ptr, &below, &has_below, &above, &has_above);
    const hs_span *r = &s->reservation;
    if (has_below && below.base >= r->base)
        s->alloc = below;
    else if (has_above && above.base < r->base + r->size)
        s->alloc = above;
    else
        s->alloc = (hs_span){.base = r->base, .kind = HS_MEM_MAPPED}; /* nothing mapped at all */
    s->unmapped = true;
}

/* The region holding ptr, live or freed through NVTX, and what this thread may do with it. */
static void describe_region(hs_side *s)
{
    hs_region_state r = hs_region_lookup(s->ptr, s->alloc.time_ns, &s->region);
    s->in_region = r == HS_REGION_LIVE;
    s->region_freed = r == HS_REGION_FREED;
    if (s->in_region)
        s->region_denied = (uint8_t)(HS_REGION_RW & ~hs_region_access(&s->region));
}

HS_HOT static void describe_side(hs_side *s, uintptr_t ptr, size_t extent)
{
    s->ptr = ptr;
    s->extent = extent;
    if (!ptr)
        return;
    s->where = hs_shadow_lookup(ptr, &s->alloc);
    if (s->where == HS_WHERE_LIVE) {
        if (HS_UNLIKELY(hs_regions_any()))
            describe_region(s);
        if (HS_UNLIKELY(hs_blocks_any()))
            s->block_state = (uint8_t)hs_block_lookup(ptr, &s->block);
        if (HS_UNLIKELY(s->alloc.kind == HS_MEM_MAPPED) && ptr + extent > s->alloc.base + s->alloc.size)
            s->contiguous = mapped_run(&s->alloc, ptr + extent);
    } else if (s->where == HS_WHERE_NONE) {
        describe_unmapped(s);
    }
}

/* Each thread's last private host mapping (its stack, a heap arena) where the runtime said a
 * pointer was not its memory: pageable buffers are unknown to the shadow on every copy, and the
 * runtime's lookup (a lock and a tree in CLR) would be paid each time.  Valid while the host
 * mappings stay as they were (hostmem's snapshot serial).  What it cannot see: memory inside such
 * a mapping that the runtime is told about through an unwrapped path (the wrapped ones put it in
 * the shadow map, which is asked first). */
static HS_TLS struct {
    uintptr_t lo, hi;
    uint64_t serial;
} not_runtime;

/* Cold-ish: only for pointers the shadow map does not know. */
HS_HOT static void ask_runtime(hs_side *s)
{
    if (!s->ptr || s->where != HS_WHERE_NONE || s->unmapped || !hs_opts()->query_runtime ||
        !hs_frontend_active.query_pointer)
        return;
    if (s->ptr >= not_runtime.lo && s->ptr < not_runtime.hi && not_runtime.serial &&
        not_runtime.serial == hs_host_snapshot_serial())
        return;
    hs_span span = {0};
    if (!hs_own_query_pointer(s->ptr, &span)) {
        uintptr_t lo, hi;
        uint64_t serial;
        if (hs_host_private_mapping(s->ptr, &lo, &hi, &serial))
            not_runtime = (__typeof__(not_runtime)){lo, hi, serial};
        return;
    }
    /* The runtime answers one map of a mapped range at a time: a partial answer must not turn
     * into an overrun, so follow the maps that come next. */
    hs_span next;
    for (int i = 0; i < 4096 && span.kind == HS_MEM_MAPPED && span.base + span.size < s->ptr + s->extent; i++) {
        uintptr_t at = span.base + span.size;
        if (!hs_own_query_pointer(at, &next) || next.base != at || next.kind != HS_MEM_MAPPED)
            break;
        span.size += next.size;
    }
    if (span.kind != HS_MEM_MAPPED)
        span.kind = HS_MEM_EXTERNAL_DEVICE;
    span.api = 0xffff;
    s->alloc = span;
    s->runtime_known = true;
}

static void probe_host(hs_side *s, bool write)
{
    if (!s->ptr || s->where == HS_WHERE_LIVE || s->runtime_known || s->unmapped || !hs_opts()->check_host)
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

static void gather_memory(const hs_call *c, hs_facts *f)
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
    if (hs_role_of(f->dir, HS_SIDE_SRC) == HS_ROLE_DEVICE)
        ask_runtime(&f->src);
    else
        probe_host(&f->src, false);
    if (hs_role_of(f->dir, HS_SIDE_DST) == HS_ROLE_DEVICE)
        ask_runtime(&f->dst);
    else
        probe_host(&f->dst, true);
}

void hs_gather_after_failure(const hs_call *c, hs_call_state *st)
{
    (void)c;
    ask_runtime(&st->facts.dst);
    ask_runtime(&st->facts.src);
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

HS_HOT hs_pending_op hs_pending_of(uint16_t api, uint64_t bytes, int dir)
{
    return (hs_pending_op){.stamp = hs_order_stamp(), /* for "pending since" in a report: no clock read per copy */
                           .thread = hs_thread_id(),
                           .api = api,
                           .bytes = bytes,
                           .dir = (uint8_t)dir};
}

static void describe_pending(const hs_call *c, const hs_facts *f, hs_pending_op *op)
{
    *op = hs_pending_of(c->api, c->bytes, f->dir);
    const hs_side *sides[2] = {&f->dst, &f->src};
    for (int i = 0; i < 2; i++) {
        const hs_side *s = sides[i];
        if (!s->ptr)
            continue;
        bool device = s->where != HS_WHERE_NONE
                          ? hs_mem_kind_is_device(s->alloc.kind) && s->alloc.kind != HS_MEM_MANAGED
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

HS_HOT_PATH static void gather_stream_work(const hs_call *c, hs_call_state *st)
{
    hs_facts *f = &st->facts;
    if (f->stream_state != HS_STREAM_OK)
        return;
    hs_stream *s = st->stream; /* a fast path found it already */
    if (!s)
        s = st->stream = c->has_stream ? hs_stream_of_state(c->stream, &f->stream_info) : hs_stream_get(0);
    if (!s)
        return;
    bool sync_like = hs_is_sync_like(c);
    if (HS_UNLIKELY(hs_order_capturing_streams()) && sync_like) {
        f->own_stream_capturing = atomic_load(&s->capturing);
        if (f->own_stream_capturing)
            f->capturing_stream = s->handle;
        else if (s == hs_stream_null() || (c->op == HS_OP_SYNC && c->sync == HS_SYNC_DEVICE))
            f->capturing_stream = any_capturing_stream(); /* the legacy stream waits for every blocking stream */
    }
    if ((c->op == HS_OP_COPY || c->op == HS_OP_MEMSET) && c->async && c->bytes) {
        describe_pending(c, f, &f->pending);
        f->has_pending = true;
        hs_order_find_overlap(s, &f->pending, &f->conflict);
        f->want_notes = hs_opts()->notes;
    }
    if (sync_like)
        hs_order_snapshot(s, &st->sync_clock);
    if (HS_UNLIKELY(!hs_access_races()) && c->op != HS_OP_SYNC)
        hs_access_stream_seen(s, false); /* a second stream: accesses are remembered from now on */
}

HS_HOT void hs_gather_copy(const hs_call *c, hs_call_state *st)
{
    gather_memory(c, &st->facts);
    gather_stream_work(c, st);
    if (HS_UNLIKELY(hs_access_tracking()))
        hs_gather_accesses(c, st);
}

HS_HOT void hs_gather_sync(const hs_call *c, hs_call_state *st) { gather_stream_work(c, st); }

/* ---- frees ---- */

void hs_gather_free(const hs_call *c, hs_call_state *st)
{
    hs_facts *f = &st->facts;
    if (!c->free_ptr)
        return;
    f->dst.ptr = c->free_ptr;
    const hs_span *span = &st->freed;
    if (f->release == HS_RELEASED) {
        /* Host memory is freed now; an async free is freed when its stream gets there. */
        bool host = hs_mem_kind_is_host(span->kind) && span->kind != HS_MEM_MANAGED;
        if (host || c->async) {
            hs_stream *s = c->async && f->stream_state == HS_STREAM_OK ? hs_stream_get(c->stream) : NULL;
            hs_order_find_user(host ? NULL : s, host ? 0 : span->id, host ? span->base : 0,
                               host ? span->base + span->size : 0, &f->conflict);
            if (f->conflict.found) { /* reported as the live allocation it still was */
                f->dst.where = HS_WHERE_LIVE;
                f->dst.alloc = *span;
            }
        }
        return;
    }
    f->dst.alloc = *span;
    f->dst.where = f->release == HS_RELEASE_TWICE      ? HS_WHERE_FREED
                   : f->release == HS_RELEASE_INTERIOR ? HS_WHERE_LIVE
                                                       : HS_WHERE_NONE;
    if (f->release == HS_RELEASE_UNKNOWN)
        ask_runtime(&f->dst); /* memory from an unwrapped path: does the runtime know it? */
}

/* ---- launches ---- */

/* An argument value that lies in a known allocation (or, when the platform says it is a
 * pointer, anywhere but NULL) becomes a fact; the first freed one is described as dst, so the
 * report shows its allocation and free stacks. */
HS_HOT_PATH static void note_arg(hs_call_state *st, const hs_arg_word *w)
{
    hs_facts *f = &st->facts;
    if (f->n_args >= HS_LAUNCH_MAX_ARGS)
        return;
    uintptr_t value = w->value;
    hs_arg_how how = (hs_arg_how)w->how;
    hs_span span, block;
    hs_where where = hs_shadow_lookup(value, &span);
    if (where == HS_WHERE_NONE && !w->surely_pointer)
        return; /* an integer can look like anything */
    /* PyTorch's caching allocator: the block of the (live) segment it points into (NONE at once
     * while no block event came: hs_block_lookup reads the flag first) */
    hs_block_state block_state = where == HS_WHERE_LIVE ? hs_block_lookup(value, &block) : HS_BLOCK_NONE;
    unsigned n = f->n_args++;
    hs_launch_arg *a = &f->args[n];
    *a = (hs_launch_arg){.index = w->index,
                         .how = (uint8_t)how,
                         .value = value,
                         .state = where == HS_WHERE_LIVE    ? HS_ARG_LIVE
                                  : where == HS_WHERE_FREED ? HS_ARG_FREED
                                                            : HS_ARG_UNKNOWN,
                         .block_state = (uint8_t)block_state,
                         .access = w->access};
    if (where != HS_WHERE_NONE) {
        a->alloc_id = span.id;
        a->kind = (uint8_t)span.kind;
        a->offset = (int64_t)(value - span.base);
        a->alloc_size = span.size;
        a->redzone = span.redzone;
    }
    if (HS_UNLIKELY(where == HS_WHERE_FREED || block_state == HS_BLOCK_FREED)) /* a finding, most likely */
        hs_sides_ready(st); /* the finding's side may be this argument */
    if (HS_UNLIKELY(where == HS_WHERE_FREED) && f->dst.where != HS_WHERE_FREED)
        f->dst = (hs_side){.ptr = value, .where = HS_WHERE_FREED, .alloc = span};
    f->arg_block_end[n] = block_state == HS_BLOCK_LIVE ? block.base + block.size : 0;
    /* A region freed through NVTX: like a freed block, only a whole pointer-sized parameter counts. */
    hs_span region;
    if (where == HS_WHERE_LIVE && how == HS_ARG_EXACT && HS_UNLIKELY(hs_regions_any()) &&
        hs_region_lookup(value, span.time_ns, &region) == HS_REGION_FREED) {
        a->region_freed = true;
        hs_sides_ready(st);
        if (f->dst.where != HS_WHERE_FREED && f->dst.block_state != HS_BLOCK_FREED && !f->dst.region_freed)
            f->dst = (hs_side){
                .ptr = value, .where = HS_WHERE_LIVE, .alloc = span, .region_freed = true, .region = region};
    }
    if (HS_UNLIKELY(block_state == HS_BLOCK_FREED) && how == HS_ARG_EXACT && f->dst.where != HS_WHERE_FREED &&
        f->dst.block_state != HS_BLOCK_FREED && !f->dst.region_freed)
        f->dst = (hs_side){
            .ptr = value, .where = HS_WHERE_LIVE, .alloc = span, .block_state = HS_BLOCK_FREED, .block = block};
}

/* The words of a launch that note_arg looks up, in order: a parameter the platform says is a
 * pointer, and any other word that is not 0 and lies between the shadow map's floor and ceiling
 * (below or above every allocation: an integer, most likely, and in none either way).  Collected
 * into key (false when there are more than it holds), or, with key NULL, looked up as they come.
 * *examined counts every word looked at, for stats=1. */
HS_HOT static bool word(hs_call_state *st, hs_arg_key *key, const hs_arg_word *w)
{
    if (!key) {
        note_arg(st, w);
        return true;
    }
    if (key->n == HS_ARG_MEMO_WORDS)
        return false;
    key->w[key->n++] = *w;
    return true;
}

HS_HOT_PATH static bool scan_words(hs_call_state *st, hs_arg_key *key, const uint8_t *p, size_t n, unsigned first_index,
                                   unsigned *examined)
{
    /* A struct passed by value is mostly sizes and strides: one comparison passes each word
     * outside every allocation over (a word below the floor wraps around to above the width). */
    uintptr_t floor = atomic_load_explicit(&hs_shadow_floor, memory_order_relaxed);
    uintptr_t width = atomic_load_explicit(&hs_shadow_ceiling, memory_order_relaxed) - floor;
    size_t words = n / sizeof(uintptr_t);
    *examined += (unsigned)words; /* counted once: a store through it in the loop would be
                                   * reloaded after every word (the bytes may alias it) */
    for (size_t i = 0; i < words; i++) {
        uintptr_t v;
        memcpy(&v, p + i * sizeof v, sizeof v);
        if (v - floor >= width)
            continue;
        hs_arg_word w = {.value = v, .index = (uint16_t)(first_index + i), .how = HS_ARG_SCANNED};
        if (!word(st, key, &w))
            return false;
    }
    return true;
}

HS_HOT_PATH static bool walk_args(const hs_call *c, const hs_kernel_info *k, hs_call_state *st, hs_arg_key *key,
                                  unsigned *examined)
{
    if (c->arg_buffer && c->arg_buffer_size) /* one buffer of known size: scanned whole */
        return scan_words(st, key, c->arg_buffer, c->arg_buffer_size, 0, examined);
    if (!k || k->n_params <= 0 || !c->kernel_params)
        return true;
    int n = k->n_params < HS_KERNEL_MAX_PARAMS ? k->n_params : HS_KERNEL_MAX_PARAMS;
    for (int i = 0; i < n; i++) {
        const hs_kernel_param *p = &k->params[i];
        const void *value = c->kernel_params[i];
        if (!value)
            continue;
        if (p->size > sizeof(uintptr_t) && !p->pointer_known) {
            if (!scan_words(st, key, value, p->size, (unsigned)i, examined)) /* a struct passed by value */
                return false;
            continue;
        }
        if (p->size != sizeof(uintptr_t) || (p->pointer_known && !p->pointer))
            continue;
        ++*examined;
        hs_arg_word w = {.value = *(const uintptr_t *)value,
                         .index = (uint16_t)i,
                         .how = HS_ARG_EXACT,
                         .access = p->pointer_known ? p->access : 0,
                         .surely_pointer = p->pointer_known};
        if (w.value && (w.surely_pointer || !hs_shadow_outside_all(w.value)) && !word(st, key, &w))
            return false;
    }
    return true;
}

/* A launch's words, as the memo of recent launches has them or looked up. */
HS_HOT_PATH static void gather_args(const hs_call *c, hs_call_state *st)
{
    const hs_kernel_info *k = hs_kernel_info_of(c);
    unsigned examined = 0;
    hs_arg_key key; /* its words are written as found: no clearing */
    key.kernel = c->kernel;
    key.n = 0;
    bool memo = hs_arg_memo_usable(&key) && walk_args(c, k, st, &key, &examined);
    if (memo) {
        if (!hs_arg_memo_find(&key, &st->facts)) {
            for (int i = 0; i < key.n; i++)
                word(st, NULL, &key.w[i]);
            hs_arg_memo_keep(&key, &st->facts);
        }
    } else {
        examined = 0;
        walk_args(c, k, st, NULL, &examined);
    }
    hs_stat_add(HS_STAT_launch_word, examined);
}

HS_HOT void hs_gather_launch(const hs_call *c, hs_call_state *st)
{
    gather_stream_work(c, st);
    gather_args(c, st);
    if (HS_UNLIKELY(hs_access_tracking()))
        hs_gather_accesses(c, st);
}

HS_HOT_PATH bool hs_gather_launch_unsearched(const hs_call *c, hs_call_state *st)
{
    gather_stream_work(c, st);
    gather_args(c, st);
    return !hs_access_tracking() || hs_gather_accesses_unsearched(c, st);
}

void hs_gather_result(const hs_call *c, hs_call_state *st, int result)
{
    const hs_layer *layer = hs_layer_of(c->api);
    st->facts.device_fault = layer->is_device_fault && layer->is_device_fault(result);
}

/* ---- GPU memory faults ---- */

void hs_gather_gpu_fault(hs_gpu_fault *f)
{
    uintptr_t a = f->address;
    f->where = HS_FAULT_UNKNOWN;
    hs_where w = hs_shadow_lookup(a, &f->alloc);
    if (w != HS_WHERE_NONE) {
        f->where = w == HS_WHERE_LIVE ? HS_FAULT_INSIDE : HS_FAULT_FREED;
        f->offset = (int64_t)(a - f->alloc.base);
        return;
    }
    hs_shadow_nearest(a, &f->below, &f->has_below, &f->above, &f->has_above);
    if (hs_vmm_reservation_of(a, &f->alloc)) {
        f->where = HS_FAULT_RESERVED_UNMAPPED;
        f->offset = (int64_t)(a - f->alloc.base);
        return;
    }
    /* Next to the nearer of the two, if it is near: an overrun or an underrun of it. */
    uint64_t past = f->has_below ? a - (f->below.base + f->below.size) : UINT64_MAX;
    uint64_t before = f->has_above ? f->above.base - a : UINT64_MAX;
    if (past < HS_FAULT_NEAR_BYTES && past <= before) {
        f->where = HS_FAULT_PAST_END;
        f->alloc = f->below;
    } else if (before <= HS_FAULT_NEAR_BYTES) {
        f->where = HS_FAULT_BEFORE_START;
        f->alloc = f->above;
    } else {
        return;
    }
    f->offset = (int64_t)(a - f->alloc.base);
}
