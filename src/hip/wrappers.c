/* The HIP front-end: the only file that defines exported hip* symbols.  Each entry point in
 * api.inc becomes one wrapper of one shape: resolve, guard, describe, check, decide, forward,
 * record. */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>

#include "entry/frontend_shape.h"
#include "entry/wrapper_shape.h"
#include "runtime/frontend.h"
#include "kernels/gpu_kernels.h"
#include "shadow/shadow.h"
#include "kernels/kernel_info.h"
#include "process/util.h"
#include "modules.h"
#include "params.h"
#include "hsa_events.h"
#include "rocm_versions.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* hipGetProcAddress came with HIP 6.1.  With older headers (Debian's 5.2) it is declared here as
 * 6.1's hip_runtime_api.h declares it, so one build wraps it wherever the runtime has it; where
 * the runtime lacks it, the wrapper is never called (and says so if it is). */
#if !defined(HIP_VERSION) || HIP_VERSION < 60100000
typedef enum hipDriverProcAddressQueryResult {
    HIP_GET_PROC_ADDRESS_SUCCESS = 0,
    HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} hipDriverProcAddressQueryResult;
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             hipDriverProcAddressQueryResult *symbolStatus);
#endif

#define SPT_STREAM .has_stream = true, .stream = P(hipStreamPerThread)
#define SPT(s) ((s) ? P(s) : P(hipStreamPerThread))
#define STREAM(s) .has_stream = true, .stream = P(s)
/* A copy's stated direction, by the running release's hipMemcpyKind (rocm_versions.h). */
#define HIP_DIR(k) hs_rocm_copy_kind((int)(k))
/* A launch: the kernel, how it is named, its geometry (dim3) and its arguments. */
#define KERNEL(f, ref, grid_, block_, shm, params) HS_LAUNCH_DIM3(f, ref, grid_, block_, shm, params)
#define EXTRA_BUFFER(extra)                                                                                            \
    HS_EXTRA_BUFFER(extra, HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END)

enum {
#define HS_HIP_FN(name, params, args, ...) HS_HIP_API_##name,
#include "api.inc"
#undef HS_HIP_FN
    HS_HIP_API_COUNT
};

/* After the wrapped entry points: what ROCr calls into hipshadow (events, not wrapped calls). */
enum { HS_HSA_EVENT_MEMORY_FAULT = HS_HIP_API_COUNT, HS_API_COUNT };

static const char *const api_names[HS_API_COUNT] = {
#define HS_HIP_FN(name, params, args, ...) [HS_HIP_API_##name] = #name,
#include "api.inc"
#undef HS_HIP_FN
    [HS_HSA_EVENT_MEMORY_FAULT] = "HSA_AMD_GPU_MEMORY_FAULT_EVENT",
};

/* The real entry points, resolved once. */
#define HS_HIP_FN(name, params, args, ...) HS_HOT_DATA static hipError_t(*real_##name) params;
#include "api.inc"
#undef HS_HIP_FN

/* Called by hipshadow itself, never wrapped. */
static hipError_t (*real_hipMemGetAddressRange)(hipDeviceptr_t *, size_t *, hipDeviceptr_t);
static hipError_t (*real_hipPointerGetAttributes)(hipPointerAttribute_t *, const void *);
static const char *(*real_hipGetErrorName)(hipError_t);
static hipError_t (*real_hipGetDevice)(int *);
static hipError_t (*real_hipRuntimeGetVersion)(int *);
static const char *(*real_hipKernelNameRef)(const hipFunction_t);
static const char *(*real_hipKernelNameRefByPtr)(const void *, hipStream_t);
HS_HOT_DATA static hipError_t (*real_hipGetLastError)(void);
HS_HOT_DATA static hipError_t (*real_hipPeekAtLastError)(void);
static hipError_t (*real_hipSetDevice)(int);
static hipError_t (*real_hipDeviceGetAttribute)(int *, hipDeviceAttribute_t, int);
static hipError_t (*real_hipGetDeviceCount)(int *);
static hipError_t (*real_hipDeviceCanAccessPeer)(int *, int, int);

