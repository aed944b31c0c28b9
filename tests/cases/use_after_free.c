/* A D2H from a buffer freed earlier: the GPU faults, and every later call returns the sticky
 * "illegal memory access" (seed 001's message).  hipshadow names the free site. */
#include "common.h"

__attribute__((noinline)) void release_scratch(void *p) { MUST(hipFree(p)); }

int main(void)
{
    float *scratch, host[256];
    MUST(hipMalloc((void **)&scratch, sizeof host));
    release_scratch(scratch);
    hipError_t e = TRY(hipMemcpy(host, scratch, sizeof host, hipMemcpyDeviceToHost));
    return e == hipErrorIllegalAddress ? 0 : 1;
}
