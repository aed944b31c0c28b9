/* A sub-allocator that describes its arena with NVTX v3's memory API (nvToolsExtMem.h), one
 * planted bug per scenario; run under hipshadow, whose preload library is the NVTX injection.
 * Built for HIP (the simulator), for CUDA (-DNVTX_CASE_CUDA: the simulator, and by nvcc for a
 * real GPU through tests/gpu/nvtx_regions_gpu.cu, which adds a kernel: NVTX_CASE_KERNEL).
 *
 *   clean            every call of the API used as meant: zero findings
 *   overrun          a D2H 512 bytes past region A's end, inside the heap (region-overrun)
 *   resize           region A shrunk to 2048 bytes, then read whole (region-overrun); B grown
 *                    and read whole (nothing)
 *   unregister       region B unregistered, then read (use-after-free, the unregister's stack)
 *   heap_reset       the heap reset, then C memset (use-after-free); a region registered anew
 *                    over A is clean
 *   heap_unregister  the heap unregistered, then A read (use-after-free)
 *   named            A and B named (ASCII, a registered string); B overrun, A read after its
 *                    unregister: both reports name them
 *   read_only        C read-only process-wide: an H2D into it (region-permission), a read of it
 *                    (nothing), and after nvtxMemPermissionsReset the H2D again (nothing)
 *   no_access        A no-access in a permissions object bound to this thread: a read of it
 *                    (region-permission); another thread's read and, after the unbind, this
 *                    thread's (nothing)
 *   kernel_freed     a kernel launched with a pointer into unregistered region A
 *                    (kernel-use-after-free; HIP simulator and nvcc builds only, else exit 77)
 *   kernel_freed_known  the same kernel launched into A while it is registered (nothing), then
 *                    once it is unregistered: a launch of a kernel seen before (the fast path's)
 * Prints "nvtx: tool attached" when NVTX found a tool (the heap's handle is not NULL). */
#include <nvtx3/nvToolsExtMem.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NVTX_CASE_CUDA
#include <cuda_runtime_api.h>
typedef cudaError_t gpu_error;
#define gpu_success cudaSuccess
#define gpu_malloc(p, n) cudaMalloc((p), (n))
#define gpu_free cudaFree
#define gpu_d2h(dst, src, n) cudaMemcpy((dst), (src), (n), cudaMemcpyDeviceToHost)
#define gpu_h2d(dst, src, n) cudaMemcpy((dst), (src), (n), cudaMemcpyHostToDevice)
#define gpu_memset cudaMemset
#define gpu_sync cudaDeviceSynchronize
#define gpu_device_count cudaGetDeviceCount
#else
#include <hip/hip_runtime_api.h>
typedef hipError_t gpu_error;
#define gpu_success hipSuccess
#define gpu_malloc(p, n) hipMalloc((p), (n))
#define gpu_free hipFree
#define gpu_d2h(dst, src, n) hipMemcpy((dst), (src), (n), hipMemcpyDeviceToHost)
#define gpu_h2d(dst, src, n) hipMemcpy((dst), (src), (n), hipMemcpyHostToDevice)
#define gpu_memset hipMemset
#define gpu_sync hipDeviceSynchronize
#define gpu_device_count hipGetDeviceCount
#endif

#ifdef NVTX_CASE_KERNEL
/* The nvcc build's kernel: writes value at p[0] (tests/gpu/nvtx_regions_gpu.cu). */
extern "C" int launch_poke(int *p, int value);
#elif !defined(NVTX_CASE_CUDA)
#include "sim_kernels.h"

/* tests/cases/test_kernels.hip's poke, run by the simulator (sim_kernels.c). */
static int launch_poke(int *p, int value)
{
    static sim_kernels k;
    if (!k.module)
        sim_kernels_load(&k); /* exits 77 where this is not the simulator */
    long long offset = 0;
    void *params[] = {&p, &offset, &value};
    return (int)hipModuleLaunchKernel(k.poke, 1, 1, 1, 1, 1, 1, 0, 0, params, NULL);
}
#endif

/* A function a report's stack must name: kept out of line and exported (built with -rdynamic). */
#ifdef __cplusplus
#define FRAME extern "C" __attribute__((noinline))
#else
#define FRAME __attribute__((noinline))
#endif

#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        gpu_error e_ = (call);                                                                                         \
        if (e_ != gpu_success)                                                                                         \
            fprintf(stderr, "%s failed with code %d\n", #call, (int)e_);                                               \
    } while (0)

enum { KiB = 1024, POOL = 1024 * KiB };

