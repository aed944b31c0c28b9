/* A stand-in for the CUDA driver (libcuda.so.1) on host memory, for testing hipshadow's CUDA
 * front-end without an NVIDIA GPU.  The CUDA counterpart of tests/simhip/simhip.c.
 *
 * Mirrored from the real driver (CUDA 13 cuda.h, its documentation and observable behaviour):
 *  - the ABI names: every entry point is exported under its versioned name (cuMemAlloc_v2,
 *    cuMemcpyDtoH_v2, cuStreamDestroy_v2, ...), with the _ptds/_ptsz per-thread-default-stream
 *    twins where cuda.h has them (there, a NULL stream means the per-thread stream);
 *  - cuGetProcAddress/_v2 resolve a base name ("cuMemAlloc") + cudaVersion + flags through a
 *    static table of the driver's own functions, never through dlsym: an LD_PRELOAD library that
 *    exports cuMemAlloc_v2 is NOT reached this way (it must intercept cuGetProcAddress itself).
 *    The table's versions are cudaTypedefs.h's (PFN_cuMemAlloc_v3020, PFN_cuCtxSynchronize_v13000).
 *    An unknown name, or a version older than the first ABI of the name, gives CUDA_ERROR_NOT_FOUND,
 *    *pfn = NULL and *symbolStatus SYMBOL_NOT_FOUND / VERSION_NOT_SUFFICIENT; a version newer than
 *    the driver's (13000) CUDA_ERROR_INVALID_VALUE, as cuda.h documents;
 *  - device memory is host memory inside one reserved PROT_NONE aperture (committed on alloc), so
 *    device pointers are real addresses; a freed range is decommitted and PROT_NONE again;
 *  - cuInit first (else CUDA_ERROR_NOT_INITIALIZED), a current context for allocations, copies,
 *    streams and events (else CUDA_ERROR_INVALID_CONTEXT); 2 devices, a primary context each;
 *  - allocations of 0 bytes -> CUDA_ERROR_INVALID_VALUE; cuMemFree(0) and cuMemFreeHost(NULL)
 *    succeed (free(NULL)); freeing anything but an allocation's base -> CUDA_ERROR_INVALID_VALUE;
 *  - copies: NULL -> CUDA_ERROR_INVALID_VALUE; a side running past the end of the allocation
 *    that contains it -> CUDA_ERROR_INVALID_VALUE and no copy; the device side of a typed copy
 *    (DtoH, HtoD, DtoD, Peer, 2D DEVICE) must be device-accessible memory (the aperture, or
 *    pinned/registered host memory); a destroyed stream -> CUDA_ERROR_INVALID_HANDLE;
 *  - async work is queued per stream and runs only at a synchronisation point; synchronous
 *    copies and memsets on the legacy NULL stream first wait for every blocking stream, and a
 *    blocking stream waits for the legacy stream (CU_STREAM_NON_BLOCKING streams do not);
 *    cuMemFree, cuMemFreeHost and cuMemUnmap synchronise the device;
 *  - touching freed (or mapped but not yet accessible) device memory, from a synchronous copy
 *    or from queued work when it runs, is a GPU fault: the sticky CUDA_ERROR_ILLEGAL_ADDRESS,
 *    returned from then on by every call that uses the context;
 *  - virtual memory management: reservations (cuMemAddressReserve) in the aperture aligned to the
 *    2 MiB granularity; physical handles (cuMemCreate) are memfds, so two mappings of one handle
 *    alias like real physical memory; cuMemMap maps PROT_NONE, cuMemSetAccess opens it, cuMemUnmap
 *    returns the range to the reservation.  A copy may span adjacent mappings of one reservation;
 *    reserved-but-unmapped space makes a copy fail with CUDA_ERROR_INVALID_VALUE (the driver
 *    cannot translate it at submission).  cuMemGetAddressRange answers the single mapping (NOT_FOUND
 *    on unmapped space); cuPointerGetAttribute RANGE_START_ADDR/RANGE_SIZE answer the reservation,
 *    as the documentation says ("not necessarily the mapped region, but the mappable address range").
 *
 *  - stream capture: work on a captured stream is not run; waiting for a captured stream
 *    (synchronising or querying it, a synchronous call on it, the context synchronising, the
 *    legacy stream waiting for a captured blocking stream) fails and invalidates the capture,
 *    whose end then gives no graph (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED).
 *
 * Simplified: one global sticky error (real ones are per context); one shared per-thread stream
 * (threads are not told apart); access rights set by cuMemSetAccess are the union over devices;
 * cuMemAllocAsync memory is usable at once; cuGetProcAddress knows only the functions below (no
 * 32-bit _v1 entry points, so e.g. cuMemAlloc below 3020 is VERSION_NOT_SUFFICIENT); no arrays or
 * 3-D copies; a pool is only a name; captured work is dropped, so a graph runs nothing; modules
 * are simcuda_images (simcuda.h).  Kernels are host functions: simcuda_function_from_host() (or a
 * module) makes a CUfunction, and cuLaunchKernel queues it on the stream.  The driver cannot know parameter sizes,
 * so kernelParams are passed as given (they must live until the stream is synchronised) unless
 * simcuda_function_set_param_sizes() says how to copy them by value as the real driver does.  A
 * kernel calls simcuda_device_range_ok() before touching device memory: a bad range is the fault.
 * SIMCUDA_TRACE=1 prints every entry point as it runs ("simcuda: cuMemcpyDtoH_v2" on stderr).
 * SIMCUDA_APERTURE_GIB=N reserves N GiB of device addresses instead of 64 (valgrind maps 4). */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1 /* declares both the legacy and the _ptds/_ptsz prototypes */
#include <cuda.h>

#include "simcuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIM_EXPORT __attribute__((visibility("default")))
#define P(x) ((uintptr_t)(x))

enum { SIM_DRIVER_VERSION = 13000, N_DEVICES = 2 };
static size_t APERTURE_SIZE = 64ull << 30; /* SIMCUDA_APERTURE_GIB */
static const size_t PAGE = 4096;
static const size_t GRANULARITY = 2u << 20;

enum { OBJ_DEVICE = 1, OBJ_MANAGED, OBJ_PINNED, OBJ_REGISTERED, OBJ_VMM };
enum { ACC_R = 1, ACC_RW = 3 };

typedef struct sim_handle { /* a cuMemCreate physical allocation */
    int fd, device, maps, released;
    size_t size;
    struct sim_handle *next;
} sim_handle;

typedef struct sim_rsv {
    uintptr_t base;
    size_t size;
    struct sim_rsv *next;
} sim_rsv;

typedef struct sim_object {
    uintptr_t base;
    size_t size;
    int kind, device, access;
    unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
    sim_rsv *rsv;          /* OBJ_VMM: its reservation and handle */
    sim_handle *handle;
} sim_object;

typedef struct sim_event sim_event;
typedef struct sim_function {
    unsigned magic;
    void (*fn)(void **params);
    unsigned nparams;
    size_t *sizes;    /* NULL: kernelParams are not copied */
    const char *name; /* a module's kernel: its name */
} sim_function;

typedef enum { OP_COPY, OP_MEMSET, OP_FREE, OP_EVENT, OP_KERNEL, OP_HOSTFN, OP_CALLBACK } op_type;
typedef struct sim_op {
    op_type type;
    uintptr_t dst, src;
    size_t width, height, dpitch, spitch; /* copies and memsets: height rows of width bytes */
    unsigned value, value_size;
    sim_event *event;
    sim_function *kernel;
    void **params;
    CUhostFn hostfn;
    CUstreamCallback callback;
    CUstream stream; /* OP_CALLBACK: the handle the program gave */
    void *arg, *owned;
    struct sim_op *next;
} sim_op;

#define STREAM_MAGIC 0x53545245u
typedef struct sim_stream {
    unsigned magic, flags;
    int device;
    sim_op *head, *tail;
    struct sim_stream *next_live;
    int capturing, invalidated; /* cuStreamBeginCapture: work goes into the graph, not the queue */
    sim_op *captured;           /* dropped at the end of capture: graphs run nothing here */
} sim_stream;

struct sim_event {
    unsigned flags;
    int device; /* its context's, as created */
    int recorded, done;
    sim_stream *stream;
    sim_event *next_live;
};

#define CTX_MAGIC 0x43545854u
typedef struct sim_ctx {
    unsigned magic;
    int device, refs;
} sim_ctx;

static struct {
    pthread_once_t once;
    pthread_mutex_t lock; /* recursive: a kernel run under it may call simcuda_device_range_ok */
    atomic_int initialized, sticky;
    uintptr_t aperture, aperture_next;
    sim_object *objects;
    size_t n_objects, cap_objects;
    unsigned long long next_id;
    sim_rsv *reservations;
    sim_handle *handles;
    sim_stream legacy, per_thread;
    sim_stream *live_streams;
    sim_event *live_events;
    sim_ctx ctx[N_DEVICES];
} sim = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP};

static __thread sim_ctx *current_ctx;

static int tracing(void)
{
    static _Atomic int t = -1; /* atomic: threads may set it at once (TSan) */
    if (t < 0) {
        const char *e = getenv("SIMCUDA_TRACE");
        t = e && *e == '1';
    }
    return t;
}
#define TRACE()                                                                                                        \
    do {                                                                                                               \
        if (tracing())                                                                                                 \
            fprintf(stderr, "simcuda: %s\n", __func__);                                                                \
    } while (0)
#define LOCK() pthread_mutex_lock(&sim.lock)
#define UNLOCK() pthread_mutex_unlock(&sim.lock)

static void sim_init(void)
{
    const char *gib = getenv("SIMCUDA_APERTURE_GIB");
    if (gib && atoi(gib) > 0)
        APERTURE_SIZE = (size_t)atoi(gib) << 30;
    void *p = mmap(NULL, APERTURE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "simcuda: cannot reserve the device aperture\n");
        abort();
    }
    /* Start 2 MiB-aligned, so reservations can be aligned to the granularity. */
    sim.aperture = (uintptr_t)p;
    sim.aperture_next = (sim.aperture + GRANULARITY - 1) & ~(GRANULARITY - 1);
    sim.legacy.magic = sim.per_thread.magic = STREAM_MAGIC;
    for (int d = 0; d < N_DEVICES; d++)
        sim.ctx[d] = (sim_ctx){CTX_MAGIC, d, 0};
}
#define INIT() pthread_once(&sim.once, sim_init)

/* Every entry point but the version, error-string and proc-address queries starts here: device
 * and context queries need cuInit; memory calls also a context without a sticky fault; work
 * (allocations, copies, streams, events) also a current context. */
