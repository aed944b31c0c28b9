/* CUDA programs with planted bugs, and clean ones, for a real GPU.  One binary, one case per
 * argument, so the build stays small:
 *   probe               exits 0 when a CUDA device is usable (else 77: the tests skip)
 *   oob                 cudaMemcpy D2H past the end of an allocation
 *   uaf                 D2H from a freed pointer
 *   overlap             two async D2H into one pinned buffer on unordered streams
 *   destroyed-stream    an async copy on a destroyed stream
 *   direction           a D2H whose destination is device memory
 *   vmm-past-end        virtual memory as PyTorch's expandable segments use it: a copy across two
 *                       adjacent maps (clean), then one running 4096 bytes past the last map
 *   vmm-clean           the copy across two adjacent maps only
 *   peer                a peer copy that reads 1024 bytes past an allocation on device 1 (needs two
 *                       GPUs; exits 77 without them)
 *   clean               correct use of every wrapped family; the data round-trips
 * Plain C that also compiles as CUDA C++: it is built the ways users build (nvcc, which links
 * the runtime statically; nvcc -cudart shared; CMake), see build_three_ways.sh. */
#include "gpu_common.h"

#include <cuda.h>
#include <string.h>

static int probe(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? 0 : 77;
}

static int oob(void)
{
    char *dev, host[8192];
    MUST(cudaMalloc((void **)&dev, 4096));
    TRY(cudaMemcpy(host, dev + 1024, 4096, cudaMemcpyDeviceToHost)); /* 1024 bytes past the end */
    MUST(cudaFree(dev));
    return 0;
}

static int uaf(void)
{
    char *dev, host[4096];
    MUST(cudaMalloc((void **)&dev, 4096));
    MUST(cudaFree(dev));
    TRY(cudaMemcpy(host, dev, 4096, cudaMemcpyDeviceToHost));
    return 0;
}

