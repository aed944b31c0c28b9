/* A program that looks the runtime's functions up by name gets hipshadow's wrappers: by handle
 * (dlsym on the runtime's own handle, as Python's ctypes does), by RTLD_NEXT and RTLD_DEFAULT
 * (which must stay relative to the program, not to hipshadow), and by dlvsym.  An allocation
 * made through the pointer is tracked like a direct one, so the overrun below names it. */
#define _GNU_SOURCE /* dlvsym */
#include "common.h"

#include <dlfcn.h>

typedef hipError_t (*malloc_fn)(void **, size_t);

int main(void)
{
    void *rt = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
    malloc_fn by_handle = rt ? (malloc_fn)dlsym(rt, "hipMalloc") : NULL;
    malloc_fn by_next = (malloc_fn)dlsym(RTLD_NEXT, "hipMalloc");
    malloc_fn by_default = (malloc_fn)dlsym(RTLD_DEFAULT, "hipMalloc");
    malloc_fn by_version = rt ? (malloc_fn)dlvsym(rt, "hipMalloc", "hip_4.2") : NULL;
    if (!by_handle || !by_next || !by_default)
        return 99;
    /* The program's own reference to hipMalloc is the first definition: the preloaded wrapper. */
    printf("handle=%d next=%d default=%d version=%d\n", by_handle == hipMalloc, by_next == hipMalloc,
           by_default == hipMalloc, by_version == hipMalloc);
    char *dev, host[8192];
    if (by_handle((void **)&dev, 4096) != hipSuccess)
        return 99;
    TRY(hipMemcpyDtoH(host, dev + 1024, 4000)); /* 928 bytes past the end of the allocation */
    MUST(hipFree(dev));
    return 0;
}
