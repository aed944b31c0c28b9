/* A D2H of 4096 bytes into a pinned staging buffer of 1024. */
#include "common.h"

int main(void)
{
    float *dev, *pinned;
    MUST(hipMalloc((void **)&dev, 4096));
    MUST(hipHostMalloc((void **)&pinned, 1024, 0));
    hipError_t e = TRY(hipMemcpyDtoH(pinned, dev, 4096));
    MUST(hipHostFree(pinned));
    MUST(hipFree(dev));
    return e == hipErrorInvalidValue ? 0 : 1;
}
