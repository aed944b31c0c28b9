/* Seed 000's sub-buffer read-back, on a runtime that refuses D2H from sub-buffers (the simulator
 * with SIMHIP_REJECT_INTERIOR_D2H=1).  `fallback_stage ok` reads 3 MiB back from offset 12345
 * of a pool and checks every byte; `fallback_stage oob` reads past the pool's end (never
 * rescued).  Exit 0 when the read-back succeeded with the right data, 1 when it failed. */
#include "common.h"

#include <string.h>

int main(int argc, char **argv)
{
    const size_t pool_bytes = 16 * MiB, offset = 12345, n = 3 * MiB;
    int oob = argc > 1 && !strcmp(argv[1], "oob");
    unsigned char *pool, *host = malloc(n), *back = malloc(16 * MiB);
    for (size_t i = 0; i < n; i++)
        host[i] = (unsigned char)(i * 131 + 7);
    MUST(hipMalloc((void **)&pool, pool_bytes));
    MUST(hipMemcpyHtoD(pool + offset, host, n));
    memset(back, 0, n);
    hipError_t e = TRY(hipMemcpyDtoH(back, pool + (oob ? pool_bytes - n / 2 : offset), n));
    int right = e == hipSuccess && !memcmp(back, host, n);
    printf("read-back: %s, data %s\n", hipGetErrorName(e), right ? "right" : "not checked or wrong");
    MUST(hipFree(pool));
    return right ? 0 : 1;
}
