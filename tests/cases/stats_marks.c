/* hipshadow_print_stats(): with stats=1, the counts so far, at each call and again at exit, so a
 * program can bracket one phase; without stats=1 (or without the preload) it prints nothing and
 * returns -1. */
#include "common.h"
#include "hipshadow/hipshadow.h"

int main(void)
{
    char *dev, host[64];
    int before = hipshadow_print_stats(); /* before any wrapped call: nothing counted yet */
    MUST(hipMalloc((void **)&dev, sizeof host));
    for (int i = 0; i < 3; i++)
        MUST(hipMemcpyDtoH(host, dev, sizeof host));
    int after = hipshadow_print_stats();         /* three copies */
    MUST(hipMemcpyDtoH(host, dev, sizeof host)); /* a fourth, in the exit line only */
    MUST(hipFree(dev));
    printf("marks %d %d\n", before, after);
    return 0;
}
