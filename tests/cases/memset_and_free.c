/* A memset past the end, a hipMemcpyDefault that resolves to D2H past the end, a double free. */
#include "common.h"

int main(void)
{
    char *dev, host[8192];
    MUST(hipMalloc((void **)&dev, 4096));
    TRY(hipMemsetD32(dev + 1024, 0, 1024));                  /* 4096 bytes from offset 1024 */
    TRY(hipMemcpy(host, dev + 4000, 200, hipMemcpyDefault)); /* 104 bytes past the end */
    MUST(hipFree(dev));
    TRY(hipFree(dev)); /* double free */
    return 0;
}
