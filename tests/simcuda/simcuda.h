/* The simulated driver's extras for test programs (tests/simcuda/simcuda.c): kernels are host
 * functions.  Link against the simulated libcuda.so.1 to use them. */
#ifndef SIMCUDA_H
#define SIMCUDA_H
#include <cuda.h>

/* A CUfunction that cuLaunchKernel runs (in stream order) as fn(kernelParams). */
CUfunction simcuda_function_from_host(void (*fn)(void **params));
/* Optional: the sizes of the kernel's parameters, so that each launch copies their values as the
 * real driver does.  Without it, kernelParams must stay valid until the stream is synchronised. */
CUresult simcuda_function_set_param_sizes(CUfunction f, unsigned count, const size_t *sizes);
/* For kernels: 1 if the device may read (write = 0) or write [p, p+n); else 0, and that access
 * is the kernel's fault: the sticky CUDA_ERROR_ILLEGAL_ADDRESS.  Call it before touching memory. */
int simcuda_device_range_ok(const void *p, size_t n, int write);

/* A module image the simulated driver loads (cuModuleLoadData): kernels that are host functions,
 * each with the sizes of its parameters (cuFuncGetParamInfo's answers; launches copy them by
 * value).  What nvcc's fat binary is to the real driver, for the simulated runtime's
 * __cudaRegisterFatBinary too. */
#define SIMCUDA_IMAGE_MAGIC 0x53494d43u
typedef struct simcuda_kernel {
    const char *name;
    void (*fn)(void **params);
    unsigned nparams;
    const size_t *sizes;
} simcuda_kernel;
typedef struct simcuda_image {
    unsigned magic, count;
    const simcuda_kernel *kernels;
} simcuda_image;

#endif
