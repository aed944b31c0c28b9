/* A stand-in for the CUDA runtime (libcudart.so.13, and libcudart_static as the archive
 * libcudart_static_sim.a), on top of the simulated driver in simcuda.c or any libcuda.so.1.
 *
 * Mirrored from the real runtime: it links no driver.  At first use it dlopen()s
 * "libcuda.so.1" (RTLD_NOW), takes cuGetProcAddress_v2 from that handle with dlsym, and gets every
 * driver function through cuGetProcAddress(name, &fn, <ABI version>, flags, NULL), as the real
 * runtime does (it asks for "cuInit" with 2000, "cuMemAlloc" with 3020, ...): so an LD_PRELOAD
 * library that merely exports cuMemcpyDtoH_v2 never sees the runtime's calls, and a driver that
 * returns the wrong ABI for a version breaks it as it would break the real one.  The _ptds/_ptsz entry points use the driver's per-thread variants,
 * obtained with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.  cudaMemcpy maps its kind onto
 * the typed driver copy (cudaMemcpyDeviceToHost -> cuMemcpyDtoH, Default -> cuMemcpy).  Each
 * thread gets the primary context of its device (cudaSetDevice, default 0) on first use.
 * CUresult codes are mapped to cudaError_t.  The exports carry the version node libcudart.so.13
 * (simcudart.map).
 *
 * The thread's last error, as the CUDA Runtime API documents it (cudaGetLastError,
 * cudaPeekAtLastError) and CUDA 13 does on an H100: every exported call returns through ret(),
 * where a failure sets it (cudaErrorNotReady is none) and a success leaves it; cudaGetLastError
 * returns it and resets it, cudaPeekAtLastError returns it.  A lost context (the driver's sticky
 * CUDA_ERROR_ILLEGAL_ADDRESS) stays in the sense that every call that uses the context returns it
 * again, and so sets it again; cudaGetLastError resets it like any other error, and a call that
 * does not use the context (cudaGetDevice) succeeds.
 *
 * Kernels: nvcc's registration (__cudaRegisterFatBinary, __cudaRegisterFunction), whose fat
 * binary here wraps a simcuda_image (simcuda.h); the module loads through the driver at a
 * kernel's first use on a device (CUDA's lazy loading), and cudaFuncGetParamInfo and
 * cudaFuncGetName answer from it (cuFuncGetParamInfo: an index past the last parameter is
 * cudaErrorInvalidValue, which sets the last error like any failure).
 *
 * Simplified: only the subset below; cudaMalloc(0) gives NULL without asking the driver;
 * cudaPointerGetAttributes answers cudaMemoryTypeUnregistered for memory the driver does not
 * know, as CUDA 11+ does. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1 /* declares both cudaMemcpy and cudaMemcpy_ptds */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "simcuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_EXPORT __attribute__((visibility("default")))

/* Driver entry points: (field, base name, the CUDA version of the ABI this runtime was written
 * against).  Like the real runtime, each is asked for with its own ABI version, so the function
 * and its cudaTypedefs.h type PFN_<name>_v<version> always agree; cuCtxSynchronize is asked for
 * as of 13000, i.e. cuCtxSynchronize_v2 (CUcontext ctx). */
