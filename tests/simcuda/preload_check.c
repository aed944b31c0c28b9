/* Run with the interposer preloaded: a direct call to cuMemAlloc_v2 binds to the interposer, but
 * cuGetProcAddress, and the runtime that uses it, hand out the driver's own functions. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    int (*calls)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "simcuda_interposer_calls");
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!calls || !driver) {
        fprintf(stderr, "preload check: the interposer is not preloaded\n");
        return 1;
    }
    void *d = NULL;
    char buf[64];
    int fail = 0;
    /* Through the runtime: dlopen + cuGetProcAddress, so the interposer sees nothing. */
    fail |= cudaMalloc(&d, 64) != cudaSuccess || cudaMemcpy(buf, d, 64, cudaMemcpyDeviceToHost) != cudaSuccess;
    fail |= calls() != 0;
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    fail |= cuGetProcAddress("cuMemAlloc", &fn, 12000, 0, &st) != CUDA_SUCCESS;
    fail |= fn != dlsym(driver, "cuMemAlloc_v2") || fn == dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
    CUdeviceptr p;
    fail |= ((CUresult(*)(CUdeviceptr *, size_t))fn)(&p, 16) != CUDA_SUCCESS || calls() != 0;
    /* By symbol: the interposer. */
    fail |= cuMemAlloc(&p, 16) != CUDA_SUCCESS || calls() != 1;
    printf("preload check: %s (interposer saw %d call(s))\n", fail ? "FAILED" : "ok", calls());
    return fail;
}