enum { NEED_INIT, NEED_HEALTHY, NEED_CTX };
static CUresult enter(int need)
{
    INIT();
    if (!atomic_load(&sim.initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (need >= NEED_HEALTHY && atomic_load(&sim.sticky))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    if (need >= NEED_CTX && !current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_SUCCESS;
}
#define ENTER(need)                                                                                                    \
    do {                                                                                                               \
        CUresult e_ = enter(need);                                                                                     \
        if (e_ != CUDA_SUCCESS)                                                                                        \
            return e_;                                                                                                 \
    } while (0)

static CUresult status(void) { return atomic_load(&sim.sticky) ? CUDA_ERROR_ILLEGAL_ADDRESS : CUDA_SUCCESS; }

/* A GPU fault: the context is lost, every later call says so. */
static CUresult fault(void)
{
    atomic_store(&sim.sticky, 1);
    return CUDA_ERROR_ILLEGAL_ADDRESS;
}

static int in_aperture(uintptr_t p) { return p >= sim.aperture && p < sim.aperture + APERTURE_SIZE; }

static uintptr_t aperture_take(size_t size, size_t align)
{
    uintptr_t base = (sim.aperture_next + align - 1) & ~(uintptr_t)(align - 1);
    if (size > sim.aperture + APERTURE_SIZE - base)
        return 0;
    sim.aperture_next = base + size;
    return base;
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* ---- objects (lock held): sorted by base ---- */

static size_t upper_bound(uintptr_t p)
{
    size_t lo = 0, hi = sim.n_objects;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sim.objects[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static sim_object *find_object(uintptr_t p)
{
    size_t i = upper_bound(p);
    if (i == 0)
        return NULL;
    sim_object *o = &sim.objects[i - 1];
    return p - o->base < o->size ? o : NULL;
}

static int overlaps_object(uintptr_t p, size_t n)
{
    size_t i = upper_bound(p + n - 1);
    return i > 0 && sim.objects[i - 1].base + sim.objects[i - 1].size > p;
}

static sim_object *add_object(uintptr_t base, size_t size, int kind, int device)
{
    if (sim.n_objects == sim.cap_objects) {
        size_t cap = sim.cap_objects ? sim.cap_objects * 2 : 64;
        sim_object *grown = realloc(sim.objects, cap * sizeof *grown);
        if (!grown)
            return NULL;
        sim.objects = grown;
        sim.cap_objects = cap;
    }
    size_t at = upper_bound(base);
    memmove(&sim.objects[at + 1], &sim.objects[at], (sim.n_objects - at) * sizeof *sim.objects);
    sim.objects[at] = (sim_object){
        .base = base, .size = size, .kind = kind, .device = device, .access = ACC_RW, .id = ++sim.next_id};
    sim.n_objects++;
    return &sim.objects[at];
}

static void remove_object(sim_object *o)
{
    size_t at = (size_t)(o - sim.objects);
    memmove(o, o + 1, (sim.n_objects - at - 1) * sizeof *o);
    sim.n_objects--;
}

static sim_rsv *find_reservation(uintptr_t p)
{
    for (sim_rsv *r = sim.reservations; r; r = r->next)
        if (p - r->base < r->size)
            return r;
    return NULL;
}

/* Decommits [base, base+size) of the aperture: the pages go back and touching them faults. */
static void decommit(uintptr_t base, size_t size)
{
    mmap((void *)base, round_up(size, PAGE), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

/* ---- validation at submission ---- */

/* A side of a copy: [p, p+n) must not run past the allocation holding p.  VMM mappings of one
 * reservation that follow each other count as one range; reserved but unmapped space fails.
 * Memory the driver does not know (host memory, freed device memory) passes: if it is freed
 * device memory, the copy faults when it runs. */
static CUresult validate_range(uintptr_t p, size_t n)
{
    sim_object *o = find_object(p);
    if (!o)
        return find_reservation(p) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    for (;;) {
        size_t left = o->base + o->size - p;
        if (n <= left)
            return CUDA_SUCCESS;
        if (o->kind != OBJ_VMM)
            return CUDA_ERROR_INVALID_VALUE;
        p += left;
        n -= left;
        sim_object *next = find_object(p);
        if (!next || next->kind != OBJ_VMM || next->rsv != o->rsv)
            return CUDA_ERROR_INVALID_VALUE;
        o = next;
    }
}

/* The device side of a typed copy or a memset: memory the device can reach. */
static int device_accessible(uintptr_t p) { return in_aperture(p) || find_object(p) != NULL; }

static size_t extent(size_t pitch, size_t width, size_t height) { return height ? (height - 1) * pitch + width : 0; }

/* ---- execution ---- */

/* At run time every byte of an aperture range must be live with the access `need`. */
static int range_live(uintptr_t p, size_t n, int need)
{
    if (!in_aperture(p))
        return 1;
    while (n) {
        sim_object *o = find_object(p);
        if (!o || (o->access & need) != need)
            return 0;
        size_t step = o->base + o->size - p;
        if (step > n)
            step = n;
        p += step;
        n -= step;
    }
    return 1;
}

static void free_device_object(uintptr_t base)
{
    sim_object *o = find_object(base);
    if (o && o->base == base && (o->kind == OBJ_DEVICE || o->kind == OBJ_MANAGED)) {
        decommit(o->base, o->size);
        remove_object(o);
    }
}

static CUresult execute(const sim_op *op)
{
    if (atomic_load(&sim.sticky))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    switch (op->type) {
    case OP_COPY:
        if (!range_live(op->src, extent(op->spitch, op->width, op->height), ACC_R) ||
            !range_live(op->dst, extent(op->dpitch, op->width, op->height), ACC_RW))
            return fault();
        for (size_t r = 0; r < op->height; r++)
            memmove((char *)(op->dst + r * op->dpitch), (const char *)(op->src + r * op->spitch), op->width);
        break;
    case OP_MEMSET:
        if (!range_live(op->dst, op->width, ACC_RW))
            return fault();
        for (size_t i = 0; i < op->width; i += op->value_size)
            memcpy((char *)op->dst + i, &op->value, op->value_size);
        break;
    case OP_FREE: free_device_object(op->dst); break;
    case OP_EVENT:
        if (op->event)
            op->event->done = 1;
        break;
    case OP_KERNEL: op->kernel->fn(op->params); break;
    case OP_HOSTFN: op->hostfn(op->arg); break;
    case OP_CALLBACK: /* called with the stream's status: CUDA_SUCCESS, or the error its work met */
        op->callback(op->stream, status(), op->arg);
        break;
    }
    return status();
}

/* Every stream: the legacy one, the per-thread one, then the created ones. */
static sim_stream *next_stream(sim_stream *st)
{
    return !st                     ? &sim.legacy
           : st == &sim.legacy     ? &sim.per_thread
           : st == &sim.per_thread ? sim.live_streams
                                   : st->next_live;
}
#define FOR_EACH_STREAM(st) for (sim_stream *st = next_stream(NULL); st; st = next_stream(st))

/* Runs a stream's queued work in order; with `until`, stops once that event's marker ran.  The
 * only way work fails is the sticky fault. */
static CUresult drain(sim_stream *st, const sim_event *until)
{
    while (st->head) {
        sim_op *op = st->head;
        if (!(st->head = op->next))
            st->tail = NULL;
        execute(op);
        int stop = until && op->type == OP_EVENT && op->event == until;
        free(op->owned);
        free(op);
        if (stop)
            break;
    }
    return status();
}

static CUresult drain_all(void)
{
    FOR_EACH_STREAM(st) drain(st, NULL);
    return status();
}

/* Legacy default-stream semantics: the legacy stream waits for every blocking stream (the
 * per-thread stream is one), and a blocking stream for the legacy stream. */
static CUresult sync_stream(sim_stream *st)
{
    if (st == &sim.legacy) {
        FOR_EACH_STREAM(l) if (!(l->flags & CU_STREAM_NON_BLOCKING)) drain(l, NULL);
    } else {
        if (!(st->flags & CU_STREAM_NON_BLOCKING))
            drain(&sim.legacy, NULL);
        drain(st, NULL);
    }
    return status();
}

static sim_stream *stream_of(CUstream s, int ptds)
{
    if (s == NULL)
        return ptds ? &sim.per_thread : &sim.legacy;
    if (s == CU_STREAM_LEGACY)
        return &sim.legacy;
    if (s == CU_STREAM_PER_THREAD)
        return &sim.per_thread;
    for (sim_stream *l = sim.live_streams; l; l = l->next_live)
        if ((CUstream)l == s)
            return l;
    return NULL;
}

/* The device a stream works for: a created stream's, as created; the built-in streams are the
 * current context's. */
static int stream_device(const sim_stream *st)
{
    return st == &sim.legacy || st == &sim.per_thread ? current_ctx->device : st->device;
}

static CUresult enqueue(sim_stream *st, const sim_op *op)
{
    sim_op *q = malloc(sizeof *q);
    if (!q)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *q = *op;
    q->next = NULL;
    if (st->capturing) {
        q->next = st->captured;
        st->captured = q;
        return CUDA_SUCCESS;
    }
    if (st->tail)
        st->tail->next = q;
    else
        st->head = q;
    st->tail = q;
    return CUDA_SUCCESS;
}

static void drop_captured(sim_stream *st)
{
    while (st->captured) {
        sim_op *next = st->captured->next;
        free(st->captured->owned);
        free(st->captured);
        st->captured = next;
    }
}

/* Whether anything may wait for `st` now (lock held).  Not a stream being captured (its capture
 * is invalidated); not the legacy stream while a blocking stream is captured (it would wait for
 * it).  st NULL: the whole context, which no capture anywhere allows. */
static CUresult capture_allows_wait(sim_stream *st)
{
    CUresult e = CUDA_SUCCESS;
    FOR_EACH_STREAM(l)
    {
        if (!l->capturing)
            continue;
        if (!st || l == st)
            e = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        else if (st == &sim.legacy && !(l->flags & CU_STREAM_NON_BLOCKING))
            e = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        else
            continue;
        l->invalidated = 1;
    }
    return e;
}

/* Queues `op` on the stream, or (synchronous call) runs it after the work it must follow. */
static CUresult submit(sim_op *op, CUstream s, int ptds, int async)
{
    sim_stream *st = stream_of(s, ptds);
    /* Work on the legacy stream would wait for a captured blocking stream, even queued work. */
    CUresult e = !st ? CUDA_ERROR_INVALID_HANDLE : async && st != &sim.legacy ? CUDA_SUCCESS : capture_allows_wait(st);
    if (e != CUDA_SUCCESS) {
        free(op->owned);
        return e;
    }
    if (async)
        return enqueue(st, op);
    e = sync_stream(st);
    if (e == CUDA_SUCCESS)
        e = execute(op);
    free(op->owned);
    return e;
}

/* ---- copies ---- */

enum { SIDE_ANY = 0, SIDE_DEVICE = 1 };

static CUresult copy_2d(uintptr_t dst, size_t dpitch, int dst_side, uintptr_t src, size_t spitch, int src_side,
                        size_t width, size_t height, CUstream s, int ptds, int async)
{
    ENTER(NEED_CTX);
    if (!dst || !src)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    if (!stream_of(s, ptds))
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (width && height) {
        if ((dst_side == SIDE_DEVICE && !device_accessible(dst)) ||
            (src_side == SIDE_DEVICE && !device_accessible(src)))
            e = CUDA_ERROR_INVALID_VALUE;
        else if ((e = validate_range(src, extent(spitch, width, height))) == CUDA_SUCCESS &&
                 (e = validate_range(dst, extent(dpitch, width, height))) == CUDA_SUCCESS) {
            sim_op op = {.type = OP_COPY,
                         .dst = dst,
                         .src = src,
                         .width = width,
                         .height = height,
                         .dpitch = dpitch,
                         .spitch = spitch};
            e = submit(&op, s, ptds, async);
        }
    }
    UNLOCK();
    return e;
}

#define COPY1D(dst, dside, src, sside, n, s, ptds, async)                                                              \
    copy_2d(P(dst), n, dside, P(src), n, sside, n, 1, s, ptds, async)

SIM_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    TRACE();
    return COPY1D(dst, SIDE_ANY, src, SIDE_ANY, n, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    TRACE();
    return COPY1D(dst, SIDE_ANY, src, SIDE_ANY, n, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    TRACE();
    return COPY1D(dst, SIDE_ANY, src, SIDE_ANY, n, s, 0, 1);
}
SIM_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    TRACE();
    return COPY1D(dst, SIDE_ANY, src, SIDE_ANY, n, s, 1, 1);
}
SIM_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    TRACE();
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_ANY, n, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
    TRACE();
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_ANY, n, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    TRACE();
    return COPY1D(dst, SIDE_ANY, src, SIDE_DEVICE, n, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
    TRACE();
    return COPY1D(dst, SIDE_ANY, src, SIDE_DEVICE, n, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    TRACE();
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_DEVICE, n, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    TRACE();
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_DEVICE, n, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    TRACE();
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_ANY, n, s, 0, 1);
}
SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    TRACE();
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_ANY, n, s, 1, 1);
}
SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    TRACE();
    return COPY1D(dst, SIDE_ANY, src, SIDE_DEVICE, n, s, 0, 1);
}
SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    TRACE();
    return COPY1D(dst, SIDE_ANY, src, SIDE_DEVICE, n, s, 1, 1);
}
SIM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    TRACE();
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_DEVICE, n, s, 0, 1);
}
SIM_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    TRACE();
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_DEVICE, n, s, 1, 1);
}

