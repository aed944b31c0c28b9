/* tests/gpu/last_error.c's kernels on the simulated runtime: what nvcc makes of
 * tests/gpu/last_error_kernels.cu, with host functions for device code.  A fat binary (here a
 * simcuda_image: each kernel's name, host function and parameter sizes) is registered with the
 * runtime by a constructor, then each kernel's host stub with its name, as nvcc's generated host
 * code does; programs launch kernels by their stubs. */
#include "simcuda.h"
#include "../gpu/last_error.h"

void **__cudaRegisterFatBinary(void *fat_cubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *block, dim3 *grid, int *wsize);

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
static struct {
    int magic, version;
    const void *data;
    void *unused;
} wrapper = {0x466243b1, 1, &image, 0};

/* The host stubs: only their addresses matter, each its own. */
static const char stubs[7];
const void *const le_poke = &stubs[0];
const void *const le_fresh[6] = {&stubs[1], &stubs[2], &stubs[3], &stubs[4], &stubs[5], &stubs[6]};

__attribute__((constructor)) static void register_kernels(void)
{
    void **handle = __cudaRegisterFatBinary(&wrapper);
    for (int i = 0; i < 7; i++)
        __cudaRegisterFunction(handle, &stubs[i], (char *)kernels[i].name, kernels[i].name, -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(handle);
}
