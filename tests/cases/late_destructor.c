/* A clean program; the bad copies come from late_destructor_lib's destructor at exit. */
#include "common.h"

int main(void)
{
    char *dev, host[64];
    MUST(hipMalloc((void **)&dev, 64));
    MUST(hipMemcpyDtoH(host, dev, 64));
    MUST(hipFree(dev));
    printf("main done\n");
    return 0;
}
