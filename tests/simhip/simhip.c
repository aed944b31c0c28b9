/* A stand-in for libamdhip64.so.5 on host memory, for testing hipshadow without an AMD GPU.
 *
 * It mirrors the behaviour of ROCm CLR (hipamd/src/hip_memory.cpp) that matters to hipshadow:
 *  - copies are validated as ihipMemcpy_validate does: NULL -> hipErrorInvalidValue; a kind past
 *    hipMemcpyDefault -> hipErrorInvalidMemcpyDirection; a range longer than what is left of its
 *    containing allocation -> hipErrorInvalidValue and no copy; unknown pointers are host memory;
 *  - async work is queued per stream and runs only at synchronisation points;
 *  - hipFree synchronises the device first;
 *  - device memory lives in a reserved aperture; touching a freed part of it (from a queued or a
 *    synchronous copy) is a GPU fault: the sticky hipErrorIllegalAddress, returned from then on;
 *  - a destroyed or never-created stream gives hipErrorContextIsDestroyed (CLR's hip::isValid);
 *  - virtual memory management (hip_vm.cpp): reservations are PROT_NONE aperture space, handles are
 *    memfds mapped over them; unmapped or inaccessible VMM space faults like freed memory;
 *  - SIMHIP_DEVICES devices (default 2), the current one per thread; allocations remember it;
 *  - a kernel touching memory outside every live allocation is a GPU memory fault: ROCr's system
 *    event handlers hear it first (simhsa.c, the libhsa-runtime64 this library links), then the
 *    process aborts with ROCr's message (HIP_SKIP_ABORT_ON_GPU_ERROR=0) or the fault becomes the
 *    sticky hipErrorIllegalAddress (CLR's default).  Copies that fault only set the sticky error.
 *  - the thread's last error as CLR keeps it, by release (SIMHIP_ROCM): see ret_as();
 *  - kernels of test programs, and hipshadow's own, run on the host at their launch.
 * SIMHIP_TRACE=1 prints every entry point as it runs, so tests can prove a call never got here.
 * SIMHIP_NULL=1 (benchmarks): copies return at once (not validated, queued or performed) and
 * allocations change no page protection, so what a benchmark measures beyond the plain run is
 * hipshadow's cost, and many threads copying do not meet on the simulator's one lock.  With it,
 * SIMHIP_ALIGN=N (16..4096, a power of two) packs allocations N bytes apart instead of a page, as
 * an allocator that sub-allocates small blocks does.
 * SIMHIP_APERTURE_GIB=N reserves N GiB of device addresses instead of 64 (valgrind maps 4). */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIM_EXPORT __attribute__((visibility("default")))

enum { OBJ_DEVICE = 1, OBJ_MANAGED, OBJ_PINNED, OBJ_REGISTERED, OBJ_MAPPED /* a hipMemMap'ed range */ };

typedef struct sim_object {
    uintptr_t base;
    size_t size;
    int kind;
    void *pool;                /* hipMallocFromPoolAsync: the pool it came from */
    int device;                /* the current device at allocation (a VMM mapping: its handle's) */
    int access;                /* OBJ_MAPPED: hipMemAccessFlags granted by hipMemSetAccess */
    struct sim_handle *handle; /* OBJ_MAPPED: the physical memory behind it */
} sim_object;

typedef struct sim_handle {
    int fd;
    size_t size;
    int device, refs;
} sim_handle; /* hipMemCreate */
typedef struct sim_rsv {
    uintptr_t base;
    size_t size;
    struct sim_rsv *next;
} sim_rsv; /* hipMemAddressReserve */

typedef enum { OP_COPY, OP_MEMSET, OP_FREE } op_type;

typedef struct sim_op {
    op_type type;
    void *dst;
    const void *src;
    size_t bytes;
    int value;
    size_t value_size;
    struct sim_op *next;
} sim_op;

#define STREAM_MAGIC 0x5354524du
typedef struct sim_stream {
    unsigned magic;
    sim_op *head, *tail;
    struct sim_stream *next_live;
    unsigned flags;
    int device;       /* the current device at creation (CLR: hip::Stream's device) */
    int capturing;    /* ops are captured into a graph, not run */
    sim_op *captured; /* dropped at the end of capture */
} sim_stream;

static size_t APERTURE_SIZE = 64ull << 30; /* SIMHIP_APERTURE_GIB */
static size_t DEVICE_ALIGN = 4096;         /* SIMHIP_ALIGN: a power of two, for dense layouts in benchmarks */

static struct {
    pthread_once_t once;
    pthread_mutex_t lock; /* objects, streams, queues: the simulator is not about speed */
    uintptr_t aperture, aperture_next;
    sim_object *objects;
    size_t n_objects, cap_objects;
    size_t n_dead;   /* freed objects left in place (kind 0) until the next compaction */
    int null_copies; /* SIMHIP_NULL=1: copies and frees touch no memory (benchmarks) */
    sim_stream null_stream, per_thread_stream;
    sim_stream *live_streams;
    sim_rsv *reservations;
    atomic_int sticky; /* hipErrorIllegalAddress once a fault happened */
} sim = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static __thread hipError_t last_error;
static __thread int current_device; /* per thread, as CLR's hip::tls.device_ (hip_context.cpp) */

static int device_count(void)
{
    static _Atomic int n; /* atomic: threads may set it at once (TSan) */
    if (!n) {
        const char *e = getenv("SIMHIP_DEVICES");
        int v = e ? atoi(e) : 2;
        n = v >= 1 && v <= 64 ? v : 2;
    }
    return n;
}

static int tracing(void)
{
    static _Atomic int t = -1; /* atomic: threads may set it at once (TSan) */
    if (t < 0) {
        const char *e = getenv("SIMHIP_TRACE");
        t = e && *e == '1';
    }
    return t;
}
#define TRACE()                                                                                                        \
    do {                                                                                                               \
        if (tracing())                                                                                                 \
            fprintf(stderr, "simhip: %s\n", __func__);                                                                 \
    } while (0)

/* SIMHIP_ROCM=5|6|7: the ROCm release the simulator stands for (default 5, its headers'). */
static int rocm_major(void)
{
    static _Atomic int major; /* atomic: threads may set it at once (TSan) */
    if (!major) {
        const char *v = getenv("SIMHIP_ROCM");
        major = v && (*v == '6' || *v == '7') ? *v - '0' : 5;
    }
    return major;
}

/* The thread's last error, kept as CLR's HIP_RETURN keeps it (hipamd/src/hip_internal.hpp).  Every
 * exported call that returns a hipError_t returns through here, and nothing else touches it: a
 * helper that fails while its call still succeeds must leave no trace.
 *  - Before ROCm 7.0 every call sets it to its own result, so a success clears it.
 *  - From 7.0 ("Update hipGetLastError" in the HIP 7.0 API changes) only a failure sets it, and
 *    hipErrorNotReady is none; while the GPU is in error (a sticky fault), every call returns the
 *    GPU's error and sets it (HIP_RETURN's amd::Device::IsGPUInError branch).
 * gpu_error: the GPU's state as the call returns, as far as the call can see it. */
static hipError_t ret_as(hipError_t e, hipError_t gpu_error)
{
    if (rocm_major() < 7)
        last_error = e;
    else if (gpu_error != hipSuccess)
        last_error = e = gpu_error;
    else if (e != hipSuccess && e != hipErrorNotReady)
        last_error = e;
    return e;
}
static hipError_t ret(hipError_t e) { return ret_as(e, (hipError_t)atomic_load(&sim.sticky)); }

/* A launch returns before its kernel runs on a real GPU: a fault the kernel makes is not the
 * launch's to see, whatever the simulator's order. */
static hipError_t ret_launch(hipError_t e) { return ret_as(e, hipSuccess); }

/* Where every exported hip* call starts.  ROCm 7's HIP_INIT_API returns at once while the GPU is
 * in error: the call does nothing. */
#define API()                                                                                                          \
    do {                                                                                                               \
        TRACE();                                                                                                       \
        if (rocm_major() >= 7 && atomic_load(&sim.sticky))                                                             \
            return ret(hipSuccess);                                                                                    \
    } while (0)

/* simhsa.c, as libamdhip64 calls into libhsa-runtime64. */
void simhsa_open(void);
int simhsa_memory_fault(uint64_t address, uint32_t reasons);

/* fork while another thread is inside the simulator: the child gets the lock free (as
 * hipshadow's fork tests need a runtime that a child can call; tests/cases/fork_storm.c). */
static void sim_fork_prepare(void) { pthread_mutex_lock(&sim.lock); }
static void sim_fork_parent(void) { pthread_mutex_unlock(&sim.lock); }
static void sim_fork_child(void) { pthread_mutex_init(&sim.lock, NULL); }

static void sim_init(void)
{
    pthread_atfork(sim_fork_prepare, sim_fork_parent, sim_fork_child);
    const char *gib = getenv("SIMHIP_APERTURE_GIB");
    if (gib && atoi(gib) > 0)
        APERTURE_SIZE = (size_t)atoi(gib) << 30;
    void *p = mmap(NULL, APERTURE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "simhip: cannot reserve the device aperture\n");
        abort();
    }
    sim.aperture = sim.aperture_next = (uintptr_t)p;
    const char *null_mode = getenv("SIMHIP_NULL");
    sim.null_copies = null_mode && *null_mode == '1';
    const char *align = getenv("SIMHIP_ALIGN"); /* null mode only: others protect whole pages */
    if (align && sim.null_copies) {
        unsigned long a = strtoul(align, NULL, 0);
        if (a >= 16 && a <= 4096 && !(a & (a - 1)))
            DEVICE_ALIGN = a;
        else
            fprintf(stderr, "simhip: SIMHIP_ALIGN=%s is not a power of two from 16 to 4096; keeping 4096\n", align);
    }
    if (sim.null_copies) /* no mprotect per allocation either: only hipshadow's cost should show */
        mprotect(p, APERTURE_SIZE, PROT_READ | PROT_WRITE);
    sim.null_stream.magic = STREAM_MAGIC;
    sim.per_thread_stream.magic = STREAM_MAGIC;
    simhsa_open(); /* the runtime's first call initialises HSA */
}
#define INIT() pthread_once(&sim.once, sim_init)