static int valid_ctx(CUcontext c)
{
    for (int d = 0; d < N_DEVICES; d++)
        if (c == (CUcontext)&sim.ctx[d])
            return 1;
    return 0;
}

static CUresult copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s,
                          int ptds, int async)
{
    ENTER(NEED_CTX);
    if (!valid_ctx(dctx) || !valid_ctx(sctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return COPY1D(dst, SIDE_DEVICE, src, SIDE_DEVICE, n, s, ptds, async);
}

SIM_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
    TRACE();
    return copy_peer(dst, dc, src, sc, n, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
    TRACE();
    return copy_peer(dst, dc, src, sc, n, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
                                      CUstream s)
{
    TRACE();
    return copy_peer(dst, dc, src, sc, n, s, 0, 1);
}
SIM_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
                                           CUstream s)
{
    TRACE();
    return copy_peer(dst, dc, src, sc, n, s, 1, 1);
}

/* One side of a CUDA_MEMCPY2D: HOST uses the host pointer, DEVICE/UNIFIED the device pointer. */
static CUresult side_2d(CUmemorytype type, const void *host, CUdeviceptr dev, CUarray array, size_t x, size_t y,
                        size_t pitch, uintptr_t *out, int *side)
{
    uintptr_t base;
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        base = P(host);
        *side = SIDE_ANY;
        break;
    case CU_MEMORYTYPE_DEVICE:
        base = dev;
        *side = SIDE_DEVICE;
        break;
    case CU_MEMORYTYPE_UNIFIED:
        base = dev;
        *side = SIDE_ANY;
        break;
    case CU_MEMORYTYPE_ARRAY: (void)array; return CUDA_ERROR_NOT_SUPPORTED; /* no arrays here */
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    *out = base ? base + y * pitch + x : 0;
    return CUDA_SUCCESS;
}

static CUresult memcpy_2d(const CUDA_MEMCPY2D *c, CUstream s, int ptds, int async)
{
    ENTER(NEED_CTX);
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t dst, src;
    int dside, sside;
    CUresult e = side_2d(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes, c->srcY, c->srcPitch,
                         &src, &sside);
    if (e == CUDA_SUCCESS)
        e = side_2d(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes, c->dstY, c->dstPitch, &dst,
                    &dside);
    if (e != CUDA_SUCCESS)
        return e;
    if (c->Height > 1 && (c->WidthInBytes > c->srcPitch || c->WidthInBytes > c->dstPitch))
        return CUDA_ERROR_INVALID_VALUE;
    return copy_2d(dst, c->dstPitch, dside, src, c->srcPitch, sside, c->WidthInBytes, c->Height, s, ptds, async);
}

SIM_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *c)
{
    TRACE();
    return memcpy_2d(c, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *c)
{
    TRACE();
    return memcpy_2d(c, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s)
{
    TRACE();
    return memcpy_2d(c, s, 0, 1);
}
SIM_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *c, CUstream s)
{
    TRACE();
    return memcpy_2d(c, s, 1, 1);
}

/* ---- memsets ---- */

static CUresult memset_n(CUdeviceptr dst, unsigned value, unsigned value_size, size_t count, CUstream s, int ptds,
                         int async)
{
    ENTER(NEED_CTX);
    if (!dst || (dst % value_size))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    if (!stream_of(s, ptds))
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (!device_accessible(dst))
        e = CUDA_ERROR_INVALID_VALUE;
    else if (count && (e = validate_range(dst, count * value_size)) == CUDA_SUCCESS) {
        sim_op op = {.type = OP_MEMSET,
                     .dst = dst,
                     .width = count * value_size,
                     .height = 1,
                     .value = value,
                     .value_size = value_size};
        e = submit(&op, s, ptds, async);
    }
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
    TRACE();
    return memset_n(d, v, 1, n, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n)
{
    TRACE();
    return memset_n(d, v, 1, n, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
    TRACE();
    return memset_n(d, v, 4, n, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n)
{
    TRACE();
    return memset_n(d, v, 4, n, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
    TRACE();
    return memset_n(d, v, 1, n, s, 0, 1);
}
SIM_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
    TRACE();
    return memset_n(d, v, 1, n, s, 1, 1);
}
SIM_EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    TRACE();
    return memset_n(d, v, 4, n, s, 0, 1);
}
SIM_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    TRACE();
    return memset_n(d, v, 4, n, s, 1, 1);
}

/* ---- allocation ---- */

static CUresult device_alloc(CUdeviceptr *dptr, size_t size, int kind)
{
    ENTER(NEED_CTX);
    if (!dptr || !size)
        return CUDA_ERROR_INVALID_VALUE;
    size_t rounded = round_up(size, PAGE);
    LOCK();
    CUresult e = CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t base = aperture_take(rounded, PAGE);
    if (base && mprotect((void *)base, rounded, PROT_READ | PROT_WRITE) == 0 &&
        add_object(base, size, kind, current_ctx->device)) {
        *dptr = base;
        e = CUDA_SUCCESS;
    }
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    TRACE();
    return device_alloc(p, n, OBJ_DEVICE);
}

SIM_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t width, size_t height, unsigned elem)
{
    TRACE();
    ENTER(NEED_CTX);
    if (!pitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    *pitch = round_up(width, 512);
    return device_alloc(p, *pitch * height, OBJ_DEVICE);
}

static CUresult alloc_async(CUdeviceptr *p, size_t n, CUstream s, int ptds)
{
    ENTER(NEED_CTX);
    LOCK();
    int ok = stream_of(s, ptds) != NULL;
    UNLOCK();
    return ok ? device_alloc(p, n, OBJ_DEVICE) : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
    TRACE();
    return alloc_async(p, n, s, 0);
}
SIM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s)
{
    TRACE();
    return alloc_async(p, n, s, 1);
}

SIM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags)
{
    TRACE();
    ENTER(NEED_CTX);
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return device_alloc(p, n, OBJ_MANAGED);
}

/* Pinned host memory: outside the aperture, but known to the driver (UVA: host == device pointer). */
static CUresult host_alloc(void **pp, size_t size, unsigned flags)
{
    ENTER(NEED_CTX);
    if (!pp || !size ||
        (flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    sim_object *o = add_object(P(p), size, OBJ_PINNED, current_ctx->device);
    UNLOCK();
    if (!o) {
        munmap(p, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pp = p;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t n)
{
    TRACE();
    return host_alloc(pp, n, 0);
}
SIM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags)
{
    TRACE();
    return host_alloc(pp, n, flags);
}

static CUresult host_register(void *p, size_t size, unsigned flags)
{
    ENTER(NEED_CTX);
    if (!p || !size || (flags & ~0xfu))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = overlaps_object(P(p), size) ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
                 : add_object(P(p), size, OBJ_REGISTERED, current_ctx->device) ? CUDA_SUCCESS
                                                                               : CUDA_ERROR_OUT_OF_MEMORY;
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags)
{
    TRACE();
    return host_register(p, n, flags);
}
SIM_EXPORT CUresult cuMemHostRegister(void *p, size_t n, unsigned flags)
{
    TRACE();
    return host_register(p, n, flags);
}

SIM_EXPORT CUresult cuMemHostUnregister(void *p)
{
    TRACE();
    ENTER(NEED_CTX);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = drain_all();
    sim_object *o = find_object(P(p));
    if (e == CUDA_SUCCESS) {
        if (o && o->base == P(p) && o->kind == OBJ_REGISTERED)
            remove_object(o);
        else
            e = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    UNLOCK();
    return e;
}

/* cuMemFree synchronises the device, then frees; only the base of a cuMemAlloc* allocation. */
SIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    TRACE();
    ENTER(NEED_CTX);
    if (!p)
        return CUDA_SUCCESS;
    LOCK();
    CUresult e = drain_all();
    sim_object *o = find_object(p);
    if (e == CUDA_SUCCESS && (!o || o->base != p || (o->kind != OBJ_DEVICE && o->kind != OBJ_MANAGED)))
        e = CUDA_ERROR_INVALID_VALUE;
    if (e == CUDA_SUCCESS)
        free_device_object(p);
    UNLOCK();
    return e;
}

static CUresult free_async(CUdeviceptr p, CUstream s, int ptds)
{
    ENTER(NEED_CTX);
    LOCK();
    sim_object *o = find_object(p);
    CUresult e = CUDA_ERROR_INVALID_VALUE;
    if (o && o->base == p && (o->kind == OBJ_DEVICE || o->kind == OBJ_MANAGED)) {
        sim_op op = {.type = OP_FREE, .dst = p};
        e = submit(&op, s, ptds, 1);
    }
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    TRACE();
    return free_async(p, s, 0);
}
SIM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
    TRACE();
    return free_async(p, s, 1);
}

SIM_EXPORT CUresult cuMemFreeHost(void *p)
{
    TRACE();
    ENTER(NEED_CTX);
    if (!p)
        return CUDA_SUCCESS; /* free(NULL), as the driver does */
    LOCK();
    CUresult e = drain_all();
    sim_object *o = find_object(P(p));
    if (e == CUDA_SUCCESS && (!o || o->base != P(p) || o->kind != OBJ_PINNED))
        e = CUDA_ERROR_INVALID_VALUE;
    if (e == CUDA_SUCCESS) {
        munmap(p, o->size);
        remove_object(o);
    }
    UNLOCK();
    return e;
}

/* ---- pointer queries ---- */

/* The allocation holding p; for VMM the single mapping, as the driver answers. */
SIM_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr p)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    LOCK();
    sim_object *o = find_object(p);
    if (o) {
        if (pbase)
            *pbase = o->base;
        if (psize)
            *psize = o->size;
    }
    UNLOCK();
    return o ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

SIM_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    if (!data || !p)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_object *o = find_object(p);
    sim_rsv *r = o ? o->rsv : find_reservation(p);
    int host = o && (o->kind == OBJ_PINNED || o->kind == OBJ_REGISTERED);
    CUresult e = CUDA_SUCCESS;
    if (!o && !(r && (attr == CU_POINTER_ATTRIBUTE_MAPPED || attr == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR ||
                      attr == CU_POINTER_ATTRIBUTE_RANGE_SIZE)))
        e = CUDA_ERROR_INVALID_VALUE; /* not memory the driver knows */
    else
        switch (attr) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(unsigned *)data = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = o->device; break;
        case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = (CUcontext)&sim.ctx[o->device]; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = p; break;
        case CU_POINTER_ATTRIBUTE_HOST_POINTER:
            if (o->kind == OBJ_DEVICE || o->kind == OBJ_VMM)
                e = CUDA_ERROR_INVALID_VALUE; /* device-only memory */
            else
                *(void **)data = (void *)p;
            break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data = o->kind == OBJ_MANAGED; break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = o->id; break;
        case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = o != NULL; break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = r ? r->base : o->base; break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = r ? r->size : o->size; break;
        default: e = CUDA_ERROR_INVALID_VALUE; break;
        }
    UNLOCK();
    return e;
}