static void resolve_all(void)
{
    static const char *const sonames[] = HS_HIP_SONAMES;
    void *runtime = NULL;
#define HS_HIP_FN(name, params, args, ...) *(void **)&real_##name = hs_resolve(#name, sonames, &runtime);
#include "api.inc"
#undef HS_HIP_FN
    *(void **)&real_hipMemGetAddressRange = hs_resolve("hipMemGetAddressRange", sonames, &runtime);
    *(void **)&real_hipPointerGetAttributes = hs_resolve("hipPointerGetAttributes", sonames, &runtime);
    *(void **)&real_hipGetErrorName = hs_resolve("hipGetErrorName", sonames, &runtime);
    *(void **)&real_hipGetDevice = hs_resolve("hipGetDevice", sonames, &runtime);
    *(void **)&real_hipRuntimeGetVersion = hs_resolve("hipRuntimeGetVersion", sonames, &runtime);
    *(void **)&real_hipKernelNameRef = hs_resolve("hipKernelNameRef", sonames, &runtime);
    *(void **)&real_hipKernelNameRefByPtr = hs_resolve("hipKernelNameRefByPtr", sonames, &runtime);
    *(void **)&real_hipGetLastError = hs_resolve("hipGetLastError", sonames, &runtime);
    *(void **)&real_hipPeekAtLastError = hs_resolve("hipPeekAtLastError", sonames, &runtime);
    *(void **)&real_hipSetDevice = hs_resolve("hipSetDevice", sonames, &runtime);
    *(void **)&real_hipDeviceGetAttribute = hs_resolve("hipDeviceGetAttribute", sonames, &runtime);
    *(void **)&real_hipGetDeviceCount = hs_resolve("hipGetDeviceCount", sonames, &runtime);
    *(void **)&real_hipDeviceCanAccessPeer = hs_resolve("hipDeviceCanAccessPeer", sonames, &runtime);
}

HS_RESOLVE_ONCE(resolve_all)

/* The calls an engine makes around every kernel (the rest stay where the table puts them). */
HS_PATH_WRAPPER(hipLaunchKernel)
HS_PATH_WRAPPER(hipModuleLaunchKernel)
HS_HOT_WRAPPER(hipMemcpyAsync)
HS_HOT_WRAPPER(hipMemsetAsync)
HS_HOT_WRAPPER(hipStreamSynchronize)
HS_HOT_WRAPPER(hipEventRecord)
HS_HOT_WRAPPER(hipStreamWaitEvent)
HS_HOT_WRAPPER(hipGetLastError)
HS_HOT_WRAPPER(hipPeekAtLastError)

#define HS_HIP_FN(name, params, args, ...)                                                                             \
    HS_WRAPPER(hipError_t, name, params, args, HS_HIP_API_##name, hipErrorInvalidValue,                                \
               hipErrorSharedObjectSymbolNotFound, resolve_runtime(), __VA_ARGS__)
#include "api.inc"
#undef HS_HIP_FN

/* The last error as the program reads it: the runtime's, or one that hipshadow's own calls had
 * to take out of the runtime and now owe the program (own_calls.h).  Not checked calls: they
 * only read state, so they are not in api.inc. */
HS_EXPORT hipError_t hipGetLastError(void)
{
    resolve_runtime();
    return real_hipGetLastError ? (hipError_t)hs_own_last_error(real_hipGetLastError(), true)
                                : hipErrorSharedObjectSymbolNotFound;
}

HS_EXPORT hipError_t hipPeekAtLastError(void)
{
    resolve_runtime();
    return real_hipPeekAtLastError ? (hipError_t)hs_own_last_error(real_hipPeekAtLastError(), false)
                                   : hipErrorSharedObjectSymbolNotFound;
}

/* For hipGetProcAddress and dlsym on the runtime's handle: every wrapper, with its real function. */
static const hs_lookup_entry lookup[] = {
#define HS_HIP_FN(name, params, args, ...) {#name, (void *)name, (void *const *)&real_##name, NULL},
#include "api.inc"
#undef HS_HIP_FN
    {"hipGetLastError", (void *)hipGetLastError, (void *const *)&real_hipGetLastError, NULL},
    {"hipPeekAtLastError", (void *)hipPeekAtLastError, (void *const *)&real_hipPeekAtLastError, NULL},
};

/* ---- what the core asks of this front-end ---- */

static const char *hip_error_name(int code)
{
    if (real_hipGetErrorName)
        return real_hipGetErrorName((hipError_t)code);
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "hipError %d", code);
    return buf;
}

HS_HOT_PATH static bool hip_is_failure(int code) { return code != hipSuccess && code != hipErrorNotReady; }

HS_HOT static int hip_current_device(void)
{
    int device = -1;
    return real_hipGetDevice && real_hipGetDevice(&device) == hipSuccess ? device : -1;
}

/* ---- kernels ---- */

static bool hip_is_device_fault(int code)
{
    return code == hipErrorIllegalAddress || code == hipErrorLaunchFailure || code == hipErrorAssert ||
           code == hipErrorLaunchTimeOut;
}