// clang-format off
#define DRIVER_FNS(X)                                 \
    X(init, cuInit, 2000)                             \
    X(device_count, cuDeviceGetCount, 2000)           \
    X(driver_version, cuDriverGetVersion, 2020)       \
    X(primary_retain, cuDevicePrimaryCtxRetain, 7000) \
    X(ctx_set, cuCtxSetCurrent, 4000)                 \
    X(ctx_sync, cuCtxSynchronize, 13000)              \
    X(mem_alloc, cuMemAlloc, 3020)                    \
    X(mem_alloc_managed, cuMemAllocManaged, 6000)     \
    X(mem_free, cuMemFree, 3020)                      \
    X(mem_alloc_host, cuMemAllocHost, 3020)           \
    X(mem_host_alloc, cuMemHostAlloc, 2020)           \
    X(mem_free_host, cuMemFreeHost, 2000)             \
    X(host_register, cuMemHostRegister, 6050)         \
    X(host_unregister, cuMemHostUnregister, 4000)     \
    X(pointer_attr, cuPointerGetAttribute, 4000)      \
    X(memcpy, cuMemcpy, 4000)                         \
    X(memcpy_htod, cuMemcpyHtoD, 3020)                \
    X(memcpy_dtoh, cuMemcpyDtoH, 3020)                \
    X(memcpy_dtod, cuMemcpyDtoD, 3020)                \
    X(memcpy_async, cuMemcpyAsync, 4000)              \
    X(memcpy_htod_async, cuMemcpyHtoDAsync, 3020)     \
    X(memcpy_dtoh_async, cuMemcpyDtoHAsync, 3020)     \
    X(memcpy_dtod_async, cuMemcpyDtoDAsync, 3020)     \
    X(memset_d8, cuMemsetD8, 3020)                    \
    X(memset_d8_async, cuMemsetD8Async, 3020)         \
    X(stream_create, cuStreamCreate, 2000)            \
    X(stream_destroy, cuStreamDestroy, 4000)          \
    X(stream_sync, cuStreamSynchronize, 2000)         \
    X(stream_query, cuStreamQuery, 2000)              \
    X(stream_wait_event, cuStreamWaitEvent, 3020)     \
    X(event_create, cuEventCreate, 2000)              \
    X(event_record, cuEventRecord, 2000)              \
    X(event_sync, cuEventSynchronize, 2000)           \
    X(event_destroy, cuEventDestroy, 4000)            \
    X(mem_alloc_pitch, cuMemAllocPitch, 3020)         \
    X(mem_alloc_async, cuMemAllocAsync, 11020)        \
    X(mem_alloc_pool, cuMemAllocFromPoolAsync, 11020) \
    X(mem_free_async, cuMemFreeAsync, 11020)          \
    X(pool_create, cuMemPoolCreate, 11020)            \
    X(pool_destroy, cuMemPoolDestroy, 11020)          \
    X(pool_trim, cuMemPoolTrimTo, 11020)              \
    X(memcpy_2d, cuMemcpy2D, 3020)                    \
    X(memcpy_2d_async, cuMemcpy2DAsync, 3020)         \
    X(memcpy_peer, cuMemcpyPeer, 4000)                \
    X(memcpy_peer_async, cuMemcpyPeerAsync, 4000)     \
    X(stream_create_prio, cuStreamCreateWithPriority, 5050) \
    X(event_record_flags, cuEventRecordWithFlags, 11010) \
    X(event_query, cuEventQuery, 2000)                \
    X(begin_capture, cuStreamBeginCapture, 10010)     \
    X(end_capture, cuStreamEndCapture, 10000)         \
    X(is_capturing, cuStreamIsCapturing, 10000)       \
    X(graph_instantiate, cuGraphInstantiateWithFlags, 11040) \
    X(graph_launch, cuGraphLaunch, 10000)             \
    X(graph_exec_destroy, cuGraphExecDestroy, 10000)  \
    X(graph_destroy, cuGraphDestroy, 10000)           \
    X(module_load, cuModuleLoadData, 2000)            \
    X(module_function, cuModuleGetFunction, 2000)     \
    X(func_param_info, cuFuncGetParamInfo, 12040)     \
    X(func_name, cuFuncGetName, 12030)                \
    X(launch, cuLaunchKernel, 4000)                   \
    X(launch_ex, cuLaunchKernelEx, 11060)             \
    X(launch_cooperative, cuLaunchCooperativeKernel, 9000) \
    X(launch_host_func, cuLaunchHostFunc, 10000)      \
    X(stream_add_callback, cuStreamAddCallback, 5000)
// clang-format on

typedef struct driver {
#define FIELD(field, name, version) PFN_##name##_v##version field;
    DRIVER_FNS(FIELD)
#undef FIELD
} driver;

static struct {
    pthread_once_t once;
    cudaError_t init_error;
    PFN_cuGetProcAddress_v12000 get_proc;
    driver legacy, ptds; /* ptds: the per-thread-default-stream variants where the driver has them */
    int device_count;
    pthread_mutex_t lock;
    CUcontext primary[16];
} rt = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static __thread cudaError_t last_error;
static __thread int thread_device;
static __thread int thread_bound = -1; /* the device whose primary context this thread has current */

static cudaError_t from_cu(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
    case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
    case CUDA_ERROR_NOT_READY: return cudaErrorNotReady;
    case CUDA_ERROR_ILLEGAL_ADDRESS: return cudaErrorIllegalAddress;
    case CUDA_ERROR_LAUNCH_FAILED: return cudaErrorLaunchFailure;
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return cudaErrorHostMemoryAlreadyRegistered;
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: return cudaErrorHostMemoryNotRegistered;
    case CUDA_ERROR_NOT_PERMITTED: return cudaErrorNotPermitted;
    case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
    case CUDA_ERROR_INVALID_IMAGE: return cudaErrorInvalidKernelImage;
    case CUDA_ERROR_ILLEGAL_STATE: return cudaErrorIllegalState;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return cudaErrorStreamCaptureUnsupported;
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return cudaErrorStreamCaptureInvalidated;
    case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: return cudaErrorStreamCaptureImplicit;
    default: return cudaErrorUnknown;
    }
}

/* Every exported call returns through here: a failure is the thread's last error (cudaErrorNotReady
 * is none). */
static cudaError_t ret(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        last_error = e;
    return e;
}
#define RET_CU(call) ret(from_cu(call))

