/* A copy that says device-to-host but whose destination is device memory. */
#include "common.h"

int main(void)
{
    float *a, *b;
    MUST(hipMalloc((void **)&a, 4096));
    MUST(hipMalloc((void **)&b, 4096));
    hipError_t e = TRY(hipMemcpy(b, a, 4096, hipMemcpyDeviceToHost));
    MUST(hipFree(a));
    MUST(hipFree(b));
    return e == hipSuccess ? 0 : 1;
}