/* A kernel faulted at `address` (lock held: handlers must not call back into the runtime, as
 * they must not on ROCr's event thread). */
static void kernel_fault(uintptr_t address)
{
    atomic_store(&sim.sticky, hipErrorIllegalAddress);
    if (simhsa_memory_fault(address, 1u /* HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT */))
        return; /* a handler took it over */
    const char *skip = getenv("HIP_SKIP_ABORT_ON_GPU_ERROR");
    if (skip && !strcmp(skip, "0")) {
        fprintf(stderr,
                "Memory access fault by GPU node-1 (Agent handle: 0x5151) on address %p. Reason: Page not "
                "present or supervisor privilege.\n",
                (void *)address);
        abort();
    }
}

static int in_aperture(uintptr_t p) { return p >= sim.aperture && p < sim.aperture + APERTURE_SIZE; }

/* ---- objects (lock held): sorted by base, like CLR's memory-object map ---- */

/* Index of the first object whose base is > p. */
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
    return o->kind && p - o->base < o->size ? o : NULL;
}

/* Frees leave their object in place, dead (kind 0), so a free costs O(log n) as in CLR's map;
 * dead objects are dropped here, when they are half the array or before a scan that must not
 * see them.  A dead object never hides a live one: an object added over dead ones compacts first. */
static void compact_objects(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < sim.n_objects; i++)
        if (sim.objects[i].kind)
            sim.objects[kept++] = sim.objects[i];
    sim.n_objects = kept;
    sim.n_dead = 0;
}

static int add_object(uintptr_t base, size_t size, int kind)
{
    size_t at = upper_bound(base);
    if (sim.n_dead && at < sim.n_objects && sim.objects[at].base < base + (size ? size : 1)) {
        compact_objects();
        at = upper_bound(base);
    }
    if (sim.n_objects == sim.cap_objects) {
        size_t cap = sim.cap_objects ? sim.cap_objects * 2 : 64;
        sim_object *grown = realloc(sim.objects, cap * sizeof *grown);
        if (!grown)
            return -1;
        sim.objects = grown;
        sim.cap_objects = cap;
    }
    memmove(&sim.objects[at + 1], &sim.objects[at], (sim.n_objects - at) * sizeof *sim.objects);
    sim.objects[at] = (sim_object){base, size, kind, NULL, current_device, 0, NULL};
    sim.n_objects++;
    return 0;
}
static void remove_object(sim_object *o)
{
    o->kind = 0;
    sim.n_dead++;
    if (sim.n_dead > 64 && sim.n_dead * 2 > sim.n_objects)
        compact_objects();
}

static sim_rsv *find_rsv(uintptr_t p)
{
    for (sim_rsv *r = sim.reservations; r; r = r->next)
        if (p - r->base < r->size)
            return r;
    return NULL;
}

/* Whether live objects cover [p, p+n): one object, or adjacent VMM mappings (a copy may run from
 * one into the next), each granting at least `need` access; only_mapped: VMM mappings only. */
static int covered(uintptr_t p, size_t n, int need, int only_mapped)
{
    for (uintptr_t end = p + (n ? n : 1); p < end;) {
        sim_object *o = find_object(p);
        if (!o || (o->kind == OBJ_MAPPED ? o->access < need : only_mapped || end > o->base + o->size))
            return 0;
        p = o->base + o->size;
    }
    return 1;
}

/* ---- streams ---- */

static sim_stream *stream_of(hipStream_t s)
{
    if (s == NULL)
        return &sim.null_stream;
    if (s == hipStreamPerThread)
        return &sim.per_thread_stream;
    for (sim_stream *l = sim.live_streams; l; l = l->next_live)
        if ((hipStream_t)l == s)
            return l;
    return NULL;
}

/* Runs one op now.  A side in the device aperture that no live object holds is a GPU fault. */
static hipError_t execute(const sim_op *op)
{
    if (atomic_load(&sim.sticky))
        return hipErrorIllegalAddress;
    uintptr_t d = (uintptr_t)op->dst, s = (uintptr_t)op->src;
    int freeing = op->type == OP_FREE;
    if ((in_aperture(d) && !covered(d, freeing ? 0 : op->bytes, freeing ? 0 : hipMemAccessFlagsProtReadWrite, 0)) ||
        (op->type == OP_COPY && in_aperture(s) && !covered(s, op->bytes, hipMemAccessFlagsProtRead, 0))) {
        atomic_store(&sim.sticky, hipErrorIllegalAddress);
        return hipErrorIllegalAddress;
    }
    switch (op->type) {
    case OP_COPY:
        if (!sim.null_copies)
            memmove(op->dst, op->src, op->bytes);
        break;
    case OP_MEMSET:
        for (size_t i = 0; i < op->bytes; i += op->value_size)
            memcpy((char *)op->dst + i, &op->value, op->value_size);
        break;
    case OP_FREE: {
        sim_object *o = find_object(d);
        if (o && o->base == d && o->kind != OBJ_MAPPED) {
            if (!sim.null_copies) {
                madvise((void *)o->base, o->size, MADV_DONTNEED);
                mprotect((void *)o->base, o->size, PROT_NONE);
            }
            remove_object(o);
        }
        break;
    }
    }
    return hipSuccess;
}

static hipError_t drain(sim_stream *st)
{
    hipError_t worst = hipSuccess;
    while (st->head) {
        sim_op *op = st->head;
        st->head = op->next;
        hipError_t e = execute(op);
        if (e != hipSuccess)
            worst = e;
        free(op);
    }
    st->tail = NULL;
    return worst;
}

static hipError_t drain_all(void)
{
    hipError_t worst = drain(&sim.null_stream);
    hipError_t e = drain(&sim.per_thread_stream);
    if (e != hipSuccess)
        worst = e;
    for (sim_stream *l = sim.live_streams; l; l = l->next_live)
        if ((e = drain(l)) != hipSuccess)
            worst = e;
    return atomic_load(&sim.sticky) ? hipErrorIllegalAddress : worst;
}

static int any_capturing(void)
{
    for (sim_stream *l = sim.live_streams; l; l = l->next_live)
        if (l->capturing)
            return 1;
    return 0;
}

static hipError_t enqueue(sim_stream *st, sim_op op)
{
    sim_op *q = malloc(sizeof *q);
    if (!q)
        return hipErrorOutOfMemory;
    *q = op;
    q->next = NULL;
    if (st->capturing) { /* into the graph being captured: it does not run now */
        q->next = st->captured;
        st->captured = q;
        return hipSuccess;
    }
    if (st->tail)
        st->tail->next = q;
    else
        st->head = q;
    st->tail = q;
    return hipSuccess;
}

/* ---- validation, as ihipMemcpy_validate ---- */

static hipError_t validate_range(uintptr_t p, size_t bytes)
{
    sim_object *o = find_object(p);
    size_t limit = o ? o->size : 0;
    /* A VMM mapping is checked against its whole reservation's size, yet with the offset into the
     * mapping: ROCm/clr hipamd/src/hip_memory.cpp ihipMemcpy_validate, "If the mem object is a VMM
     * sub buffer ... use parent's size" (commit 49b4aef8c, SWDEV-413997).  Overruns past the mapped
     * space then fault when the copy runs. */
    sim_rsv *r = o && o->kind == OBJ_MAPPED ? find_rsv(p) : NULL;
    if (r)
        limit = r->size;
    if (o && bytes > limit - (p - o->base))
        return hipErrorInvalidValue;
    return hipSuccess;
}

static hipError_t validate_copy(void *dst, const void *src, size_t bytes, hipMemcpyKind kind)
{
    if (!dst || !src)
        return hipErrorInvalidValue;
    if ((unsigned)kind > hipMemcpyDefault)
        return hipErrorInvalidMemcpyDirection;
    hipError_t e = validate_range((uintptr_t)src, bytes);
    return e != hipSuccess ? e : validate_range((uintptr_t)dst, bytes);
}

/* SIMHIP_REJECT_INTERIOR_D2H=1 plays the runtime of seed 000, which refused every D2H whose
 * source was a sub-buffer (an interior pointer) of a pool, in bounds or not. */
static int rejects_interior_d2h(const void *src, hipMemcpyKind kind)
{
    static _Atomic int on = -1; /* atomic: threads may set it at once (TSan) */
    if (on < 0) {
        const char *e = getenv("SIMHIP_REJECT_INTERIOR_D2H");
        on = e && *e == '1';
    }
    sim_object *o = on ? find_object((uintptr_t)src) : NULL;
    return o && o->kind == OBJ_DEVICE && (uintptr_t)src != o->base &&
           (kind == hipMemcpyDeviceToHost || kind == hipMemcpyDefault);
}

static hipError_t do_copy(void *dst, const void *src, size_t bytes, hipMemcpyKind kind, hipStream_t stream, int async)
{
    INIT();
    if (bytes == 0 || sim.null_copies)
        return hipSuccess; /* null mode: a copy is not even validated or queued (no lock, no lookup) */
    pthread_mutex_lock(&sim.lock);
    hipError_t e;
    sim_stream *st = stream_of(stream);
    if (atomic_load(&sim.sticky))
        e = hipErrorIllegalAddress;
    else if (rejects_interior_d2h(src, kind))
        e = hipErrorInvalidValue;
    else if (!st)
        e = hipErrorContextIsDestroyed;
    else if ((e = validate_copy(dst, src, bytes, kind)) == hipSuccess) {
        sim_op op = {.type = OP_COPY, .dst = dst, .src = src, .bytes = bytes};
        if (async)
            e = enqueue(st, op);
        else if (st->capturing || (st == &sim.null_stream && any_capturing()))
            e = st->capturing ? hipErrorStreamCaptureUnsupported : hipErrorStreamCaptureImplicit;
        else {
            /* A synchronous copy waits for the work before it (legacy null-stream semantics). */
            e = st == &sim.null_stream ? drain_all() : drain(st);
            if (e == hipSuccess)
                e = execute(&op);
        }
    }
    pthread_mutex_unlock(&sim.lock);
    return e;
}

