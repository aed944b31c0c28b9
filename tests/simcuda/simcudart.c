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
 * CUresult codes are mapped to cudaError_t; the last error is kept per thread.  The exports
 * carry the version node libcudart.so.13 (simcudart.map).
 *
 * Simplified: only the subset below; cudaMalloc(0) gives NULL without asking the driver;
 * cudaPointerGetAttributes answers cudaMemoryTypeUnregistered for memory the driver does not
 * know, as CUDA 11+ does. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1 /* declares both cudaMemcpy and cudaMemcpy_ptds */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define RT_EXPORT __attribute__((visibility("default")))

/* Driver entry points: (field, base name, the CUDA version of the ABI this runtime was written
 * against).  Like the real runtime, each is asked for with its own ABI version, so the function
 * and its cudaTypedefs.h type PFN_<name>_v<version> always agree; cuCtxSynchronize is asked for
 * as of 13000, i.e. cuCtxSynchronize_v2 (CUcontext ctx). */
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
    X(event_destroy, cuEventDestroy, 4000)

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
    default: return cudaErrorUnknown;
    }
}

/* Records a failure as the thread's last error (cudaErrorNotReady is not one). */
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
#define RESOLVE(field, name, version)                                                                   \
    if (rt.get_proc(#name, (void **)&d->field, ptds && version < 7000 ? 7000 : version, flags, NULL) != \
            CUDA_SUCCESS || !d->field)                                                                  \
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
#define ENTER()                                                                                         \
    do {                                                                                                \
        cudaError_t e_ = bind_context();                                                                \
        if (e_ != cudaSuccess)                                                                          \
            return ret(e_);                                                                             \
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
    return cudaSuccess;
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
    return cudaSuccess;
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
    return cudaSuccess;
}

RT_EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v)
        return ret(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

/* ---- memory ---- */

RT_EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
    ENTER();
    if (!p)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    return size ? RET_CU(rt.legacy.mem_alloc((CUdeviceptr *)p, size)) : cudaSuccess;
}

RT_EXPORT cudaError_t cudaMallocManaged(void **p, size_t size, unsigned flags)
{
    ENTER();
    if (!p)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    return size ? RET_CU(rt.legacy.mem_alloc_managed((CUdeviceptr *)p, size, flags)) : cudaSuccess;
}

RT_EXPORT cudaError_t cudaFree(void *p)
{
    ENTER(); /* cudaFree(NULL) is the idiom that initialises the context */
    return p ? RET_CU(rt.legacy.mem_free((CUdeviceptr)p)) : cudaSuccess;
}

RT_EXPORT cudaError_t cudaMallocHost(void **p, size_t size)
{
    ENTER();
    if (!p)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    return size ? RET_CU(rt.legacy.mem_alloc_host(p, size)) : cudaSuccess;
}

RT_EXPORT cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags)
{
    ENTER();
    if (!p)
        return ret(cudaErrorInvalidValue);
    *p = NULL;
    /* cudaHostAllocPortable/Mapped/WriteCombined have the values of CU_MEMHOSTALLOC_* */
    return size ? RET_CU(rt.legacy.mem_host_alloc(p, size, flags)) : cudaSuccess;
}

RT_EXPORT cudaError_t cudaFreeHost(void *p)
{
    ENTER();
    return p ? RET_CU(rt.legacy.mem_free_host(p)) : cudaSuccess;
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
    case cudaMemcpyHostToDevice:
        r = async ? d->memcpy_htod_async(dd, src, n, s) : d->memcpy_htod(dd, src, n);
        break;
    case cudaMemcpyDeviceToHost:
        r = async ? d->memcpy_dtoh_async(dst, sd, n, s) : d->memcpy_dtoh(dst, sd, n);
        break;
    case cudaMemcpyDeviceToDevice:
        r = async ? d->memcpy_dtod_async(dd, sd, n, s) : d->memcpy_dtod(dd, sd, n);
        break;
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
        r = async ? d->memcpy_async(dd, sd, n, s) : d->memcpy(dd, sd, n);
        break;
    default:
        return ret(cudaErrorInvalidMemcpyDirection);
    }
    return RET_CU(r);
}

RT_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) { return memcpy_kind(dst, src, n, k, NULL, 0, 0); }
RT_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) { return memcpy_kind(dst, src, n, k, NULL, 0, 1); }
RT_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s) { return memcpy_kind(dst, src, n, k, s, 1, 0); }
RT_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s) { return memcpy_kind(dst, src, n, k, s, 1, 1); }

static cudaError_t memset_bytes(void *p, int value, size_t n, cudaStream_t s, int async, int ptds)
{
    ENTER();
    const driver *d = &DRV(ptds);
    return RET_CU(async ? d->memset_d8_async((CUdeviceptr)p, (unsigned char)value, n, s)
                        : d->memset_d8((CUdeviceptr)p, (unsigned char)value, n));
}

RT_EXPORT cudaError_t cudaMemset(void *p, int v, size_t n) { return memset_bytes(p, v, n, NULL, 0, 0); }
RT_EXPORT cudaError_t cudaMemset_ptds(void *p, int v, size_t n) { return memset_bytes(p, v, n, NULL, 0, 1); }
RT_EXPORT cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) { return memset_bytes(p, v, n, s, 1, 0); }
RT_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *p, int v, size_t n, cudaStream_t s) { return memset_bytes(p, v, n, s, 1, 1); }

/* ---- streams and events (cudaStream_t is CUstream, cudaEvent_t is CUevent) ---- */

RT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    ENTER();
    return RET_CU(rt.legacy.stream_create(s, flags)); /* cudaStreamNonBlocking == CU_STREAM_NON_BLOCKING */
}

RT_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

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

RT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s) { return stream_sync(s, 0); }
RT_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s) { return stream_sync(s, 1); }

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

RT_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f) { return stream_wait_event(s, e, f, 0); }
RT_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned f) { return stream_wait_event(s, e, f, 1); }

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

RT_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return event_record(e, s, 0); }
RT_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s) { return event_record(e, s, 1); }

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
        return cudaSuccess;
    }
    if (r == CUDA_SUCCESS)
        r = rt.legacy.pointer_attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
    if (r == CUDA_SUCCESS)
        r = rt.legacy.pointer_attr(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
    if (r != CUDA_SUCCESS)
        return RET_CU(r);
    attr->type = managed ? cudaMemoryTypeManaged : type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
    attr->device = device;
    attr->devicePointer = (void *)ptr;
    attr->hostPointer = attr->type == cudaMemoryTypeDevice ? NULL : (void *)ptr;
    return cudaSuccess;
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
    return entry_point(symbol, fn, CUDART_VERSION, flags, status);
}

RT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned version,
                                                       unsigned long long flags,
                                                       enum cudaDriverEntryPointQueryResult *status)
{
    return entry_point(symbol, fn, version, flags, status);
}

/* ---- errors ---- */

RT_EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

RT_EXPORT cudaError_t cudaPeekAtLastError(void) { return last_error; }

static const struct { cudaError_t code; const char *name, *text; } errors[] = {
#define E(code, text) {code, #code, text},
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
    E(cudaErrorUnknown, "unknown error")
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
