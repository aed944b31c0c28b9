/* Hardening: wrapped calls before hipshadow's constructor has run.
 *  - the program's .preinit_array runs before every constructor, hipshadow's and the runtime's:
 *    it allocates and makes a copy 32 bytes past the end;
 *  - early_calls_lib's constructor (a linked library) makes one 64 bytes past the end;
 *  - main makes one 16 bytes past the end, then frees everything.
 * Each must be found once, with its own allocation and overrun; the program runs to the end. */
#include "common.h"

extern char *early_lib_dev;
static char *pre_dev;

static void pre_init(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    char host[256];
    if (hipMalloc((void **)&pre_dev, 128) != hipSuccess)
        return;
    TRY(hipMemcpyDtoH(host, pre_dev, 160)); /* 32 bytes past the end */
    fprintf(stderr, "early_calls: preinit ran\n");
}
__attribute__((section(".preinit_array"), used)) static void (*const pre_init_entry)(int, char **, char **) = pre_init;

int main(void)
{
    char *dev, host[256];
    MUST(hipMalloc((void **)&dev, 48));
    TRY(hipMemcpyDtoH(host, dev, 64)); /* 16 bytes past the end */
    MUST(hipFree(dev));
    if (pre_dev)
        MUST(hipFree(pre_dev));
    if (early_lib_dev)
        MUST(hipFree(early_lib_dev));
    printf("early calls: preinit %d, library %d, main done\n", pre_dev != NULL, early_lib_dev != NULL);
    return 0;
}