static int overlap(void)
{
    float *a, *b, *pinned;
    cudaStream_t s1, s2;
    MUST(cudaMalloc((void **)&a, 1 << 20));
    MUST(cudaMalloc((void **)&b, 1 << 20));
    MUST(cudaMallocHost((void **)&pinned, 1 << 20));
    MUST(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    MUST(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    MUST(cudaMemcpyAsync(pinned, a, 1 << 20, cudaMemcpyDeviceToHost, s1));
    MUST(cudaMemcpyAsync(pinned, b, 1 << 20, cudaMemcpyDeviceToHost, s2));
    MUST(cudaDeviceSynchronize());
    MUST(cudaStreamDestroy(s1));
    MUST(cudaStreamDestroy(s2));
    MUST(cudaFreeHost(pinned));
    MUST(cudaFree(a));
    MUST(cudaFree(b));
    return 0;
}

static int destroyed_stream(void)
{
    float *dev, *pinned;
    cudaStream_t s;
    MUST(cudaMalloc((void **)&dev, 4096));
    MUST(cudaMallocHost((void **)&pinned, 4096));
    MUST(cudaStreamCreate(&s));
    MUST(cudaStreamDestroy(s));
    TRY(cudaMemcpyAsync(pinned, dev, 4096, cudaMemcpyDeviceToHost, s));
    MUST(cudaFreeHost(pinned));
    MUST(cudaFree(dev));
    return 0;
}

static int direction(void)
{
    float *a, *b;
    MUST(cudaMalloc((void **)&a, 4096));
    MUST(cudaMalloc((void **)&b, 4096));
    TRY(cudaMemcpy(b, a, 4096, cudaMemcpyDeviceToHost));
    MUST(cudaFree(a));
    MUST(cudaFree(b));
    return 0;
}

static int clean(void)
{
    enum { N = 1 << 20 };
    unsigned char *dev, *dev2, *pinned, *host = (unsigned char *)malloc(N), *back = (unsigned char *)malloc(N);
    size_t pitch;
    cudaStream_t s1, s2;
    cudaEvent_t e;
    for (int i = 0; i < N; i++)
        host[i] = (unsigned char)(i * 7);
    MUST(cudaMalloc((void **)&dev, 4 * N));
    MUST(cudaMallocPitch((void **)&dev2, &pitch, 1000, 100));
    MUST(cudaHostAlloc((void **)&pinned, N, cudaHostAllocDefault));
    MUST(cudaHostRegister(host, N, cudaHostRegisterDefault));
    MUST(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    MUST(cudaStreamCreateWithPriority(&s2, cudaStreamNonBlocking, 0));
    MUST(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    MUST(cudaMemcpy(dev + N, host, N, cudaMemcpyHostToDevice)); /* interior pointer */
    MUST(cudaMemcpyAsync(pinned, dev + N, N, cudaMemcpyDeviceToHost, s1));
    MUST(cudaEventRecord(e, s1));
    MUST(cudaStreamWaitEvent(s2, e, 0));
    MUST(cudaMemcpyAsync(dev + 2 * N, pinned, N, cudaMemcpyHostToDevice, s2)); /* ordered by the event */
    MUST(cudaMemsetAsync(dev + 3 * N, 0, N, s1));
    MUST(cudaMemcpy2D(dev2, pitch, dev, 1000, 1000, 100, cudaMemcpyDeviceToDevice));
    MUST(cudaStreamSynchronize(s2));
    MUST(cudaMemcpy(back, dev + 2 * N, N, cudaMemcpyDefault));
    MUST(cudaDeviceSynchronize());
    int bad = memcmp(host, back, N) != 0;
    MUST(cudaEventDestroy(e));
    MUST(cudaStreamDestroy(s1));
    MUST(cudaStreamDestroy(s2));
    MUST(cudaHostUnregister(host));
    MUST(cudaFreeHost(pinned));
    MUST(cudaFree(dev2));
    MUST(cudaFree(dev));
    free(host);
    free(back);
    printf("clean: data %s\n", bad ? "WRONG" : "round-trips");
    return bad;
}

/* Driver entry points as PyTorch gets them: through the runtime, by version. */
static void *driver_entry(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult status;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status) != cudaSuccess || !fn) {
        fprintf(stderr, "no driver entry point %s\n", name);
        exit(99);
    }
    return fn;
}

static int vmm(int past_end)
{
    CUresult (*granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    *(void **)&granularity = driver_entry("cuMemGetAllocationGranularity");
    *(void **)&reserve = driver_entry("cuMemAddressReserve");
    *(void **)&create = driver_entry("cuMemCreate");
    *(void **)&map = driver_entry("cuMemMap");
    *(void **)&set_access = driver_entry("cuMemSetAccess");
    MUST(cudaFree(0)); /* a context */
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0;
    if (granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) || !g)
        return 99;
    CUdeviceptr r;
    CUmemGenericAllocationHandle h[2];
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (reserve(&r, 4 * g, 0, 0, 0))
        return 99;
    for (int i = 0; i < 2; i++)
        if (create(&h[i], g, &prop, 0) || map(r + i * g, g, 0, h[i], 0))
            return 99;
    if (set_access(r, 2 * g, &access, 1))
        return 99;
    char *host;
    MUST(cudaMallocHost((void **)&host, 2 * g));
    MUST(cudaMemcpy(host, (void *)(r + g / 2), g, cudaMemcpyDeviceToHost)); /* across the two maps */
    if (past_end)
        TRY(cudaMemcpy(host, (void *)(r + g + g / 2), g / 2 + 4096, cudaMemcpyDeviceToHost)); /* 4096 past */
    MUST(cudaFreeHost(host));
    printf("vmm: granularity %zu, spanning copy ok\n", g);
    return 0;
}

static int vmm_past_end(void) { return vmm(1); }
static int vmm_clean(void) { return vmm(0); }

static int peer(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
        printf("peer: %d GPU(s), two needed\n", n);
        return 77;
    }
    char *on0, *on1;
    MUST(cudaSetDevice(1));
    MUST(cudaMalloc((void **)&on1, 4096));
    MUST(cudaSetDevice(0));
    MUST(cudaMalloc((void **)&on0, 8192));
    MUST(cudaMemcpyPeer(on0, 0, on1, 1, 4096));       /* clean */
    TRY(cudaMemcpyPeer(on0, 0, on1 + 1024, 1, 4096)); /* 1024 bytes past the end, on device 1 */
    MUST(cudaFree(on0));
    MUST(cudaSetDevice(1));
    MUST(cudaFree(on1));
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(void);
    } cases[] = {
        {"probe", probe},
        {"oob", oob},
        {"uaf", uaf},
        {"overlap", overlap},
        {"destroyed-stream", destroyed_stream},
        {"direction", direction},
        {"clean", clean},
        {"vmm-past-end", vmm_past_end},
        {"vmm-clean", vmm_clean},
        {"peer", peer},
    };
    for (size_t i = 0; argc > 1 && i < sizeof cases / sizeof *cases; i++)
        if (!strcmp(argv[1], cases[i].name))
            return cases[i].fn();
    fprintf(stderr,
            "usage: gpu_cases probe|oob|uaf|overlap|destroyed-stream|direction|clean|vmm-past-end|vmm-clean|peer\n");
    return 2;
}