/* The per-thread variants (PFN_cuMemcpyDtoH_v7000_ptds, same signature) date from 7.0. */
static int resolve(driver *d, cuuint64_t flags)
{
    int ptds = flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
#define RESOLVE(field, name, version)                                                                                  \
    if (rt.get_proc(#name, (void **)&d->field, ptds && version < 7000 ? 7000 : version, flags, NULL) !=                \
            CUDA_SUCCESS ||                                                                                            \
        !d->field)                                                                                                     \
        return -1;
    DRIVER_FNS(RESOLVE)
#undef RESOLVE
    return 0;
}

static void runtime_init(void)
{
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!libcuda || !(*(void **)&rt.get_proc = dlsym(libcuda, "cuGetProcAddress_v2")) ||
        resolve(&rt.legacy, CU_GET_PROC_ADDRESS_LEGACY_STREAM) ||
        resolve(&rt.ptds, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) {
        rt.init_error = cudaErrorInsufficientDriver;
        return;
    }
    int version = 0;
    if (rt.legacy.driver_version(&version) != CUDA_SUCCESS || version < CUDART_VERSION)
        rt.init_error = cudaErrorInsufficientDriver;
    else if ((rt.init_error = from_cu(rt.legacy.init(0))) == cudaSuccess)
        rt.init_error = from_cu(rt.legacy.device_count(&rt.device_count));
    if (rt.init_error == cudaSuccess && rt.device_count == 0)
        rt.init_error = cudaErrorNoDevice;
    if (rt.device_count > 16)
        rt.device_count = 16;
}

static cudaError_t runtime_ready(void)
{
    pthread_once(&rt.once, runtime_init);
    return rt.init_error;
}

/* The runtime's lazy context: the primary context of the thread's device, made current. */
static cudaError_t bind_context(void)
{
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess || thread_bound == thread_device)
        return e;
    pthread_mutex_lock(&rt.lock);
    CUresult r = CUDA_SUCCESS;
    if (!rt.primary[thread_device])
        r = rt.legacy.primary_retain(&rt.primary[thread_device], thread_device);
    CUcontext ctx = rt.primary[thread_device];
    pthread_mutex_unlock(&rt.lock);
    if (r == CUDA_SUCCESS)
        r = rt.legacy.ctx_set(ctx);
    if (r == CUDA_SUCCESS)
        thread_bound = thread_device;
    return from_cu(r);
}

/* Every call that works on the device starts here. */
#define ENTER()                                                                                                        \
    do {                                                                                                               \
        cudaError_t e_ = bind_context();                                                                               \
        if (e_ != cudaSuccess)                                                                                         \
            return ret(e_);                                                                                            \
    } while (0)
#define DRV(ptds) (*((ptds) ? &rt.ptds : &rt.legacy))

/* ---- devices ---- */

RT_EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess)
        return ret(e);
    if (!n)
        return ret(cudaErrorInvalidValue);
    *n = rt.device_count;
    return ret(cudaSuccess);
}

RT_EXPORT cudaError_t cudaSetDevice(int device)
{
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess)
        return ret(e);
    if (device < 0 || device >= rt.device_count)
        return ret(cudaErrorInvalidDevice);
    thread_device = device;
    return ret(bind_context());
}

RT_EXPORT cudaError_t cudaGetDevice(int *device)
{
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess)
        return ret(e);
    if (!device)
        return ret(cudaErrorInvalidValue);
    *device = thread_device;
    return ret(cudaSuccess);
}

RT_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    ENTER();
    return RET_CU(rt.legacy.ctx_sync(NULL)); /* cuCtxSynchronize_v2: NULL is the current context */
}

RT_EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return ret(cudaErrorInvalidValue);
    *v = 0; /* no driver: 0, and success */
    pthread_once(&rt.once, runtime_init);
    if (rt.legacy.driver_version)
        rt.legacy.driver_version(v);
    return ret(cudaSuccess);
}

RT_EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v)
        return ret(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return ret(cudaSuccess);
}

/* ---- memory ---- */

RT_EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
    ENTER();
    if (!p)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    return ret(size ? RET_CU(rt.legacy.mem_alloc((CUdeviceptr *)p, size)) : cudaSuccess);
}

RT_EXPORT cudaError_t cudaMallocManaged(void **p, size_t size, unsigned flags)
{
    ENTER();
    if (!p)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    return ret(size ? RET_CU(rt.legacy.mem_alloc_managed((CUdeviceptr *)p, size, flags)) : cudaSuccess);
}

RT_EXPORT cudaError_t cudaFree(void *p)
{
    ENTER(); /* cudaFree(NULL) is the idiom that initialises the context */
    return ret(p ? RET_CU(rt.legacy.mem_free((CUdeviceptr)p)) : cudaSuccess);
}

RT_EXPORT cudaError_t cudaMallocHost(void **p, size_t size)
{
    ENTER();
    if (!p)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    return ret(size ? RET_CU(rt.legacy.mem_alloc_host(p, size)) : cudaSuccess);
}

RT_EXPORT cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags)
{
    ENTER();
    if (!p)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    /* cudaHostAllocPortable/Mapped/WriteCombined have the values of CU_MEMHOSTALLOC_* */
    return ret(size ? RET_CU(rt.legacy.mem_host_alloc(p, size, flags)) : cudaSuccess);
}

RT_EXPORT cudaError_t cudaFreeHost(void *p)
{
    ENTER();
    return ret(p ? RET_CU(rt.legacy.mem_free_host(p)) : cudaSuccess);
}

RT_EXPORT cudaError_t cudaHostRegister(void *p, size_t size, unsigned flags)
{
    ENTER();
    return RET_CU(rt.legacy.host_register(p, size, flags));
}