/* ---- virtual memory management ---- */

static CUresult check_prop(const CUmemAllocationProp *prop)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return prop->location.id >= 0 && prop->location.id < N_DEVICES ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

SIM_EXPORT CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                                  CUmemAllocationGranularity_flags option)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    (void)option;
    CUresult e = g ? check_prop(prop) : CUDA_ERROR_INVALID_VALUE;
    if (e == CUDA_SUCCESS)
        *g = GRANULARITY;
    return e;
}

SIM_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                        unsigned long long flags)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    (void)addr; /* only a hint */
    if (!ptr || !size || size % PAGE || (alignment & (alignment - 1)) || flags)
        return CUDA_ERROR_INVALID_VALUE;
    sim_rsv *r = malloc(sizeof *r);
    if (!r)
        return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    uintptr_t base = aperture_take(round_up(size, GRANULARITY), alignment > GRANULARITY ? alignment : GRANULARITY);
    if (base) {
        *r = (sim_rsv){base, size, sim.reservations};
        sim.reservations = r;
        *ptr = base;
    }
    UNLOCK();
    if (!base)
        free(r);
    return base ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

SIM_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    LOCK();
    CUresult e = CUDA_ERROR_INVALID_VALUE;
    for (sim_rsv **l = &sim.reservations; *l; l = &(*l)->next)
        if ((*l)->base == ptr && (*l)->size == size) {
            if (!overlaps_object(ptr, size)) { /* a reservation still mapped must be unmapped first */
                sim_rsv *gone = *l;
                *l = gone->next;
                free(gone);
                e = CUDA_SUCCESS;
            }
            break;
        }
    UNLOCK();
    return e;
}

static sim_handle *handle_of(CUmemGenericAllocationHandle h)
{
    for (sim_handle *l = sim.handles; l; l = l->next)
        if (P(l) == h)
            return l;
    return NULL;
}

static void handle_drop_if_done(sim_handle *h)
{
    if (!h->released || h->maps)
        return;
    for (sim_handle **l = &sim.handles; *l; l = &(*l)->next)
        if (*l == h) {
            *l = h->next;
            break;
        }
    close(h->fd);
    free(h);
}

SIM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                                unsigned long long flags)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    if (!handle || !size || size % GRANULARITY || flags)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult e = check_prop(prop);
    if (e != CUDA_SUCCESS)
        return e;
    sim_handle *h = calloc(1, sizeof *h);
    int fd = memfd_create("simcuda-physical", MFD_CLOEXEC);
    if (!h || fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        free(h);
        if (fd >= 0)
            close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    h->fd = fd;
    h->size = size;
    h->device = prop->location.id;
    LOCK();
    h->next = sim.handles;
    sim.handles = h;
    UNLOCK();
    *handle = P(h);
    return CUDA_SUCCESS;
}

/* The memory stays until its last mapping goes, as the driver documents. */
SIM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    LOCK();
    sim_handle *h = handle_of(handle);
    CUresult e = h && !h->released ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (e == CUDA_SUCCESS) {
        h->released = 1;
        handle_drop_if_done(h);
    }
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                             unsigned long long flags)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    if (!ptr || !size || ptr % GRANULARITY || size % GRANULARITY || offset || flags)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_handle *h = handle_of(handle);
    sim_rsv *r = find_reservation(ptr);
    CUresult e = CUDA_ERROR_INVALID_VALUE;
    /* Only on unmapped space of one reservation, no more than the handle holds. */
    if (h && !h->released && r && size <= h->size && size <= r->base + r->size - ptr && !overlaps_object(ptr, size)) {
        sim_object *o = NULL;
        if (mmap((void *)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->fd, 0) == MAP_FAILED ||
            !(o = add_object(ptr, size, OBJ_VMM, h->device))) {
            decommit(ptr, size);
            e = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            o->access = 0; /* nothing until cuMemSetAccess */
            o->rsv = r;
            o->handle = h;
            h->maps++;
            e = CUDA_SUCCESS;
        }
    }
    UNLOCK();
    return e;
}

/* [ptr, ptr+size) must be exactly a run of whole, adjacent mappings of one reservation. */
static int whole_mappings(uintptr_t ptr, size_t size)
{
    sim_object *o = find_object(ptr);
    if (!size || !o || o->kind != OBJ_VMM || o->base != ptr)
        return 0;
    for (uintptr_t p = ptr;;) {
        sim_object *m = find_object(p);
        if (!m || m->kind != OBJ_VMM || m->rsv != o->rsv || m->base != p || m->size > ptr + size - p)
            return 0;
        p += m->size;
        if (p == ptr + size)
            return 1;
    }
}

SIM_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    if (!desc || !count)
        return CUDA_ERROR_INVALID_VALUE;
    int access = 0;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        if (desc[i].location.id < 0 || desc[i].location.id >= N_DEVICES)
            return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
            desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
        access |= (int)desc[i].flags;
    }
    LOCK();
    CUresult e = whole_mappings(ptr, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (uintptr_t p = ptr; e == CUDA_SUCCESS && p < ptr + size;) {
        sim_object *m = find_object(p);
        m->access = access;
        mprotect((void *)p, m->size, access == ACC_RW ? PROT_READ | PROT_WRITE : access ? PROT_READ : PROT_NONE);
        p += m->size;
    }
    UNLOCK();
    return e;
}

/* Synchronous, as documented; the range becomes reservation again. */
SIM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    TRACE();
    ENTER(NEED_HEALTHY);
    LOCK();
    CUresult e = whole_mappings(ptr, size) ? drain_all() : CUDA_ERROR_INVALID_VALUE;
    while (e == CUDA_SUCCESS && size) {
        sim_object *m = find_object(ptr);
        size_t n = m->size;
        sim_handle *h = m->handle;
        decommit(ptr, n);
        remove_object(m);
        h->maps--;
        handle_drop_if_done(h);
        ptr += n;
        size -= n;
    }
    UNLOCK();
    return e;
}

/* ---- streams ---- */

