/* tests/gpu/last_error.c's kernels on the simulated runtime: what nvcc makes of
 * tests/gpu/last_error_kernels.cu, with host functions for device code, registered as nvcc's
 * host code registers them (nvcc_registration.h). */
#include "nvcc_registration.h"
#include "../gpu/last_error.h"

/* poke(int *p, long long offset, int value): p[offset] = value, if the device may write there. */
static void poke_host(void **params)
{
    int *p = *(int **)params[0];
    long long offset = *(long long *)params[1];
    if (simcuda_device_range_ok(p + offset, sizeof(int), 1))
        p[offset] = *(int *)params[2];
}

static const size_t poke_sizes[] = {sizeof(int *), sizeof(long long), sizeof(int)};
static const simcuda_kernel kernels[] = {
    {"poke", poke_host, 3, poke_sizes},   {"fresh0", poke_host, 3, poke_sizes}, {"fresh1", poke_host, 3, poke_sizes},
    {"fresh2", poke_host, 3, poke_sizes}, {"fresh3", poke_host, 3, poke_sizes}, {"fresh4", poke_host, 3, poke_sizes},
    {"fresh5", poke_host, 3, poke_sizes},
};
static const simcuda_image image = {SIMCUDA_IMAGE_MAGIC, 7, kernels};
static simcuda_fatbin_wrapper wrapper = SIMCUDA_FATBIN_WRAPPER(&image);

/* The host stubs: only their addresses matter, each its own. */
static const char stubs[7];
const void *const le_poke = &stubs[0];
const void *const le_fresh[6] = {&stubs[1], &stubs[2], &stubs[3], &stubs[4], &stubs[5], &stubs[6]};

__attribute__((constructor)) static void register_kernels(void) { simcuda_register_stubs(&wrapper, stubs); }
