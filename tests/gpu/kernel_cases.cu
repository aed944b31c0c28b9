// Kernels with planted bugs, for the launch ledger on a real GPU.  Built with plain nvcc (the
// static runtime) and with -cudart shared by run_gpu.py.
//   far-write   poke writes far outside every allocation; a later, valid D2H returns the fault
//   freed-arg   poke is launched on a buffer freed just before
//   serialize   three launches on two streams, the middle one faulting, then a D2H
//   overflow    poke writes 40 bytes past the end of a 4000-byte buffer (redzones=N)
//   overflow-at-exit  overflow, and exit with no synchronisation (redzones checked at exit)
//   overflow-async    overflow on a cudaMallocAsync allocation, on its stream
//   host-fn     a launch, then a host function on its stream, then another stream's launch faults
//   callback    the same with a stream callback (cudaStreamAddCallback)
//   callback-free  an async D2H into pinned memory, a callback, then the buffer freed once the
//               callback ran, with no synchronisation: nothing races
//   clean       a two-stream pipeline of kernels, events and copies
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

extern "C" __global__ void poke(int *p, long long offset, int value) { p[offset] = value; }
extern "C" __global__ void scale(float *out, const float *in, int n, float k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * k;
}

#define TRY(call)                                                                                   \
    ([&] {                                                                                          \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess)                                                                      \
            fprintf(stderr, "%s failed: %s (%d)\n", #call, cudaGetErrorString(e_), (int)e_);        \
        return e_;                                                                                  \
    }())
#define MUST(call)                       \
    do {                                 \
        if (TRY(call) != cudaSuccess)    \
            exit(99);                    \
    } while (0)

static const long long FAR = 1ll << 36; // 256 GiB past: outside any allocation

static int far_write()
{
    int *a, host[1024];
    MUST(cudaMalloc(&a, sizeof host));
    poke<<<1, 1>>>(a, FAR, 7);
    TRY(cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost));
    return 0;
}

static int freed_arg()
{
    int *a, *b, host[1024];
    MUST(cudaMalloc(&a, sizeof host));
    MUST(cudaMalloc(&b, sizeof host));
    MUST(cudaFree(a));
    poke<<<1, 1>>>(a, 0, 7);
    TRY(cudaMemcpy(host, b, sizeof host, cudaMemcpyDeviceToHost));
    return 0;
}

static int overflow()
{
    int *a, host[1000];
    MUST(cudaMalloc(&a, sizeof host));
    poke<<<1, 1>>>(a, 1010, 7); // bytes 4040..4043: 40 bytes past the end
    MUST(cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost));
    MUST(cudaFree(a));
    return 0;
}

static int overflow_at_exit()
{
    int *a;
    MUST(cudaMalloc(&a, 4000));
    poke<<<1, 1>>>(a, 1010, 7);
    return 0;
}

static int overflow_async()
{
    int *a, host[1000];
    cudaStream_t s;
    MUST(cudaStreamCreate(&s));
    MUST(cudaMallocAsync(&a, sizeof host, s));
    poke<<<1, 1, 0, s>>>(a, 1010, 7);
    MUST(cudaStreamSynchronize(s));
    MUST(cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost));
    MUST(cudaFreeAsync(a, s));
    MUST(cudaStreamSynchronize(s));
    return 0;
}

static void CUDART_CB note(void *flag) { __atomic_store_n((int *)flag, 1, __ATOMIC_RELEASE); }

static void CUDART_CB noted(cudaStream_t, cudaError_t status, void *flag)
{
    __atomic_store_n((int *)flag, status == cudaSuccess ? 1 : 2, __ATOMIC_RELEASE);
}

