// The host's cost of a kernel launch, for the benchmark: an empty kernel launched N times on one
// stream (through cudaLaunchKernel, which reaches the driver's cuLaunchKernel), in batches of 32
// that start with the GPU idle, each batch timed on the host without the synchronisation that
// follows it.  An unbroken loop would fill the launch queue and time the GPU instead (each launch
// then waits for room), which hides whatever the host adds.  Prints nanoseconds per launch.
// Usage: bench_launch [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty(int *p) { if (p && threadIdx.x == 1024) *p = 0; }

int main(int argc, char **argv)
{
    const long batch = 32;
    long n = argc > 1 ? atol(argv[1]) : 200000;
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return 1;
    for (int i = 0; i < 1000; i++) // warm up
        empty<<<1, 32, 0, s>>>(nullptr);
    cudaStreamSynchronize(s);
    double ns = 0;
    long done = 0;
    while (done < n) {
        auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < batch; i++)
            empty<<<1, 32, 0, s>>>(nullptr);
        auto t1 = std::chrono::steady_clock::now();
        ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
        done += batch;
        cudaStreamSynchronize(s);
    }
    printf("%.1f\n", ns / done);
    return cudaGetLastError() != cudaSuccess;
}
