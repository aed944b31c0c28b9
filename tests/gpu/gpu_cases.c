/* CUDA programs with planted bugs, and clean ones, for a real GPU.  One binary, one case per
 * argument, so the build stays small:
 *   probe               exits 0 when a CUDA device is usable (else 77: the tests skip)
 *   oob                 cudaMemcpy D2H past the end of an allocation
 *   uaf                 D2H from a freed pointer
 *   overlap             two async D2H into one pinned buffer on unordered streams
 *   destroyed-stream    an async copy on a destroyed stream
 *   direction           a D2H whose destination is device memory
 *   clean               correct use of every wrapped family; the data round-trips */
#include "gpu_common.h"

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
    unsigned char *dev, *dev2, *pinned, *host = malloc(N), *back = malloc(N);
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
    MUST(cudaMemcpy(dev + N, host, N, cudaMemcpyHostToDevice));              /* interior pointer */
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

int main(int argc, char **argv)
{
    static const struct { const char *name; int (*fn)(void); } cases[] = {
        {"probe", probe}, {"oob", oob}, {"uaf", uaf}, {"overlap", overlap},
        {"destroyed-stream", destroyed_stream}, {"direction", direction}, {"clean", clean},
    };
    for (size_t i = 0; argc > 1 && i < sizeof cases / sizeof *cases; i++)
        if (!strcmp(argv[1], cases[i].name))
            return cases[i].fn();
    fprintf(stderr, "usage: gpu_cases probe|oob|uaf|overlap|destroyed-stream|direction|clean\n");
    return 2;
}
