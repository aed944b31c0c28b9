/* The CUDA runtime front-end: the only file that defines exported cuda* symbols (and no hip*
 * ones).  Each entry point in api.inc becomes one wrapper of the shape in wrapper_shape.h.
 * libcudart exports versioned symbols (cudaMemcpyAsync@@libcudart.so.13); this library has no
 * version definitions, so the dynamic linker lets its plain names stand in for them. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>

#include "kernels/gpu_kernels.h"
#include "shadow/shadow.h"
#include "entry/frontend_shape.h"
#include "entry/wrapper_shape.h"
#include "layers.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define PER_THREAD .has_stream = true, .stream = P(cudaStreamPerThread)
#define PTSZ_STREAM(s) ((s) ? P(s) : P(cudaStreamPerThread))
/* A launch: the kernel (its host stub), its geometry and its arguments. */
#define KERNEL(f, grid_, block_, shm, params) HS_LAUNCH_DIM3(f, HS_KREF_STUB, grid_, block_, shm, params)
/* A launch by cudaLaunchConfig_t. */
#define KERNEL_CONFIG(cfg, f, params)                                                                                  \
    HS_LAUNCH_XYZ(f, HS_KREF_STUB, (cfg) ? (cfg)->gridDim.x : 0, (cfg) ? (cfg)->gridDim.y : 0,                         \
                  (cfg) ? (cfg)->gridDim.z : 0, (cfg) ? (cfg)->blockDim.x : 0, (cfg) ? (cfg)->blockDim.y : 0,          \
                  (cfg) ? (cfg)->blockDim.z : 0, (cfg) ? (cfg)->dynamicSmemBytes : 0, params)

/* The real entry points, resolved once. */
#define HS_CUDA_FN(name, params, args, ...) HS_HOT_DATA static cudaError_t(*real_##name) params;
#include "api.inc"
#undef HS_CUDA_FN

/* Called by hipshadow itself, never wrapped. */
static const char *(*real_cudaGetErrorName)(cudaError_t);
static cudaError_t (*real_cudaGetDevice)(int *);
static cudaError_t (*real_cudaFuncGetName)(const char **, const void *);
static cudaError_t (*real_cudaFuncGetParamInfo)(const void *, size_t, size_t *, size_t *);
HS_HOT_DATA static cudaError_t (*real_cudaGetLastError)(void);
HS_HOT_DATA static cudaError_t (*real_cudaPeekAtLastError)(void);
static cudaError_t (*real_cudaDeviceGetAttribute)(int *, enum cudaDeviceAttr, int);
static cudaError_t (*real_cudaGetDeviceCount)(int *);
static cudaError_t (*real_cudaDeviceCanAccessPeer)(int *, int, int);

static void resolve_all(void)
{
    static const char *const sonames[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so",
                                          NULL};
    void *runtime = NULL;
#define HS_CUDA_FN(name, params, args, ...) *(void **)&real_##name = hs_resolve(#name, sonames, &runtime);
#include "api.inc"
#undef HS_CUDA_FN
    *(void **)&real_cudaGetErrorName = hs_resolve("cudaGetErrorName", sonames, &runtime);
    *(void **)&real_cudaGetDevice = hs_resolve("cudaGetDevice", sonames, &runtime);
    *(void **)&real_cudaFuncGetName = hs_resolve("cudaFuncGetName", sonames, &runtime);
    *(void **)&real_cudaFuncGetParamInfo = hs_resolve("cudaFuncGetParamInfo", sonames, &runtime);
    *(void **)&real_cudaGetLastError = hs_resolve("cudaGetLastError", sonames, &runtime);
    *(void **)&real_cudaPeekAtLastError = hs_resolve("cudaPeekAtLastError", sonames, &runtime);
    *(void **)&real_cudaDeviceGetAttribute = hs_resolve("cudaDeviceGetAttribute", sonames, &runtime);
    *(void **)&real_cudaGetDeviceCount = hs_resolve("cudaGetDeviceCount", sonames, &runtime);
    *(void **)&real_cudaDeviceCanAccessPeer = hs_resolve("cudaDeviceCanAccessPeer", sonames, &runtime);
}

HS_RESOLVE_ONCE(resolve_all)

/* The calls an engine makes around every kernel (the rest stay where the table puts them). */
HS_PATH_WRAPPER(cudaLaunchKernel)
HS_HOT_WRAPPER(cudaLaunchKernelExC)
HS_HOT_WRAPPER(cudaMemcpyAsync)
HS_HOT_WRAPPER(cudaMemsetAsync)
HS_HOT_WRAPPER(cudaStreamSynchronize)
HS_HOT_WRAPPER(cudaEventRecord)
HS_HOT_WRAPPER(cudaStreamWaitEvent)
HS_HOT_WRAPPER(cudaGetLastError)
HS_HOT_WRAPPER(cudaPeekAtLastError)

#define HS_CUDA_FN(name, params, args, ...)                                                                            \
    HS_WRAPPER(cudaError_t, name, params, args, HS_CUDA_API_##name, cudaErrorInvalidValue, cudaErrorSymbolNotFound,    \
               resolve_runtime(), __VA_ARGS__)
#include "api.inc"
#undef HS_CUDA_FN

/* The last error as the program reads it: the runtime's, or one that hipshadow's own calls had
 * to take out of the runtime and now owe the program (own_calls.h).  Not checked calls: they
 * only read state, so they are not in api.inc. */
HS_EXPORT cudaError_t cudaGetLastError(void)
{
    resolve_runtime();
    return real_cudaGetLastError ? (cudaError_t)hs_own_last_error(real_cudaGetLastError(), true)
                                 : cudaErrorSymbolNotFound;
}