RT_EXPORT cudaError_t cudaHostUnregister(void *p)
{
    ENTER();
    return RET_CU(rt.legacy.host_unregister(p));
}

/* ---- copies and memsets ---- */

static cudaError_t memcpy_kind(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s,
                               int async, int ptds)
{
    ENTER();
    const driver *d = &DRV(ptds);
    CUdeviceptr dd = (CUdeviceptr)dst, sd = (CUdeviceptr)src;
    CUresult r;
    switch (kind) {
    case cudaMemcpyHostToDevice: r = async ? d->memcpy_htod_async(dd, src, n, s) : d->memcpy_htod(dd, src, n); break;
    case cudaMemcpyDeviceToHost: r = async ? d->memcpy_dtoh_async(dst, sd, n, s) : d->memcpy_dtoh(dst, sd, n); break;
    case cudaMemcpyDeviceToDevice: r = async ? d->memcpy_dtod_async(dd, sd, n, s) : d->memcpy_dtod(dd, sd, n); break;
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault: r = async ? d->memcpy_async(dd, sd, n, s) : d->memcpy(dd, sd, n); break;
    default: return ret(cudaErrorInvalidMemcpyDirection);
    }
    return RET_CU(r);
}

RT_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    return ret(memcpy_kind(dst, src, n, k, NULL, 0, 0));
}
RT_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    return ret(memcpy_kind(dst, src, n, k, NULL, 0, 1));
}
RT_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    return ret(memcpy_kind(dst, src, n, k, s, 1, 0));
}
RT_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    return ret(memcpy_kind(dst, src, n, k, s, 1, 1));
}

static cudaError_t memset_bytes(void *p, int value, size_t n, cudaStream_t s, int async, int ptds)
{
    ENTER();
    const driver *d = &DRV(ptds);
    return RET_CU(async ? d->memset_d8_async((CUdeviceptr)p, (unsigned char)value, n, s)
                        : d->memset_d8((CUdeviceptr)p, (unsigned char)value, n));
}

RT_EXPORT cudaError_t cudaMemset(void *p, int v, size_t n) { return ret(memset_bytes(p, v, n, NULL, 0, 0)); }
RT_EXPORT cudaError_t cudaMemset_ptds(void *p, int v, size_t n) { return ret(memset_bytes(p, v, n, NULL, 0, 1)); }
RT_EXPORT cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    return ret(memset_bytes(p, v, n, s, 1, 0));
}
RT_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *p, int v, size_t n, cudaStream_t s)
{
    return ret(memset_bytes(p, v, n, s, 1, 1));
}

/* ---- streams and events (cudaStream_t is CUstream, cudaEvent_t is CUevent) ---- */

static cudaError_t stream_create(cudaStream_t *s, unsigned flags)
{
    ENTER();
    return from_cu(rt.legacy.stream_create(s, flags)); /* cudaStreamNonBlocking == CU_STREAM_NON_BLOCKING */
}

RT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    return ret(stream_create(s, flags));
}
RT_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s) { return ret(stream_create(s, cudaStreamDefault)); }

RT_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    ENTER();
    return RET_CU(rt.legacy.stream_destroy(s));
}

static cudaError_t stream_sync(cudaStream_t s, int ptds)
{
    ENTER();
    return RET_CU(DRV(ptds).stream_sync(s));
}

RT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s) { return ret(stream_sync(s, 0)); }
RT_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s) { return ret(stream_sync(s, 1)); }

RT_EXPORT cudaError_t cudaStreamQuery(cudaStream_t s)
{
    ENTER();
    return RET_CU(rt.legacy.stream_query(s));
}

static cudaError_t stream_wait_event(cudaStream_t s, cudaEvent_t e, unsigned flags, int ptds)
{
    ENTER();
    return RET_CU(DRV(ptds).stream_wait_event(s, e, flags));
}

RT_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f)
{
    return ret(stream_wait_event(s, e, f, 0));
}
RT_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned f)
{
    return ret(stream_wait_event(s, e, f, 1));
}

RT_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    ENTER();
    return RET_CU(rt.legacy.event_create(e, CU_EVENT_DEFAULT));
}

static cudaError_t event_record(cudaEvent_t e, cudaStream_t s, int ptds)
{
    ENTER();
    return RET_CU(DRV(ptds).event_record(e, s));
}

RT_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return ret(event_record(e, s, 0)); }
RT_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s) { return ret(event_record(e, s, 1)); }

RT_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    ENTER();
    return RET_CU(rt.legacy.event_sync(e));
}

RT_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    ENTER();
    return RET_CU(rt.legacy.event_destroy(e));
}

/* ---- pointers ---- */

