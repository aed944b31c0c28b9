// The cost of a kernel launch, for the benchmark: an empty kernel launched N times on one
// stream (through cudaLaunchKernel, which reaches the driver's cuLaunchKernel), timed on the
// host.  Prints nanoseconds per launch.  Usage: bench_launch [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty(int *p) { if (p && threadIdx.x == 1024) *p = 0; }

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return 1;
    for (int i = 0; i < 1000; i++) // warm up
        empty<<<1, 32, 0, s>>>(nullptr);
    cudaStreamSynchronize(s);
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; i++)
        empty<<<1, 32, 0, s>>>(nullptr);
    cudaStreamSynchronize(s);
    auto t1 = std::chrono::steady_clock::now();
    printf("%.1f\n", std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
    return cudaGetLastError() != cudaSuccess;
}
