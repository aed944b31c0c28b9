/* A "Python extension": linked against libamdhip64 and loaded with RTLD_LOCAL, so RTLD_NEXT
 * cannot see the runtime from the preload library. */
#include "common.h"

int extension_entry(void)
{
    char *dev, host[256];
    MUST(hipMalloc((void **)&dev, 128));
    hipError_t e = TRY(hipMemcpyDtoH(host, dev, 256));
    MUST(hipFree(dev));
    return e == hipErrorInvalidValue ? 0 : 1;
}
