/* The same planted bugs, reached four ways (one build per way, chosen by a macro):
 *   PATH_RUNTIME with the shared libcudart.so.13    the runtime layer sees the calls
 *   PATH_RUNTIME with the static runtime archive     what plain `nvcc x.cu` builds: only the driver
 *   PATH_GETPROC                                     dlopen("libcuda.so.1") + cuGetProcAddress
 *   PATH_DLSYM                                       dlopen("libcuda.so.1") + dlsym of each name
 * Virtual-memory functions come from cudaGetDriverEntryPointByVersion in the runtime builds, as
 * PyTorch gets them.  run_paths.py runs each under hipshadow and compares the findings.
 * The bugs, in order: a D2H past the end of an allocation; a copy spanning two adjacent maps
 * of a reservation (clean); one past the last map; one into reserved but unmapped space; a
 * D2D overrun of an allocation on device 1; a D2H from freed memory (last: the simulated fault
 * is sticky). */
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct api {
    int (*set_device)(int device);
    int (*alloc)(CUdeviceptr *p, size_t n);
    int (*d2h)(void *dst, CUdeviceptr src, size_t n);
    int (*d2d)(CUdeviceptr dst, CUdeviceptr src, size_t n);
    int (*release)(CUdeviceptr p);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
} api;

static api a;

#if defined(PATH_RUNTIME)
static int rt_set_device(int d) { return cudaSetDevice(d); }
static int rt_alloc(CUdeviceptr *p, size_t n) { return cudaMalloc((void **)p, n); }
static int rt_d2h(void *dst, CUdeviceptr src, size_t n)
{
    return cudaMemcpy(dst, (void *)src, n, cudaMemcpyDeviceToHost);
}
static int rt_d2d(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return cudaMemcpy((void *)dst, (void *)src, n, cudaMemcpyDeviceToDevice);
}
static int rt_free(CUdeviceptr p) { return cudaFree((void *)p); }

static void *entry(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult status;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status) != cudaSuccess || !fn) {
        fprintf(stderr, "no driver entry point %s\n", name);
        exit(99);
    }
    return fn;
}

static void load(void)
{
    a = (api){rt_set_device, rt_alloc, rt_d2h, rt_d2d, rt_free};
    *(void **)&a.reserve = entry("cuMemAddressReserve");
    *(void **)&a.create = entry("cuMemCreate");
    *(void **)&a.map = entry("cuMemMap");
    *(void **)&a.set_access = entry("cuMemSetAccess");
}
#else
static CUresult (*cu_init)(unsigned);
static CUresult (*cu_retain)(CUcontext *, CUdevice);
static CUresult (*cu_set_current)(CUcontext);
static CUresult (*cu_alloc)(CUdeviceptr *, size_t);
static CUresult (*cu_d2h)(void *, CUdeviceptr, size_t);
static CUresult (*cu_d2d)(CUdeviceptr, CUdeviceptr, size_t);
static CUresult (*cu_free)(CUdeviceptr);

static int drv_set_device(int d)
{
    CUcontext ctx;
    return cu_retain(&ctx, d) ?: cu_set_current(ctx);
}
static int drv_alloc(CUdeviceptr *p, size_t n) { return cu_alloc(p, n); }
static int drv_d2h(void *dst, CUdeviceptr src, size_t n) { return cu_d2h(dst, src, n); }
static int drv_d2d(CUdeviceptr dst, CUdeviceptr src, size_t n) { return cu_d2d(dst, src, n); }
static int drv_free(CUdeviceptr p) { return cu_free(p); }

static void *driver;

#if defined(PATH_GETPROC)
static CUresult (*get_proc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
static void *entry(const char *name, int version)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult status;
    if (get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || !fn) {
        fprintf(stderr, "cuGetProcAddress(%s) failed\n", name);
        exit(99);
    }
    return fn;
}
#define ENTRY(var, asked, versioned, version) *(void **)&var = entry(asked, version)
#else
static void *entry(const char *name)
{
    void *fn = dlsym(driver, name);
    if (!fn) {
        fprintf(stderr, "dlsym(%s) failed\n", name);
        exit(99);
    }
    return fn;
}
#define ENTRY(var, asked, versioned, version) *(void **)&var = entry(versioned)
#endif