// A host function (or, with_callback, a stream callback) after a launch retires it.
static int host_fn(bool with_callback)
{
    int *a, *b, host[1024];
    static int ran;
    cudaStream_t s1, s2;
    MUST(cudaStreamCreate(&s1));
    MUST(cudaStreamCreate(&s2));
    MUST(cudaMalloc(&a, sizeof host));
    MUST(cudaMalloc(&b, sizeof host));
    poke<<<1, 1, 0, s1>>>(a, 0, 1);
    if (with_callback)
        MUST(cudaStreamAddCallback(s1, noted, &ran, 0));
    else
        MUST(cudaLaunchHostFunc(s1, note, &ran));
    while (!__atomic_load_n(&ran, __ATOMIC_ACQUIRE))
        ; // it ran: the launch before it is done
    poke<<<1, 1, 0, s2>>>(b, FAR, 2);
    TRY(cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost));
    return 0;
}

static int callback_free()
{
    float *dev, *pinned;
    static int ran;
    cudaStream_t s;
    MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    MUST(cudaMalloc(&dev, 1 << 16));
    MUST(cudaMallocHost(&pinned, 1 << 16));
    MUST(cudaMemcpyAsync(pinned, dev, 1 << 16, cudaMemcpyDeviceToHost, s));
    MUST(cudaStreamAddCallback(s, noted, &ran, 0));
    while (!__atomic_load_n(&ran, __ATOMIC_ACQUIRE))
        ; // the callback ran: the copy before it is done
    MUST(cudaFreeHost(pinned));
    MUST(cudaFree(dev));
    printf("callback-free: status %s\n", ran == 1 ? "success" : "error");
    return 0;
}

static int serialize()
{
    int *a, *b, host[1024];
    cudaStream_t s1, s2;
    MUST(cudaStreamCreate(&s1));
    MUST(cudaStreamCreate(&s2));
    MUST(cudaMalloc(&a, sizeof host));
    MUST(cudaMalloc(&b, sizeof host));
    poke<<<1, 1, 0, s1>>>(a, 0, 1);
    poke<<<1, 1, 0, s2>>>(b, FAR, 2); // the one that faults
    poke<<<1, 1, 0, s1>>>(a, 1, 3);
    TRY(cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost));
    return 0;
}

static int clean()
{
    enum { N = 1 << 16 };
    static float host[N], back[N];
    float *in, *mid, *out;
    cudaStream_t s1, s2;
    cudaEvent_t done;
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    MUST(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    MUST(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    MUST(cudaEventCreate(&done));
    MUST(cudaMalloc(&in, sizeof host));
    MUST(cudaMalloc(&mid, sizeof host));
    MUST(cudaMalloc(&out, sizeof host));
    for (int round = 0; round < 4; round++) {
        MUST(cudaMemcpyAsync(in, host, sizeof host, cudaMemcpyHostToDevice, s1));
        scale<<<N / 256, 256, 0, s1>>>(mid, in, N, 2.0f);
        MUST(cudaEventRecord(done, s1));
        MUST(cudaStreamWaitEvent(s2, done, 0));
        scale<<<N / 256, 256, 0, s2>>>(out, mid, N, 0.5f);
        MUST(cudaMemcpyAsync(back, out, sizeof back, cudaMemcpyDeviceToHost, s2));
        MUST(cudaStreamSynchronize(s2));
    }
    int bad = memcmp(host, back, sizeof host) != 0;
    printf("kernels clean: data %s\n", bad ? "WRONG" : "round-trips");
    return bad;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "far-write"))
        return far_write();
    if (!strcmp(what, "freed-arg"))
        return freed_arg();
    if (!strcmp(what, "serialize"))
        return serialize();
    if (!strcmp(what, "overflow"))
        return overflow();
    if (!strcmp(what, "overflow-at-exit"))
        return overflow_at_exit();
    if (!strcmp(what, "overflow-async"))
        return overflow_async();
    if (!strcmp(what, "host-fn"))
        return host_fn(false);
    if (!strcmp(what, "callback"))
        return host_fn(true);
    if (!strcmp(what, "callback-free"))
        return callback_free();
    if (!strcmp(what, "clean"))
        return clean();
    fprintf(stderr, "usage: kernel_cases far-write|freed-arg|serialize|clean\n");
    return 2;
}
