/* Seed 003: the embedding read back at offset 1,976,131,072 of a 2,403 MiB arena, 519 MB long.
 * Expected: out-of-bounds, overrun 941,568, then runtime-error (hipErrorInvalidValue).
 * With mode=block the copy never reaches the runtime and the host buffer stays untouched. */
#include "common.h"

#include <stdint.h>
#include <string.h>

int main(void)
{
    uint8_t *arena;
    MUST(hipMalloc((void **)&arena, 2403 * MiB));
    const size_t offset = 1976131072, bytes = 544538624;
    uint8_t *host = malloc(bytes);
    memset(host, 0xAB, 4096);
    hipError_t e = TRY(hipMemcpyDtoH(host, arena + offset, bytes));
    printf("hipMemcpyDtoH returned %d; first host byte 0x%02x\n", (int)e, host[0]);
    MUST(hipFree(arena));
    free(host);
    return e == hipErrorInvalidValue ? 0 : 1;
}
