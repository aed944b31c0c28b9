/* Pinned host memory hipshadow never saw allocated (the runtime made it for a library it does
 * not wrap): hipshadow asks the runtime, whose answer must be read by the running release's
 * numbering (ROCm 5: host 0, device 1; ROCm 6+: host 1, device 2).  Read the wrong way, the
 * pinned buffer is device memory and hipMemcpyDefault's copies from a device buffer into it are
 * device-to-device. */
#include "common.h"

#include <dlfcn.h>

int main(void)
{
    void *(*pinned_alloc)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "simhip_pinned_unwrapped");
    if (!pinned_alloc)
        return 77; /* not the simulator */
    char *pinned = pinned_alloc(16384), *dev;
    if (!pinned)
        return 99;
    MUST(hipMalloc((void **)&dev, 4096));
    /* hipMemcpyDefault: hipshadow must learn what the pinned side is to tell the direction. */
    MUST(hipMemcpy(pinned, dev, 1024, hipMemcpyDefault)); /* D2H, clean */
    TRY(hipMemcpy(pinned, dev, 8192, hipMemcpyDefault));  /* D2H, 4096 bytes past the device buffer */
    MUST(hipFree(dev));
    printf("pinned copies done\n");
    return 0;
}
