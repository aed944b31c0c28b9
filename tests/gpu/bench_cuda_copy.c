/* Per-call cost of a real cudaMemcpyAsync D2H into pinned memory, synchronised each time:
 * run with and without the preload (tests/gpu/run_gpu.py bench interleaves them).
 * Usage: bench_cuda_copy BYTES CALLS -> prints the median ns per call over 15 batches. */
#include "gpu_common.h"

#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 4;
    int calls = argc > 2 ? atoi(argv[2]) : 2000;
    char *dev, *pinned;
    cudaStream_t s;
    MUST(cudaMalloc((void **)&dev, bytes + 4096));
    MUST(cudaMallocHost((void **)&pinned, bytes));
    MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < 100; i++) /* warm up */
        MUST(cudaMemcpyAsync(pinned, dev + 64, bytes, cudaMemcpyDeviceToHost, s));
    MUST(cudaStreamSynchronize(s));
    double batches[15];
    for (int b = 0; b < 15; b++) {
        double t0 = now_ns();
        for (int c = 0; c < calls; c++) {
            cudaMemcpyAsync(pinned, dev + 64, bytes, cudaMemcpyDeviceToHost, s);
            cudaStreamSynchronize(s);
        }
        batches[b] = (now_ns() - t0) / calls;
    }
    qsort(batches, 15, sizeof *batches, cmp);
    printf("%.1f\n", batches[7]);
    return 0;
}
