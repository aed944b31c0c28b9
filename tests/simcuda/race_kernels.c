/* tests/gpu/race_cases.c's kernels on the simulated runtime: race_kernels.cu with host functions
 * for device code, registered as nvcc's host code registers them (nvcc_registration.h). */
#include "nvcc_registration.h"
#include "../gpu/race_cases.h"

static void fill_host(void **params)
{
    int *p = *(int **)params[0];
    int n = *(int *)params[1];
    if (simcuda_device_range_ok(p, (size_t)n * sizeof(int), 1))
        for (int i = 0; i < n; i++)
            p[i] = *(int *)params[2];
}

static void scale_host(void **params)
{
    int *out = *(int **)params[0];
    const int *in = *(const int **)params[1];
    int n = *(int *)params[2];
    if (simcuda_device_range_ok(out, (size_t)n * sizeof(int), 1) &&
        simcuda_device_range_ok(in, (size_t)n * sizeof(int), 0))
        for (int i = 0; i < n; i++)
            out[i] = 2 * in[i];
}

static const size_t fill_sizes[] = {sizeof(int *), sizeof(int), sizeof(int)};
static const size_t scale_sizes[] = {sizeof(int *), sizeof(int *), sizeof(int)};
static const simcuda_kernel kernels[] = {{"fill", fill_host, 3, fill_sizes}, {"scale", scale_host, 3, scale_sizes}};
static const simcuda_image image = {SIMCUDA_IMAGE_MAGIC, 2, kernels};
static simcuda_fatbin_wrapper wrapper = SIMCUDA_FATBIN_WRAPPER(&image);

static const char stubs[2];
const void *const rc_fill = &stubs[0];
const void *const rc_scale = &stubs[1];

__attribute__((constructor)) static void register_kernels(void) { simcuda_register_stubs(&wrapper, stubs); }