static hipError_t do_memset(void *dst, int value, size_t value_size, size_t bytes, hipStream_t stream, int async)
{
    INIT();
    if (bytes == 0)
        return hipSuccess;
    pthread_mutex_lock(&sim.lock);
    hipError_t e;
    sim_stream *st = stream_of(stream);
    if (atomic_load(&sim.sticky))
        e = hipErrorIllegalAddress;
    else if (!dst)
        e = hipErrorInvalidValue;
    else if (!st)
        e = hipErrorContextIsDestroyed;
    else if (!find_object((uintptr_t)dst) && !in_aperture((uintptr_t)dst))
        e = hipErrorInvalidValue; /* memset needs memory the runtime knows */
    else if ((e = validate_range((uintptr_t)dst, bytes)) == hipSuccess) {
        sim_op op = {.type = OP_MEMSET, .dst = dst, .bytes = bytes, .value = value, .value_size = value_size};
        if (async)
            e = enqueue(st, op);
        else if ((e = st == &sim.null_stream ? drain_all() : drain(st)) == hipSuccess)
            e = execute(&op);
    }
    pthread_mutex_unlock(&sim.lock);
    return e;
}

/* ---- allocation ---- */

static hipError_t device_alloc(void **ptr, size_t size, int kind)
{
    INIT();
    if (!ptr)
        return hipErrorInvalidValue;
    if (size == 0) {
        *ptr = NULL;
        return hipSuccess;
    }
    if (size > APERTURE_SIZE) /* CLR: more than the device has is hipErrorOutOfMemory */
        return hipErrorOutOfMemory;
    size_t rounded = (size + DEVICE_ALIGN - 1) & ~(DEVICE_ALIGN - 1);
    pthread_mutex_lock(&sim.lock);
    hipError_t e = hipSuccess;
    if (sim.aperture_next + rounded > sim.aperture + APERTURE_SIZE) {
        e = hipErrorOutOfMemory;
    } else {
        uintptr_t base = sim.aperture_next;
        if ((!sim.null_copies && mprotect((void *)base, rounded, PROT_READ | PROT_WRITE) != 0) ||
            add_object(base, size, kind) != 0) {
            e = hipErrorOutOfMemory;
        } else {
            sim.aperture_next += rounded;
            *ptr = (void *)base;
        }
    }
    pthread_mutex_unlock(&sim.lock);
    return e;
}

SIM_EXPORT hipError_t hipMalloc(void **ptr, size_t size)
{
    API();
    return ret(device_alloc(ptr, size, OBJ_DEVICE));
}
SIM_EXPORT hipError_t hipExtMallocWithFlags(void **ptr, size_t size, unsigned int flags)
{
    API();
    (void)flags;
    return ret(device_alloc(ptr, size, OBJ_DEVICE));
}
SIM_EXPORT hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    API();
    (void)flags;
    return ret(device_alloc(ptr, size, OBJ_MANAGED));
}
SIM_EXPORT hipError_t hipMallocAsync(void **ptr, size_t size, hipStream_t stream)
{
    API();
    (void)stream;
    return ret(device_alloc(ptr, size, OBJ_DEVICE));
}
SIM_EXPORT hipError_t hipMallocFromPoolAsync(void **ptr, size_t size, hipMemPool_t pool, hipStream_t stream)
{
    API();
    (void)stream;
    if (!pool)
        return ret(hipErrorInvalidValue);
    hipError_t e = device_alloc(ptr, size, OBJ_DEVICE);
    if (e == hipSuccess) {
        pthread_mutex_lock(&sim.lock);
        sim_object *o = find_object((uintptr_t)*ptr);
        if (o)
            o->pool = pool;
        pthread_mutex_unlock(&sim.lock);
    }
    return ret(e);
}

SIM_EXPORT hipError_t hipMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
    API();
    if (!pitch)
        return ret(hipErrorInvalidValue);
    *pitch = (width + 255) & ~(size_t)255;
    return ret(device_alloc(ptr, *pitch * height, OBJ_DEVICE));
}

static hipError_t host_alloc(void **ptr, size_t size)
{
    INIT();
    if (!ptr)
        return hipErrorInvalidValue;
    void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return hipErrorOutOfMemory;
    pthread_mutex_lock(&sim.lock);
    int rc = add_object((uintptr_t)p, size, OBJ_PINNED);
    pthread_mutex_unlock(&sim.lock);
    if (rc) {
        munmap(p, size);
        return hipErrorOutOfMemory;
    }
    *ptr = p;
    return hipSuccess;
}

SIM_EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    API();
    (void)flags;
    return ret(host_alloc(ptr, size));
}
SIM_EXPORT hipError_t hipMallocHost(void **ptr, size_t size)
{
    API();
    return ret(host_alloc(ptr, size));
}
/* For tests: pinned host memory made inside the runtime, as for a library hipshadow does not wrap
 * (a statically linked one): the program reaches it, hipshadow never saw it allocated. */
SIM_EXPORT void *simhip_pinned_unwrapped(size_t size)
{
    void *p = NULL;
    return host_alloc(&p, size) == hipSuccess ? p : NULL;
}

static hipError_t free_kind(void *ptr, int host)
{
    INIT();
    if (!ptr)
        return hipSuccess;
    pthread_mutex_lock(&sim.lock);
    hipError_t e = drain_all(); /* hipFree synchronises the device */
    sim_object *o = find_object((uintptr_t)ptr);
    if (!o || o->base != (uintptr_t)ptr || (host != (o->kind == OBJ_PINNED)) || o->kind == OBJ_MAPPED) {
        e = hipErrorInvalidValue;
    } else if (host) {
        munmap((void *)o->base, o->size ? o->size : 1);
        remove_object(o);
    } else {
        sim_op op = {.type = OP_FREE, .dst = ptr};
        execute(&op);
    }
    pthread_mutex_unlock(&sim.lock);
    return e;
}

SIM_EXPORT hipError_t hipFree(void *ptr)
{
    API();
    return ret(free_kind(ptr, 0));
}
SIM_EXPORT hipError_t hipHostFree(void *ptr)
{
    API();
    return ret(free_kind(ptr, 1));
}
SIM_EXPORT hipError_t hipFreeHost(void *ptr)
{
    API();
    return ret(free_kind(ptr, 1));
}

SIM_EXPORT hipError_t hipFreeAsync(void *ptr, hipStream_t stream)
{
    API();
    INIT();
    if (!ptr)
        return ret(hipSuccess);
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(stream);
    hipError_t e = st ? enqueue(st, (sim_op){.type = OP_FREE, .dst = ptr}) : hipErrorContextIsDestroyed;
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

SIM_EXPORT hipError_t hipHostRegister(void *host, size_t size, unsigned int flags)
{
    API();
    INIT();
    (void)flags;
    if (!host || !size)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    hipError_t e = find_object((uintptr_t)host)                        ? hipErrorHostMemoryAlreadyRegistered
                   : add_object((uintptr_t)host, size, OBJ_REGISTERED) ? hipErrorOutOfMemory
                                                                       : hipSuccess;
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

SIM_EXPORT hipError_t hipHostUnregister(void *host)
{
    API();
    INIT();
    pthread_mutex_lock(&sim.lock);
    sim_object *o = find_object((uintptr_t)host);
    hipError_t e = hipErrorHostMemoryNotRegistered;
    if (o && o->base == (uintptr_t)host && o->kind == OBJ_REGISTERED) {
        remove_object(o);
        e = hipSuccess;
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

/* ---- copies ---- */

SIM_EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind k)
{
    API();
    return ret(do_copy(dst, src, n, k, NULL, 0));
}
SIM_EXPORT hipError_t hipMemcpy_spt(void *dst, const void *src, size_t n, hipMemcpyKind k)
{
    API();
    return ret(do_copy(dst, src, n, k, hipStreamPerThread, 0));
}
SIM_EXPORT hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s)
{
    API();
    return ret(do_copy(dst, src, n, k, s, 0));
}
SIM_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s)
{
    API();
    return ret(do_copy(dst, src, n, k, s, 1));
}
SIM_EXPORT hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s)
{
    API();
    return ret(do_copy(dst, src, n, k, s, 1));
}
/* Like some runtime builds, hipMemcpyDtoH goes through the exported hipMemcpy: with hipshadow
 * preloaded that lands in its wrapper again, which the re-entrancy guard must forward unchecked. */
SIM_EXPORT hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t n)
{
    API();
    static _Atomic(void *) exported; /* atomic: threads may look it up at once (TSan) */
    void *found = exported;
    if (!found)
        exported = found = dlsym(RTLD_DEFAULT, "hipMemcpy");
    hipError_t (*exported_memcpy)(void *, const void *, size_t, hipMemcpyKind);
    *(void **)&exported_memcpy = found;
    return ret(exported_memcpy(dst, src, n, hipMemcpyDeviceToHost));
}
SIM_EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t s)
{
    API();
    return ret(do_copy(dst, src, n, hipMemcpyDeviceToHost, s, 1));
}
SIM_EXPORT hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t n)
{
    API();
    return ret(do_copy(dst, src, n, hipMemcpyHostToDevice, NULL, 0));
}
SIM_EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t n, hipStream_t s)
{
    API();
    return ret(do_copy(dst, src, n, hipMemcpyHostToDevice, s, 1));
}
SIM_EXPORT hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n)
{
    API();
    return ret(do_copy(dst, src, n, hipMemcpyDeviceToDevice, NULL, 0));
}
SIM_EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t s)
{
    API();
    return ret(do_copy(dst, src, n, hipMemcpyDeviceToDevice, s, 1));
}
/* ROCm/clr hipamd/src/hip_peer.cpp checks only that both device numbers exist, never that the
 * pointers live there, then runs an ordinary D2D ihipMemcpy (same validation) on the stream. */
