/* The benchmarks' kernel: test_kernels.hip's `scale`, loaded from the embedded code object, whose
 * host version on the simulated runtime does nothing (the simulator's own cost stays out of the
 * figures).  0 when loaded; 77 without the simulator or its kernels (no AMD code object was built);
 * 1 when the module would not load. */
#ifndef BENCH_KERNEL_H
#define BENCH_KERNEL_H

#include <hip/hip_runtime_api.h>

#include <dlfcn.h>

extern const unsigned char hs_test_kernels[];
extern const unsigned long hs_test_kernels_size;

static void bench_scale_host(void **params) { (void)params; }

static inline int bench_load_scale(hipFunction_t *scale)
{
    int (*reg)(const char *, void (*)(void **)) = (int (*)(const char *, void (*)(void **)))dlsym(
        RTLD_DEFAULT, "simhip_register_kernel");
    if (!reg || !hs_test_kernels_size)
        return 77;
    reg("scale", bench_scale_host);
    hipModule_t module;
    return hipModuleLoadData(&module, hs_test_kernels) == hipSuccess &&
                   hipModuleGetFunction(scale, module, "scale") == hipSuccess
               ? 0
               : 1;
}

#endif
