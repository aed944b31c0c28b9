/* Host permissions change: a region reserved PROT_NONE (as malloc arenas and thread stacks are)
 * is made writable later.  The first D2H into it, still PROT_NONE, is host-out-of-bounds (blocked);
 * the one after mprotect is clean: hipshadow must not trust its old view of the maps. */
#include "common.h"

#include <sys/mman.h>

int main(void)
{
    float *dev;
    MUST(hipMalloc((void **)&dev, 65536));
    void *region = mmap(NULL, 65536, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    hipError_t before = TRY(hipMemcpyDtoH(region, dev, 65536));
    mprotect(region, 65536, PROT_READ | PROT_WRITE);
    hipError_t after = TRY(hipMemcpyDtoH(region, dev, 65536));
    MUST(hipFree(dev));
    printf("before mprotect: %d, after: %d\n", (int)before, (int)after);
    return before == hipErrorInvalidValue && after == hipSuccess ? 0 : 1;
}