static int bad_peer(int dd, int sd) { return dd < 0 || sd < 0 || dd >= device_count() || sd >= device_count(); }
SIM_EXPORT hipError_t hipMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n)
{
    API();
    return ret(bad_peer(dd, sd) ? hipErrorInvalidDevice : do_copy(dst, src, n, hipMemcpyDeviceToDevice, NULL, 0));
}
SIM_EXPORT hipError_t hipMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n, hipStream_t s)
{
    API();
    return ret(bad_peer(dd, sd) ? hipErrorInvalidDevice : do_copy(dst, src, n, hipMemcpyDeviceToDevice, s, 1));
}

static hipError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                          hipMemcpyKind kind, hipStream_t s, int async)
{
    INIT();
    if (width > dpitch || width > spitch)
        return hipErrorInvalidPitchValue;
    if (!width || !height)
        return hipSuccess;
    /* Each side must hold its whole pitched extent, as CLR's 2-D validation requires. */
    pthread_mutex_lock(&sim.lock);
    hipError_t e = validate_copy(dst, src, 1, kind);
    if (e == hipSuccess)
        e = validate_range((uintptr_t)src, (height - 1) * spitch + width);
    if (e == hipSuccess)
        e = validate_range((uintptr_t)dst, (height - 1) * dpitch + width);
    pthread_mutex_unlock(&sim.lock);
    for (size_t row = 0; e == hipSuccess && row < height; row++)
        e = do_copy((char *)dst + row * dpitch, (const char *)src + row * spitch, width, kind, s, async);
    return e;
}

SIM_EXPORT hipError_t hipMemcpy2D(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, hipMemcpyKind k)
{
    API();
    return ret(copy_2d(dst, dp, src, sp, w, h, k, NULL, 0));
}
SIM_EXPORT hipError_t hipMemcpy2D_spt(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                      hipMemcpyKind k)
{
    API();
    return ret(copy_2d(dst, dp, src, sp, w, h, k, hipStreamPerThread, 0));
}
SIM_EXPORT hipError_t hipMemcpy2DAsync(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                       hipMemcpyKind k, hipStream_t s)
{
    API();
    return ret(copy_2d(dst, dp, src, sp, w, h, k, s, 1));
}

/* ---- memset ---- */

SIM_EXPORT hipError_t hipMemset(void *dst, int v, size_t n)
{
    API();
    return ret(do_memset(dst, v & 0xff, 1, n, NULL, 0));
}
SIM_EXPORT hipError_t hipMemset_spt(void *dst, int v, size_t n)
{
    API();
    return ret(do_memset(dst, v & 0xff, 1, n, hipStreamPerThread, 0));
}
SIM_EXPORT hipError_t hipMemsetAsync(void *dst, int v, size_t n, hipStream_t s)
{
    API();
    return ret(do_memset(dst, v & 0xff, 1, n, s, 1));
}
SIM_EXPORT hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char v, size_t c)
{
    API();
    return ret(do_memset(dst, v, 1, c, NULL, 0));
}
SIM_EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char v, size_t c, hipStream_t s)
{
    API();
    return ret(do_memset(dst, v, 1, c, s, 1));
}
SIM_EXPORT hipError_t hipMemsetD16(hipDeviceptr_t dst, unsigned short v, size_t c)
{
    API();
    return ret(do_memset(dst, v, 2, c * 2, NULL, 0));
}
SIM_EXPORT hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short v, size_t c, hipStream_t s)
{
    API();
    return ret(do_memset(dst, v, 2, c * 2, s, 1));
}
SIM_EXPORT hipError_t hipMemsetD32(hipDeviceptr_t dst, int v, size_t c)
{
    API();
    return ret(do_memset(dst, v, 4, c * 4, NULL, 0));
}
SIM_EXPORT hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int v, size_t c, hipStream_t s)
{
    API();
    return ret(do_memset(dst, v, 4, c * 4, s, 1));
}

/* ---- streams, events, synchronisation ---- */

static hipError_t stream_create(hipStream_t *out, unsigned flags)
{
    INIT();
    if (!out)
        return hipErrorInvalidValue;
    sim_stream *st = calloc(1, sizeof *st);
    if (!st)
        return hipErrorOutOfMemory;
    st->magic = STREAM_MAGIC;
    st->flags = flags;
    st->device = current_device;
    pthread_mutex_lock(&sim.lock);
    st->next_live = sim.live_streams;
    sim.live_streams = st;
    pthread_mutex_unlock(&sim.lock);
    *out = (hipStream_t)st;
    return hipSuccess;
}

SIM_EXPORT hipError_t hipStreamCreate(hipStream_t *s)
{
    API();
    return ret(stream_create(s, 0));
}
SIM_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int f)
{
    API();
    return ret(stream_create(s, f));
}
SIM_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *s, unsigned int f, int p)
{
    API();
    (void)p;
    return ret(stream_create(s, f));
}
SIM_EXPORT hipError_t hipExtStreamCreateWithCUMask(hipStream_t *s, uint32_t n, const uint32_t *m)
{
    API();
    (void)n;
    (void)m;
    return ret(stream_create(s, 0));
}

SIM_EXPORT hipError_t hipStreamGetFlags(hipStream_t s, unsigned int *flags)
{
    API();
    INIT();
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(s);
    hipError_t e = !st ? hipErrorContextIsDestroyed : !flags ? hipErrorInvalidValue : hipSuccess;
    if (e == hipSuccess)
        *flags = st->flags;
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

SIM_EXPORT hipError_t hipStreamDestroy(hipStream_t s)
{
    API();
    INIT();
    pthread_mutex_lock(&sim.lock);
    hipError_t e = hipErrorContextIsDestroyed;
    for (sim_stream **l = &sim.live_streams; *l; l = &(*l)->next_live)
        if ((hipStream_t)*l == s) {
            sim_stream *gone = *l;
            drain(gone);
            *l = gone->next_live;
            gone->magic = 0;
            free(gone);
            e = hipSuccess;
            break;
        }
    if (s == NULL)
        e = hipErrorInvalidResourceHandle;
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

static hipError_t stream_sync(hipStream_t s)
{
    INIT();
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(s);
    hipError_t e = !st                                         ? hipErrorContextIsDestroyed
                   : st->capturing                             ? hipErrorStreamCaptureUnsupported
                   : st == &sim.null_stream && any_capturing() ? hipErrorStreamCaptureImplicit
                   : st == &sim.null_stream                    ? drain_all()
                                                               : drain(st);
    if (st && atomic_load(&sim.sticky))
        e = hipErrorIllegalAddress;
    pthread_mutex_unlock(&sim.lock);
    return e;
}

SIM_EXPORT hipError_t hipStreamSynchronize(hipStream_t s)
{
    API();
    return ret(stream_sync(s));
}
SIM_EXPORT hipError_t hipStreamSynchronize_spt(hipStream_t s)
{
    API();
    return ret(stream_sync(s));
}

static hipError_t stream_query(hipStream_t s)
{
    INIT();
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(s);
    hipError_t e;
    if (!st)
        e = hipErrorContextIsDestroyed;
    else if (atomic_load(&sim.sticky))
        e = hipErrorIllegalAddress;
    else if (st->head) {
        drain(st); /* "still running": it completes by the next query */
        e = atomic_load(&sim.sticky) ? hipErrorIllegalAddress : hipErrorNotReady;
    } else
        e = hipSuccess;
    pthread_mutex_unlock(&sim.lock);
    return e;
}

SIM_EXPORT hipError_t hipStreamQuery(hipStream_t s)
{
    API();
    return ret(stream_query(s));
}
SIM_EXPORT hipError_t hipStreamQuery_spt(hipStream_t s)
{
    API();
    return ret(stream_query(s));
}

SIM_EXPORT hipError_t hipDeviceSynchronize(void)
{
    API();
    INIT();
    pthread_mutex_lock(&sim.lock);
    hipError_t e = any_capturing() ? hipErrorStreamCaptureUnsupported : drain_all();
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

/* Events: a recorded event remembers its stream; synchronising on it drains that stream.  An
 * event belongs to the device current at its creation (CLR: hip::Event's deviceId). */
typedef struct sim_event {
    hipStream_t stream;
    int recorded;
    int device;
} sim_event;

static hipError_t event_create(hipEvent_t *e)
{
    sim_event *ev = calloc(1, sizeof *ev);
    if (!e || !ev) {
        free(ev);
        return hipErrorInvalidValue;
    }
    ev->device = current_device;
    *e = (hipEvent_t)ev;
    return hipSuccess;
}
SIM_EXPORT hipError_t hipEventCreate(hipEvent_t *e)
{
    API();
    return ret(event_create(e));
}
SIM_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned f)
{
    API();
    (void)f;
    return ret(event_create(e));
}
SIM_EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
    API();
    if (!e)
        return ret(hipErrorInvalidResourceHandle);
    /* CLR hipEventRecord_common: an event recorded on a stream of another device is
     * hipErrorInvalidResourceHandle.  The null and per-thread streams are the current device's. */
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(s);
    int stream_device = !st || st == &sim.null_stream || st == &sim.per_thread_stream ? current_device : st->device;
    pthread_mutex_unlock(&sim.lock);
    if (((sim_event *)e)->device != stream_device)
        return ret(hipErrorInvalidResourceHandle);
    ((sim_event *)e)->stream = s;
    ((sim_event *)e)->recorded = 1;
    return ret(hipSuccess);
}
SIM_EXPORT hipError_t hipEventSynchronize(hipEvent_t e)
{
    API();
    if (!e)
        return ret(hipErrorInvalidResourceHandle);
    return ret(((sim_event *)e)->recorded ? stream_sync(((sim_event *)e)->stream) : hipSuccess);
}
SIM_EXPORT hipError_t hipEventDestroy(hipEvent_t e)
{
    API();
    if (!e)
        return ret(hipErrorInvalidResourceHandle); /* CLR's hipEventDestroy(nullptr) */
    free(e);
    return ret(hipSuccess);
}

SIM_EXPORT hipError_t hipEventQuery(hipEvent_t e)
{
    API();
    if (!e)
        return ret(hipErrorInvalidResourceHandle);
    return ret(((sim_event *)e)->recorded ? stream_query(((sim_event *)e)->stream) : hipSuccess);
}

/* The waiting stream's later work must follow the event: the simulator simply finishes the
 * event's stream now, which keeps that order. */
static hipError_t stream_wait(hipStream_t s, hipEvent_t e)
{
    INIT();
    if (!e)
        return hipErrorInvalidResourceHandle;
    pthread_mutex_lock(&sim.lock);
    sim_stream *waiting = stream_of(s),
               *recorded = ((sim_event *)e)->recorded ? stream_of(((sim_event *)e)->stream) : NULL;
    hipError_t err = !waiting ? hipErrorContextIsDestroyed : recorded ? drain(recorded) : hipSuccess;
    pthread_mutex_unlock(&sim.lock);
    return err;
}

SIM_EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int flags)
{
    API();
    (void)flags;
    return ret(stream_wait(s, e));
}
SIM_EXPORT hipError_t hipStreamWaitEvent_spt(hipStream_t s, hipEvent_t e, unsigned int flags)
{
    API();
    (void)flags;
    return ret(stream_wait(s, e));
}