RT_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr)
{
    ENTER();
    if (!attr)
        return ret(cudaErrorInvalidValue);
    unsigned type = 0;
    int managed = 0, device = 0;
    CUdeviceptr p = (CUdeviceptr)ptr;
    CUresult r = rt.legacy.pointer_attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
    memset(attr, 0, sizeof *attr);
    if (r == CUDA_ERROR_INVALID_VALUE) { /* memory the driver does not know */
        attr->type = cudaMemoryTypeUnregistered;
        attr->device = cudaInvalidDeviceId;
        attr->hostPointer = (void *)ptr;
        return ret(cudaSuccess);
    }
    if (r == CUDA_SUCCESS)
        r = rt.legacy.pointer_attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
    if (r == CUDA_SUCCESS)
        r = rt.legacy.pointer_attr(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
    if (r != CUDA_SUCCESS)
        return RET_CU(r);
    attr->type = managed                      ? cudaMemoryTypeManaged
                 : type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost
                                              : cudaMemoryTypeDevice;
    attr->device = device;
    attr->devicePointer = (void *)ptr;
    attr->hostPointer = attr->type == cudaMemoryTypeDevice ? NULL : (void *)ptr;
    return ret(cudaSuccess);
}

/* ---- driver entry points: straight to cuGetProcAddress ---- */

static cudaError_t entry_point(const char *symbol, void **fn, unsigned version, unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *status)
{
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess)
        return ret(e);
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = rt.get_proc(symbol, fn, (int)version, flags, &st);
    if (status) /* cudaDriverEntryPoint* and CU_GET_PROC_ADDRESS_* share their values */
        *status = (enum cudaDriverEntryPointQueryResult)st;
    return RET_CU(r);
}

RT_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                              enum cudaDriverEntryPointQueryResult *status)
{
    return ret(entry_point(symbol, fn, CUDART_VERSION, flags, status));
}

RT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned version,
                                                       unsigned long long flags,
                                                       enum cudaDriverEntryPointQueryResult *status)
{
    return ret(entry_point(symbol, fn, version, flags, status));
}

/* What programs built with per-thread default streams call: the same lookups. */
RT_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **fn, unsigned long long flags,
                                                   enum cudaDriverEntryPointQueryResult *status)
{
    return ret(entry_point(symbol, fn, CUDART_VERSION, flags, status));
}

RT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **fn, unsigned version,
                                                            unsigned long long flags,
                                                            enum cudaDriverEntryPointQueryResult *status)
{
    return ret(entry_point(symbol, fn, version, flags, status));
}

/* ---- more memory: pitched, stream-ordered, pools ---- */

RT_EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    ENTER();
    if (!p || !pitch)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    return ret(width && height ? from_cu(rt.legacy.mem_alloc_pitch((CUdeviceptr *)p, pitch, width, height, 16))
                               : cudaSuccess);
}

static cudaError_t malloc_async(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s, int ptds)
{
    ENTER();
    if (!p)
        return cudaErrorInvalidValue;
    *p = NULL;
    return from_cu(pool ? DRV(ptds).mem_alloc_pool((CUdeviceptr *)p, size, (CUmemoryPool)pool, s)
                        : DRV(ptds).mem_alloc_async((CUdeviceptr *)p, size, s));
}

RT_EXPORT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
    return ret(malloc_async(p, size, NULL, s, 0));
}
RT_EXPORT cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t s)
{
    return ret(malloc_async(p, size, NULL, s, 1));
}

/* A pool that is NULL is no pool: cudaErrorInvalidValue, not the device's default pool. */
static cudaError_t malloc_from_pool(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s, int ptds)
{
    return pool ? malloc_async(p, size, pool, s, ptds) : cudaErrorInvalidValue;
}

RT_EXPORT cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
    return ret(malloc_from_pool(p, size, pool, s, 0));
}
RT_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
    return ret(malloc_from_pool(p, size, pool, s, 1));
}

static cudaError_t free_async(void *p, cudaStream_t s, int ptds)
{
    ENTER();
    return from_cu(DRV(ptds).mem_free_async((CUdeviceptr)p, s));
}

RT_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { return ret(free_async(p, s, 0)); }
RT_EXPORT cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s) { return ret(free_async(p, s, 1)); }

/* cudaMemPoolProps is CUmemPoolProps, field for field. */
RT_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    ENTER();
    return RET_CU(rt.legacy.pool_create((CUmemoryPool *)pool, (const CUmemPoolProps *)props));
}

RT_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    ENTER();
    return RET_CU(rt.legacy.pool_destroy((CUmemoryPool)pool));
}

RT_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    ENTER();
    return RET_CU(rt.legacy.pool_trim((CUmemoryPool)pool, keep));
}

/* ---- 2-D and peer copies ---- */

