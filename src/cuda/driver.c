/* The CUDA driver front-end: the only file that defines exported cu* symbols.  Each entry point
 * in driver.inc becomes one wrapper of the shape in wrapper_shape.h.
 *
 * libcuda.so.1 is loaded late: by the runtime, at its first call, and then often with
 * RTLD_LOCAL.  So the driver's real functions are resolved when first needed and retried until
 * the library is there, not once at start.  Each is also asked of the driver's own
 * cuGetProcAddress, whose answers are what runtimes cache: those addresses are recognised too. */
#define _GNU_SOURCE
#include <cuda.h>

#include "kernels/gpu_kernels.h"
#include "runtime/own_calls.h"
#include "shadow/shadow.h"
#include "entry/frontend_shape.h"
#include "entry/wrapper_shape.h"
#include "layers.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#undef cuGetProcAddress /* cuda.h maps it to cuGetProcAddress_v2: both are exported, both wrapped */

#define CU_PT(s) ((s) ? P(s) : P(CU_STREAM_PER_THREAD))
#define CU_PER_THREAD .has_stream = true, .stream = P(CU_STREAM_PER_THREAD)
/* A launch by CUlaunchConfig: the function, its geometry and its arguments. */
#define KERNEL_CONFIG(cfg, f, params)                                                                                  \
    KERNEL_XYZ(f, (cfg) ? (cfg)->gridDimX : 0, (cfg) ? (cfg)->gridDimY : 0, (cfg) ? (cfg)->gridDimZ : 0,               \
               (cfg) ? (cfg)->blockDimX : 0, (cfg) ? (cfg)->blockDimY : 0, (cfg) ? (cfg)->blockDimZ : 0,               \
               (cfg) ? (cfg)->sharedMemBytes : 0, params)
/* `extra`: {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END} */
#define EXTRA_BUFFER(extra)                                                                                            \
    HS_EXTRA_BUFFER(extra, CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END)

/* ---- 2-D and 3-D copy descriptors (NULL-safe: the driver answers a NULL descriptor) ---- */

static int memory_dir(CUmemorytype src, CUmemorytype dst)
{
    if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED)
        return HS_DIR_DEFAULT;
    bool s = src == CU_MEMORYTYPE_DEVICE, d = dst == CU_MEMORYTYPE_DEVICE;
    return s && d ? HS_DIR_D2D : s ? HS_DIR_D2H : d ? HS_DIR_H2D : HS_DIR_H2H;
}

/* A copy with an array on either side is not checked (arrays are opaque): it only orders. */
#define DESCRIPTOR_OP(p)                                                                                               \
    ((p) && (p)->srcMemoryType != CU_MEMORYTYPE_ARRAY && (p)->dstMemoryType != CU_MEMORYTYPE_ARRAY ? HS_OP_COPY        \
                                                                                                   : HS_OP_OTHER)
#define SIDE_BASE(type, host, dev) ((type) == CU_MEMORYTYPE_HOST ? P(host) : P(dev))

#define COPY_2D(p)                                                                                                     \
    .op = DESCRIPTOR_OP(p),                                                                                            \
    .src = (p) ? SIDE_BASE((p)->srcMemoryType, (p)->srcHost, (p)->srcDevice) + (p)->srcY * (p)->srcPitch +             \
                     (p)->srcXInBytes                                                                                  \
               : 0,                                                                                                    \
    .dst = (p) ? SIDE_BASE((p)->dstMemoryType, (p)->dstHost, (p)->dstDevice) + (p)->dstY * (p)->dstPitch +             \
                     (p)->dstXInBytes                                                                                  \
               : 0,                                                                                                    \
    .bytes = (p) ? (p)->WidthInBytes * (p)->Height : 0,                                                                \
    .dir = (p) ? memory_dir((p)->srcMemoryType, (p)->dstMemoryType) : 0,                                               \
    HS_COPY_2D((p) ? (p)->dstPitch : 0, (p) ? (p)->srcPitch : 0, (p) ? (p)->WidthInBytes : 0, (p) ? (p)->Height : 0)

/* Rows of `pitch` bytes, `height` rows to a slice: the bytes touched from the first one. */
#define EXTENT_3D(pitch, height, p)                                                                                    \
    ((p)->Height && (p)->Depth ? (((p)->Depth - 1) * (height) + (p)->Height - 1) * (pitch) + (p)->WidthInBytes : 0)
