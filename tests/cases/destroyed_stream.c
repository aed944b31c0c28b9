/* An async D2H on a stream that was already destroyed. */
#include "common.h"

int main(void)
{
    float *dev, *pinned;
    hipStream_t s;
    MUST(hipMalloc((void **)&dev, 4096));
    MUST(hipHostMalloc((void **)&pinned, 4096, 0));
    MUST(hipStreamCreate(&s));
    MUST(hipStreamDestroy(s));
    hipError_t e = TRY(hipMemcpyAsync(pinned, dev, 4096, hipMemcpyDeviceToHost, s));
    MUST(hipHostFree(pinned));
    MUST(hipFree(dev));
    return e != hipSuccess ? 0 : 1;
}
