#include "rules/check.h"
#include "torch/blocks.h"
#include "kernels/redzones.h"
#include "shadow/regions.h"

static const struct {
    const char *name;
    hs_severity severity;
} kinds[HS_KIND_COUNT] = {
#define HS_KIND(id, name, sev, meaning) [HS_KIND_##id] = {name, sev},
#include "hipshadow/finding_kinds.inc"
#undef HS_KIND
};

const char *hs_kind_name(hs_kind k) { return (unsigned)k < HS_KIND_COUNT ? kinds[k].name : "?"; }
hs_severity hs_kind_severity(hs_kind k) { return (unsigned)k < HS_KIND_COUNT ? kinds[k].severity : HS_SEV_ERROR; }

const char *hs_severity_name(hs_severity s)
{
    return s == HS_SEV_ERROR ? "error" : s == HS_SEV_WARNING ? "warning" : "info";
}

const char *hs_dir_name(int dir)
{
    static const char *const names[] = {"H2H", "H2D", "D2H", "D2D", "default"};
    return (unsigned)dir <= HS_DIR_DEFAULT ? names[dir] : "invalid";
}

bool hs_side_is_device(const hs_side *s)
{
    if (s->where == HS_WHERE_NONE)
        return s->runtime_known || s->unmapped;
    return hs_mem_kind_is_device(s->alloc.kind);
}

int hs_effective_direction(int stated, const hs_side *dst, const hs_side *src)
{
    if (stated != HS_DIR_DEFAULT)
        return stated;
    bool d = hs_side_is_device(dst), s = hs_side_is_device(src);
    return d && s ? HS_DIR_D2D : s ? HS_DIR_D2H : d ? HS_DIR_H2D : HS_DIR_H2H;
}

hs_role hs_role_of(int dir, hs_side_id side)
{
    switch (dir) {
    case HS_DIR_H2H: return HS_ROLE_HOST;
    case HS_DIR_D2D: return HS_ROLE_DEVICE;
    case HS_DIR_H2D: return side == HS_SIDE_DST ? HS_ROLE_DEVICE : HS_ROLE_HOST;
    case HS_DIR_D2H: return side == HS_SIDE_SRC ? HS_ROLE_DEVICE : HS_ROLE_HOST;
    default: return HS_ROLE_NONE;
    }
}

typedef struct sink {
    hs_finding *out;
    int max, n;
} sink;

static void add(sink *k, hs_kind kind, hs_severity sev, hs_side_id side, uint64_t overrun, hs_role role)
{
    if (k->n < k->max)
        k->out[k->n++] = (hs_finding){kind, sev, side, overrun, role};
}

/* Bytes the range [ptr, ptr+extent) runs past the end of its allocation (0 if none).  Mapped
 * memory ends where the adjacent maps of its reservation end. */
static uint64_t overrun_of(const hs_side *s)
{
    if (s->ptr < s->alloc.base) /* before the nearest map above: nothing of the range is mapped */
        return s->extent;
    uint64_t offset = s->ptr - s->alloc.base;
    uint64_t end = offset + s->extent;
    uint64_t size = s->contiguous > s->alloc.size ? s->contiguous : s->alloc.size;
    return end > size ? end - size : 0;
}

HS_HOT static void check_bounds(sink *k, const hs_side *s, hs_side_id id)
{
    uint64_t over = overrun_of(s);
    if (over) {
        add(k, hs_mem_kind_is_device(s->alloc.kind) ? HS_KIND_OUT_OF_BOUNDS : HS_KIND_HOST_OUT_OF_BOUNDS, HS_SEV_ERROR,
            id, over, 0);
        return;
    }
    /* Inside the allocation, but past the end of the annotated tensor it starts in, or of the
     * PyTorch caching-allocator block it starts in: the runtime cannot see this one. */
    const hs_span *r = s->in_region ? &s->region : s->block_state == HS_BLOCK_LIVE ? &s->block : NULL;
    if (r && s->ptr + s->extent > r->base + r->size)
        add(k, HS_KIND_REGION_OVERRUN, HS_SEV_ERROR, id, s->ptr + s->extent - (r->base + r->size), 0);
}

