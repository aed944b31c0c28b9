/* Async D2H into pageable (malloc'ed) memory, in a loop: the runtime makes it synchronous.
 * hipshadow notes it once for the call site, as info. */
#include "common.h"

int main(void)
{
    float *dev, *host = malloc(4096);
    hipStream_t s;
    MUST(hipMalloc((void **)&dev, 4096));
    MUST(hipStreamCreate(&s));
    for (int i = 0; i < 10; i++)
        MUST(hipMemcpyAsync(host, dev, 4096, hipMemcpyDeviceToHost, s));
    MUST(hipStreamSynchronize(s));
    MUST(hipStreamDestroy(s));
    MUST(hipFree(dev));
    free(host);
    return 0;
}