static const char *hip_kernel_name(const void *kernel, int ref, uintptr_t stream)
{
    const void *image;
    const char *name;
    if ((ref == HS_KREF_FUNCTION || ref == HS_KREF_STUB) && hs_hip_function_source(kernel, &image, &name))
        return name; /* a module function, or a stub hipcc registered */
    if (ref == HS_KREF_FUNCTION && real_hipKernelNameRef)
        return real_hipKernelNameRef((hipFunction_t)kernel);
    if (ref == HS_KREF_STUB && real_hipKernelNameRefByPtr)
        return real_hipKernelNameRefByPtr(kernel, (hipStream_t)stream);
    return NULL;
}

/* AMD says which arguments are pointers: the code object's metadata (global_buffer). */
static int hip_kernel_params(const void *kernel, int ref, hs_kernel_param *out, int max)
{
    (void)ref; /* module functions and hipcc-registered stubs alike */
    const void *image;
    const char *name;
    if (!hs_hip_function_source(kernel, &image, &name))
        return -1; /* not loaded through a wrapped call, nor registered by hipcc's constructors */
    hs_kernel_arg args[HS_KERNEL_MAX_PARAMS];
    int n = hs_amd_kernel_args(image, hs_amd_image_size(image), name, args, HS_KERNEL_MAX_PARAMS);
    for (int i = 0; i < n && i < max && i < HS_KERNEL_MAX_PARAMS; i++)
        out[i] = (hs_kernel_param){.offset = args[i].offset,
                                   .size = args[i].size,
                                   .pointer_known = true,
                                   .pointer = args[i].pointer,
                                   .access = args[i].access};
    return n;
}

static int hip_stream_sync(uintptr_t stream)
{
    return real_hipStreamSynchronize ? real_hipStreamSynchronize((hipStream_t)stream) : hipErrorNotSupported;
}

/* A device's limits, for the rules that explain a refusal (runtime_rules.inc).  An attribute the
 * runtime does not answer stays 0 (unknown). */
static bool hip_device_limits(int device, hs_device_limits *out)
{
    if (!real_hipDeviceGetAttribute || !real_hipGetDeviceCount ||
        real_hipGetDeviceCount(&out->device_count) != hipSuccess)
        return false;
    static const hipDeviceAttribute_t block[3] = {hipDeviceAttributeMaxBlockDimX, hipDeviceAttributeMaxBlockDimY,
                                                  hipDeviceAttributeMaxBlockDimZ};
    static const hipDeviceAttribute_t grid[3] = {hipDeviceAttributeMaxGridDimX, hipDeviceAttributeMaxGridDimY,
                                                 hipDeviceAttributeMaxGridDimZ};
    int v;
#define ATTR(a, field) (field) = real_hipDeviceGetAttribute(&v, (a), device) == hipSuccess && v > 0 ? (unsigned)v : 0
    ATTR(hipDeviceAttributeMaxThreadsPerBlock, out->max_threads_per_block);
    for (int d = 0; d < 3; d++) {
        ATTR(block[d], out->max_block[d]);
        ATTR(grid[d], out->max_grid[d]);
    }
    ATTR(hipDeviceAttributeMaxSharedMemoryPerBlock, out->max_shmem);
    ATTR(hipDeviceAttributeSharedMemPerBlockOptin, out->max_shmem_optin);
#undef ATTR
    out->aql_grid_32bit = true; /* every HIP runtime this front-end wraps is AMD's */
    for (int peer = 0; real_hipDeviceCanAccessPeer && peer < out->device_count && peer < 64; peer++)
        if (peer != device && real_hipDeviceCanAccessPeer(&v, device, peer) == hipSuccess && v)
            out->peers |= 1ull << peer;
    return true;
}

static int hip_fill(uintptr_t device, int value, size_t n)
{
    return real_hipMemset ? real_hipMemset((void *)device, value, n) : hipErrorNotSupported;
}

static int hip_read(void *host, uintptr_t device, size_t n)
{
    return real_hipMemcpyDtoH ? real_hipMemcpyDtoH(host, (hipDeviceptr_t)device, n) : hipErrorNotSupported;
}

static void hip_module_loaded(const void *module, const void *image) { hs_hip_module_loaded(module, image); }

static void hip_function_found(const void *function, const void *module, const char *name)
{
    hs_hip_function_found(function, module, name);
}

