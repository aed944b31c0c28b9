/* hipGetProcAddress (ROCm 6.1 on) hands out hipshadow's wrappers, whatever headers hipshadow and
 * this program were built with: the copy made through the pointer it returns is checked.  On a
 * runtime without it (ROCm 5) the program says so and makes the copy directly. */
#include "common.h"

#include <dlfcn.h>

typedef hipError_t (*get_proc_fn)(const char *, void **, int, uint64_t, int *);
typedef hipError_t (*dtoh_fn)(void *, hipDeviceptr_t, size_t);

int main(void)
{
    get_proc_fn get_proc = (get_proc_fn)dlsym(RTLD_DEFAULT, "hipGetProcAddress");
    dtoh_fn dtoh = NULL;
    int status = -1;
    hipError_t e = get_proc ? get_proc("hipMemcpyDtoH", (void **)&dtoh, 600, 0, &status) : hipErrorNotSupported;
    printf("hipGetProcAddress: %d, status %d, wrapper %d\n", (int)e, status, dtoh == hipMemcpyDtoH);
    if (e != hipSuccess)
        dtoh = hipMemcpyDtoH;
    char *dev, host[8192];
    MUST(hipMalloc((void **)&dev, 4096));
    TRY(dtoh(host, dev + 1024, 4000)); /* 928 bytes past the end of the allocation */
    MUST(hipFree(dev));
    return 0;
}
