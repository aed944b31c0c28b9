/* Seed 000's layout, done right: one 1 GiB pool, tensors at 4 KiB-aligned interior offsets, and
 * the 519 MB token_embd read back in 128 MiB chunks.  Every copy is an interior pointer that
 * stays in bounds: hipshadow must report nothing, and the data must round-trip. */
#include "common.h"

#include <stdint.h>
#include <string.h>

int main(void)
{
    const size_t pool_bytes = 1024 * MiB, chunk = 128 * MiB, align = 4096;
    const size_t embd_bytes = 896ull * 151936 * 4; /* 544,538,624 */
    uint8_t *pool;
    MUST(hipMalloc((void **)&pool, pool_bytes));

    /* a few small tensors first, so token_embd sits at an interior offset */
    size_t offset = 0;
    static uint8_t small[300000];
    memset(small, 7, sizeof small);
    for (int t = 0; t < 5; t++) {
        MUST(hipMemcpyHtoD(pool + offset, small, sizeof small));
        offset = (offset + sizeof small + align - 1) & ~(align - 1);
    }
    const size_t embd_offset = offset;

    uint8_t *host = malloc(embd_bytes), *back = malloc(embd_bytes);
    for (size_t i = 0; i < embd_bytes; i += 4096)
        host[i] = (uint8_t)(i / 4096);
    MUST(hipMemcpyHtoD(pool + embd_offset, host, embd_bytes));
    for (size_t done = 0; done < embd_bytes; done += chunk) {
        size_t n = embd_bytes - done < chunk ? embd_bytes - done : chunk;
        MUST(hipMemcpyDtoH(back + done, pool + embd_offset + done, n));
    }
    int mismatches = 0;
    for (size_t i = 0; i < embd_bytes; i += 4096)
        mismatches += back[i] != (uint8_t)(i / 4096);
    printf("token_embd at pool offset %zu read back in %zu chunks: %d mismatches\n", embd_offset,
           (embd_bytes + chunk - 1) / chunk, mismatches);
    free(host);
    free(back);
    MUST(hipFree(pool));
    return mismatches != 0;
}