static bool hip_query_pointer(uintptr_t p, hs_span *span)
{
    if (!real_hipPointerGetAttributes || !real_hipMemGetAddressRange)
        return false;
    /* Read by the running runtime's numbering, not the headers' (rocm_versions.h): the first
     * field is memoryType (ROCm 5) or type (ROCm 6+), an int either way. */
    hipPointerAttribute_t attr;
    memset(&attr, 0, sizeof attr);
    if (real_hipPointerGetAttributes(&attr, (const void *)p) != hipSuccess)
        return false;
    int raw;
    memcpy(&raw, &attr, sizeof raw);
    hs_rocm_memory type = hs_rocm_memory_type(hs_rocm_version((int (*)(int *))real_hipRuntimeGetVersion), raw);
    if (type != HS_ROCM_MEM_DEVICE && type != HS_ROCM_MEM_MANAGED)
        return false;
    hipDeviceptr_t base = NULL;
    size_t size = 0;
    if (real_hipMemGetAddressRange(&base, &size, (hipDeviceptr_t)p) != hipSuccess || !base)
        return false;
    span->base = (uintptr_t)base;
    span->size = size;
    span->device = attr.device;
    return true;
}

static const uintptr_t hip_builtin_streams[] = {0, P(hipStreamPerThread)};

/* What the program can observe: the last error (peeked first: before ROCm 7 every call, a
 * successful one too, replaces it) and the current device. */
HS_HOT static void hip_save_visible(hs_visible *v)
{
    if (real_hipPeekAtLastError) {
        v->has_last_error = true;
        v->last_error = real_hipPeekAtLastError();
    }
    v->runtime_version = hs_rocm_version((int (*)(int *))real_hipRuntimeGetVersion);
    v->has_device = real_hipGetDevice && real_hipSetDevice && real_hipGetDevice(&v->device) == hipSuccess;
}

HS_HOT static int hip_restore_visible(const hs_visible *v)
{
    int device;
    if (v->has_device && real_hipGetDevice(&device) == hipSuccess && device != v->device)
        real_hipSetDevice(v->device);
    if (!v->has_last_error || (int)real_hipPeekAtLastError() == v->last_error)
        return 0;
    real_hipGetLastError(); /* what hipshadow's calls left (a GPU in error keeps answering its error) */
    return v->last_error;
}

/* ROCm 7 records only failures ("not ready" is none), as CUDA does; before, every call's result
 * (hip_internal.hpp's HIP_RETURN). */
static bool hip_replaces_last_error(unsigned api, int result, int runtime_version)
{
    if (api >= HS_HIP_API_COUNT)
        return false; /* ROCr's events are not calls */
    return runtime_version < 70000000 || hip_is_failure(result);
}

static const hs_layer runtime_layer = {
    .name = "HIP runtime",
    .first_api = 0,
    .n_apis = HS_HIP_API_COUNT,
    .error_name = hip_error_name,
    .is_failure = hip_is_failure,
    .current_device = hip_current_device,
    .resolve = resolve_runtime,
    .is_device_fault = hip_is_device_fault,
    .kernel_name = hip_kernel_name,
    .kernel_params = hip_kernel_params,
    .stream_sync = hip_stream_sync,
    .device_limits = hip_device_limits,
    .fill = hip_fill,
    .read = hip_read,
    .module_loaded = hip_module_loaded,
    .function_found = hip_function_found,
    .lookup = lookup,
    .n_lookup = sizeof lookup / sizeof *lookup,
};
static const char *hsa_status_name(int code)
{
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "hsa_status 0x%x", (unsigned)code);
    return buf;
}

static bool hsa_is_failure(int code) { return code != 0; }

/* ROCr's system events (hsa_events.c): only reported, never forwarded. */
static const hs_layer hsa_events_layer = {
    .name = "HSA runtime events",
    .first_api = HS_HIP_API_COUNT,
    .n_apis = HS_API_COUNT - HS_HIP_API_COUNT,
    .error_name = hsa_status_name,
    .is_failure = hsa_is_failure,
};
static const hs_layer *const layers[] = {&runtime_layer, &hsa_events_layer};

static bool hip_arm_fault_events(void) { return hs_hsa_events_arm(HS_HSA_EVENT_MEMORY_FAULT); }

const hs_frontend hs_frontend_active = {
    .runtime = "HIP",
    .kernels = &hs_hip_kernel_ops,
    .runtime_id = 1,
    .api_names = api_names,
    .n_apis = HS_API_COUNT,
    .layers = layers,
    .n_layers = 2,
    .arm_fault_events = hip_arm_fault_events,
    .query_pointer = hip_query_pointer,
    .builtin_streams = hip_builtin_streams,
    .n_builtin_streams = 2,
    .per_thread_stream = P(hipStreamPerThread),
    .save_visible = hip_save_visible,
    .restore_visible = hip_restore_visible,
    .replaces_last_error = hip_replaces_last_error,
};
