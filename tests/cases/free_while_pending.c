/* Frees that race pending work: hipFreeAsync on one stream of memory that an async copy on
 * another stream still reads, and hipHostFree of a pinned buffer an async copy still writes. */
#include "common.h"

int main(void)
{
    float *dev, *pinned, *dev2;
    hipStream_t s1, s2;
    MUST(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    MUST(hipMallocAsync((void **)&dev, 1 << 16, s1));
    MUST(hipMallocAsync((void **)&dev2, 1 << 16, s1));
    MUST(hipHostMalloc((void **)&pinned, 1 << 16, 0));
    MUST(hipStreamSynchronize(s1));

    MUST(hipMemcpyAsync(pinned, dev, 1 << 16, hipMemcpyDeviceToHost, s1));
    MUST(hipFreeAsync(dev, s2));    /* s1's copy may still be reading it */
    MUST(hipStreamSynchronize(s1)); /* (the simulator then runs s1 before s2's free) */
    MUST(hipStreamSynchronize(s2));

    MUST(hipMemcpyAsync(pinned, dev2, 1 << 16, hipMemcpyDeviceToHost, s1));
    MUST(hipHostFree(pinned)); /* s1's copy may still be writing it */
    MUST(hipFree(dev2));
    MUST(hipStreamDestroy(s1));
    MUST(hipStreamDestroy(s2));
    return 0;
}