static CUresult stream_create(CUstream *out, unsigned flags)
{
    ENTER(NEED_CTX);
    if (!out || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    sim_stream *st = calloc(1, sizeof *st);
    if (!st)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *st = (sim_stream){.magic = STREAM_MAGIC, .flags = flags, .device = current_ctx->device};
    LOCK();
    st->next_live = sim.live_streams;
    sim.live_streams = st;
    UNLOCK();
    *out = (CUstream)st;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuStreamCreate(CUstream *out, unsigned flags)
{
    TRACE();
    return stream_create(out, flags);
}
/* Priorities are accepted and make no difference here. */
SIM_EXPORT CUresult cuStreamCreateWithPriority(CUstream *out, unsigned flags, int priority)
{
    TRACE();
    (void)priority;
    return stream_create(out, flags);
}

static CUresult stream_destroy(CUstream s)
{
    ENTER(NEED_CTX);
    LOCK();
    CUresult e = CUDA_ERROR_INVALID_HANDLE;
    for (sim_stream **l = &sim.live_streams; *l; l = &(*l)->next_live)
        if ((CUstream)*l == s) {
            sim_stream *gone = *l;
            e = drain(gone, NULL); /* queued work still completes */
            drop_captured(gone);
            *l = gone->next_live;
            for (sim_event *ev = sim.live_events; ev; ev = ev->next_live)
                if (ev->stream == gone)
                    ev->stream = NULL;
            gone->magic = 0;
            free(gone);
            break;
        }
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    TRACE();
    return stream_destroy(s);
}
SIM_EXPORT CUresult cuStreamDestroy(CUstream s)
{
    TRACE();
    return stream_destroy(s);
}

static CUresult stream_sync(CUstream s, int ptds)
{
    ENTER(NEED_CTX);
    LOCK();
    sim_stream *st = stream_of(s, ptds);
    CUresult e = !st ? CUDA_ERROR_INVALID_HANDLE : capture_allows_wait(st);
    if (e == CUDA_SUCCESS)
        e = sync_stream(st);
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    TRACE();
    return stream_sync(s, 0);
}
SIM_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s)
{
    TRACE();
    return stream_sync(s, 1);
}

/* Work still queued is "running": it completes by the next query. */
static CUresult stream_query(CUstream s, int ptds)
{
    ENTER(NEED_CTX);
    LOCK();
    sim_stream *st = stream_of(s, ptds);
    CUresult e = !st                               ? CUDA_ERROR_INVALID_HANDLE
                 : st->capturing                   ? capture_allows_wait(st)
                 : !st->head                       ? CUDA_SUCCESS
                 : drain(st, NULL) == CUDA_SUCCESS ? CUDA_ERROR_NOT_READY
                                                   : CUDA_ERROR_ILLEGAL_ADDRESS;
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuStreamQuery(CUstream s)
{
    TRACE();
    return stream_query(s, 0);
}
SIM_EXPORT CUresult cuStreamQuery_ptsz(CUstream s)
{
    TRACE();
    return stream_query(s, 1);
}

/* ---- events: a record queues a marker; waiting on the event runs its stream up to it ---- */

static sim_event *event_of(CUevent e)
{
    for (sim_event *l = sim.live_events; l; l = l->next_live)
        if ((CUevent)l == e)
            return l;
    return NULL;
}

/* A record still queued stops marking the event (it is recorded again, or destroyed). */
static void forget_markers(const sim_event *ev)
{
    FOR_EACH_STREAM(st)
    for (sim_op *op = st->head; op; op = op->next)
        if (op->event == ev)
            op->event = NULL;
}

static CUresult event_finish(sim_event *ev)
{
    return ev->recorded && !ev->done && ev->stream ? drain(ev->stream, ev) : CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuEventCreate(CUevent *out, unsigned flags)
{
    TRACE();
    ENTER(NEED_CTX);
    if (!out || (flags & ~0xfu))
        return CUDA_ERROR_INVALID_VALUE;
    sim_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ev->flags = flags;
    ev->device = current_ctx->device;
    LOCK();
    ev->next_live = sim.live_events;
    sim.live_events = ev;
    UNLOCK();
    *out = (CUevent)ev;
    return CUDA_SUCCESS;
}

static CUresult event_record(CUevent e, CUstream s, int ptds)
{
    ENTER(NEED_CTX);
    LOCK();
    sim_event *ev = event_of(e);
    sim_stream *st = stream_of(s, ptds);
    /* cuEventRecord: the event and the stream must belong to one context (the runtime's
     * cudaEventRecord: "will fail if the input event and input stream are associated to
     * different devices"). */
    CUresult e2 = !ev || !st || ev->device != stream_device(st) ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
    if (e2 == CUDA_SUCCESS) {
        sim_op op = {.type = OP_EVENT, .event = ev};
        forget_markers(ev);
        if ((e2 = enqueue(st, &op)) == CUDA_SUCCESS) {
            ev->recorded = 1;
            ev->done = 0;
            ev->stream = st;
        }
    }
    UNLOCK();
    return e2;
}

SIM_EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    TRACE();
    return event_record(e, s, 0);
}
SIM_EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream s)
{
    TRACE();
    return event_record(e, s, 1);
}

SIM_EXPORT CUresult cuEventSynchronize(CUevent e)
{
    TRACE();
    ENTER(NEED_CTX);
    LOCK();
    sim_event *ev = event_of(e);
    CUresult r = ev ? event_finish(ev) : CUDA_ERROR_INVALID_HANDLE;
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuEventQuery(CUevent e)
{
    TRACE();
    ENTER(NEED_CTX);
    LOCK();
    sim_event *ev = event_of(e);
    CUresult r = !ev                                ? CUDA_ERROR_INVALID_HANDLE
                 : !ev->recorded || ev->done        ? CUDA_SUCCESS
                 : event_finish(ev) == CUDA_SUCCESS ? CUDA_ERROR_NOT_READY
                                                    : CUDA_ERROR_ILLEGAL_ADDRESS;
    UNLOCK();
    return r;
}

static CUresult event_destroy(CUevent e)
{
    ENTER(NEED_CTX);
    LOCK();
    sim_event *ev = NULL;
    for (sim_event **l = &sim.live_events; *l; l = &(*l)->next_live)
        if ((CUevent)*l == e) {
            ev = *l;
            *l = ev->next_live;
            break;
        }
    if (ev) { /* a record may still be queued: destroying an event is allowed then */
        forget_markers(ev);
        free(ev);
    }
    UNLOCK();
    return ev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    TRACE();
    return event_destroy(e);
}
SIM_EXPORT CUresult cuEventDestroy(CUevent e)
{
    TRACE();
    return event_destroy(e);
}

/* Later work on the waiting stream must follow the event: the simulator finishes the event's
 * stream up to the event now, which keeps that order. */
static CUresult stream_wait(CUstream s, CUevent e, unsigned flags, int ptds)
{
    ENTER(NEED_CTX);
    LOCK();
    sim_event *ev = event_of(e);
    CUresult r = !stream_of(s, ptds) || !ev ? CUDA_ERROR_INVALID_HANDLE
                 : flags & ~1u              ? CUDA_ERROR_INVALID_VALUE
                                            : event_finish(ev);
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f)
{
    TRACE();
    return stream_wait(s, e, f, 0);
}
SIM_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned f)
{
    TRACE();
    return stream_wait(s, e, f, 1);
}

/* ---- kernels (host functions) and host callbacks ---- */

#define FUNCTION_MAGIC 0x4b524e4cu

SIM_EXPORT CUfunction simcuda_function_from_host(void (*fn)(void **params))
{
    sim_function *f = calloc(1, sizeof *f);
    if (f) {
        f->magic = FUNCTION_MAGIC;
        f->fn = fn;
    }
    return (CUfunction)f;
}

/* Optional: the sizes of the kernel's parameters, so launches copy them by value. */
SIM_EXPORT CUresult simcuda_function_set_param_sizes(CUfunction func, unsigned count, const size_t *sizes)
{
    sim_function *f = (sim_function *)func;
    if (!f || f->magic != FUNCTION_MAGIC || (count && !sizes))
        return CUDA_ERROR_INVALID_VALUE;
    size_t *copy = count ? malloc(count * sizeof *copy) : NULL;
    if (count && !copy)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (count)
        memcpy(copy, sizes, count * sizeof *copy);
    free(f->sizes);
    f->sizes = copy;
    f->nparams = count;
    return CUDA_SUCCESS;
}

/* The parameter layout simcuda_function_set_param_sizes gave (packed, as the sizes add up). */
SIM_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t index, size_t *offset, size_t *size)
{
    sim_function *f = (sim_function *)func;
    if (!f || f->magic != FUNCTION_MAGIC || index >= f->nparams || !offset || !size)
        return CUDA_ERROR_INVALID_VALUE;
    size_t at = 0;
    for (size_t i = 0; i < index; i++)
        at += f->sizes[i];
    *offset = at;
    *size = f->sizes[index];
    return CUDA_SUCCESS;
}

/* For kernels: may the device touch [p, p+n)?  If not, this is the kernel's fault (sticky). */
SIM_EXPORT int simcuda_device_range_ok(const void *p, size_t n, int write)
{
    INIT();
    LOCK();
    int ok = !atomic_load(&sim.sticky) && range_live(P(p), n, write ? ACC_RW : ACC_R);
    if (!ok)
        fault();
    UNLOCK();
    return ok;
}

static CUresult launch(CUfunction func, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       CUstream s, void **params, void **extra, int ptds)
{
    ENTER(NEED_CTX);
    sim_function *f = (sim_function *)func;
    if (!f || f->magic != FUNCTION_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024 || (params && extra) ||
        (f->nparams && !params))
        return CUDA_ERROR_INVALID_VALUE;
    if (extra)
        return CUDA_ERROR_NOT_SUPPORTED; /* CU_LAUNCH_PARAM_BUFFER_POINTER is not simulated */
    sim_op op = {.type = OP_KERNEL, .kernel = f, .params = params};
    if (f->nparams) { /* by value, as the driver does: pointers first, then the values, 16-aligned */
        size_t head = round_up(f->nparams * sizeof(void *), 16), total = head;
        for (unsigned i = 0; i < f->nparams; i++)
            total += round_up(f->sizes[i], 16);
        char *block = op.owned = malloc(total);
        if (!block)
            return CUDA_ERROR_OUT_OF_MEMORY;
        char *value = block + head;
        op.params = (void **)block;
        for (unsigned i = 0; i < f->nparams; i++) {
            memcpy(value, params[i], f->sizes[i]);
            op.params[i] = value;
            value += round_up(f->sizes[i], 16);
        }
    }
    LOCK();
    /* A kernel runs on the current context's device: a stream of another one is refused (the
     * runtime's "a kernel launch will fail if it is issued to a stream that is not associated
     * to the current device"); copies may use one. */
    sim_stream *on = stream_of(s, ptds);
    CUresult e = on && stream_device(on) != current_ctx->device ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
    if (e != CUDA_SUCCESS)
        free(op.owned);
    else
        e = submit(&op, s, ptds, 1);
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    TRACE();
    (void)shmem;
    return launch(f, gx, gy, gz, bx, by, bz, s, params, extra, 0);
}

SIM_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                        unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    TRACE();
    (void)shmem;
    return launch(f, gx, gy, gz, bx, by, bz, s, params, extra, 1);
}

static CUresult host_func(CUstream s, CUhostFn fn, void *arg, int ptds)
{
    ENTER(NEED_CTX);
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    sim_op op = {.type = OP_HOSTFN, .hostfn = fn, .arg = arg};
    LOCK();
    CUresult e = submit(&op, s, ptds, 1);
    UNLOCK();
    return e;
}

