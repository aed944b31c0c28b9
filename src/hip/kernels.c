/* hipshadow's kernels on AMD: the code-object bundle built from kernels/all.hip is
 * embedded (hs_amd_kernels) and loaded at first use with the real, unwrapped module API. */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>

#include "kernels/gpu_kernels.h"
#include "entry/frontend_shape.h"
#include "entry/wrapper_shape.h"

extern const unsigned char hs_amd_kernels[];
extern const unsigned long hs_amd_kernels_size;

static struct {
    pthread_once_t once;
    hipError_t load_error;
    hipFunction_t fn[HS_K_COUNT];
    hipError_t (*load)(hipModule_t *, const void *);
    hipError_t (*get)(hipFunction_t *, hipModule_t, const char *);
    hipError_t (*launch)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         hipStream_t, void **, void **);
    hipError_t (*malloc_)(void **, size_t);
    hipError_t (*memcpy_)(void *, const void *, size_t, hipMemcpyKind);
    hipError_t (*sync)(hipStream_t);
    hipError_t (*peek_error)(void);
    hipError_t (*take_error)(void);
} amd = {.once = PTHREAD_ONCE_INIT};

/* A call of hipshadow's that fails must not leave its error for the program's next
 * hipGetLastError: it is taken back, unless the program already had one of its own pending. */
static int quietly(hipError_t before, hipError_t rc)
{
    if (rc != hipSuccess && before == hipSuccess && amd.take_error)
        amd.take_error();
    return rc;
}

static hipError_t pending_error(void) { return amd.peek_error ? amd.peek_error() : hipSuccess; }

static void load_module(void)
{
    static const char *const sonames[] = HS_HIP_SONAMES;
    void *rt = NULL;
    *(void **)&amd.load = hs_resolve("hipModuleLoadData", sonames, &rt);
    *(void **)&amd.get = hs_resolve("hipModuleGetFunction", sonames, &rt);
    *(void **)&amd.launch = hs_resolve("hipModuleLaunchKernel", sonames, &rt);
    *(void **)&amd.malloc_ = hs_resolve("hipMalloc", sonames, &rt);
    *(void **)&amd.memcpy_ = hs_resolve("hipMemcpy", sonames, &rt);
    *(void **)&amd.sync = hs_resolve("hipStreamSynchronize", sonames, &rt);
    *(void **)&amd.peek_error = hs_resolve("hipPeekAtLastError", sonames, &rt);
    *(void **)&amd.take_error = hs_resolve("hipGetLastError", sonames, &rt);
    if (!hs_amd_kernels_size || !amd.load || !amd.get || !amd.launch) {
        amd.load_error = hipErrorNotSupported;
        return;
    }
    hipModule_t module;
    if ((amd.load_error = amd.load(&module, hs_amd_kernels)) != hipSuccess)
        return;
    for (int k = 0; k < HS_K_COUNT && amd.load_error == hipSuccess; k++)
        amd.load_error = amd.get(&amd.fn[k], module, hs_kernel_names[k]);
}

static int amd_launch(hs_kernel k, unsigned gx, unsigned gy, unsigned bx, unsigned by, void **params, uintptr_t stream)
{
    hipError_t before = pending_error();
    pthread_once(&amd.once, load_module);
    if (amd.load_error != hipSuccess)
        return quietly(before, amd.load_error);
    return quietly(before, amd.launch(amd.fn[k], gx, gy, 1, bx, by, 1, 0, (hipStream_t)stream, params, NULL));
}

static int amd_alloc(void **p, size_t bytes)
{
    pthread_once(&amd.once, load_module);
    return amd.malloc_ ? amd.malloc_(p, bytes) : hipErrorNotSupported;
}

static int amd_d2h(void *dst, const void *src, size_t bytes)
{
    return amd.memcpy_ ? amd.memcpy_(dst, src, bytes, hipMemcpyDeviceToHost) : hipErrorNotSupported;
}

static int amd_h2d(void *dst, const void *src, size_t bytes)
{
    return amd.memcpy_ ? amd.memcpy_(dst, src, bytes, hipMemcpyHostToDevice) : hipErrorNotSupported;
}

static int amd_sync(uintptr_t stream) { return amd.sync ? amd.sync((hipStream_t)stream) : hipErrorNotSupported; }

const hs_kernel_ops hs_hip_kernel_ops = {
    .launch = amd_launch,
    .alloc = amd_alloc,
    .d2h = amd_d2h,
    .h2d = amd_h2d,
    .sync = amd_sync,
    .invalid_value = hipErrorInvalidValue,
    .not_supported = hipErrorNotSupported,
};