/* Memory of this kind is what each role of a copy expects.  Pinned or registered host memory
 * is reachable from the GPU, so a copy that names it as device memory works, but the stated
 * kind is wrong and breaks on runtimes that honour it.  A call with no kind to state, that takes
 * device memory by address (the CUDA driver's), takes it as what it is: device-mapped memory. */
static bool device_role_accepts(uint32_t kind) { return hs_mem_kind_is_device(kind); }
static bool device_role_accepts_by_address(uint32_t kind)
{
    return hs_mem_kind_is_device(kind) || hs_mem_kind_is_host(kind);
}
static bool host_role_accepts(uint32_t kind)
{
    return kind != HS_MEM_DEVICE && kind != HS_MEM_EXTERNAL_DEVICE && kind != HS_MEM_MAPPED;
}

HS_HOT static void check_device_side(sink *k, const hs_side *s, hs_side_id id, bool by_address)
{
    switch (s->where) {
    case HS_WHERE_FREED: add(k, HS_KIND_USE_AFTER_FREE, HS_SEV_ERROR, id, 0, 0); return;
    case HS_WHERE_LIVE:
        /* the segment is live, the tensor's block was freed; or the pool is, and its NVTX region was */
        if (s->block_state == HS_BLOCK_FREED || s->region_freed) {
            add(k, HS_KIND_USE_AFTER_FREE, HS_SEV_ERROR, id, 0, 0);
            return;
        }
        if (!(by_address ? device_role_accepts_by_address(s->alloc.kind) : device_role_accepts(s->alloc.kind)))
            add(k, HS_KIND_DIRECTION_MISMATCH, HS_SEV_WARNING, id, 0, HS_ROLE_DEVICE);
        check_bounds(k, s, id);
        return;
    case HS_WHERE_NONE:
        if (s->runtime_known || s->unmapped) /* reserved but unmapped: out of bounds of the nearest map */
            check_bounds(k, s, id);
        else
            add(k, HS_KIND_UNKNOWN_POINTER, HS_SEV_ERROR, id, 0, HS_ROLE_DEVICE);
        return;
    }
}

static void check_host_side(sink *k, const hs_side *s, hs_side_id id)
{
    switch (s->where) {
    case HS_WHERE_FREED: add(k, HS_KIND_USE_AFTER_FREE, HS_SEV_ERROR, id, 0, 0); return;
    case HS_WHERE_LIVE:
        if (s->region_freed) { /* an NVTX heap in pinned host memory */
            add(k, HS_KIND_USE_AFTER_FREE, HS_SEV_ERROR, id, 0, 0);
            return;
        }
        if (!host_role_accepts(s->alloc.kind))
            add(k, HS_KIND_DIRECTION_MISMATCH, HS_SEV_ERROR, id, 0, HS_ROLE_HOST);
        check_bounds(k, s, id);
        return;
    case HS_WHERE_NONE:
        if (s->runtime_known || s->unmapped)
            add(k, HS_KIND_DIRECTION_MISMATCH, HS_SEV_ERROR, id, 0, HS_ROLE_HOST);
        else if (s->host_checked && s->host.status != HS_HOST_OK)
            add(k, HS_KIND_HOST_OUT_OF_BOUNDS, HS_SEV_ERROR, id, 0, 0);
        return;
    }
}

/* One bug, one finding: a side that should be device memory is in no allocation (so, host
 * memory) while the other side, which should be host memory, is device memory.  The stated
 * direction is reversed (or the pointers are swapped): one direction-mismatch that says both
 * (expected_role HS_ROLE_REVERSED), not an unknown-pointer and a direction-mismatch. */
