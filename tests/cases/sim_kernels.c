/* The host versions of test_kernels.hip's kernels (sim_kernels.h): each touches memory only
 * where the simulator says the device may (simhip_device_access), as a GPU would fault. */
#include "sim_kernels.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static int (*device_access)(const void *, size_t, int);

static void poke_host(void **params)
{
    int *p = *(int **)params[0];
    long long offset = *(long long *)params[1];
    if (device_access(p + offset, sizeof(int), 1))
        p[offset] = *(int *)params[2];
}

static void scale_host(void **params)
{
    float *out = *(float **)params[0];
    const float *in = *(const float **)params[1];
    int n = *(int *)params[2];
    float k = *(float *)params[3];
    if (device_access(out, n * sizeof(float), 1) && device_access(in, n * sizeof(float), 0))
        for (int i = 0; i < n; i++)
            out[i] = in[i] * k;
}

bool sim_kernels_register(void)
{
    int (*reg)(const char *, void (*)(void **)) = (int (*)(const char *, void (*)(void **)))dlsym(
        RTLD_DEFAULT, "simhip_register_kernel");
    *(void **)&device_access = dlsym(RTLD_DEFAULT, "simhip_device_access");
    if (!reg || !device_access || !hs_test_kernels_size)
        return false;
    reg("poke", poke_host);
    reg("scale", scale_host);
    reg("scale_r", scale_host);
    return true;
}

void sim_kernels_load(sim_kernels *k)
{
    if (!sim_kernels_register())
        exit(77);
    if (hipModuleLoadData(&k->module, hs_test_kernels) != hipSuccess ||
        hipModuleGetFunction(&k->poke, k->module, "poke") != hipSuccess ||
        hipModuleGetFunction(&k->scale, k->module, "scale") != hipSuccess ||
        hipModuleGetFunction(&k->scale_r, k->module, "scale_r") != hipSuccess) {
        fprintf(stderr, "sim_kernels: the test kernels' module did not load\n");
        exit(99);
    }
}
