/* Linked into early_calls (DT_NEEDED): its constructor makes wrapped calls, one bad, while the
 * program is still starting.  The dynamic linker runs it before the preloaded hipshadow's own
 * constructor (objects loaded later are initialised first), so hipshadow initialises itself
 * from inside this library's first call. */
#include "common.h"

char *early_lib_dev;

__attribute__((constructor(101))) static void early_lib_init(void)
{
    char host[256];
    if (hipMalloc((void **)&early_lib_dev, 96) != hipSuccess)
        return;
    TRY(hipMemcpyDtoH(host, early_lib_dev, 160)); /* 64 bytes past the end */
    fprintf(stderr, "early_calls_lib: constructor ran\n");
}
