/* A "device" pointer that is really a host buffer: hipMemcpyDtoH from malloc'ed memory.  The
 * runtime treats unknown pointers as host memory and copies without complaint. */
#include "common.h"

#include <string.h>

int main(void)
{
    float *not_device = malloc(4096), host[1024];
    memset(not_device, 0, 4096);
    hipError_t e = TRY(hipMemcpyDtoH(host, not_device, sizeof host));
    free(not_device);
    return e == hipSuccess ? 0 : 1;
}