static int one_reversed_copy(sink *k)
{
    int unknown = -1, mismatch = -1;
    for (int i = 0; i < k->n; i++)
        if (k->out[i].kind == HS_KIND_UNKNOWN_POINTER)
            unknown = i;
        else if (k->out[i].kind == HS_KIND_DIRECTION_MISMATCH && k->out[i].expected_role == HS_ROLE_HOST)
            mismatch = i;
    if (unknown < 0 || mismatch < 0)
        return k->n;
    k->out[mismatch].expected_role = HS_ROLE_REVERSED;
    k->out[unknown] = k->out[--k->n]; /* the unknown pointer is the other half of the same bug */
    return k->n;
}

/* A range that starts in a region this thread may not read (or write) through NVTX's permissions. */
static void check_access(sink *k, const hs_side *s, hs_side_id id, bool write)
{
    if (s->ptr && s->in_region && (s->region_denied & (write ? HS_REGION_WRITE : HS_REGION_READ)))
        add(k, HS_KIND_REGION_PERMISSION, HS_SEV_ERROR, id, 0, 0);
}

int hs_check_memory_op(const hs_call *call, const hs_facts *f, hs_finding *out, int max)
{
    sink k = {out, max, 0};
    if (call->bytes == 0)
        return k.n; /* the runtime returns at once for zero bytes: nothing is touched */

    if (call->op == HS_OP_MEMSET) {
        if (!f->dst.ptr)
            add(&k, HS_KIND_NULL_POINTER, HS_SEV_ERROR, HS_SIDE_DST, 0, 0);
        else if (f->dst.where == HS_WHERE_LIVE && hs_mem_kind_is_host(f->dst.alloc.kind))
            check_bounds(&k, &f->dst, HS_SIDE_DST); /* memset of pinned memory is allowed */
        else
            check_device_side(&k, &f->dst, HS_SIDE_DST, call->dir_by_address);
        check_access(&k, &f->dst, HS_SIDE_DST, true);
        return k.n;
    }

    const struct {
        const hs_side *side;
        hs_side_id id;
    } sides[2] = {{&f->src, HS_SIDE_SRC}, {&f->dst, HS_SIDE_DST}};
    for (int i = 0; i < 2; i++) {
        const hs_side *s = sides[i].side;
        if (!s->ptr) {
            add(&k, HS_KIND_NULL_POINTER, HS_SEV_ERROR, sides[i].id, 0, 0);
            continue;
        }
        if (hs_role_of(f->dir, sides[i].id) == HS_ROLE_DEVICE)
            check_device_side(&k, s, sides[i].id, call->dir_by_address);
        else
            check_host_side(&k, s, sides[i].id);
        check_access(&k, s, sides[i].id, sides[i].id == HS_SIDE_DST);
    }
    return one_reversed_copy(&k);
}

bool hs_check_copy_brief_clean(int dir, const hs_brief_side *dst, const hs_brief_side *src)
{
    if (dir < HS_DIR_H2H || dir > HS_DIR_D2D)
        return false; /* hipMemcpyDefault: the direction comes from facts the brief lacks */
    const hs_brief_side *sides[2] = {dst, src};
    for (int i = 0; i < 2; i++) {
        const hs_brief_side *s = sides[i];
        if (hs_role_of(dir, i == 0 ? HS_SIDE_DST : HS_SIDE_SRC) == HS_ROLE_DEVICE) {
            if (!s->live || !device_role_accepts(s->kind)) /* in no allocation: unknown-pointer */
                return false;
        } else if (s->live ? !host_role_accepts(s->kind) : !s->host_ok) {
            return false;
        }
    }
    return true;
}

bool hs_is_sync_like(const hs_call *c)
{
    return ((c->op == HS_OP_COPY || c->op == HS_OP_MEMSET) && !c->async) ||
           (c->op == HS_OP_SYNC && c->sync != HS_SYNC_EVENT);
}