static cudaError_t memcpy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                             enum cudaMemcpyKind kind, cudaStream_t s, int async, int ptds)
{
    ENTER();
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    static const CUmemorytype src_type[] = {CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE,
                                            CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_UNIFIED};
    static const CUmemorytype dst_type[] = {CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST,
                                            CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_UNIFIED};
    if ((unsigned)kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = src_type[kind];
    c.dstMemoryType = dst_type[kind];
    c.srcHost = src;
    c.srcDevice = (CUdeviceptr)src;
    c.srcPitch = spitch;
    c.dstHost = dst;
    c.dstDevice = (CUdeviceptr)dst;
    c.dstPitch = dpitch;
    c.WidthInBytes = width;
    c.Height = height;
    return from_cu(async ? DRV(ptds).memcpy_2d_async(&c, s) : DRV(ptds).memcpy_2d(&c));
}

RT_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                   enum cudaMemcpyKind k)
{
    return ret(memcpy_2d(dst, dp, src, sp, w, h, k, NULL, 0, 0));
}
RT_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                        enum cudaMemcpyKind k)
{
    return ret(memcpy_2d(dst, dp, src, sp, w, h, k, NULL, 0, 1));
}
RT_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                        enum cudaMemcpyKind k, cudaStream_t s)
{
    return ret(memcpy_2d(dst, dp, src, sp, w, h, k, s, 1, 0));
}
RT_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                             enum cudaMemcpyKind k, cudaStream_t s)
{
    return ret(memcpy_2d(dst, dp, src, sp, w, h, k, s, 1, 1));
}

/* A device's primary context, retained once for good. */
static CUresult primary(int device, CUcontext *ctx)
{
    pthread_mutex_lock(&rt.lock);
    CUresult r = CUDA_SUCCESS;
    if (!rt.primary[device])
        r = rt.legacy.primary_retain(&rt.primary[device], device);
    *ctx = rt.primary[device];
    pthread_mutex_unlock(&rt.lock);
    return r;
}

static cudaError_t memcpy_peer(void *dst, int dd, const void *src, int sd, size_t n, cudaStream_t s, int async)
{
    ENTER();
    if (dd < 0 || sd < 0 || dd >= rt.device_count || sd >= rt.device_count)
        return cudaErrorInvalidDevice;
    CUcontext dc, sc;
    CUresult r = primary(dd, &dc);
    if (r == CUDA_SUCCESS)
        r = primary(sd, &sc);
    if (r == CUDA_SUCCESS)
        r = async ? rt.legacy.memcpy_peer_async((CUdeviceptr)dst, dc, (CUdeviceptr)src, sc, n, s)
                  : rt.legacy.memcpy_peer((CUdeviceptr)dst, dc, (CUdeviceptr)src, sc, n);
    return from_cu(r);
}

RT_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n)
{
    return ret(memcpy_peer(dst, dd, src, sd, n, NULL, 0));
}
RT_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n, cudaStream_t s)
{
    return ret(memcpy_peer(dst, dd, src, sd, n, s, 1));
}

/* ---- more streams and events ---- */

RT_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority)
{
    ENTER();
    return RET_CU(rt.legacy.stream_create_prio(s, flags, priority));
}

static cudaError_t stream_query(cudaStream_t s, int ptds)
{
    ENTER();
    return from_cu(DRV(ptds).stream_query(s));
}

RT_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t s) { return ret(stream_query(s, 1)); }

/* cudaEventDefault/BlockingSync/DisableTiming/Interprocess are the CU_EVENT_* values. */
RT_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    ENTER();
    return RET_CU(rt.legacy.event_create(e, flags));
}

RT_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    ENTER();
    return RET_CU(rt.legacy.event_query(e));
}

static cudaError_t event_record_flags(cudaEvent_t e, cudaStream_t s, unsigned flags, int ptds)
{
    ENTER();
    return from_cu(DRV(ptds).event_record_flags(e, s, flags));
}

RT_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned f)
{
    return ret(event_record_flags(e, s, f, 0));
}
RT_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t e, cudaStream_t s, unsigned f)
{
    return ret(event_record_flags(e, s, f, 1));
}

/* ---- stream capture and graphs (the capture modes and statuses are the CU_* values) ---- */

static cudaError_t begin_capture(cudaStream_t s, enum cudaStreamCaptureMode mode, int ptds)
{
    ENTER();
    return from_cu(DRV(ptds).begin_capture(s, (CUstreamCaptureMode)mode));
}

RT_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode m)
{
    return ret(begin_capture(s, m, 0));
}
RT_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t s, enum cudaStreamCaptureMode m)
{
    return ret(begin_capture(s, m, 1));
}

static cudaError_t end_capture(cudaStream_t s, cudaGraph_t *g, int ptds)
{
    ENTER();
    return from_cu(DRV(ptds).end_capture(s, (CUgraph *)g));
}

RT_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) { return ret(end_capture(s, g, 0)); }
RT_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t *g) { return ret(end_capture(s, g, 1)); }

static cudaError_t is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *status, int ptds)
{
    ENTER();
    return from_cu(DRV(ptds).is_capturing(s, (CUstreamCaptureStatus *)status));
}

RT_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    return ret(is_capturing(s, st, 0));
}
RT_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    return ret(is_capturing(s, st, 1));
}

RT_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    ENTER();
    return RET_CU(rt.legacy.graph_instantiate((CUgraphExec *)exec, (CUgraph)graph, flags));
}

RT_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    ENTER();
    return RET_CU(rt.legacy.graph_exec_destroy((CUgraphExec)exec));
}

RT_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    ENTER();
    return RET_CU(rt.legacy.graph_destroy((CUgraph)graph));
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t s, int ptds)
{
    ENTER();
    return from_cu(DRV(ptds).graph_launch((CUgraphExec)exec, s));
}

