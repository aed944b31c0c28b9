/* Preloaded by the simcuda_getproc_bypasses_preload test: it exports two driver entry points,
 * counting the calls that reach it by symbol binding and forwarding them to the driver. */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>

static int calls;

__attribute__((visibility("default"))) int simcuda_interposer_calls(void) { return calls; }

__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    static CUresult (*next)(CUdeviceptr *, size_t);
    if (!next)
        *(void **)&next = dlsym(RTLD_NEXT, "cuMemAlloc_v2");
    calls++;
    return next(p, n);
}

__attribute__((visibility("default"))) CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    static CUresult (*next)(void *, CUdeviceptr, size_t);
    if (!next)
        *(void **)&next = dlsym(RTLD_NEXT, "cuMemcpyDtoH_v2");
    calls++;
    return next(dst, src, n);
}
