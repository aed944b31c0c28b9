/* Planted stream races and reads of unwritten memory through the CUDA runtime, one per mode
 * (run_race_cases.py says what each must give).  CUDA says nothing of what a kernel does with a
 * pointer argument: hipshadow takes each as a possible write, so a race with a kernel is a
 * warning, and a copy that reads what only a kernel wrote is not an uninitialised read.
 *   kernel-then-copy   fill writes buf on stream A; an async D2H of buf on B, nothing orders them
 *   event              the same, an event recorded on A and waited on by B (clean)
 *   sync               the same, cudaStreamSynchronize(A) between (clean)
 *   callback           the same, a host function on A that the host waits for between (clean)
 *   copy-under-read    scale on A reads in; an async H2D into in on B, nothing orders them
 *   two-kernels        fill on A and fill on B write buf, nothing orders them
 *   pool-streams       cudaMallocAsync / fill / cudaFreeAsync on A, then the same on B (the pool
 *                      may hand B the same memory: it orders the reuse itself; clean)
 *   uninit-d2h         (initcheck=1) a D2H of a buffer nothing wrote
 *   uninit-short       (initcheck=1) a memset of N bytes where N ints were meant, then scale reads it
 *   uninit-clean       (initcheck=1) in filled by an H2D, scale writes out, both read back (clean)
 * Prints "race_cases MODE: done" (checking the sum it read back where the mode fixes it); exits 77
 * without a device. */
#include "race_cases.h"

#include <stdio.h>
#include <string.h>

enum { N = 1024, THREADS = 256 };

#define MUST(x)                                                                                                        \
    do {                                                                                                               \
        cudaError_t rc_ = (x);                                                                                         \
        if (rc_ != cudaSuccess) {                                                                                      \
            fprintf(stderr, "race_cases: %s failed: %s\n", #x, cudaGetErrorString(rc_));                               \
            return 99;                                                                                                 \
        }                                                                                                              \
    } while (0)

static dim3 blocks(unsigned x)
{
    dim3 d = {x, 1, 1};
    return d;
}

static cudaError_t launch_fill(int *p, int value, cudaStream_t s)
{
    int n = N;
    void *args[] = {&p, &n, &value};
    return cudaLaunchKernel(rc_fill, blocks(N / THREADS), blocks(THREADS), args, 0, s);
}

static cudaError_t launch_scale(int *out, const int *in, cudaStream_t s)
{
    int n = N;
    void *args[] = {&out, &in, &n};
    return cudaLaunchKernel(rc_scale, blocks(N / THREADS), blocks(THREADS), args, 0, s);
}

static int host_fn_ran; /* GCC's atomic builtins: the file is C and CUDA C++ alike */
static void CUDART_CB note_ran(void *data)
{
    (void)data;
    __atomic_store_n(&host_fn_ran, 1, __ATOMIC_RELEASE);
}

static long long sum(const int *p)
{
    long long s = 0;
    for (int i = 0; i < N; i++)
        s += p[i];
    return s;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        fprintf(stderr, "race_cases: no CUDA device\n");
        return 77;
    }
    int *buf, *in, *out, *pinned;
    cudaStream_t a, b;
    MUST(cudaMalloc((void **)&buf, N * sizeof(int)));
    MUST(cudaMalloc((void **)&in, N * sizeof(int)));
    MUST(cudaMalloc((void **)&out, N * sizeof(int)));
    MUST(cudaMallocHost((void **)&pinned, N * sizeof(int)));
    MUST(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    MUST(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    long long want = -1; /* the sum read back, where the mode fixes it */

    if (!strcmp(mode, "kernel-then-copy") || !strcmp(mode, "event") || !strcmp(mode, "sync") ||
        !strcmp(mode, "callback")) {
        MUST(launch_fill(buf, 3, a));
        if (!strcmp(mode, "event")) {
            cudaEvent_t ev;
            MUST(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
            MUST(cudaEventRecord(ev, a));
            MUST(cudaStreamWaitEvent(b, ev, 0));
        } else if (!strcmp(mode, "sync")) {
            MUST(cudaStreamSynchronize(a));
        } else if (!strcmp(mode, "callback")) {
            MUST(cudaLaunchHostFunc(a, note_ran, NULL));
            /* A GPU runs the host function on its own; the simulated runtime runs a stream's work
             * when asked about it (the query's answer is not what orders the pair on a GPU). */
            while (!__atomic_load_n(&host_fn_ran, __ATOMIC_ACQUIRE))
                (void)cudaStreamQuery(a);
        }
        MUST(cudaMemcpyAsync(pinned, buf, N * sizeof(int), cudaMemcpyDeviceToHost, b));
        MUST(cudaStreamSynchronize(b));
        if (strcmp(mode, "kernel-then-copy"))
            want = 3LL * N;
    } else if (!strcmp(mode, "copy-under-read")) {
        MUST(cudaMemset(in, 0, N * sizeof(int)));
        MUST(cudaDeviceSynchronize());
        for (int i = 0; i < N; i++)
            pinned[i] = 1;
        MUST(launch_scale(out, in, a));
        MUST(cudaMemcpyAsync(in, pinned, N * sizeof(int), cudaMemcpyHostToDevice, b));
    } else if (!strcmp(mode, "two-kernels")) {
        MUST(launch_fill(buf, 1, a));
        MUST(launch_fill(buf, 2, b));
    } else if (!strcmp(mode, "pool-streams")) {
        int *p, *q;
        MUST(cudaMallocAsync((void **)&p, N * sizeof(int), a));
        MUST(launch_fill(p, 4, a));
        MUST(cudaFreeAsync(p, a));
        MUST(cudaMallocAsync((void **)&q, N * sizeof(int), b));
        MUST(launch_fill(q, 5, b));
        MUST(cudaMemcpyAsync(pinned, q, N * sizeof(int), cudaMemcpyDeviceToHost, b));
        MUST(cudaFreeAsync(q, b));
        MUST(cudaStreamSynchronize(b));
        want = 5LL * N;
    } else if (!strcmp(mode, "uninit-d2h")) {
        MUST(cudaMemcpy(pinned, buf, N * sizeof(int), cudaMemcpyDeviceToHost));
    } else if (!strcmp(mode, "uninit-short")) {
        MUST(cudaMemset(in, 0, N)); /* N bytes: a quarter of the N ints */
        MUST(launch_scale(out, in, 0));
        MUST(cudaMemcpy(pinned, out, N * sizeof(int), cudaMemcpyDeviceToHost));
    } else if (!strcmp(mode, "uninit-clean")) {
        for (int i = 0; i < N; i++)
            pinned[i] = 1;
        MUST(cudaMemcpy(in, pinned, N * sizeof(int), cudaMemcpyHostToDevice));
        MUST(launch_scale(out, in, 0));
        MUST(cudaMemcpy(pinned, out, N * sizeof(int), cudaMemcpyDeviceToHost));
        MUST(cudaMemcpy(pinned, in, N * sizeof(int), cudaMemcpyDeviceToHost));
        want = N;
    } else {
        fprintf(stderr, "race_cases: unknown mode '%s'\n", mode);
        return 2;
    }
    MUST(cudaDeviceSynchronize());
    if (want >= 0 && sum(pinned) != want) {
        fprintf(stderr, "race_cases %s: read back %lld, want %lld\n", mode, sum(pinned), want);
        return 1;
    }
    printf("race_cases %s: done\n", mode);
    return 0;
}