RT_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) { return ret(graph_launch(exec, s, 0)); }
RT_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t s)
{
    return ret(graph_launch(exec, s, 1));
}

/* ---- kernels: nvcc's registration, loaded lazily through the driver ---- */

typedef struct fatbin {
    const void *image;   /* the simcuda_image its wrapper holds */
    CUmodule module[16]; /* per device, once loaded */
} fatbin;

static struct kernel {
    const void *stub; /* the host stub programs launch by */
    fatbin *bin;
    const char *name;
    CUfunction fn[16]; /* per device, once looked up */
} kernels[64];
static int n_kernels;

/* __fatBinC_Wrapper_t, which nvcc's host code passes (crt/host_runtime.h). */
typedef struct {
    int magic, version;
    const void *data;
    void *filename_or_fatbins;
} fatbin_wrapper;

RT_EXPORT void **__cudaRegisterFatBinary(void *fat_cubin)
{
    fatbin *bin = calloc(1, sizeof *bin);
    if (bin && fat_cubin && ((fatbin_wrapper *)fat_cubin)->magic == 0x466243b1)
        bin->image = ((fatbin_wrapper *)fat_cubin)->data;
    return (void **)bin;
}

RT_EXPORT void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }

RT_EXPORT void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                                      int thread_limit, uint3 *tid, uint3 *bid, dim3 *block, dim3 *grid, int *wsize)
{
    (void)device_fun;
    (void)thread_limit;
    (void)tid;
    (void)bid;
    (void)block;
    (void)grid;
    (void)wsize;
    pthread_mutex_lock(&rt.lock);
    if (handle && n_kernels < 64)
        kernels[n_kernels++] = (struct kernel){.stub = host_fun, .bin = (fatbin *)handle, .name = device_name};
    pthread_mutex_unlock(&rt.lock);
}

/* The module stays loaded: its kernels' stubs may outlive the registration in this simulator. */
RT_EXPORT void __cudaUnregisterFatBinary(void **handle) { (void)handle; }

/* The kernel behind a host stub, on the calling thread's device (context bound).  A pointer that is
 * no registered stub is cudaErrorInvalidResourceHandle, as CUDA 13 answers (it takes it for a
 * cudaKernel_t, and finds none). */
static cudaError_t kernel_of(const void *stub, CUfunction *f)
{
    pthread_mutex_lock(&rt.lock);
    struct kernel *k = NULL;
    for (int i = 0; i < n_kernels; i++)
        if (kernels[i].stub == stub)
            k = &kernels[i];
    CUresult r = CUDA_SUCCESS;
    if (k && !k->fn[thread_device]) {
        fatbin *bin = k->bin;
        if (!bin->module[thread_device])
            r = bin->image ? rt.legacy.module_load(&bin->module[thread_device], bin->image) : CUDA_ERROR_INVALID_IMAGE;
        if (r == CUDA_SUCCESS)
            r = rt.legacy.module_function(&k->fn[thread_device], bin->module[thread_device], k->name);
    }
    *f = k ? k->fn[thread_device] : NULL;
    pthread_mutex_unlock(&rt.lock);
    return !k                          ? cudaErrorInvalidResourceHandle
           : r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction
                                       : from_cu(r);
}

/* What the runtime refuses before any driver call, as CUDA 13 answers on an H100: a grid or
 * block with a dimension of 0, or a block of more than 1024 threads, cudaErrorInvalidValue. */
static cudaError_t bad_geometry(dim3 grid, dim3 block)
{
    return !grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z ||
                   (unsigned long long)block.x * block.y * block.z > 1024
               ? cudaErrorInvalidValue
               : cudaSuccess;
}

static cudaError_t launch(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t s, int ptds,
                          int cooperative)
{
    ENTER();
    CUfunction f;
    cudaError_t e = kernel_of(func, &f);
    if (e != cudaSuccess)
        return e;
    if ((e = bad_geometry(grid, block)) != cudaSuccess)
        return e;
    const driver *d = &DRV(ptds);
    return from_cu(
        cooperative
            ? d->launch_cooperative(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem, s, args)
            : d->launch(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem, s, args, NULL));
}

RT_EXPORT cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    return ret(launch(f, g, b, args, shm, s, 0, 0));
}
RT_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *f, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    return ret(launch(f, g, b, args, shm, s, 1, 0));
}
RT_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                                                  cudaStream_t s)
{
    return ret(launch(f, g, b, args, shm, s, 0, 1));
}
RT_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                                                       cudaStream_t s)
{
    return ret(launch(f, g, b, args, shm, s, 1, 1));
}

/* The launch attributes are not simulated: a configuration launches as its geometry says. */
static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func, void **args, int ptds)
{
    ENTER();
    if (!config)
        return cudaErrorInvalidValue;
    CUfunction f;
    cudaError_t e = kernel_of(func, &f);
    if (e != cudaSuccess)
        return e;
    if ((e = bad_geometry(config->gridDim, config->blockDim)) != cudaSuccess)
        return e;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = config->gridDim.x;
    c.gridDimY = config->gridDim.y;
    c.gridDimZ = config->gridDim.z;
    c.blockDimX = config->blockDim.x;
    c.blockDimY = config->blockDim.y;
    c.blockDimZ = config->blockDim.z;
    c.sharedMemBytes = (unsigned)config->dynamicSmemBytes;
    c.hStream = config->stream;
    return from_cu(DRV(ptds).launch_ex(&c, f, args, NULL));
}

