/* hipshadow's kernels on NVIDIA: the fatbin built from kernels/all.hip is embedded
 * (hs_nv_kernels) and loaded at first use through the driver API (cuModuleLoadData), in the
 * runtime's primary context. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>

#include "kernels/gpu_kernels.h"
#include "entry/wrapper_shape.h"

extern const unsigned char hs_nv_kernels[];
extern const unsigned long hs_nv_kernels_size;

typedef int CUresult_;
static struct {
    pthread_once_t once;
    int load_error;
    void *fn[HS_K_COUNT];
    CUresult_ (*load)(void **, const void *);
    CUresult_ (*get)(void **, void *, const char *);
    CUresult_ (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                        void **);
    cudaError_t (*malloc_)(void **, size_t);
    cudaError_t (*free_)(void *);
    cudaError_t (*memcpy_)(void *, const void *, size_t, enum cudaMemcpyKind);
    cudaError_t (*sync)(cudaStream_t);
} nv = {.once = PTHREAD_ONCE_INIT};

static void load_module(void)
{
    static const char *const runtime[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so", NULL};
    static const char *const driver[] = {"libcuda.so.1", "libcuda.so", NULL};
    void *rt = NULL, *drv = NULL;
    *(void **)&nv.malloc_ = hs_resolve("cudaMalloc", runtime, &rt);
    *(void **)&nv.free_ = hs_resolve("cudaFree", runtime, &rt);
    *(void **)&nv.memcpy_ = hs_resolve("cudaMemcpy", runtime, &rt);
    *(void **)&nv.sync = hs_resolve("cudaStreamSynchronize", runtime, &rt);
    *(void **)&nv.load = hs_resolve("cuModuleLoadData", driver, &drv);
    *(void **)&nv.get = hs_resolve("cuModuleGetFunction", driver, &drv);
    *(void **)&nv.launch = hs_resolve("cuLaunchKernel", driver, &drv);
    if (!hs_nv_kernels_size || !nv.load || !nv.get || !nv.launch || !nv.free_) {
        nv.load_error = cudaErrorNotSupported;
        return;
    }
    nv.free_(NULL); /* makes the runtime's primary context current: the module loads into it */
    void *module;
    if ((nv.load_error = nv.load(&module, hs_nv_kernels)) != 0)
        return;
    for (int k = 0; k < HS_K_COUNT && nv.load_error == 0; k++)
        nv.load_error = nv.get(&nv.fn[k], module, hs_kernel_names[k]);
}

static int nv_launch(hs_kernel k, unsigned gx, unsigned gy, unsigned bx, unsigned by, void **params, uintptr_t stream)
{
    pthread_once(&nv.once, load_module);
    if (nv.load_error)
        return nv.load_error; /* CUresult and cudaError_t share their common codes */
    return nv.launch(nv.fn[k], gx, gy, 1, bx, by, 1, 0, (void *)stream, params, NULL);
}

static int nv_alloc(void **p, size_t bytes)
{
    pthread_once(&nv.once, load_module);
    return nv.malloc_ ? nv.malloc_(p, bytes) : cudaErrorNotSupported;
}

static int nv_d2h(void *dst, const void *src, size_t bytes)
{
    return nv.memcpy_ ? nv.memcpy_(dst, src, bytes, cudaMemcpyDeviceToHost) : cudaErrorNotSupported;
}

static int nv_h2d(void *dst, const void *src, size_t bytes)
{
    return nv.memcpy_ ? nv.memcpy_(dst, src, bytes, cudaMemcpyHostToDevice) : cudaErrorNotSupported;
}

static int nv_sync(uintptr_t stream) { return nv.sync ? nv.sync((cudaStream_t)stream) : cudaErrorNotSupported; }

const hs_kernel_ops hs_cuda_kernel_ops = {
    .launch = nv_launch,
    .alloc = nv_alloc,
    .d2h = nv_d2h,
    .h2d = nv_h2d,
    .sync = nv_sync,
    .invalid_value = cudaErrorInvalidValue,
    .not_supported = cudaErrorNotSupported,
};
