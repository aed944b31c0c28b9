/* The CUDA runtime front-end: the only file that defines exported cuda* symbols (and no hip*
 * ones).  Each entry point in api.inc becomes one wrapper of the shape in wrapper_shape.h.
 * libcudart exports versioned symbols (cudaMemcpyAsync@@libcudart.so.13); this library has no
 * version definitions, so the dynamic linker lets its plain names stand in for them. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>

#include "../core/frontend.h"
#include "../core/gpu_kernels.h"
#include "../core/shadow.h"
#include "../core/wrapper_shape.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define P(x) ((uintptr_t)(x))
#define EXTENT_2D(pitch, width, height) ((height) ? ((height) - 1) * (pitch) + (width) : 0)
#define PER_THREAD .has_stream = true, .stream = P(cudaStreamPerThread)
#define PTSZ_STREAM(s) ((s) ? P(s) : P(cudaStreamPerThread))

enum {
#define HS_CUDA_FN(name, params, args, ...) HS_CUDA_API_##name,
#include "api.inc"
#undef HS_CUDA_FN
    HS_CUDA_API_COUNT
};

static const char *const api_names[HS_CUDA_API_COUNT] = {
#define HS_CUDA_FN(name, params, args, ...) [HS_CUDA_API_##name] = #name,
#include "api.inc"
#undef HS_CUDA_FN
};

/* The real entry points, resolved once. */
#define HS_CUDA_FN(name, params, args, ...) static cudaError_t(*real_##name) params;
#include "api.inc"
#undef HS_CUDA_FN

/* Called by hipshadow itself, never wrapped. */
static cudaError_t (*real_cudaPointerGetAttributes)(struct cudaPointerAttributes *, const void *);
static const char *(*real_cudaGetErrorName)(cudaError_t);
/* The driver's cuMemGetAddressRange (libcuda is always loaded under libcudart). */
static int (*real_cuMemGetAddressRange)(unsigned long long *, size_t *, unsigned long long);

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve_all(void)
{
    static const char *const sonames[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so", NULL};
    static const char *const driver[] = {"libcuda.so.1", "libcuda.so", NULL};
    void *runtime = NULL, *drv = NULL;
#define HS_CUDA_FN(name, params, args, ...) *(void **)&real_##name = hs_resolve(#name, sonames, &runtime);
#include "api.inc"
#undef HS_CUDA_FN
    *(void **)&real_cudaPointerGetAttributes = hs_resolve("cudaPointerGetAttributes", sonames, &runtime);
    *(void **)&real_cudaGetErrorName = hs_resolve("cudaGetErrorName", sonames, &runtime);
    *(void **)&real_cuMemGetAddressRange = hs_resolve("cuMemGetAddressRange_v2", driver, &drv);
}

#define HS_CUDA_FN(name, params, args, ...)                                                          \
    HS_WRAPPER(cudaError_t, name, params, args, HS_CUDA_API_##name, cudaErrorInvalidValue,          \
               cudaErrorSymbolNotFound, (void)0, __VA_ARGS__)
#include "api.inc"
#undef HS_CUDA_FN

/* ---- what the core asks of this front-end ---- */

static const char *cuda_error_name(int code)
{
    if (real_cudaGetErrorName)
        return real_cudaGetErrorName((cudaError_t)code);
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "cudaError %d", code);
    return buf;
}

static bool cuda_is_failure(int code) { return code != cudaSuccess && code != cudaErrorNotReady; }

static bool cuda_query_pointer(uintptr_t p, hs_span *span)
{
    if (!real_cudaPointerGetAttributes)
        return false;
    struct cudaPointerAttributes attr;
    memset(&attr, 0, sizeof attr);
    if (real_cudaPointerGetAttributes(&attr, (const void *)p) != cudaSuccess)
        return false;
    if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
        return false;
    unsigned long long base = 0;
    size_t size = 0;
    if (!real_cuMemGetAddressRange || real_cuMemGetAddressRange(&base, &size, (unsigned long long)p) != 0 || !base) {
        /* Known as device memory, extent unknown: nothing to check the range against. */
        base = p;
        size = SIZE_MAX - p;
    }
    span->base = (uintptr_t)base;
    span->size = size;
    span->device = attr.device;
    return true;
}

static const uintptr_t cuda_builtin_streams[] = {0, P(cudaStreamLegacy), P(cudaStreamPerThread)};

extern const hs_kernel_ops hs_cuda_kernel_ops;

const hs_frontend hs_frontend_active = {
    .runtime = "CUDA",
    .kernels = &hs_cuda_kernel_ops,
    .runtime_id = 2,
    .api_names = api_names,
    .n_apis = HS_CUDA_API_COUNT,
    .error_name = cuda_error_name,
    .is_failure = cuda_is_failure,
    .query_pointer = cuda_query_pointer,
    .builtin_streams = cuda_builtin_streams,
    .n_builtin_streams = 3,
    .per_thread_stream = P(cudaStreamPerThread),
    .legacy_stream = P(cudaStreamLegacy),
};