#define COPY_3D(p)                                                                                                     \
    .op = DESCRIPTOR_OP(p),                                                                                            \
    .src = (p) ? SIDE_BASE((p)->srcMemoryType, (p)->srcHost, (p)->srcDevice) +                                         \
                     ((p)->srcZ * (p)->srcHeight + (p)->srcY) * (p)->srcPitch + (p)->srcXInBytes                       \
               : 0,                                                                                                    \
    .dst = (p) ? SIDE_BASE((p)->dstMemoryType, (p)->dstHost, (p)->dstDevice) +                                         \
                     ((p)->dstZ * (p)->dstHeight + (p)->dstY) * (p)->dstPitch + (p)->dstXInBytes                       \
               : 0,                                                                                                    \
    .bytes = (p) ? (p)->WidthInBytes * (p)->Height * (p)->Depth : 0,                                                   \
    .dir = (p) ? memory_dir((p)->srcMemoryType, (p)->dstMemoryType) : 0,                                               \
    .src_extent = (p) ? EXTENT_3D((p)->srcPitch, (p)->srcHeight, p) : 0,                                               \
    .dst_extent = (p) ? EXTENT_3D((p)->dstPitch, (p)->dstHeight, p) : 0,                                               \
    HS_PITCHED((p) ? (p)->dstPitch : 0, (p) ? (p)->srcPitch : 0, (p) ? (p)->WidthInBytes : 0,                          \
               (p) ? (p)->Height * (p)->Depth : 0)

/* ---- the real functions ---- */