/* A stream callback: as a host function, with the stream and its status; flags must be 0. */
static CUresult stream_callback(CUstream s, CUstreamCallback cb, void *arg, unsigned flags, int ptds)
{
    ENTER(NEED_CTX);
    if (!cb || flags)
        return CUDA_ERROR_INVALID_VALUE;
    sim_op op = {.type = OP_CALLBACK, .callback = cb, .stream = s, .arg = arg};
    LOCK();
    CUresult e = submit(&op, s, ptds, 1);
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *arg, unsigned flags)
{
    TRACE();
    return stream_callback(s, cb, arg, flags, 0);
}
SIM_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *arg, unsigned flags)
{
    TRACE();
    return stream_callback(s, cb, arg, flags, 1);
}
SIM_EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *arg)
{
    TRACE();
    return host_func(s, fn, arg, 0);
}
SIM_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *arg)
{
    TRACE();
    return host_func(s, fn, arg, 1);
}

/* ---- more launches: cuLaunchKernelEx's configuration, cooperative kernels ---- */

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra, int ptds)
{
    ENTER(NEED_CTX);
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ, c->hStream,
                  params, extra, ptds);
}

SIM_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    TRACE();
    return launch_ex(c, f, params, extra, 0);
}
SIM_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    TRACE();
    return launch_ex(c, f, params, extra, 1);
}

/* All blocks of a cooperative kernel run at once: one host call runs them all here anyway. */
SIM_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                              unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
    TRACE();
    (void)shmem;
    return launch(f, gx, gy, gz, bx, by, bz, s, params, NULL, 0);
}
SIM_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                   unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
    TRACE();
    (void)shmem;
    return launch(f, gx, gy, gz, bx, by, bz, s, params, NULL, 1);
}

/* ---- modules: an image is a simcuda_image (simcuda.h), its kernels host functions; any other
 * image (a real cubin or fatbin) is CUDA_ERROR_INVALID_IMAGE, as a driver that cannot read it says ---- */

#define MODULE_MAGIC 0x4d4f444cu
typedef struct sim_module {
    unsigned magic;
    const simcuda_image *image;
    sim_function **functions;
} sim_module;

SIM_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    TRACE();
    ENTER(NEED_CTX);
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    const simcuda_image *im = image;
    if (im->magic != SIMCUDA_IMAGE_MAGIC)
        return CUDA_ERROR_INVALID_IMAGE;
    sim_module *m = calloc(1, sizeof *m);
    sim_function **fns = calloc(im->count + 1, sizeof *fns);
    if (!m || !fns) {
        free(m);
        free(fns);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *m = (sim_module){MODULE_MAGIC, im, fns};
    *module = (CUmodule)m;
    return CUDA_SUCCESS;
}

/* One CUfunction per kernel and module, with the image's parameter sizes (cuFuncGetParamInfo). */
SIM_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule module, const char *name)
{
    TRACE();
    ENTER(NEED_CTX);
    sim_module *m = (sim_module *)module;
    if (!f || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m || m->magic != MODULE_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < m->image->count; i++) {
        const simcuda_kernel *k = &m->image->kernels[i];
        if (strcmp(k->name, name))
            continue;
        LOCK();
        if (!m->functions[i]) {
            sim_function *fn = (sim_function *)simcuda_function_from_host(k->fn);
            if (fn && simcuda_function_set_param_sizes((CUfunction)fn, k->nparams, k->sizes) == CUDA_SUCCESS) {
                fn->name = k->name;
                m->functions[i] = fn;
            } else {
                free(fn);
            }
        }
        UNLOCK();
        *f = (CUfunction)m->functions[i];
        return *f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_ERROR_NOT_FOUND;
}

/* Its functions stay: launches of them may still be queued. */
SIM_EXPORT CUresult cuModuleUnload(CUmodule module)
{
    TRACE();
    ENTER(NEED_INIT);
    sim_module *m = (sim_module *)module;
    if (!m || m->magic != MODULE_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    m->magic = 0;
    free(m->functions);
    free(m);
    return CUDA_SUCCESS;
}

/* A function made by simcuda_function_from_host has no name: CUDA_ERROR_NOT_FOUND. */
SIM_EXPORT CUresult cuFuncGetName(const char **name, CUfunction func)
{
    TRACE();
    ENTER(NEED_INIT);
    sim_function *f = (sim_function *)func;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!f || f->magic != FUNCTION_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = f->name;
    return f->name ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* ---- stream capture and graphs: captured work is kept aside and dropped, so an instantiated
 * graph runs nothing, in stream order ---- */

#define GRAPH_MAGIC 0x47524150u
#define EXEC_MAGIC 0x47455845u
typedef struct sim_graph {
    unsigned magic;
} sim_graph;

static int is_graph(const void *g, unsigned magic) { return g && ((const sim_graph *)g)->magic == magic; }

static CUresult begin_capture(CUstream s, CUstreamCaptureMode mode, int ptds)
{
    ENTER(NEED_CTX);
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_stream *st = stream_of(s, ptds);
    CUresult e = !st                 ? CUDA_ERROR_INVALID_HANDLE
                 : st == &sim.legacy ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                 : st->capturing     ? CUDA_ERROR_ILLEGAL_STATE
                                     : CUDA_SUCCESS;
    if (e == CUDA_SUCCESS) {
        st->capturing = 1;
        st->invalidated = 0;
    }
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    TRACE();
    return begin_capture(s, mode, 0);
}
SIM_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
    TRACE();
    return begin_capture(s, mode, 1);
}

/* An invalidated capture (something waited for the stream meanwhile) ends without a graph. */
static CUresult end_capture(CUstream s, CUgraph *graph, int ptds)
{
    ENTER(NEED_CTX);
    if (!graph)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_stream *st = stream_of(s, ptds);
    CUresult e = !st ? CUDA_ERROR_INVALID_HANDLE : !st->capturing ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
    if (e == CUDA_SUCCESS) {
        st->capturing = 0;
        drop_captured(st);
        *graph = NULL;
        if (st->invalidated) {
            e = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else {
            sim_graph *g = malloc(sizeof *g);
            if (g)
                *g = (sim_graph){GRAPH_MAGIC};
            *graph = (CUgraph)g;
            e = g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        }
        st->invalidated = 0;
    }
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    TRACE();
    return end_capture(s, g, 0);
}
SIM_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
    TRACE();
    return end_capture(s, g, 1);
}

static CUresult is_capturing(CUstream s, CUstreamCaptureStatus *status, int ptds)
{
    ENTER(NEED_CTX);
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_stream *st = stream_of(s, ptds);
    if (st)
        *status = !st->capturing    ? CU_STREAM_CAPTURE_STATUS_NONE
                  : st->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                    : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    UNLOCK();
    return st ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    TRACE();
    return is_capturing(s, st, 0);
}
SIM_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st)
{
    TRACE();
    return is_capturing(s, st, 1);
}

SIM_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
    TRACE();
    ENTER(NEED_CTX);
    (void)flags;
    if (!exec || !is_graph(graph, GRAPH_MAGIC))
        return CUDA_ERROR_INVALID_VALUE;
    sim_graph *x = malloc(sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *x = (sim_graph){EXEC_MAGIC};
    *exec = (CUgraphExec)x;
    return CUDA_SUCCESS;
}

static CUresult graph_destroy(void *g, unsigned magic)
{
    ENTER(NEED_INIT);
    if (!is_graph(g, magic))
        return CUDA_ERROR_INVALID_VALUE;
    ((sim_graph *)g)->magic = 0;
    free(g);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    TRACE();
    return graph_destroy(exec, EXEC_MAGIC);
}
SIM_EXPORT CUresult cuGraphDestroy(CUgraph graph)
{
    TRACE();
    return graph_destroy(graph, GRAPH_MAGIC);
}

static CUresult graph_launch(CUgraphExec exec, CUstream s, int ptds)
{
    ENTER(NEED_CTX);
    if (!is_graph(exec, EXEC_MAGIC))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = stream_of(s, ptds) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream s)
{
    TRACE();
    return graph_launch(exec, s, 0);
}
SIM_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream s)
{
    TRACE();
    return graph_launch(exec, s, 1);
}

/* ---- stream-ordered memory pools: a pool is only a name for where an allocation comes from ---- */

#define POOL_MAGIC 0x504f4f4cu
typedef struct sim_pool {
    unsigned magic;
    int device;
} sim_pool;

static int is_pool(CUmemoryPool pool) { return pool && ((sim_pool *)pool)->magic == POOL_MAGIC; }

SIM_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    TRACE();
    ENTER(NEED_CTX);
    if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->location.id < 0 || props->location.id >= N_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    sim_pool *p = malloc(sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (sim_pool){POOL_MAGIC, props->location.id};
    *pool = (CUmemoryPool)p;
    return CUDA_SUCCESS;
}

/* Allocations from it stay valid until freed, as the driver documents. */
SIM_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    TRACE();
    ENTER(NEED_CTX);
    if (!is_pool(pool))
        return CUDA_ERROR_INVALID_VALUE;
    ((sim_pool *)pool)->magic = 0;
    free(pool);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    TRACE();
    ENTER(NEED_CTX);
    (void)keep;
    return is_pool(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult alloc_from_pool(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s, int ptds)
{
    ENTER(NEED_CTX);
    return is_pool(pool) ? alloc_async(p, n, s, ptds) : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
    TRACE();
    return alloc_from_pool(p, n, pool, s, 0);
}
SIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
    TRACE();
    return alloc_from_pool(p, n, pool, s, 1);
}

/* ---- events recorded with flags: CU_EVENT_RECORD_EXTERNAL (graphs only) changes nothing here ---- */

static CUresult event_record_flags(CUevent e, CUstream s, unsigned flags, int ptds)
{
    ENTER(NEED_CTX);
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    return event_record(e, s, ptds);
}

SIM_EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned f)
{
    TRACE();
    return event_record_flags(e, s, f, 0);
}
SIM_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned f)
{
    TRACE();
    return event_record_flags(e, s, f, 1);
}

/* ---- 16-bit and pitched memsets; the unaligned 2-D copy (the same copy here) ---- */

