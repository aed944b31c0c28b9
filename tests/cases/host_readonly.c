/* A D2H into read-only host memory (a PROT_READ mapping): the runtime would fault on the host
 * side.  Run in block mode, so the copy never happens. */
#include "common.h"

#include <sys/mman.h>

int main(void)
{
    float *dev;
    MUST(hipMalloc((void **)&dev, 8192));
    void *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    hipError_t e = TRY(hipMemcpyDtoH(ro, dev, 8192));
    void *gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(gone, 8192);
    hipError_t e2 = TRY(hipMemcpyDtoH(gone, dev, 8192));
    MUST(hipFree(dev));
    return e == hipErrorInvalidValue && e2 == hipErrorInvalidValue ? 0 : 1;
}