int hs_check_stream_handle(const hs_call *call, const hs_facts *f, hs_finding *out, int max)
{
    sink k = {out, max, 0};
    if (call->has_stream && f->stream_state != HS_STREAM_OK)
        add(&k, HS_KIND_INVALID_STREAM, HS_SEV_ERROR, HS_SIDE_NONE, 0, 0);
    return k.n;
}

HS_HOT int hs_check_stream_work(const hs_call *call, const hs_facts *f, hs_finding *out, int max)
{
    sink k = {out, max, 0};
    /* A synchronous operation waits for the stream, and a captured stream cannot be waited for. */
    if (hs_is_sync_like(call) && (f->capturing_stream || f->own_stream_capturing))
        add(&k, HS_KIND_CAPTURE_VIOLATION, HS_SEV_ERROR, HS_SIDE_NONE, 0, 0);
    if (!f->has_pending)
        return k.n;
    /* Another stream's pending work touches the same host range, one of the two writes it,
     * and nothing orders them. */
    if (f->conflict.found)
        add(&k, HS_KIND_ASYNC_OVERLAP, HS_SEV_ERROR, f->pending.host_write ? HS_SIDE_DST : HS_SIDE_SRC, 0, 0);
    /* An async D2H into pageable memory is staged by the runtime and becomes synchronous. */
    const hs_side *d = &f->dst;
    if (f->want_notes && call->op == HS_OP_COPY && f->dir == HS_DIR_D2H && d->host_checked &&
        d->host.status == HS_HOST_OK)
        add(&k, HS_KIND_PAGEABLE_ASYNC, hs_kind_severity(HS_KIND_PAGEABLE_ASYNC), HS_SIDE_DST, 0, 0);
    return k.n;
}

/* The access history's findings: a stream-race (an error when both accesses are known, a
 * warning when a kernel argument's write is assumed); an uninitialized read (a copy's: an error;
 * a kernel's pointer into a partly written allocation: a warning). */
HS_HOT static void check_accesses(sink *k, const hs_call *call, const hs_facts *f)
{
    const hs_access_facts *a = f->access;
    if (!a)
        return;
    if (a->has_race)
        add(k, HS_KIND_STREAM_RACE, a->race.mine.assumed || a->race.other.assumed ? HS_SEV_WARNING : HS_SEV_ERROR,
            (hs_side_id)a->race.side, 0, 0);
    if (a->has_uninit)
        add(k, HS_KIND_UNINITIALIZED_READ, call->op == HS_OP_LAUNCH ? HS_SEV_WARNING : HS_SEV_ERROR,
            (hs_side_id)a->uninit.side, 0, 0);
}

HS_HOT int hs_check_copy(const hs_call *call, const hs_facts *f, hs_finding *out, int max)
{
    int n = hs_check_memory_op(call, f, out, max);
    n += hs_check_stream_work(call, f, out + n, max - n);
    sink k = {out + n, max - n, 0};
    check_accesses(&k, call, f);
    return n + k.n;
}

HS_HOT int hs_check_launch(const hs_call *call, const hs_facts *f, hs_finding *out, int max)
{
    int n = hs_check_stream_work(call, f, out, max);
    sink k = {out + n, max - n, 0};
    check_accesses(&k, call, f);
    for (int i = 0; i < f->n_args; i++) {
        const hs_launch_arg *a = &f->args[i];
        if (a->state == HS_ARG_FREED) {
            add(&k, HS_KIND_KERNEL_USE_AFTER_FREE, a->how == HS_ARG_EXACT ? HS_SEV_ERROR : HS_SEV_WARNING, HS_SIDE_DST,
                0, 0);
            break; /* one finding per launch: the report lists every argument */
        }
        /* A freed PyTorch block of a live segment, or a freed NVTX region of a live pool.  Only a
         * whole pointer-sized parameter counts: words scanned out of a struct passed by value may
         * be stale bytes, and the allocator frees and reuses blocks all the time. */
        if ((a->block_state == HS_BLOCK_FREED || a->region_freed) && a->how == HS_ARG_EXACT) {
            add(&k, HS_KIND_KERNEL_USE_AFTER_FREE, HS_SEV_ERROR, HS_SIDE_DST, 0, 0);
            break;
        }
    }
    return n + k.n;
}

