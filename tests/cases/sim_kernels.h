/* test_kernels.hip's kernels on the simulated runtime.  Their device code is built into an AMD
 * code object (embedded as hs_test_kernels, with the argument metadata hipshadow reads at a
 * kernel's first launch); the simulator runs the host versions in sim_kernels.c, registered by
 * name:
 *   poke(int *p, long long offset, int value)           p[offset] = value
 *   scale(float *out, const float *in, int n, float k)  out[i] = in[i] * k
 *   scale_r                                             scale, its pointers restrict (the code
 *                                                       object says out write_only, in read_only) */
#ifndef SIM_KERNELS_H
#define SIM_KERNELS_H

#include <hip/hip_runtime_api.h>

#include <stdbool.h>

extern const unsigned char hs_test_kernels[];
extern const unsigned long hs_test_kernels_size;

typedef struct sim_kernels {
    hipModule_t module;
    hipFunction_t poke, scale, scale_r;
} sim_kernels;

/* Registers the host versions with the simulator; false where this is not the simulator or no
 * code object was built (the program then exits 77). */
bool sim_kernels_register(void);

/* Registers them and loads the module with its three functions; exits 77 where
 * sim_kernels_register fails, 99 where loading does. */
void sim_kernels_load(sim_kernels *k);

#endif
