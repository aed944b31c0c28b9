/* A D2H whose device pointer was never filled in. */
#include "common.h"

int main(void)
{
    float host[64];
    float *weights = NULL; /* the loader skipped this tensor */
    hipError_t e = TRY(hipMemcpyDtoH(host, weights, sizeof host));
    return e == hipErrorInvalidValue ? 0 : 1;
}