static void load(void)
{
    driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); /* as the static runtime does */
    if (!driver)
        exit(99);
#if defined(PATH_GETPROC)
    *(void **)&get_proc = dlsym(driver, "cuGetProcAddress_v2");
    if (!get_proc)
        exit(99);
#endif
    ENTRY(cu_init, "cuInit", "cuInit", 2000);
    ENTRY(cu_retain, "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", 7000);
    ENTRY(cu_set_current, "cuCtxSetCurrent", "cuCtxSetCurrent", 4000);
    ENTRY(cu_alloc, "cuMemAlloc", "cuMemAlloc_v2", 3020);
    ENTRY(cu_d2h, "cuMemcpyDtoH", "cuMemcpyDtoH_v2", 3020);
    ENTRY(cu_d2d, "cuMemcpyDtoD", "cuMemcpyDtoD_v2", 3020);
    ENTRY(cu_free, "cuMemFree", "cuMemFree_v2", 3020);
    ENTRY(a.reserve, "cuMemAddressReserve", "cuMemAddressReserve", 10020);
    ENTRY(a.create, "cuMemCreate", "cuMemCreate", 10020);
    ENTRY(a.map, "cuMemMap", "cuMemMap", 10020);
    ENTRY(a.set_access, "cuMemSetAccess", "cuMemSetAccess", 10020);
    a.set_device = drv_set_device;
    a.alloc = drv_alloc;
    a.d2h = drv_d2h;
    a.d2d = drv_d2d;
    a.release = drv_free;
    if (cu_init(0) != CUDA_SUCCESS)
        exit(99);
}
#endif

#define MUST(x)                                                                                                        \
    do {                                                                                                               \
        int rc_ = (int)(x);                                                                                            \
        if (rc_) {                                                                                                     \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, rc_);                                          \
            exit(99);                                                                                                  \
        }                                                                                                              \
    } while (0)

int main(void)
{
    static char host[8 << 20];
    load();
    MUST(a.set_device(0));

    /* 1. 1024 bytes past the end of a 4096-byte allocation */
    CUdeviceptr dev;
    MUST(a.alloc(&dev, 4096));
    printf("oob: %d\n", a.d2h(host, dev + 1024, 4096));

    /* 2-4. two adjacent 2 MiB maps at the start of an 8 MiB reservation */
    const size_t G = 2 << 20;
    CUdeviceptr r;
    CUmemGenericAllocationHandle h[2];
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemAccessDesc access = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    MUST(a.reserve(&r, 4 * G, 0, 0, 0));
    for (int i = 0; i < 2; i++) {
        MUST(a.create(&h[i], G, &prop, 0));
        MUST(a.map(r + i * G, G, 0, h[i], 0));
    }
    MUST(a.set_access(r, 2 * G, &access, 1));
    printf("spanning: %d\n", a.d2h(host, r + G / 2, G));          /* clean */
    printf("past last map: %d\n", a.d2h(host, r + G + G / 2, G)); /* G/2 past the second map */
    printf("unmapped: %d\n", a.d2h(host, r + 3 * G, 4096));       /* reserved, never mapped */

    /* 5. device 1: a D2D that reads 512 bytes past an allocation there */
    CUdeviceptr on0, on1;
    MUST(a.alloc(&on0, 8192));
    MUST(a.set_device(1));
    MUST(a.alloc(&on1, 4096));
    printf("device 1: %d\n", a.d2d(on0, on1 + 512, 4096));
    MUST(a.set_device(0));

    /* 6. use after free */
    CUdeviceptr gone;
    MUST(a.alloc(&gone, 4096));
    MUST(a.release(gone));
    printf("uaf: %d\n", a.d2h(host, gone, 4096));
    return 0;
}