HS_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    resolve_runtime();
    return real_cudaPeekAtLastError ? (cudaError_t)hs_own_last_error(real_cudaPeekAtLastError(), false)
                                    : cudaErrorSymbolNotFound;
}

/* For dlsym on the runtime's handle: every wrapper, with its real function. */
static const hs_lookup_entry lookup[] = {
#define HS_CUDA_FN(name, params, args, ...) {#name, (void *)name, (void *const *)&real_##name, NULL},
#include "api.inc"
#undef HS_CUDA_FN
    {"cudaGetLastError", (void *)cudaGetLastError, (void *const *)&real_cudaGetLastError, NULL},
    {"cudaPeekAtLastError", (void *)cudaPeekAtLastError, (void *const *)&real_cudaPeekAtLastError, NULL},
};

void hs_cuda_runtime_save(hs_visible *v)
{
    if (real_cudaPeekAtLastError) {
        v->has_last_error = true;
        v->last_error = real_cudaPeekAtLastError();
    }
}

int hs_cuda_runtime_restore(const hs_visible *v)
{
    if (!v->has_last_error || (int)real_cudaPeekAtLastError() == v->last_error)
        return 0;
    real_cudaGetLastError(); /* what hipshadow's calls left; a sticky fault stays, as it would */
    return v->last_error;
}

/* ---- what the core asks of this front-end ---- */

static const char *cuda_error_name(int code)
{
    if (real_cudaGetErrorName)
        return real_cudaGetErrorName((cudaError_t)code);
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "cudaError %d", code);
    return buf;
}

HS_HOT_PATH static bool cuda_is_failure(int code) { return code != cudaSuccess && code != cudaErrorNotReady; }

static int cuda_current_device(void)
{
    int device = -1;
    return real_cudaGetDevice && real_cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

/* ---- kernels ---- */

static const char *cuda_kernel_name(const void *kernel, int ref, uintptr_t stream)
{
    (void)stream;
    const char *name = NULL;
    if (ref == HS_KREF_STUB && real_cudaFuncGetName && real_cudaFuncGetName(&name, kernel) == cudaSuccess)
        return name;
    return NULL;
}

/* The runtime gives each parameter's offset and size, not whether it is a pointer. */
static int cuda_kernel_params(const void *kernel, int ref, hs_kernel_param *out, int max)
{
    if (ref != HS_KREF_STUB || !real_cudaFuncGetParamInfo)
        return -1;
    int n = 0;
    size_t offset, size;
    while (n < max && real_cudaFuncGetParamInfo(kernel, (size_t)n, &offset, &size) == cudaSuccess) {
        out[n] = (hs_kernel_param){.offset = (uint32_t)offset, .size = (uint32_t)size};
        n++;
    }
    return n;
}

/* A device's limits, for the rules that explain a refusal (runtime_rules.inc).  An attribute the
 * runtime does not answer stays 0 (unknown). */
static bool cuda_device_limits(int device, hs_device_limits *out)
{
    if (!real_cudaDeviceGetAttribute || !real_cudaGetDeviceCount ||
        real_cudaGetDeviceCount(&out->device_count) != cudaSuccess)
        return false;
    static const enum cudaDeviceAttr block[3] = {cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY,
                                                 cudaDevAttrMaxBlockDimZ};
    static const enum cudaDeviceAttr grid[3] = {cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY, cudaDevAttrMaxGridDimZ};
    int v;
#define ATTR(a, field) (field) = real_cudaDeviceGetAttribute(&v, (a), device) == cudaSuccess && v > 0 ? (unsigned)v : 0
    ATTR(cudaDevAttrMaxThreadsPerBlock, out->max_threads_per_block);
    for (int d = 0; d < 3; d++) {
        ATTR(block[d], out->max_block[d]);
        ATTR(grid[d], out->max_grid[d]);
    }
    ATTR(cudaDevAttrMaxSharedMemoryPerBlock, out->max_shmem);
    ATTR(cudaDevAttrMaxSharedMemoryPerBlockOptin, out->max_shmem_optin);
#undef ATTR
    for (int peer = 0; real_cudaDeviceCanAccessPeer && peer < out->device_count && peer < 64; peer++)
        if (peer != device && real_cudaDeviceCanAccessPeer(&v, device, peer) == cudaSuccess && v)
            out->peers |= 1ull << peer;
    return true;
}

static int cuda_stream_sync(uintptr_t stream)
{
    return real_cudaStreamSynchronize ? real_cudaStreamSynchronize((cudaStream_t)stream) : cudaErrorNotSupported;
}

static int cuda_fill(uintptr_t device, int value, size_t n)
{
    return real_cudaMemset ? real_cudaMemset((void *)device, value, n) : cudaErrorNotSupported;
}

static int cuda_read(void *host, uintptr_t device, size_t n)
{
    return real_cudaMemcpy ? real_cudaMemcpy(host, (const void *)device, n, cudaMemcpyDeviceToHost)
                           : cudaErrorNotSupported;
}

const hs_layer hs_cuda_runtime_layer = {
    .name = "CUDA runtime",
    .first_api = 0,
    .n_apis = HS_CUDA_RUNTIME_END,
    .error_name = cuda_error_name,
    .is_failure = cuda_is_failure,
    .current_device = cuda_current_device,
    .resolve = resolve_runtime,
    .kernels_on_current_device = true,
    .is_device_fault = hs_cuda_is_device_fault,
    .kernel_name = cuda_kernel_name,
    .kernel_params = cuda_kernel_params,
    .stream_sync = cuda_stream_sync,
    .device_limits = cuda_device_limits,
    .fill = cuda_fill,
    .read = cuda_read,
    .lookup = lookup,
    .n_lookup = sizeof lookup / sizeof *lookup,
};