#define HS_CU_FN(name, asked, version, flags, params, args, ...)                                                       \
    HS_HOT_DATA static CUresult(*real_##name) params;                                                                  \
    static void *alias_##name;
#include "driver.inc"
#undef HS_CU_FN

/* Called by hipshadow itself, never wrapped. */
static CUresult (*real_cuGetErrorName)(CUresult, const char **);
static CUresult (*real_cuCtxGetDevice)(CUdevice *);
static CUresult (*real_cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
static CUresult (*real_cuDeviceGetCount)(int *);
static CUresult (*real_cuDeviceCanAccessPeer)(int *, CUdevice, CUdevice);
static CUresult (*real_cuPointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);
static CUresult (*real_cuMemGetAddressRange_v2)(CUdeviceptr *, size_t *, CUdeviceptr);
static CUresult (*real_cuDriverGetVersion)(int *);
static CUresult (*real_cuFuncGetName)(const char **, CUfunction);
static CUresult (*real_cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
static CUresult (*real_cuKernelGetName)(const char **, CUkernel);
static CUresult (*real_cuKernelGetParamInfo)(CUkernel, size_t, size_t *, size_t *);
static CUresult (*real_cuCtxGetCurrent)(CUcontext *);
static CUresult (*real_cuCtxSetCurrent)(CUcontext);

static const char *const driver_sonames[] = {"libcuda.so.1", "libcuda.so", NULL};

/* 0: not yet (libcuda not loaded), 1: a thread is resolving, 2: done.  Read by every wrapper:
 * with the other flags they read (one page). */
HS_HOT_DATA static atomic_int resolved;

static void resolve_everything(void *drv)
{
#define HS_CU_FN(name, asked, version, flags, params, args, ...)                                                       \
    *(void **)&real_##name = hs_resolve(#name, driver_sonames, &drv);
#include "driver.inc"
#undef HS_CU_FN
    *(void **)&real_cuGetErrorName = hs_resolve("cuGetErrorName", driver_sonames, &drv);
    *(void **)&real_cuCtxGetDevice = hs_resolve("cuCtxGetDevice", driver_sonames, &drv);
    *(void **)&real_cuDeviceGetAttribute = hs_resolve("cuDeviceGetAttribute", driver_sonames, &drv);
    *(void **)&real_cuDeviceGetCount = hs_resolve("cuDeviceGetCount", driver_sonames, &drv);
    *(void **)&real_cuDeviceCanAccessPeer = hs_resolve("cuDeviceCanAccessPeer", driver_sonames, &drv);
    *(void **)&real_cuPointerGetAttribute = hs_resolve("cuPointerGetAttribute", driver_sonames, &drv);
    *(void **)&real_cuMemGetAddressRange_v2 = hs_resolve("cuMemGetAddressRange_v2", driver_sonames, &drv);
    *(void **)&real_cuDriverGetVersion = hs_resolve("cuDriverGetVersion", driver_sonames, &drv);
    *(void **)&real_cuFuncGetName = hs_resolve("cuFuncGetName", driver_sonames, &drv);
    *(void **)&real_cuFuncGetParamInfo = hs_resolve("cuFuncGetParamInfo", driver_sonames, &drv);
    *(void **)&real_cuKernelGetName = hs_resolve("cuKernelGetName", driver_sonames, &drv);
    *(void **)&real_cuKernelGetParamInfo = hs_resolve("cuKernelGetParamInfo", driver_sonames, &drv);
    *(void **)&real_cuCtxGetCurrent = hs_resolve("cuCtxGetCurrent", driver_sonames, &drv);
    *(void **)&real_cuCtxSetCurrent = hs_resolve("cuCtxSetCurrent", driver_sonames, &drv);
    /* What the driver's own lookup answers for each (a runtime caches these addresses). */
    if (real_cuGetProcAddress_v2) {
        CUdriverProcAddressQueryResult status;
#define HS_CU_FN(name, asked, version, flags, params, args, ...)                                                       \
    if (real_cuGetProcAddress_v2(asked, &alias_##name, version, flags, &status) != CUDA_SUCCESS)                       \
        alias_##name = NULL;
#include "driver.inc"
#undef HS_CU_FN
    }
}

/* Resolves once libcuda is loaded.  `wait`: a wrapper needs its real function, so it waits for
 * a resolution in progress; a lookup (which may run under the loader's lock) does not.  Out of
 * line and cold: the resolution inlines every entry point's, pages of code a wrapper must not
 * touch once it is done (resolve_driver_now). */
__attribute__((noinline, cold)) static void resolve_driver_slow(bool wait)
{
    for (;;) {
        int state = atomic_load_explicit(&resolved, memory_order_acquire);
        if (state == 2 || (state == 1 && !wait))
            return;
        if (state == 1)
            continue;
        if (!atomic_compare_exchange_strong(&resolved, &state, 1))
            continue;
        void *drv = NULL;
        bool loaded = hs_resolve("cuInit", driver_sonames, &drv) != NULL;
        if (loaded)
            resolve_everything(drv);
        atomic_store_explicit(&resolved, loaded ? 2 : 0, memory_order_release);
        return;
    }
}

static inline void resolve_driver_now(bool wait)
{
    if (HS_UNLIKELY(atomic_load_explicit(&resolved, memory_order_acquire) != 2))
        resolve_driver_slow(wait);
}

static void resolve_driver(void) { resolve_driver_now(false); }

/* The calls an engine makes around every kernel (the rest stay where the table puts them). */
HS_PATH_WRAPPER(cuLaunchKernel)
HS_HOT_WRAPPER(cuLaunchKernelEx)
HS_HOT_WRAPPER(cuMemcpyAsync)
HS_HOT_WRAPPER(cuMemcpyDtoHAsync_v2)
HS_HOT_WRAPPER(cuMemcpyHtoDAsync_v2)
HS_HOT_WRAPPER(cuMemcpyDtoDAsync_v2)
HS_HOT_WRAPPER(cuStreamSynchronize)
HS_HOT_WRAPPER(cuEventRecord)
HS_HOT_WRAPPER(cuStreamWaitEvent)

/* Every driver call takes device memory as a CUdeviceptr: an address, with no stated kind
 * (dir_by_address; JAX's XLA reads its pinned buffers back with cuMemcpyDtoHAsync). */
#define HS_CU_FN(name, asked, version, flags, params, args, ...)                                                       \
    HS_WRAPPER(CUresult, name, params, args, HS_CU_API_##name, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_FOUND,         \
               resolve_driver_now(true), .dir_by_address = true, __VA_ARGS__)
#include "driver.inc"
#undef HS_CU_FN

static const hs_lookup_entry lookup[] = {
#define HS_CU_FN(name, asked, version, flags, params, args, ...)                                                       \
    {#name, (void *)name, (void *const *)&real_##name, (void *const *)&alias_##name},
#include "driver.inc"
#undef HS_CU_FN
};

/* ---- what the core asks of this layer ---- */

static const char *driver_error_name(int code)
{
    const char *name = NULL;
    if (real_cuGetErrorName && real_cuGetErrorName((CUresult)code, &name) == CUDA_SUCCESS && name)
        return name;
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "CUresult %d", code);
    return buf;
}

HS_HOT_PATH static bool driver_is_failure(int code) { return code != CUDA_SUCCESS && code != CUDA_ERROR_NOT_READY; }

static int driver_current_device(void)
{
    CUdevice device = -1;
    return real_cuCtxGetDevice && real_cuCtxGetDevice(&device) == CUDA_SUCCESS ? (int)device : -1;
}

/* ---- kernels ---- */

bool hs_cuda_is_device_fault(int code)
{
    return code == CUDA_ERROR_ILLEGAL_ADDRESS || code == CUDA_ERROR_LAUNCH_FAILED ||
           code == CUDA_ERROR_MISALIGNED_ADDRESS || code == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
           code == CUDA_ERROR_HARDWARE_STACK_ERROR || code == CUDA_ERROR_INVALID_ADDRESS_SPACE ||
           code == CUDA_ERROR_INVALID_PC || code == CUDA_ERROR_ASSERT || code == CUDA_ERROR_LAUNCH_TIMEOUT;
}

/* What cuLaunchKernel is given is a CUfunction, or (from the CUDA 12+ runtime, which loads
 * kernels through the library API) a CUkernel cast to one: ask about it both ways. */
static const char *driver_kernel_name(const void *kernel, int ref, uintptr_t stream)
{
    (void)stream;
    const char *name = NULL;
    if (ref != HS_KREF_FUNCTION)
        return NULL;
    if (real_cuFuncGetName && real_cuFuncGetName(&name, (CUfunction)kernel) == CUDA_SUCCESS && name)
        return name;
    if (real_cuKernelGetName && real_cuKernelGetName(&name, (CUkernel)kernel) == CUDA_SUCCESS && name)
        return name;
    return NULL;
}

/* The driver gives each parameter's offset and size (CUDA >= 12.4), not whether it is a pointer. */
static int driver_kernel_params(const void *kernel, int ref, hs_kernel_param *out, int max)
{
    if (ref != HS_KREF_FUNCTION || (!real_cuFuncGetParamInfo && !real_cuKernelGetParamInfo))
        return -1;
    int n = 0;
    size_t offset, size;
    while (real_cuFuncGetParamInfo && n < max &&
           real_cuFuncGetParamInfo((CUfunction)kernel, (size_t)n, &offset, &size) == CUDA_SUCCESS) {
        out[n] = (hs_kernel_param){.offset = (uint32_t)offset, .size = (uint32_t)size};
        n++;
    }
    if (n == 0) /* not a CUfunction: a CUkernel */
        while (real_cuKernelGetParamInfo && n < max &&
               real_cuKernelGetParamInfo((CUkernel)kernel, (size_t)n, &offset, &size) == CUDA_SUCCESS) {
            out[n] = (hs_kernel_param){.offset = (uint32_t)offset, .size = (uint32_t)size};
            n++;
        }
    return n ? n : -1;
}

/* A device's limits, for the rules that explain a refusal (runtime_rules.inc).  An attribute the
 * driver does not answer stays 0 (unknown); the device is the ordinal (cuDeviceGet's answer). */
static bool driver_device_limits(int device, hs_device_limits *out)
{
    if (!real_cuDeviceGetAttribute || !real_cuDeviceGetCount ||
        real_cuDeviceGetCount(&out->device_count) != CUDA_SUCCESS)
        return false;
    static const CUdevice_attribute block[3] = {
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
    static const CUdevice_attribute grid[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                               CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
    int v;
#define ATTR(a, field)                                                                                                 \
    (field) = real_cuDeviceGetAttribute(&v, (a), (CUdevice)device) == CUDA_SUCCESS && v > 0 ? (unsigned)v : 0
    ATTR(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, out->max_threads_per_block);
    for (int d = 0; d < 3; d++) {
        ATTR(block[d], out->max_block[d]);
        ATTR(grid[d], out->max_grid[d]);
    }
    ATTR(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, out->max_shmem);
    ATTR(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, out->max_shmem_optin);
#undef ATTR
    for (int peer = 0; real_cuDeviceCanAccessPeer && peer < out->device_count && peer < 64; peer++)
        if (peer != device && real_cuDeviceCanAccessPeer(&v, (CUdevice)device, (CUdevice)peer) == CUDA_SUCCESS && v)
            out->peers |= 1ull << peer;
    return true;
}

static int driver_stream_sync(uintptr_t stream)
{
    return real_cuStreamSynchronize ? real_cuStreamSynchronize((CUstream)stream) : CUDA_ERROR_NOT_SUPPORTED;
}

static int driver_fill(uintptr_t device, int value, size_t n)
{
    return real_cuMemsetD8_v2 ? real_cuMemsetD8_v2((CUdeviceptr)device, (unsigned char)value, n)
                              : CUDA_ERROR_NOT_SUPPORTED;
}

static int driver_read(void *host, uintptr_t device, size_t n)
{
    return real_cuMemcpyDtoH_v2 ? real_cuMemcpyDtoH_v2(host, (CUdeviceptr)device, n) : CUDA_ERROR_NOT_SUPPORTED;
}

/* The driver describes any device pointer, whichever layer allocated it.  A pointer in memory
 * mapped with cuMemMap is answered one map at a time: such answers are marked HS_MEM_MAPPED so
 * that the core can follow the adjacent maps (never an overrun from a partial answer).  Memory
 * from cudaMalloc is IPC-capable and from no pool; mapped memory is neither. */
bool hs_cuda_query_pointer(uintptr_t p, hs_span *span)
{
    resolve_driver();
    if (!real_cuPointerGetAttribute)
        return false;
    unsigned int type = 0;
    if (real_cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) != CUDA_SUCCESS ||
        (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED))
        return false;
    int ordinal = 0, ipc = 1;
    void *pool = NULL;
    real_cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)p);
    bool mapped = real_cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, (CUdeviceptr)p) ==
                      CUDA_SUCCESS &&
                  !ipc &&
                  real_cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, (CUdeviceptr)p) ==
                      CUDA_SUCCESS &&
                  !pool;
    CUdeviceptr base = 0;
    size_t size = 0;
    if (!real_cuMemGetAddressRange_v2 || real_cuMemGetAddressRange_v2(&base, &size, (CUdeviceptr)p) != CUDA_SUCCESS ||
        !base) {
        /* Known as device memory, extent unknown: nothing to check the range against. */
        base = p;
        size = SIZE_MAX - p;
        mapped = false;
    }
    span->base = (uintptr_t)base;
    span->size = size;
    span->device = ordinal;
    span->kind = mapped ? HS_MEM_MAPPED : 0;
    return true;
}

/* The driver keeps no last error; what hipshadow's own calls may change is the thread's current
 * context (its first kernel load makes the runtime's primary context current). */
void hs_cuda_driver_save(hs_visible *v)
{
    CUcontext ctx = NULL;
    if (atomic_load_explicit(&resolved, memory_order_acquire) == 2 && real_cuCtxGetCurrent &&
        real_cuCtxGetCurrent(&ctx) == CUDA_SUCCESS) {
        v->has_context = true;
        v->context = ctx;
    }
}

void hs_cuda_driver_restore(const hs_visible *v)
{
    CUcontext now = NULL;
    if (v->has_context && real_cuCtxSetCurrent && real_cuCtxGetCurrent(&now) == CUDA_SUCCESS && now != v->context)
        real_cuCtxSetCurrent((CUcontext)v->context);
}

const hs_layer hs_cuda_driver_layer = {
    .name = "CUDA driver",
    .first_api = HS_CUDA_RUNTIME_END,
    .n_apis = HS_CUDA_API_COUNT - HS_CUDA_RUNTIME_END,
    .error_name = driver_error_name,
    .is_failure = driver_is_failure,
    .current_device = driver_current_device,
    .resolve = resolve_driver,
    .unannounced_streams = true,
    .kernels_on_current_device = true,
    .is_device_fault = hs_cuda_is_device_fault,
    .kernel_name = driver_kernel_name,
    .kernel_params = driver_kernel_params,
    .stream_sync = driver_stream_sync,
    .device_limits = driver_device_limits,
    .fill = driver_fill,
    .read = driver_read,
    .lookup = lookup,
    .n_lookup = sizeof lookup / sizeof *lookup,
};
