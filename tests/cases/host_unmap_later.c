/* A host buffer checked once (so the mapping snapshot covers it), then unmapped: the next D2H
 * into it must be host-out-of-bounds.  hipshadow trusts its snapshot on the hot path only while
 * no munmap/mprotect/mremap has happened since it was read. */
#include "common.h"

#include <sys/mman.h>

int main(void)
{
    float *dev;
    MUST(hipMalloc((void **)&dev, 65536));
    void *region = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    hipError_t mapped = TRY(hipMemcpyDtoH(region, dev, 65536)); /* clean */
    munmap(region, 65536);
    hipError_t unmapped = TRY(hipMemcpyDtoH(region, dev, 65536)); /* into unmapped memory */
    MUST(hipFree(dev));
    printf("mapped: %d, unmapped: %d\n", (int)mapped, (int)unmapped);
    return 0;
}