/* ---- graph capture: captured work is kept aside and dropped (no graphs are launched here) ---- */

SIM_EXPORT hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode)
{
    API();
    INIT();
    (void)mode;
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(s);
    hipError_t e = !st                      ? hipErrorContextIsDestroyed
                   : st == &sim.null_stream ? hipErrorStreamCaptureUnsupported
                   : st->capturing          ? hipErrorIllegalState
                                            : hipSuccess;
    if (e == hipSuccess)
        st->capturing = 1;
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

SIM_EXPORT hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t *graph)
{
    API();
    INIT();
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(s);
    hipError_t e = !st ? hipErrorContextIsDestroyed : !st->capturing ? hipErrorIllegalState : hipSuccess;
    if (e == hipSuccess) {
        st->capturing = 0;
        while (st->captured) {
            sim_op *next = st->captured->next;
            free(st->captured);
            st->captured = next;
        }
        if (graph)
            *graph = (hipGraph_t)calloc(1, 64);
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

SIM_EXPORT hipError_t hipStreamIsCapturing(hipStream_t s, hipStreamCaptureStatus *status)
{
    API();
    INIT();
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(s);
    hipError_t e = !st ? hipErrorContextIsDestroyed : !status ? hipErrorInvalidValue : hipSuccess;
    if (e == hipSuccess)
        *status = st->capturing ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

SIM_EXPORT hipError_t hipGraphDestroy(hipGraph_t g)
{
    API();
    if (!g)
        return ret(hipErrorInvalidValue);
    free(g);
    return ret(hipSuccess);
}

/* A captured graph holds nothing here: an instance of it runs nothing, in stream order. */
SIM_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t g, hipGraphNode_t *error_node, char *log,
                                          size_t log_size)
{
    API();
    (void)error_node;
    (void)log;
    (void)log_size;
    if (!exec || !g)
        return ret(hipErrorInvalidValue);
    *exec = (hipGraphExec_t)calloc(1, 64);
    return ret(*exec ? hipSuccess : hipErrorOutOfMemory);
}
SIM_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec)
{
    API();
    if (!exec)
        return ret(hipErrorInvalidValue);
    free(exec);
    return ret(hipSuccess);
}
SIM_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t s)
{
    API();
    INIT();
    if (!exec)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    hipError_t e = stream_of(s) ? hipSuccess : hipErrorContextIsDestroyed;
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

/* ---- stream-ordered memory pools ---- */

SIM_EXPORT hipError_t hipMemPoolCreate(hipMemPool_t *pool, const hipMemPoolProps *props)
{
    API();
    (void)props;
    if (!pool)
        return ret(hipErrorInvalidValue);
    *pool = (hipMemPool_t)calloc(1, 64);
    return ret(*pool ? hipSuccess : hipErrorOutOfMemory);
}

SIM_EXPORT hipError_t hipMemPoolDestroy(hipMemPool_t pool)
{
    API();
    INIT();
    if (!pool)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    drain_all();
    compact_objects();
    for (size_t i = 0; i < sim.n_objects; i++) {
        if (sim.objects[i].kind && sim.objects[i].pool == (void *)pool) {
            sim_op op = {.type = OP_FREE, .dst = (void *)sim.objects[i].base};
            execute(&op); /* leaves it dead in place: the scan goes on past it */
        }
    }
    pthread_mutex_unlock(&sim.lock);
    free(pool);
    return ret(hipSuccess);
}

SIM_EXPORT hipError_t hipMemPoolTrimTo(hipMemPool_t pool, size_t keep)
{
    API();
    (void)keep;
    return ret(pool ? hipSuccess : hipErrorInvalidValue);
}

/* ---- virtual memory management, as ROCm/clr hipamd/src/hip_vm.cpp ----
 * A reservation is PROT_NONE aperture space, kept apart from the objects as CLR keeps it in
 * MemObjMap's VirtualMemObjMap_.  hipMemMap adds the mapping itself as an object (CLR:
 * rocclr/device/rocm/rocvirtual.cpp submitVirtualMap, AddMemObj(vcmd.ptr(), vaddr_sub_obj) with the
 * handle's deviceId).  A handle is a memfd mapped MAP_SHARED over the reservation, so its pages
 * outlive an unmap and alias when mapped twice, as physical memory does. */
static const size_t VMM_GRANULARITY = 2u << 20;

static int bad_prop(const hipMemAllocationProp *prop)
{
    return !prop || prop->type != hipMemAllocationTypePinned || prop->location.type != hipMemLocationTypeDevice ||
           prop->location.id < 0 || prop->location.id >= device_count();
}

static void handle_unref(sim_handle *h)
{
    if (--h->refs == 0) {
        close(h->fd);
        free(h);
    }
}

SIM_EXPORT hipError_t hipMemGetAllocationGranularity(size_t *granularity, const hipMemAllocationProp *prop,
                                                     hipMemAllocationGranularity_flags option)
{
    API();
    if (!granularity || bad_prop(prop) ||
        (option != hipMemAllocationGranularityMinimum && option != hipMemAllocationGranularityRecommended))
        return ret(hipErrorInvalidValue);
    *granularity = VMM_GRANULARITY;
    return ret(hipSuccess);
}

SIM_EXPORT hipError_t hipMemAddressReserve(void **ptr, size_t size, size_t alignment, void *addr,
                                           unsigned long long flags)
{
    API();
    INIT();
    (void)addr; /* a hint: CLR does not promise to honour it */
    if (!ptr || flags)
        return ret(hipErrorInvalidValue);
    if (!size || size % VMM_GRANULARITY || (alignment & (alignment - 1)))
        return ret(hipErrorMemoryAllocation); /* CLR's answer for these, not InvalidValue */
    size_t align = alignment > VMM_GRANULARITY ? alignment : VMM_GRANULARITY;
    sim_rsv *r = malloc(sizeof *r);
    pthread_mutex_lock(&sim.lock);
    uintptr_t base = (sim.aperture_next + align - 1) & ~(uintptr_t)(align - 1);
    hipError_t e = hipSuccess;
    if (!r || base + size > sim.aperture + APERTURE_SIZE) {
        free(r);
        e = hipErrorOutOfMemory;
    } else {
        *r = (sim_rsv){base, size, sim.reservations};
        sim.reservations = r;
        sim.aperture_next = base + size;
        *ptr = (void *)base;
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

/* Refused while anything in the range is still mapped (CUDA's rule; CLR leaves it to ROCr). */
SIM_EXPORT hipError_t hipMemAddressFree(void *ptr, size_t size)
{
    API();
    INIT();
    if (!ptr || !size)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    hipError_t e = hipErrorInvalidValue;
    for (sim_rsv **l = &sim.reservations; *l; l = &(*l)->next) {
        sim_rsv *r = *l;
        if (r->base != (uintptr_t)ptr)
            continue;
        compact_objects();
        size_t i = upper_bound(r->base - 1); /* the first object at or after the base */
        if (i == sim.n_objects || sim.objects[i].base >= r->base + r->size) {
            *l = r->next;
            free(r);
            e = hipSuccess;
        }
        break;
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

SIM_EXPORT hipError_t hipMemCreate(hipMemGenericAllocationHandle_t *handle, size_t size,
                                   const hipMemAllocationProp *prop, unsigned long long flags)
{
    API();
    if (!handle || !size || flags || bad_prop(prop))
        return ret(hipErrorInvalidValue);
    if (prop->requestedHandleType != hipMemHandleTypeNone &&
        prop->requestedHandleType != hipMemHandleTypePosixFileDescriptor)
        return ret(hipErrorNotSupported);
    if (size % VMM_GRANULARITY)
        return ret(hipErrorInvalidValue);
    sim_handle *h = malloc(sizeof *h);
    int fd = memfd_create("simhip-vmm", MFD_CLOEXEC);
    if (!h || fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        free(h);
        if (fd >= 0)
            close(fd);
        return ret(hipErrorOutOfMemory);
    }
    *h = (sim_handle){fd, size, prop->location.id, 1};
    *handle = (hipMemGenericAllocationHandle_t)h;
    return ret(hipSuccess);
}

/* Each mapping holds a reference too (CLR: hipMemMap retains, hipMemUnmap releases). */
SIM_EXPORT hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle)
{
    API();
    INIT();
    if (!handle)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    handle_unref((sim_handle *)handle);
    pthread_mutex_unlock(&sim.lock);
    return ret(hipSuccess);
}

/* CLR maps nothing yet returns hipSuccess when ptr is in no reservation (submitVirtualMap returns
 * early); the simulator says hipErrorInvalidValue for that, and for a misfit or an overlap. */
SIM_EXPORT hipError_t hipMemMap(void *ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle,
                                unsigned long long flags)
{
    API();
    INIT();
    sim_handle *h = (sim_handle *)handle;
    uintptr_t p = (uintptr_t)ptr;
    if (!ptr || !h || !size || offset || flags)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    sim_rsv *r = find_rsv(p);
    compact_objects();
    size_t i = upper_bound(p - 1);
    hipError_t e = hipErrorInvalidValue;
    if (r && (p | size) % VMM_GRANULARITY == 0 && size <= h->size && size <= r->size - (p - r->base) &&
        !find_object(p) && (i == sim.n_objects || sim.objects[i].base >= p + size) &&
        mmap(ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->fd, 0) != MAP_FAILED) {
        if (add_object(p, size, OBJ_MAPPED) == 0) {
            sim_object *o = find_object(p);
            o->device = h->device;
            o->handle = h;
            h->refs++;
            e = hipSuccess;
        } else {
            mmap(ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
            e = hipErrorOutOfMemory;
        }
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

/* The host is one address space for all devices: a mapping gets the most any descriptor grants,
 * over the whole of every mapping the range touches. */
SIM_EXPORT hipError_t hipMemSetAccess(void *ptr, size_t size, const hipMemAccessDesc *desc, size_t count)
{
    API();
    INIT();
    if (!ptr || !size || !desc || !count)
        return ret(hipErrorInvalidValue);
    int access = 0;
    for (size_t k = 0; k < count; k++) {
        if (desc[k].location.id < 0 || desc[k].location.id >= device_count())
            return ret(hipErrorInvalidValue);
        access |= desc[k].flags;
    }
    int prot = access == hipMemAccessFlagsProtReadWrite ? PROT_READ | PROT_WRITE : access ? PROT_READ : PROT_NONE;
    pthread_mutex_lock(&sim.lock);
    hipError_t e = covered((uintptr_t)ptr, size, 0, 1) ? hipSuccess : hipErrorInvalidValue;
    for (uintptr_t p = (uintptr_t)ptr; e == hipSuccess && p < (uintptr_t)ptr + size;) {
        sim_object *o = find_object(p);
        mprotect((void *)o->base, o->size, prot);
        o->access = access;
        p = o->base + o->size;
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

/* Whole mappings only.  CLR runs the unmap on the device's null stream and waits for it
 * (submitVirtualMap: barrier, WaitCurrent), so that stream's queued work still sees the pages. */
SIM_EXPORT hipError_t hipMemUnmap(void *ptr, size_t size)
{
    API();
    INIT();
    uintptr_t p = (uintptr_t)ptr;
    if (!ptr || !size)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    sim_object *first = find_object(p), *last = find_object(p + size - 1);
    hipError_t e = hipErrorInvalidValue;
    if (covered(p, size, 0, 1) && first->base == p && last->base + last->size == p + size) {
        drain(&sim.null_stream);
        for (sim_object *o; p < (uintptr_t)ptr + size && (o = find_object(p));) {
            sim_handle *h = o->handle;
            size_t n = o->size;
            mmap((void *)p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
            remove_object(o);
            handle_unref(h);
            p += n;
        }
        e = hipSuccess;
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

/* ---- pointers and errors ---- */

/* On VMM memory both queries see the single mapping (CLR's MemObjMap holds the mapping's sub-buffer;
 * the reservation lives in VirtualMemObjMap_, which getMemoryObject never reads): reserved but
 * unmapped space is unknown, hipErrorInvalidValue / hipErrorNotFound. */

/* hipGetProcAddress (ROCm 6.1 on; hip_global.cpp): the runtime's own entry point for a name.  As
 * ROCm 5 the simulator has none to give: hipErrorNotSupported. */
typedef enum { SIM_PROC_FOUND = 0, SIM_PROC_NOT_FOUND = 1 } sim_proc_status;
SIM_EXPORT hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                                        sim_proc_status *status)
{
    API();
    (void)hipVersion;
    if (rocm_major() < 6)
        return ret(hipErrorNotSupported);
    if (!symbol || !pfn || flags > 2)
        return ret(hipErrorInvalidValue);
    Dl_info self;
    void *handle = dladdr((void *)hipGetProcAddress, &self) ? dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    *pfn = handle ? dlsym(handle, symbol) : NULL;
    if (handle)
        dlclose(handle);
    if (status)
        *status = *pfn ? SIM_PROC_FOUND : SIM_PROC_NOT_FOUND;
    return ret(*pfn ? hipSuccess : hipErrorNotFound);
}

SIM_EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *ptr)
{
    API();
    INIT();
    if (!attr || !ptr)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    sim_object *o = find_object((uintptr_t)ptr);
    hipError_t e = hipErrorInvalidValue;
    if (o) {
        memset(attr, 0, sizeof *attr);
        int dev_only = o->kind == OBJ_DEVICE || o->kind == OBJ_MAPPED;
        /* The first field is memoryType in ROCm 5 and type since ROCm 6.0, whose hipMemoryType took
         * CUDA's numbering: Host 1, Device 2, Managed 3 (ROCm 5: Host 0, Device 1). */
        int device_type = rocm_major() >= 6 ? (o->kind == OBJ_MANAGED ? 3 : 2) : hipMemoryTypeDevice;
        int host_type = rocm_major() >= 6 ? 1 : hipMemoryTypeHost;
        int type = (dev_only || o->kind == OBJ_MANAGED) ? device_type : host_type;
        memcpy(attr, &type, sizeof type);
        attr->device = o->device;
        attr->devicePointer = (void *)ptr;
        attr->hostPointer = dev_only ? NULL : (void *)ptr;
        attr->isManaged = o->kind == OBJ_MANAGED;
        e = hipSuccess;
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

SIM_EXPORT hipError_t hipMemGetAddressRange(hipDeviceptr_t *base, size_t *size, hipDeviceptr_t ptr)
{
    API();
    INIT();
    pthread_mutex_lock(&sim.lock);
    sim_object *o = find_object((uintptr_t)ptr);
    hipError_t e = hipErrorNotFound;
    if (o) {
        if (base)
            *base = (hipDeviceptr_t)o->base;
        if (size)
            *size = o->size;
        e = hipSuccess;
    }
    pthread_mutex_unlock(&sim.lock);
    return ret(e);
}

/* The one call that does not return through ret(): it takes the last error and clears it (CLR's
 * hipGetLastError, all releases); while the GPU is in error, ROCm 7's API() answers first. */
SIM_EXPORT hipError_t hipGetLastError(void)
{
    API();
    hipError_t e = last_error;
    last_error = hipSuccess;
    return e;
}
/* CLR's hipPeekAtLastError returns the last error through HIP_RETURN, which leaves it as it is. */
SIM_EXPORT hipError_t hipPeekAtLastError(void)
{
    API();
    return ret(last_error);
}

SIM_EXPORT const char *hipGetErrorName(hipError_t e)
{
    switch (e) {
#define NAME(x)                                                                                                        \
    case x: return #x;
        // clang-format off
    NAME(hipSuccess) NAME(hipErrorInvalidValue) NAME(hipErrorOutOfMemory) NAME(hipErrorInvalidMemcpyDirection)
    NAME(hipErrorIllegalAddress) NAME(hipErrorContextIsDestroyed) NAME(hipErrorInvalidResourceHandle)
    NAME(hipErrorNotReady) NAME(hipErrorNotFound) NAME(hipErrorInvalidPitchValue)
    NAME(hipErrorHostMemoryAlreadyRegistered) NAME(hipErrorHostMemoryNotRegistered) NAME(hipErrorInvalidDevice)
    NAME(hipErrorStreamCaptureUnsupported) NAME(hipErrorStreamCaptureImplicit) NAME(hipErrorIllegalState)
    NAME(hipErrorInvalidImage) NAME(hipErrorInvalidConfiguration) NAME(hipErrorInvalidDeviceFunction)
    NAME(hipErrorNotSupported)
// clang-format on
#undef NAME
                                        default : return "hipErrorUnknown";
    }
}

SIM_EXPORT const char *hipGetErrorString(hipError_t e)
{
    switch (e) {
    case hipSuccess: return "no error";
    case hipErrorInvalidValue: return "invalid argument";
    case hipErrorIllegalAddress: return "an illegal memory access was encountered";
    case hipErrorContextIsDestroyed: return "context is destroyed";
    case hipErrorOutOfMemory: return "out of memory";
    default: return hipGetErrorName(e);
    }
}

/* ---- device queries a program makes on the way ---- */

SIM_EXPORT hipError_t hipInit(unsigned int flags)
{
    API();
    (void)flags;
    INIT();
    return ret(hipSuccess);
}
SIM_EXPORT hipError_t hipGetDeviceCount(int *n)
{
    API();
    if (!n)
        return ret(hipErrorInvalidValue);
    *n = device_count();
    return ret(hipSuccess);
}
SIM_EXPORT hipError_t hipGetDevice(int *d)
{
    API();
    if (!d)
        return ret(hipErrorInvalidValue);
    *d = current_device;
    return ret(hipSuccess);
}
/* The limits of an MI-class device, as CLR reports them (hip_device_runtime.cpp). */
enum { SIM_MAX_THREADS = 1024, SIM_MAX_SHMEM = 65536 };
SIM_EXPORT hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t a, int d)
{
    API();
    if (!v || d < 0 || d >= device_count())
        return ret(d < 0 || d >= device_count() ? hipErrorInvalidDevice : hipErrorInvalidValue);
    switch (a) {
    case hipDeviceAttributeMaxThreadsPerBlock:
    case hipDeviceAttributeMaxBlockDimX:
    case hipDeviceAttributeMaxBlockDimY:
    case hipDeviceAttributeMaxBlockDimZ: *v = SIM_MAX_THREADS; break;
    case hipDeviceAttributeMaxGridDimX: *v = 2147483647; break;
    case hipDeviceAttributeMaxGridDimY:
    case hipDeviceAttributeMaxGridDimZ: *v = 65536; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = SIM_MAX_SHMEM; break;
    default: return ret(hipErrorInvalidValue);
    }
    return ret(hipSuccess);
}
/* SIMHIP_NO_PEERS=1: no device can access another's memory. */
SIM_EXPORT hipError_t hipDeviceCanAccessPeer(int *can, int d, int peer)
{
    API();
    if (!can)
        return ret(hipErrorInvalidValue);
    if (d < 0 || peer < 0 || d >= device_count() || peer >= device_count())
        return ret(hipErrorInvalidDevice);
    *can = d != peer && !getenv("SIMHIP_NO_PEERS");
    return ret(hipSuccess);
}
SIM_EXPORT hipError_t hipSetDevice(int d)
{
    API();
    if (d < 0 || d >= device_count())
        return ret(hipErrorInvalidDevice);
    current_device = d;
    return ret(hipSuccess);
}
SIM_EXPORT hipError_t hipRuntimeGetVersion(int *v)
{
    API();
    static const int versions[] = {[5] = HIP_VERSION, [6] = 60200000, [7] = 70100001};
    if (v)
        *v = versions[rocm_major()];
    return ret(hipSuccess);
}
SIM_EXPORT hipError_t hipDriverGetVersion(int *v)
{
    API();
    if (v)
        *v = HIP_VERSION;
    return ret(hipSuccess);
}
SIM_EXPORT hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total)
{
    API();
    INIT();
    if (total)
        *total = APERTURE_SIZE;
    if (free_bytes)
        *free_bytes = sim.aperture + APERTURE_SIZE - sim.aperture_next;
    return ret(hipSuccess);
}

/* ---- modules: a host implementation of hipshadow's own kernels (kernels/transpose.hip) ----
 * hipModuleLoadData takes a clang offload bundle, as ROCm does; hipModuleLaunchKernel runs the
 * named kernel on the host, in stream order, with the real kernels' launch contract. */

typedef struct sim_function {
    char name[64];
} sim_function;
typedef void (*simhip_kernel_fn)(void **params);
static simhip_kernel_fn user_kernel(const char *name);
static const char BUNDLE_MAGIC[] = "__CLANG_OFFLOAD_BUNDLE__";

SIM_EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
    API();
    if (!module || !image)
        return ret(hipErrorInvalidValue);
    if (memcmp(image, BUNDLE_MAGIC, sizeof BUNDLE_MAGIC - 1))
        return ret(hipErrorInvalidImage);
    *module = (hipModule_t)calloc(1, 64);
    return ret(*module ? hipSuccess : hipErrorOutOfMemory);
}

SIM_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name)
{
    API();
    static const char *const known[] = {"hs_transpose_e1",        "hs_transpose_e2",  "hs_transpose_e4",
                                        "hs_transpose_e8",        "hs_transpose_e16", "hs_transpose_e1_packed",
                                        "hs_transpose_e2_packed", "hs_copy16",        "hs_copy1",
                                        "hs_redzone_fill",        "hs_redzone_verify"};
    if (!function || !module || !name)
        return ret(hipErrorInvalidValue);
    for (size_t i = 0; i < sizeof known / sizeof *known + 1; i++)
        if (i == sizeof known / sizeof *known ? user_kernel(name) != NULL : !strcmp(name, known[i])) {
            sim_function *f = calloc(1, sizeof *f);
            if (!f)
                return ret(hipErrorOutOfMemory);
            snprintf(f->name, sizeof f->name, "%s", name);
            *function = (hipFunction_t)f;
            return ret(hipSuccess);
        }
    return ret(hipErrorNotFound);
}

/* A module's __device__ globals live in device memory the runtime allocated when it loaded the
 * module: a program reaches them through hipModuleGetGlobal, never through an allocation call.
 * Every module here has one global of 4096 bytes, whatever its name. */
SIM_EXPORT hipError_t hipModuleGetGlobal(hipDeviceptr_t *dptr, size_t *bytes, hipModule_t module, const char *name)
{
    API();
    if (!dptr || !module || !name)
        return ret(hipErrorInvalidValue);
    void **global = (void **)module; /* the module's first word: its global, once made */
    if (!*global && device_alloc(global, 4096, OBJ_DEVICE) != hipSuccess)
        return ret(hipErrorOutOfMemory);
    *dptr = *global;
    if (bytes)
        *bytes = 4096;
    return ret(hipSuccess);
}

/* A kernel touching freed (or unmapped) device memory faults, as a copy would. */
static int device_range_ok(uintptr_t p, size_t n, int need) { return covered(p, n, need, 0); }

/* Test programs' kernels: host functions registered by name (the module image only carries
 * their metadata).  A kernel checks each access with simhip_device_access; one outside every
 * live allocation is a GPU fault: the sticky hipErrorIllegalAddress, seen by the calls that
 * follow, not by the launch (a real launch returns before the kernel runs). */
static struct {
    char name[64];
    simhip_kernel_fn fn;
} user_kernels[32];
static int n_user_kernels;

SIM_EXPORT int simhip_register_kernel(const char *name, simhip_kernel_fn fn)
{
    if (n_user_kernels == 32 || strlen(name) >= sizeof user_kernels[0].name)
        return -1;
    snprintf(user_kernels[n_user_kernels].name, sizeof user_kernels[0].name, "%s", name);
    user_kernels[n_user_kernels++].fn = fn;
    return 0;
}

static simhip_kernel_fn user_kernel(const char *name)
{
    for (int i = 0; i < n_user_kernels; i++)
        if (!strcmp(user_kernels[i].name, name))
            return user_kernels[i].fn;
    return NULL;
}

/* hipcc's registration, as CLR keeps it: a fat binary handle, then each kernel's host stub with
 * its device name; hipLaunchKernel finds the kernel by its stub. */
static struct {
    const void *stub;
    char name[64];
} stubs[64];
static int n_stubs;

SIM_EXPORT void **__hipRegisterFatBinary(const void *data)
{
    TRACE();
    void **handle = calloc(1, sizeof(void *));
    if (handle)
        *handle = (void *)data;
    return handle;
}

SIM_EXPORT void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                                      const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
                                      void *blockDim, void *gridDim, int *wSize)
{
    TRACE();
    (void)modules;
    (void)deviceFunction;
    (void)threadLimit;
    (void)tid;
    (void)bid;
    (void)blockDim;
    (void)gridDim;
    (void)wSize;
    if (n_stubs < 64 && deviceName && strlen(deviceName) < sizeof stubs[0].name) {
        stubs[n_stubs].stub = hostFunction;
        snprintf(stubs[n_stubs++].name, sizeof stubs[0].name, "%s", deviceName);
    }
}

SIM_EXPORT void __hipUnregisterFatBinary(void **modules)
{
    TRACE();
    free(modules);
}

/* ihipLaunchKernel_validate (ROCm 5's hip_module.cpp): no dimension of the grid or the block
 * may be 0. */
static int zero_geometry(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz)
{
    return !gx || !gy || !gz || !bx || !by || !bz;
}

/* CLR's other launch limits: hipModuleLaunchKernel's grid bounds (module), grid * block in 32 bits
 * per dimension (hipLaunchKernel: all three; hipModuleLaunchKernel: x), then
 * ihipLaunchKernel_validate's shared memory and threads per block. */
static hipError_t launch_limits(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                size_t shmem, int module)
{
    if (module && (gx > 2147483647u || gy > 65536 || gz > 65536))
        return hipErrorInvalidValue;
    if ((unsigned long long)gx * bx > 0xffffffffull ||
        (!module && ((unsigned long long)gy * by > 0xffffffffull || (unsigned long long)gz * bz > 0xffffffffull)))
        return hipErrorInvalidConfiguration;
    if (shmem > SIM_MAX_SHMEM || (unsigned long long)bx * by * bz > SIM_MAX_THREADS)
        return hipErrorInvalidValue;
    return hipSuccess;
}

static hipError_t launch_stub(const void *function_address, dim3 grid, dim3 block, void **args, hipStream_t stream,
                              hipEvent_t start, hipEvent_t stop)
{
    INIT();
    const char *name = NULL;
    for (int i = 0; i < n_stubs; i++)
        if (stubs[i].stub == function_address)
            name = stubs[i].name;
    simhip_kernel_fn fn = name ? user_kernel(name) : NULL;
    if (!fn || !args)
        return hipErrorInvalidDeviceFunction;
    if (zero_geometry(grid.x, grid.y, grid.z, block.x, block.y, block.z))
        return hipErrorInvalidValue;
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(stream);
    hipError_t e = !st ? hipErrorContextIsDestroyed : drain(st);
    if (e == hipSuccess)
        fn(args); /* a fault it makes is sticky; the launch itself succeeds */
    pthread_mutex_unlock(&sim.lock);
    if (e == hipSuccess && start) /* hipExtLaunchKernel's events, recorded around the kernel */
        ((sim_event *)start)->stream = stream, ((sim_event *)start)->recorded = 1;
    if (e == hipSuccess && stop)
        ((sim_event *)stop)->stream = stream, ((sim_event *)stop)->recorded = 1;
    return e;
}

SIM_EXPORT hipError_t hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shmem,
                                      hipStream_t stream)
{
    API();
    hipError_t e = launch_limits(grid.x, grid.y, grid.z, block.x, block.y, block.z, shmem, 0);
    return ret_launch(e ? e : launch_stub(f, grid, block, args, stream, NULL, NULL));
}
/* The per-thread forms: the stream 0 is this thread's own. */
SIM_EXPORT hipError_t hipLaunchKernel_spt(const void *f, dim3 grid, dim3 block, void **args, size_t shmem,
                                          hipStream_t stream)
{
    API();
    (void)shmem;
    return ret_launch(launch_stub(f, grid, block, args, stream ? stream : hipStreamPerThread, NULL, NULL));
}
SIM_EXPORT hipError_t hipExtLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shmem,
                                         hipStream_t stream, hipEvent_t start, hipEvent_t stop, int flags)
{
    API();
    (void)shmem;
    (void)flags;
    return ret_launch(launch_stub(f, grid, block, args, stream, start, stop));
}
/* All blocks of a cooperative kernel run at once: one host call runs them all here anyway. */
SIM_EXPORT hipError_t hipLaunchCooperativeKernel(const void *f, dim3 grid, dim3 block, void **args, unsigned shmem,
                                                 hipStream_t stream)
{
    API();
    (void)shmem;
    return ret_launch(launch_stub(f, grid, block, args, stream, NULL, NULL));
}
SIM_EXPORT hipError_t hipLaunchCooperativeKernel_spt(const void *f, dim3 grid, dim3 block, void **args, unsigned shmem,
                                                     hipStream_t stream)
{
    API();
    (void)shmem;
    return ret_launch(launch_stub(f, grid, block, args, stream ? stream : hipStreamPerThread, NULL, NULL));
}

/* A host function runs once the work before it on its stream is done: here, at once, after the
 * stream's queue is drained (kernels already ran at their launch).  It runs without the lock, as
 * on CLR's callback thread: it may call the runtime, and as that thread is not the caller's, what
 * its calls leave as the last error is not the caller's either. */
SIM_EXPORT hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData)
{
    API();
    INIT();
    if (!fn)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(stream);
    hipError_t e = !st ? hipErrorContextIsDestroyed : drain(st);
    pthread_mutex_unlock(&sim.lock);
    if (e == hipSuccess) {
        hipError_t caller_error = last_error;
        fn(userData);
        last_error = caller_error;
    }
    return ret(e);
}

/* A stream callback: as a host function, but called exactly once, with the stream's status
 * (hipSuccess or the error its work met); flags must be 0 (HIP's documentation). */
SIM_EXPORT hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void *userData,
                                           unsigned int flags)
{
    API();
    INIT();
    if (!callback || flags)
        return ret(hipErrorInvalidValue);
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(stream);
    hipError_t e = !st ? hipErrorContextIsDestroyed : drain(st);
    pthread_mutex_unlock(&sim.lock);
    if (e == hipErrorContextIsDestroyed)
        return ret(e);
    hipError_t caller_error = last_error; /* the callback's thread is not the caller's */
    callback(stream, e, userData);
    last_error = caller_error;
    return ret(hipSuccess);
}

/* Called by a test kernel (with sim.lock held: kernels run inside hipModuleLaunchKernel). */
SIM_EXPORT int simhip_device_access(const void *p, size_t n, int write)
{
    if (device_range_ok((uintptr_t)p, n, write ? hipMemAccessFlagsProtReadWrite : hipMemAccessFlagsProtRead))
        return 1;
    kernel_fault((uintptr_t)p);
    return 0;
}

/* hipshadow's redzone kernels (kernels/redzones.hip), run on the host.  SIMHIP_NO_REDZONE_KERNELS=1
 * refuses them, as a runtime that cannot load hipshadow's image would (lock held). */
static hipError_t redzone_kernel(const char *name, unsigned gx, unsigned bx, void **params)
{
    if (getenv("SIMHIP_NO_REDZONE_KERNELS"))
        return hipErrorInvalidDeviceFunction;
    if (tracing())
        fprintf(stderr, "simhip: kernel %s, %u blocks\n", name, gx);
    if (bx != 256)
        return hipErrorInvalidConfiguration;
    if (!strcmp(name, "hs_redzone_fill")) {
        unsigned char *dst = *(unsigned char **)params[0];
        unsigned long long n = *(unsigned long long *)params[1];
        unsigned pattern = *(unsigned *)params[2];
        if (!device_range_ok((uintptr_t)dst, n, hipMemAccessFlagsProtReadWrite)) {
            kernel_fault((uintptr_t)dst);
            return hipErrorIllegalAddress;
        }
        memset(dst, (int)(pattern & 0xff), n);
        return hipSuccess;
    }
    if (strcmp(name, "hs_redzone_verify"))
        return hipErrorInvalidDeviceFunction;
    const unsigned long long *desc = *(const unsigned long long **)params[0];
    unsigned pattern = *(unsigned *)params[1];
    unsigned *out = *(unsigned **)params[2];
    if (!device_range_ok((uintptr_t)desc, gx * 16ull, hipMemAccessFlagsProtRead) ||
        !device_range_ok((uintptr_t)out, gx * 8ull, hipMemAccessFlagsProtReadWrite)) {
        kernel_fault((uintptr_t)desc);
        return hipErrorIllegalAddress;
    }
    for (unsigned b = 0; b < gx; b++) {
        const unsigned char *p = (const unsigned char *)(uintptr_t)desc[2 * b];
        unsigned long long len = desc[2 * b + 1];
        if (!device_range_ok((uintptr_t)p, len, hipMemAccessFlagsProtRead)) {
            kernel_fault((uintptr_t)p);
            return hipErrorIllegalAddress;
        }
        unsigned first = 0xffffffffu, last = 0;
        for (unsigned long long i = 0; i < len; i++)
            if (p[i] != (unsigned char)pattern) {
                if (first == 0xffffffffu)
                    first = (unsigned)i;
                last = (unsigned)i;
            }
        out[2 * b] = first;
        out[2 * b + 1] = last;
    }
    return hipSuccess;
}

static hipError_t module_launch(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, hipStream_t stream, void **params)
{
    INIT();
    if (!f || !params)
        return hipErrorInvalidValue;
    if (zero_geometry(gx, gy, gz, bx, by, bz))
        return hipErrorInvalidValue;
    const char *name = ((sim_function *)f)->name;
    pthread_mutex_lock(&sim.lock);
    sim_stream *st = stream_of(stream);
    hipError_t e = !st ? hipErrorContextIsDestroyed : drain(st);
    if (e == hipSuccess && !strncmp(name, "hs_copy", 7)) {
        size_t unit = !strcmp(name, "hs_copy16") ? 16 : 1;
        unsigned char *dst = *(unsigned char **)params[0];
        const unsigned char *src = *(const unsigned char **)params[1];
        unsigned long long n = *(unsigned long long *)params[2];
        if (bx != 256 || by != 1 || (unit == 16 && (((uintptr_t)dst | (uintptr_t)src) & 15)))
            e = hipErrorInvalidConfiguration;
        else if (!device_range_ok((uintptr_t)dst, n * unit, hipMemAccessFlagsProtReadWrite) ||
                 !device_range_ok((uintptr_t)src, n * unit, hipMemAccessFlagsProtRead))
            kernel_fault(device_range_ok((uintptr_t)dst, n * unit, hipMemAccessFlagsProtReadWrite) ? (uintptr_t)src
                                                                                                   : (uintptr_t)dst),
                e = hipErrorIllegalAddress;
        else
            memmove(dst, src, n * unit);
    } else if (e == hipSuccess && !strncmp(name, "hs_transpose_e", 14)) {
        size_t elem = (size_t)atoi(name + 14);
        unsigned char *dst = *(unsigned char **)params[0];
        unsigned long long dpitch = *(unsigned long long *)params[1];
        const unsigned char *src = *(const unsigned char **)params[2];
        unsigned long long spitch = *(unsigned long long *)params[3], rows = *(unsigned long long *)params[4],
                           cols = *(unsigned long long *)params[5];
        unsigned tile = elem <= 2 ? 128 : elem <= 8 ? 64 : 32;
        int packed = strstr(name, "_packed") != NULL;
        if (bx != 32 || by != 8 || gx != (cols + tile - 1) / tile || gy == 0 ||
            (packed && (((uintptr_t)dst | (uintptr_t)src | dpitch | spitch) & (elem == 2 ? 7 : 3))))
            e = hipErrorInvalidConfiguration;
        else if (!device_range_ok((uintptr_t)src, (rows - 1) * spitch + cols * elem, hipMemAccessFlagsProtRead) ||
                 !device_range_ok((uintptr_t)dst, (cols - 1) * dpitch + rows * elem, hipMemAccessFlagsProtReadWrite))
            atomic_store(&sim.sticky, hipErrorIllegalAddress), e = hipErrorIllegalAddress;
        else
            for (unsigned long long r = 0; r < rows; r++)
                for (unsigned long long c = 0; c < cols; c++)
                    memcpy(dst + c * dpitch + r * elem, src + r * spitch + c * elem, elem);
    } else if (e == hipSuccess && !strncmp(name, "hs_redzone_", 11)) {
        e = redzone_kernel(name, gx, bx, params);
    } else if (e == hipSuccess && user_kernel(name)) {
        user_kernel(name)(params); /* a fault it makes is sticky; the launch itself succeeds */
    } else if (e == hipSuccess) {
        e = hipErrorInvalidDeviceFunction;
    }
    pthread_mutex_unlock(&sim.lock);
    return e;
}

SIM_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                            unsigned by, unsigned bz, unsigned shmem, hipStream_t stream, void **params,
                                            void **extra)
{
    API();
    (void)extra;
    hipError_t e = launch_limits(gx, gy, gz, bx, by, bz, shmem, 1);
    return ret_launch(e ? e : module_launch(f, gx, gy, gz, bx, by, bz, stream, params));
}

/* Exported with C linkage from ROCm 6 (Debian's 5.2 has only a C++ symbol): the global work
 * sizes are in work items, the grid is their quotient by the block. */
SIM_EXPORT hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalX, uint32_t globalY, uint32_t globalZ,
                                               uint32_t localX, uint32_t localY, uint32_t localZ, size_t shmem,
                                               hipStream_t stream, void **params, void **extra, hipEvent_t start,
                                               hipEvent_t stop, uint32_t flags)
{
    API();
    (void)shmem;
    (void)extra;
    (void)flags;
    hipError_t e = module_launch(f, localX ? globalX / localX : 0, localY ? globalY / localY : 0,
                                 localZ ? globalZ / localZ : 0, localX, localY, localZ, stream, params);
    if (e == hipSuccess && start)
        ((sim_event *)start)->stream = stream, ((sim_event *)start)->recorded = 1;
    if (e == hipSuccess && stop)
        ((sim_event *)stop)->stream = stream, ((sim_event *)stop)->recorded = 1;
    return ret_launch(e);
}

/* ROCm 6 on. */
SIM_EXPORT hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                                       unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                                       hipStream_t stream, void **params)
{
    API();
    (void)shmem;
    return ret_launch(module_launch(f, gx, gy, gz, bx, by, bz, stream, params));
}
