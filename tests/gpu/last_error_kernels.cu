// last_error.c's kernels, for nvcc: poke and the same kernel under six more names (last_error.h).
#include "last_error.h"

#define POKE(name) \
    extern "C" __global__ void name(int *p, long long offset, int value) { p[offset] = value; }
POKE(poke)
POKE(fresh0)
POKE(fresh1)
POKE(fresh2)
POKE(fresh3)
POKE(fresh4)
POKE(fresh5)

extern "C" {
const void *const le_poke = (const void *)poke;
const void *const le_fresh[6] = {(const void *)fresh0, (const void *)fresh1, (const void *)fresh2,
                                 (const void *)fresh3, (const void *)fresh4, (const void *)fresh5};
}
