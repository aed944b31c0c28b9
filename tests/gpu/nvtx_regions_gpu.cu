// tests/nvtx/nvtx_regions.c built by nvcc for a real GPU, with a kernel of its own for the
// kernel_freed scenarios (run_nvtx_case.py gpu ...: see tests/gpu/meson.build).
#define NVTX_CASE_CUDA 1
#define NVTX_CASE_KERNEL 1
#include <cuda_runtime.h>

__global__ void poke(int *p, int value) { p[0] = value; }

extern "C" int launch_poke(int *p, int value)
{
    poke<<<1, 1>>>(p, value);
    return (int)cudaGetLastError();
}

#include "../nvtx/nvtx_regions.c"