static nvtxDomainHandle_t domain;
static nvtxMemHeapHandle_t heap;
static char *pool, *A, *B, *C; /* regions of 4096 bytes at pool offsets 0, 8192, 16384 */
static char *host;

/* Where the bugs are made and the regions freed, so that stacks name them. */
FRAME void read_tensor(const char *at, size_t n);
FRAME void write_tensor(char *at, size_t n);
FRAME void clear_tensor(char *at, size_t n);
FRAME void reset_arena(void);
FRAME void release_tensor(void *base);
FRAME int unregister(void);
FRAME int heap_unregister(void);
FRAME int no_access(void);

static nvtxMemHeapHandle_t heap_register(void *base, size_t size, const char *message)
{
    nvtxMemVirtualRangeDesc_t range;
    range.ptr = base;
    range.size = size;
    nvtxMemHeapDesc_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.typeSpecificDescSize = sizeof range;
    d.typeSpecificDesc = &range;
    d.messageType = NVTX_MESSAGE_TYPE_ASCII;
    d.message.ascii = message;
    return nvtxMemHeapRegister(domain, &d);
}

static void region_register(void *base, size_t size)
{
    nvtxMemVirtualRangeDesc_t range;
    range.ptr = base;
    range.size = size;
    nvtxMemRegionHandle_t handle;
    nvtxMemRegionsRegisterBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.heap = heap;
    b.regionCount = 1;
    b.regionDescElementSize = sizeof range;
    b.regionDescElements = &range;
    b.regionHandleElementsOut = &handle;
    nvtxMemRegionsRegister(domain, &b);
}

static void region_resize(void *base, size_t size)
{
    nvtxMemVirtualRangeDesc_t range;
    range.ptr = base;
    range.size = size;
    nvtxMemRegionsResizeBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.regionDescCount = 1;
    b.regionDescElementSize = sizeof range;
    b.regionDescElements = &range;
    nvtxMemRegionsResize(domain, &b);
}

/* What the sub-allocator does when a tensor dies. */
FRAME void release_tensor(void *base)
{
    nvtxMemRegionRef_t ref;
    ref.pointer = base;
    nvtxMemRegionsUnregisterBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    b.refCount = 1;
    b.refElementSize = sizeof ref;
    b.refElements = &ref;
    nvtxMemRegionsUnregister(domain, &b);
}

static void region_name(void *base, uint32_t type, nvtxMessageValue_t name)
{
    nvtxMemRegionNameDesc_t e;
    memset(&e, 0, sizeof e);
    e.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    e.nameType = type;
    e.region.pointer = base;
    e.name = name;
    nvtxMemRegionsNameBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionCount = 1;
    b.regionElementSize = sizeof e;
    b.regionElements = &e;
    nvtxMemRegionsName(domain, &b);
}

static void region_access(nvtxMemPermissionsHandle_t permissions, void *base, uint32_t flags)
{
    nvtxMemPermissionsAssignRegionDesc_t e;
    memset(&e, 0, sizeof e);
    e.flags = flags;
    e.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    e.region.pointer = base;
    nvtxMemPermissionsAssignBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.permissions = permissions;
    b.regionCount = 1;
    b.regionElementSize = sizeof e;
    b.regionElements = &e;
    nvtxMemPermissionsAssign(domain, &b);
}

FRAME void read_tensor(const char *at, size_t n) { TRY(gpu_d2h(host, at, n)); }
FRAME void write_tensor(char *at, size_t n) { TRY(gpu_h2d(at, host, n)); }
FRAME void clear_tensor(char *at, size_t n) { TRY(gpu_memset(at, 0, n)); }
FRAME void reset_arena(void) { nvtxMemHeapReset(domain, heap); }

static void *read_a(void *arg)
{
    (void)arg;
    read_tensor(A, 4096);
    return NULL;
}

static int clean(void)
{
    nvtxMessageValue_t name;
    name.ascii = "token_embd.weight";
    region_name(A, NVTX_MESSAGE_TYPE_ASCII, name);
    region_resize(B, 6144);
    read_tensor(A, 4096);
    read_tensor(B, 6144);
    read_tensor(C + 100, 3996);
    clear_tensor(C, 4096);
    write_tensor(A, 4096);
    region_access(NULL, C, NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ);
    read_tensor(C, 4096);
    release_tensor(B);
    region_register(B, 4096);
    read_tensor(B, 4096);
    reset_arena();
    region_register(A, 8192);
    read_tensor(A, 8192);
    write_tensor(A, 8192);
    return 0;
}