static CUresult memset_2d(CUdeviceptr dst, size_t pitch, unsigned value, unsigned value_size, size_t width,
                          size_t height, CUstream s, int ptds, int async)
{
    ENTER(NEED_CTX);
    if (!dst || dst % value_size || (height > 1 && pitch < width * value_size))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    if (!stream_of(s, ptds))
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (!device_accessible(dst))
        e = CUDA_ERROR_INVALID_VALUE;
    else if (width && height && (e = validate_range(dst, extent(pitch, width * value_size, height))) == CUDA_SUCCESS)
        for (size_t r = 0; e == CUDA_SUCCESS && r < height; r++) {
            sim_op op = {.type = OP_MEMSET,
                         .dst = dst + r * pitch,
                         .width = width * value_size,
                         .height = 1,
                         .value = value,
                         .value_size = value_size};
            e = submit(&op, s, ptds, async);
        }
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n)
{
    TRACE();
    return memset_n(d, v, 2, n, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n)
{
    TRACE();
    return memset_n(d, v, 2, n, NULL, 1, 0);
}
SIM_EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
    TRACE();
    return memset_n(d, v, 2, n, s, 0, 1);
}
SIM_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
    TRACE();
    return memset_n(d, v, 2, n, s, 1, 1);
}
#define MEMSET_2D(bits, type, size)                                                                                    \
    SIM_EXPORT CUresult cuMemsetD2D##bits##_v2(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h)                \
    {                                                                                                                  \
        TRACE();                                                                                                       \
        return memset_2d(d, pitch, v, size, w, h, NULL, 0, 0);                                                         \
    }                                                                                                                  \
    SIM_EXPORT CUresult cuMemsetD2D##bits##_v2_ptds(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h)           \
    {                                                                                                                  \
        TRACE();                                                                                                       \
        return memset_2d(d, pitch, v, size, w, h, NULL, 1, 0);                                                         \
    }                                                                                                                  \
    SIM_EXPORT CUresult cuMemsetD2D##bits##Async(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h, CUstream s)  \
    {                                                                                                                  \
        TRACE();                                                                                                       \
        return memset_2d(d, pitch, v, size, w, h, s, 0, 1);                                                            \
    }                                                                                                                  \
    SIM_EXPORT CUresult cuMemsetD2D##bits##Async_ptsz(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h,         \
                                                      CUstream s)                                                      \
    {                                                                                                                  \
        TRACE();                                                                                                       \
        return memset_2d(d, pitch, v, size, w, h, s, 1, 1);                                                            \
    }
// clang-format off
MEMSET_2D(8, unsigned char, 1)
MEMSET_2D(16, unsigned short, 2)
MEMSET_2D(32, unsigned int, 4)
// clang-format on
#undef MEMSET_2D

SIM_EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *c)
{
    TRACE();
    return memcpy_2d(c, NULL, 0, 0);
}
SIM_EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *c)
{
    TRACE();
    return memcpy_2d(c, NULL, 1, 0);
}

/* ---- initialisation, devices, contexts ---- */

