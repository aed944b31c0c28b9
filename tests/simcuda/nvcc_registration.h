/* What nvcc's generated host code does at load, for a program whose kernels are host functions
 * on the simulated runtime: registers a fat binary (here a simcuda_image: each kernel's name,
 * host function and parameter sizes), then each kernel's host stub with its name.  Programs
 * launch kernels by their stubs, whose addresses are all that matters (stubs[i] for kernel i). */
#ifndef SIMCUDA_NVCC_REGISTRATION_H
#define SIMCUDA_NVCC_REGISTRATION_H

#include "simcuda.h"

#include <cuda_runtime_api.h>

void **__cudaRegisterFatBinary(void *fat_cubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *block, dim3 *grid, int *wsize);

/* nvcc's fat binary wrapper: its magic and version, then the image */
typedef struct simcuda_fatbin_wrapper {
    int magic, version;
    const void *data;
    void *unused;
} simcuda_fatbin_wrapper;
#define SIMCUDA_FATBIN_WRAPPER(image)                                                                                  \
    {                                                                                                                  \
        0x466243b1, 1, (image), 0                                                                                      \
    }

static inline void simcuda_register_stubs(simcuda_fatbin_wrapper *w, const char *stubs)
{
    const simcuda_image *image = w->data;
    void **handle = __cudaRegisterFatBinary(w);
    for (unsigned i = 0; i < image->count; i++)
        __cudaRegisterFunction(handle, &stubs[i], (char *)image->kernels[i].name, image->kernels[i].name, -1, 0, 0, 0,
                               0, 0);
    __cudaRegisterFatBinaryEnd(handle);
}

#endif