int hs_check_free(const hs_call *call, const hs_facts *f, hs_finding *out, int max)
{
    sink k = {out, max, 0};
    if (!call->free_ptr)
        return k.n; /* freeing NULL is a no-op in both runtimes */
    if (f->release == HS_RELEASED) {
        /* Memory still in use by async work that nothing orders before this free. */
        if (f->conflict.found)
            add(&k, HS_KIND_FREE_WHILE_PENDING, HS_SEV_ERROR, HS_SIDE_DST, 0, 0);
        return k.n;
    }
    /* Memory from an unwrapped path (or from before hipshadow was loaded) is not an error. */
    if (f->release == HS_RELEASE_UNKNOWN && f->dst.runtime_known)
        return k.n;
    add(&k, HS_KIND_INVALID_FREE, HS_SEV_ERROR, HS_SIDE_DST, 0, 0);
    return k.n;
}

static bool may_be_refused(hs_op op)
{
    return op == HS_OP_ALLOC || op == HS_OP_VMM_RESERVE || op == HS_OP_VMM_CREATE || op == HS_OP_POOL_CREATE ||
           op == HS_OP_LOOKUP;
}

int hs_check_result(const hs_call *call, const hs_facts *f, bool rescued, const hs_finding *earlier, int n_earlier,
                    hs_finding *out)
{
    /* The runtime refused an in-bounds copy from a sub-buffer, and hipshadow's kernel did it. */
    if (rescued) {
        *out = (hs_finding){HS_KIND_RUNTIME_ERROR, HS_SEV_WARNING, HS_SIDE_SRC, 0, 0};
        return 1;
    }
    /* A sticky fault after checks that found nothing: not this call's doing, but the device's,
     * from work already queued.  (A copy the checks caught touching freed memory faulted itself:
     * that is runtime-error, explained by what the checks found.) */
    if (f->device_fault && n_earlier == 0) {
        *out = (hs_finding){HS_KIND_DEVICE_FAULT, HS_SEV_ERROR, HS_SIDE_NONE, 0, 0};
        return 1;
    }
    if (may_be_refused(call->op) && n_earlier == 0)
        return 0;
    *out = (hs_finding){HS_KIND_RUNTIME_ERROR, HS_SEV_ERROR, HS_SIDE_NONE, 0, 0};
    for (int i = 0; i < n_earlier; i++)
        if (earlier[i].side) { /* point at the side the checks blamed */
            out->side = earlier[i].side;
            break;
        }
    return 1;
}

hs_finding hs_check_redzone(const hs_redzone_damage *d)
{
    return (hs_finding){HS_KIND_KERNEL_OUT_OF_BOUNDS_WRITE, HS_SEV_ERROR, HS_SIDE_DST, (uint64_t)d->last + 1, 0};
}

hs_finding hs_check_gpu_fault(const hs_gpu_fault *fault)
{
    (void)fault; /* wherever it falls, the device faulted: the where is explained, not judged */
    return (hs_finding){HS_KIND_DEVICE_FAULT, HS_SEV_ERROR, HS_SIDE_DST, 0, 0};
}

bool hs_finding_is_device_fault(const hs_finding *f) { return f->kind == HS_KIND_DEVICE_FAULT; }

hs_finding hs_check_leak(const hs_facts *f)
{
    (void)f;
    return (hs_finding){HS_KIND_LEAK, hs_kind_severity(HS_KIND_LEAK), HS_SIDE_DST, 0, 0};
}
