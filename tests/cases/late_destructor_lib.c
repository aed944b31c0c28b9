/* A library whose destructor makes two bad copies at exit.  Loaded before hipshadow is
 * initialised (it is preloaded ahead of it), so its destructor runs after hipshadow's: the two
 * findings must still be counted in the exit SUMMARY and the findings file, and exitcode= must
 * not stop this destructor from running. */
#include "common.h"

static char *dev;

__attribute__((constructor)) static void lib_init(void)
{
    if (hipMalloc((void **)&dev, 64) != hipSuccess)
        dev = NULL;
}

__attribute__((destructor)) static void lib_fini(void)
{
    char host[256];
    if (!dev)
        return;
    TRY(hipMemcpyDtoH(host, dev, 128)); /* 64 bytes past the end */
    TRY(hipMemcpyDtoH(host, dev + 32, 64));
    fprintf(stderr, "late_destructor_lib: destructor ran\n");
}