static int overrun(void)
{
    read_tensor(A, 4096 + 512);
    return 0;
}

static int resize(void)
{
    region_resize(A, 2048);
    region_resize(B, 6144);
    read_tensor(B, 6144);
    read_tensor(A, 4096);
    return 0;
}

FRAME int unregister(void)
{
    release_tensor(B);
    read_tensor(B + 128, 256);
    return 0;
}

static int heap_reset(void)
{
    reset_arena();
    clear_tensor(C, 64);
    region_register(A, 4096);
    read_tensor(A, 4096);
    return 0;
}

FRAME int heap_unregister(void)
{
    nvtxMemHeapUnregister(domain, heap);
    read_tensor(A, 1024);
    return 0;
}

static int named(void)
{
    nvtxMessageValue_t name;
    name.ascii = "token_embd.weight";
    region_name(A, NVTX_MESSAGE_TYPE_ASCII, name);
    name.registered = nvtxDomainRegisterStringA(domain, "kv_cache[3]");
    region_name(B, NVTX_MESSAGE_TYPE_REGISTERED, name);
    read_tensor(B, 4096 + 64);
    release_tensor(A);
    read_tensor(A, 512);
    return 0;
}

static int read_only(void)
{
    region_access(NULL, C, NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ);
    write_tensor(C, 128);
    read_tensor(C, 4096);
    nvtxMemPermissionsReset(domain, NULL);
    write_tensor(C, 128);
    return 0;
}

FRAME int no_access(void)
{
    nvtxMemPermissionsHandle_t mine = nvtxMemPermissionsCreate(domain, NVTX_MEM_PERMISSIONS_CREATE_FLAGS_NONE);
    region_access(mine, A, NVTX_MEM_PERMISSIONS_REGION_FLAGS_NONE);
    nvtxMemPermissionsBind(domain, mine, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CPU_THREAD,
                           NVTX_MEM_PERMISSIONS_BIND_FLAGS_NONE);
    read_tensor(A, 4096);
    pthread_t other;
    if (pthread_create(&other, NULL, read_a, NULL) == 0)
        pthread_join(other, NULL);
    nvtxMemPermissionsUnbind(domain, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CPU_THREAD);
    read_tensor(A, 4096);
    nvtxMemPermissionsDestroy(domain, mine);
    return 0;
}

static int kernel_freed(void)
{
#if defined(NVTX_CASE_CUDA) && !defined(NVTX_CASE_KERNEL)
    return 77; /* the CUDA simulator runs no kernel of this program */
#else
    release_tensor(A);
    TRY((gpu_error)launch_poke((int *)A, 7));
    TRY(gpu_sync());
    return 0;
#endif
}

static int kernel_freed_known(void)
{
#if defined(NVTX_CASE_CUDA) && !defined(NVTX_CASE_KERNEL)
    return 77;
#else
    TRY((gpu_error)launch_poke((int *)A, 7));
    TRY(gpu_sync());
    return kernel_freed();
#endif
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(void);
    } scenarios[] = {
        {"clean", clean},
        {"overrun", overrun},
        {"resize", resize},
        {"unregister", unregister},
        {"heap_reset", heap_reset},
        {"heap_unregister", heap_unregister},
        {"named", named},
        {"read_only", read_only},
        {"no_access", no_access},
        {"kernel_freed", kernel_freed},
        {"kernel_freed_known", kernel_freed_known},
    };
    int devices = 0;
    if (gpu_device_count(&devices) != gpu_success || devices == 0)
        return 77; /* no GPU here */
    for (size_t i = 0; argc > 1 && i < sizeof scenarios / sizeof *scenarios; i++) {
        if (strcmp(argv[1], scenarios[i].name))
            continue;
        host = (char *)calloc(1, 64 * KiB);
        if (!host || gpu_malloc((void **)&pool, POOL) != gpu_success)
            return 99;
        domain = nvtxDomainCreateA("nvtx_regions");
        heap = heap_register(pool, POOL, "arena #0");
        printf("nvtx: %s\n", heap ? "tool attached" : "no tool");
        A = pool;
        B = pool + 8192;
        C = pool + 16384;
        region_register(A, 4096);
        region_register(B, 4096);
        region_register(C, 4096);
        int rc = scenarios[i].run();
        TRY(gpu_free(pool));
        free(host);
        printf("nvtx_regions %s: done\n", argv[1]);
        return rc;
    }
    fprintf(stderr, "usage: nvtx_regions SCENARIO\n");
    return 2;
}