RT_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *f, void **args)
{
    return ret(launch_ex(c, f, args, 0));
}
RT_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *c, const void *f, void **args)
{
    return ret(launch_ex(c, f, args, 1));
}

RT_EXPORT cudaError_t cudaFuncGetParamInfo(const void *func, size_t index, size_t *offset, size_t *size)
{
    ENTER();
    CUfunction f;
    cudaError_t e = kernel_of(func, &f);
    return ret(e != cudaSuccess ? e : from_cu(rt.legacy.func_param_info(f, index, offset, size)));
}

RT_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    ENTER();
    if (!name)
        return ret(cudaErrorInvalidValue);
    CUfunction f;
    cudaError_t e = kernel_of(func, &f);
    return ret(e != cudaSuccess ? e : from_cu(rt.legacy.func_name(name, f)));
}

/* ---- host functions and stream callbacks ---- */

static cudaError_t launch_host_func(cudaStream_t s, cudaHostFn_t fn, void *data, int ptds)
{
    ENTER();
    return from_cu(DRV(ptds).launch_host_func(s, fn, data));
}

RT_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *data)
{
    return ret(launch_host_func(s, fn, data, 0));
}
RT_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t s, cudaHostFn_t fn, void *data)
{
    return ret(launch_host_func(s, fn, data, 1));
}

/* The driver calls back with a CUresult: the runtime's callback gets the runtime's error. */
typedef struct callback_box {
    cudaStreamCallback_t fn;
    void *data;
} callback_box;

static void CUDA_CB callback_trampoline(CUstream s, CUresult status, void *box)
{
    callback_box b = *(callback_box *)box;
    free(box);
    b.fn(s, from_cu(status), b.data);
}

static cudaError_t add_callback(cudaStream_t s, cudaStreamCallback_t fn, void *data, unsigned flags, int ptds)
{
    ENTER();
    if (!fn)
        return cudaErrorInvalidValue;
    callback_box *box = malloc(sizeof *box);
    if (!box)
        return cudaErrorMemoryAllocation;
    *box = (callback_box){fn, data};
    CUresult r = DRV(ptds).stream_add_callback(s, callback_trampoline, box, flags);
    if (r != CUDA_SUCCESS)
        free(box);
    return from_cu(r);
}

RT_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t fn, void *data, unsigned flags)
{
    return ret(add_callback(s, fn, data, flags, 0));
}
RT_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t s, cudaStreamCallback_t fn, void *data, unsigned flags)
{
    return ret(add_callback(s, fn, data, flags, 1));
}

/* ---- errors ---- */

/* The one call that does not return through ret(): it resets what it returns. */
RT_EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

RT_EXPORT cudaError_t cudaPeekAtLastError(void) { return ret(last_error); }

static const struct {
    cudaError_t code;
    const char *name, *text;
} errors[] = {
#define E(code, text) {code, #code, text},
    // clang-format off
    E(cudaSuccess, "no error")
    E(cudaErrorInvalidValue, "invalid argument")
    E(cudaErrorMemoryAllocation, "out of memory")
    E(cudaErrorInitializationError, "initialization error")
    E(cudaErrorCudartUnloading, "driver shutting down")
    E(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")
    E(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version")
    E(cudaErrorNoDevice, "no CUDA-capable device is detected")
    E(cudaErrorInvalidDevice, "invalid device ordinal")
    E(cudaErrorDeviceUninitialized, "invalid device context")
    E(cudaErrorInvalidResourceHandle, "invalid resource handle")
    E(cudaErrorSymbolNotFound, "named symbol not found")
    E(cudaErrorNotReady, "device not ready")
    E(cudaErrorIllegalAddress, "an illegal memory access was encountered")
    E(cudaErrorLaunchFailure, "unspecified launch failure")
    E(cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped")
    E(cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region")
    E(cudaErrorNotPermitted, "operation not permitted")
    E(cudaErrorNotSupported, "operation not supported")
    E(cudaErrorInvalidConfiguration, "invalid configuration argument")
    E(cudaErrorInvalidPitchValue, "invalid pitch argument")
    E(cudaErrorInvalidDeviceFunction, "invalid device function")
    E(cudaErrorInvalidKernelImage, "device kernel image is invalid")
    E(cudaErrorIllegalState, "the operation is not permitted when the resource is in this state")
    E(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing")
    E(cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture")
    E(cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream")
    E(cudaErrorUnknown, "unknown error")
// clang-format on
#undef E
};

RT_EXPORT const char *cudaGetErrorName(cudaError_t e)
{
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == e)
            return errors[i].name;
    return "cudaErrorUnknown";
}

RT_EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == e)
            return errors[i].text;
    return "unrecognized error code";
}