SIM_EXPORT CUresult cuInit(unsigned flags)
{
    TRACE();
    INIT();
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    atomic_store(&sim.initialized, 1);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDriverGetVersion(int *v)
{
    TRACE();
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = SIM_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetCount(int *n)
{
    TRACE();
    ENTER(NEED_INIT);
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = N_DEVICES;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    TRACE();
    ENTER(NEED_INIT);
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= N_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    TRACE();
    ENTER(NEED_INIT);
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= N_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    sim.ctx[d].refs++;
    UNLOCK();
    *c = (CUcontext)&sim.ctx[d];
    return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice d)
{
    ENTER(NEED_INIT);
    if (d < 0 || d >= N_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    CUresult e = sim.ctx[d].refs > 0 ? (sim.ctx[d].refs--, CUDA_SUCCESS) : CUDA_ERROR_INVALID_CONTEXT;
    UNLOCK();
    return e; /* the context is not torn down at 0: its memory stays, a simplification */
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    TRACE();
    return primary_release(d);
}
SIM_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
    TRACE();
    return primary_release(d);
}

SIM_EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
    TRACE();
    ENTER(NEED_INIT);
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    *c = (CUcontext)current_ctx;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
    TRACE();
    ENTER(NEED_INIT);
    if (c && !valid_ctx(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    current_ctx = (sim_ctx *)c;
    return CUDA_SUCCESS;
}

static CUresult ctx_device(CUdevice *d, CUcontext c)
{
    ENTER(NEED_INIT);
    sim_ctx *ctx = c ? (sim_ctx *)c : current_ctx;
    if (!ctx || (c && !valid_ctx(c)))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    *d = ctx->device;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    TRACE();
    return ctx_device(d, NULL);
}
SIM_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *d, CUcontext c)
{
    TRACE();
    return ctx_device(d, c);
}

static CUresult ctx_sync(CUcontext c)
{
    ENTER(NEED_CTX);
    if (c && !valid_ctx(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    LOCK();
    CUresult e = capture_allows_wait(NULL);
    if (e == CUDA_SUCCESS)
        e = drain_all();
    UNLOCK();
    return e;
}

SIM_EXPORT CUresult cuCtxSynchronize(void)
{
    TRACE();
    return ctx_sync(NULL);
}
SIM_EXPORT CUresult cuCtxSynchronize_v2(CUcontext c)
{
    TRACE();
    return ctx_sync(c);
}

/* ---- errors ---- */

static const struct {
    CUresult code;
    const char *name, *text;
} errors[] = {
#define E(code, text) {code, #code, text},
    // clang-format off
    E(CUDA_SUCCESS, "no error")
    E(CUDA_ERROR_INVALID_VALUE, "invalid argument")
    E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")
    E(CUDA_ERROR_NOT_INITIALIZED, "initialization error")
    E(CUDA_ERROR_DEINITIALIZED, "driver shutting down")
    E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")
    E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")
    E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")
    E(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped")
    E(CUDA_ERROR_NOT_MAPPED, "resource not mapped")
    E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")
    E(CUDA_ERROR_NOT_FOUND, "named symbol not found")
    E(CUDA_ERROR_NOT_READY, "device not ready")
    E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered")
    E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")
    E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped")
    E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region")
    E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted")
    E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")
    E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")
    E(CUDA_ERROR_ILLEGAL_STATE, "the operation is not permitted when the resource is in this state")
    E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing")
    E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture")
    E(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy stream depend on a capturing blocking stream")
    E(CUDA_ERROR_UNKNOWN, "unknown error")
// clang-format on
#undef E
};

static CUresult error_lookup(CUresult code, const char **out, int text)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == code) {
            *out = text ? errors[i].text : errors[i].name;
            return CUDA_SUCCESS;
        }
    *out = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult cuGetErrorName(CUresult code, const char **s)
{
    TRACE();
    return error_lookup(code, s, 0);
}
SIM_EXPORT CUresult cuGetErrorString(CUresult code, const char **s)
{
    TRACE();
    return error_lookup(code, s, 1);
}

/* ---- cuGetProcAddress: a static table of this driver's own functions, never dlsym ----
 * (base name, the CUDA version that introduced that ABI, per-thread variant?, function), from
 * cudaTypedefs.h.  The table takes each function through a local alias, so the reference binds
 * inside this library and an interposed export of the same name can never be returned. */
// clang-format off
#define PROCS(X)                                                                                        \
    X("cuInit", 2000, 0, cuInit) X("cuDriverGetVersion", 2020, 0, cuDriverGetVersion)                  \
    X("cuDeviceGet", 2000, 0, cuDeviceGet) X("cuDeviceGetCount", 2000, 0, cuDeviceGetCount)            \
    X("cuCtxGetCurrent", 4000, 0, cuCtxGetCurrent) X("cuCtxSetCurrent", 4000, 0, cuCtxSetCurrent)      \
    X("cuCtxGetDevice", 2000, 0, cuCtxGetDevice) X("cuCtxGetDevice", 13000, 0, cuCtxGetDevice_v2)      \
    X("cuCtxSynchronize", 2000, 0, cuCtxSynchronize) X("cuCtxSynchronize", 13000, 0, cuCtxSynchronize_v2) \
    X("cuDevicePrimaryCtxRetain", 7000, 0, cuDevicePrimaryCtxRetain)                                    \
    X("cuDevicePrimaryCtxRelease", 7000, 0, cuDevicePrimaryCtxRelease)                                  \
    X("cuDevicePrimaryCtxRelease", 11000, 0, cuDevicePrimaryCtxRelease_v2)                              \
    X("cuGetErrorName", 6000, 0, cuGetErrorName) X("cuGetErrorString", 6000, 0, cuGetErrorString)      \
    X("cuGetProcAddress", 11030, 0, cuGetProcAddress) X("cuGetProcAddress", 12000, 0, cuGetProcAddress_v2) \
    X("cuMemAlloc", 3020, 0, cuMemAlloc_v2) X("cuMemAllocPitch", 3020, 0, cuMemAllocPitch_v2)          \
    X("cuMemAllocAsync", 11020, 0, cuMemAllocAsync) X("cuMemAllocAsync", 11020, 1, cuMemAllocAsync_ptsz) \
    X("cuMemAllocHost", 3020, 0, cuMemAllocHost_v2) X("cuMemHostAlloc", 2020, 0, cuMemHostAlloc)       \
    X("cuMemHostRegister", 4000, 0, cuMemHostRegister) X("cuMemHostRegister", 6050, 0, cuMemHostRegister_v2) \
    X("cuMemHostUnregister", 4000, 0, cuMemHostUnregister) X("cuMemAllocManaged", 6000, 0, cuMemAllocManaged) \
    X("cuMemFree", 3020, 0, cuMemFree_v2) X("cuMemFreeHost", 2000, 0, cuMemFreeHost)                   \
    X("cuMemFreeAsync", 11020, 0, cuMemFreeAsync) X("cuMemFreeAsync", 11020, 1, cuMemFreeAsync_ptsz)   \
    X("cuMemGetAddressRange", 3020, 0, cuMemGetAddressRange_v2)                                         \
    X("cuPointerGetAttribute", 4000, 0, cuPointerGetAttribute)                                          \
    X("cuMemcpy", 4000, 0, cuMemcpy) X("cuMemcpy", 7000, 1, cuMemcpy_ptds)                              \
    X("cuMemcpyAsync", 4000, 0, cuMemcpyAsync) X("cuMemcpyAsync", 7000, 1, cuMemcpyAsync_ptsz)         \
    X("cuMemcpyHtoD", 3020, 0, cuMemcpyHtoD_v2) X("cuMemcpyHtoD", 7000, 1, cuMemcpyHtoD_v2_ptds)       \
    X("cuMemcpyDtoH", 3020, 0, cuMemcpyDtoH_v2) X("cuMemcpyDtoH", 7000, 1, cuMemcpyDtoH_v2_ptds)       \
    X("cuMemcpyDtoD", 3020, 0, cuMemcpyDtoD_v2) X("cuMemcpyDtoD", 7000, 1, cuMemcpyDtoD_v2_ptds)       \
    X("cuMemcpyHtoDAsync", 3020, 0, cuMemcpyHtoDAsync_v2)                                               \
    X("cuMemcpyHtoDAsync", 7000, 1, cuMemcpyHtoDAsync_v2_ptsz)                                          \
    X("cuMemcpyDtoHAsync", 3020, 0, cuMemcpyDtoHAsync_v2)                                               \
    X("cuMemcpyDtoHAsync", 7000, 1, cuMemcpyDtoHAsync_v2_ptsz)                                          \
    X("cuMemcpyDtoDAsync", 3020, 0, cuMemcpyDtoDAsync_v2)                                               \
    X("cuMemcpyDtoDAsync", 7000, 1, cuMemcpyDtoDAsync_v2_ptsz)                                          \
    X("cuMemcpyPeer", 4000, 0, cuMemcpyPeer) X("cuMemcpyPeer", 7000, 1, cuMemcpyPeer_ptds)             \
    X("cuMemcpyPeerAsync", 4000, 0, cuMemcpyPeerAsync) X("cuMemcpyPeerAsync", 7000, 1, cuMemcpyPeerAsync_ptsz) \
    X("cuMemcpy2D", 3020, 0, cuMemcpy2D_v2) X("cuMemcpy2D", 7000, 1, cuMemcpy2D_v2_ptds)               \
    X("cuMemcpy2DAsync", 3020, 0, cuMemcpy2DAsync_v2) X("cuMemcpy2DAsync", 7000, 1, cuMemcpy2DAsync_v2_ptsz) \
    X("cuMemsetD8", 3020, 0, cuMemsetD8_v2) X("cuMemsetD8", 7000, 1, cuMemsetD8_v2_ptds)               \
    X("cuMemsetD32", 3020, 0, cuMemsetD32_v2) X("cuMemsetD32", 7000, 1, cuMemsetD32_v2_ptds)           \
    X("cuMemsetD8Async", 3020, 0, cuMemsetD8Async) X("cuMemsetD8Async", 7000, 1, cuMemsetD8Async_ptsz) \
    X("cuMemsetD32Async", 3020, 0, cuMemsetD32Async) X("cuMemsetD32Async", 7000, 1, cuMemsetD32Async_ptsz) \
    X("cuStreamCreate", 2000, 0, cuStreamCreate)                                                        \
    X("cuStreamDestroy", 2000, 0, cuStreamDestroy) X("cuStreamDestroy", 4000, 0, cuStreamDestroy_v2)   \
    X("cuStreamSynchronize", 2000, 0, cuStreamSynchronize)                                              \
    X("cuStreamSynchronize", 7000, 1, cuStreamSynchronize_ptsz)                                         \
    X("cuStreamQuery", 2000, 0, cuStreamQuery) X("cuStreamQuery", 7000, 1, cuStreamQuery_ptsz)         \
    X("cuStreamWaitEvent", 3020, 0, cuStreamWaitEvent) X("cuStreamWaitEvent", 7000, 1, cuStreamWaitEvent_ptsz) \
    X("cuEventCreate", 2000, 0, cuEventCreate)                                                          \
    X("cuEventRecord", 2000, 0, cuEventRecord) X("cuEventRecord", 7000, 1, cuEventRecord_ptsz)         \
    X("cuEventSynchronize", 2000, 0, cuEventSynchronize) X("cuEventQuery", 2000, 0, cuEventQuery)      \
    X("cuEventDestroy", 2000, 0, cuEventDestroy) X("cuEventDestroy", 4000, 0, cuEventDestroy_v2)       \
    X("cuLaunchKernel", 4000, 0, cuLaunchKernel) X("cuLaunchKernel", 7000, 1, cuLaunchKernel_ptsz)     \
    X("cuLaunchHostFunc", 10000, 0, cuLaunchHostFunc) X("cuLaunchHostFunc", 10000, 1, cuLaunchHostFunc_ptsz) \
    X("cuStreamAddCallback", 5000, 0, cuStreamAddCallback) X("cuStreamAddCallback", 7000, 1, cuStreamAddCallback_ptsz) \
    X("cuMemAddressReserve", 10020, 0, cuMemAddressReserve) X("cuMemAddressFree", 10020, 0, cuMemAddressFree) \
    X("cuMemCreate", 10020, 0, cuMemCreate) X("cuMemRelease", 10020, 0, cuMemRelease)                  \
    X("cuMemMap", 10020, 0, cuMemMap) X("cuMemUnmap", 10020, 0, cuMemUnmap)                            \
    X("cuMemSetAccess", 10020, 0, cuMemSetAccess)                                                       \
    X("cuMemGetAllocationGranularity", 10020, 0, cuMemGetAllocationGranularity)                         \
    X("cuStreamCreateWithPriority", 5050, 0, cuStreamCreateWithPriority)                                \
    X("cuEventRecordWithFlags", 11010, 0, cuEventRecordWithFlags)                                       \
    X("cuEventRecordWithFlags", 11010, 1, cuEventRecordWithFlags_ptsz)                                  \
    X("cuStreamBeginCapture", 10010, 0, cuStreamBeginCapture_v2)                                        \
    X("cuStreamBeginCapture", 10010, 1, cuStreamBeginCapture_v2_ptsz)                                   \
    X("cuStreamEndCapture", 10000, 0, cuStreamEndCapture) X("cuStreamEndCapture", 10000, 1, cuStreamEndCapture_ptsz) \
    X("cuStreamIsCapturing", 10000, 0, cuStreamIsCapturing)                                             \
    X("cuStreamIsCapturing", 10000, 1, cuStreamIsCapturing_ptsz)                                        \
    X("cuGraphInstantiateWithFlags", 11040, 0, cuGraphInstantiateWithFlags)                             \
    X("cuGraphLaunch", 10000, 0, cuGraphLaunch) X("cuGraphLaunch", 10000, 1, cuGraphLaunch_ptsz)        \
    X("cuGraphExecDestroy", 10000, 0, cuGraphExecDestroy) X("cuGraphDestroy", 10000, 0, cuGraphDestroy) \
    X("cuMemPoolCreate", 11020, 0, cuMemPoolCreate) X("cuMemPoolDestroy", 11020, 0, cuMemPoolDestroy)   \
    X("cuMemPoolTrimTo", 11020, 0, cuMemPoolTrimTo)                                                     \
    X("cuMemAllocFromPoolAsync", 11020, 0, cuMemAllocFromPoolAsync)                                     \
    X("cuMemAllocFromPoolAsync", 11020, 1, cuMemAllocFromPoolAsync_ptsz)                                \
    X("cuModuleLoadData", 2000, 0, cuModuleLoadData) X("cuModuleGetFunction", 2000, 0, cuModuleGetFunction) \
    X("cuModuleUnload", 2000, 0, cuModuleUnload)                                                        \
    X("cuFuncGetName", 12030, 0, cuFuncGetName) X("cuFuncGetParamInfo", 12040, 0, cuFuncGetParamInfo)  \
    X("cuLaunchKernelEx", 11060, 0, cuLaunchKernelEx) X("cuLaunchKernelEx", 11060, 1, cuLaunchKernelEx_ptsz) \
    X("cuLaunchCooperativeKernel", 9000, 0, cuLaunchCooperativeKernel)                                  \
    X("cuLaunchCooperativeKernel", 9000, 1, cuLaunchCooperativeKernel_ptsz)                             \
    X("cuMemsetD16", 3020, 0, cuMemsetD16_v2) X("cuMemsetD16", 7000, 1, cuMemsetD16_v2_ptds)           \
    X("cuMemsetD16Async", 3020, 0, cuMemsetD16Async) X("cuMemsetD16Async", 7000, 1, cuMemsetD16Async_ptsz) \
    X("cuMemsetD2D8", 3020, 0, cuMemsetD2D8_v2) X("cuMemsetD2D8", 7000, 1, cuMemsetD2D8_v2_ptds)       \
    X("cuMemsetD2D8Async", 3020, 0, cuMemsetD2D8Async) X("cuMemsetD2D8Async", 7000, 1, cuMemsetD2D8Async_ptsz) \
    X("cuMemsetD2D16", 3020, 0, cuMemsetD2D16_v2) X("cuMemsetD2D16", 7000, 1, cuMemsetD2D16_v2_ptds)   \
    X("cuMemsetD2D16Async", 3020, 0, cuMemsetD2D16Async)                                                \
    X("cuMemsetD2D16Async", 7000, 1, cuMemsetD2D16Async_ptsz)                                           \
    X("cuMemsetD2D32", 3020, 0, cuMemsetD2D32_v2) X("cuMemsetD2D32", 7000, 1, cuMemsetD2D32_v2_ptds)   \
    X("cuMemsetD2D32Async", 3020, 0, cuMemsetD2D32Async)                                                \
    X("cuMemsetD2D32Async", 7000, 1, cuMemsetD2D32Async_ptsz)                                           \
    X("cuMemcpy2DUnaligned", 3020, 0, cuMemcpy2DUnaligned_v2)                                           \
    X("cuMemcpy2DUnaligned", 7000, 1, cuMemcpy2DUnaligned_v2_ptds)
// clang-format on

SIM_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
SIM_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *symbolStatus);

#define LOCAL_ALIAS(name, version, ptds, fn) static __typeof__(fn) local_##fn __attribute__((alias(#fn)));
PROCS(LOCAL_ALIAS)
#undef LOCAL_ALIAS

static const struct proc {
    const char *name;
    int version, ptds;
    void *fn;
} procs[] = {
#define ENTRY(name, version, ptds, fn) {name, version, ptds, (void *)local_##fn},
    PROCS(ENTRY)
#undef ENTRY
};

static CUresult proc_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status)
{
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult e = CUDA_ERROR_NOT_FOUND;
    if (pfn)
        *pfn = NULL;
    if (!symbol || !pfn ||
        (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        e = CUDA_ERROR_INVALID_VALUE;
    else if (version > SIM_DRIVER_VERSION)
        e = CUDA_ERROR_INVALID_VALUE; /* "greater than the driver version" */
    else {
        const struct proc *best = NULL, *best_ptds = NULL;
        for (size_t i = 0; i < sizeof procs / sizeof *procs; i++) {
            const struct proc *p = &procs[i];
            if (strcmp(p->name, symbol))
                continue;
            st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
            if (p->version > version)
                continue;
            const struct proc **slot = p->ptds ? &best_ptds : &best;
            if (!*slot || p->version > (*slot)->version)
                *slot = p;
        }
        if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_ptds)
            best = best_ptds;
        if (best) {
            *pfn = best->fn;
            st = CU_GET_PROC_ADDRESS_SUCCESS;
            e = CUDA_SUCCESS;
        }
    }
    if (status)
        *status = st;
    return e;
}

SIM_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    TRACE();
    return proc_lookup(symbol, pfn, cudaVersion, flags, NULL);
}

SIM_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *symbolStatus)
{
    TRACE();
    return proc_lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}
