/* Memory allocated through a path hipshadow does not wrap (here: the runtime's own hipMalloc,
 * looked up in the runtime's handle).  hipshadow asks the runtime before calling it unknown:
 * an in-bounds copy is clean, an overrun is out-of-bounds against the runtime's range. */
#include "common.h"

#include <dlfcn.h>

int main(void)
{
    void *rt = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
    hipError_t (*runtime_malloc)(void **, size_t) = rt ? (hipError_t(*)(void **, size_t))dlsym(rt, "hipMalloc") : NULL;
    if (!runtime_malloc)
        return 99;
    char *dev, host[8192];
    if (runtime_malloc((void **)&dev, 4096) != hipSuccess)
        return 99;
    MUST(hipMemcpyDtoH(host, dev + 1024, 1024));  /* clean */
    TRY(hipMemcpyDtoH(host, dev + 1024, 4000));   /* 928 bytes past the end */
    MUST(hipFree(dev));                            /* not an invalid free: the runtime knows it */
    return 0;
}
