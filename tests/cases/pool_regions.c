/* Seed 000's pool with annotated tensors.  `pool_regions clean` reads every tensor back exactly
 * (zero findings); `pool_regions overrun` reads token_embd.weight 4096 bytes too far: still
 * inside the pool, so the runtime is happy, but hipshadow names the tensor (region-overrun). */
#include "common.h"
#include "hipshadow/hipshadow.h"

#include <string.h>

static const struct {
    const char *name;
    size_t bytes;
} tensors[] = {
    {"blk.0.attn_norm.weight", 896 * 4},
    {"blk.0.attn_q.weight", 896 * 896 * 4},
    {"token_embd.weight", 896ull * 151936 * 4},
    {"output_norm.weight", 896 * 4},
};

int main(int argc, char **argv)
{
    int overrun = argc > 1 && !strcmp(argv[1], "overrun");
    const size_t pool_bytes = 1024 * MiB, align = 4096;
    char *pool;
    MUST(hipMalloc((void **)&pool, pool_bytes));
    hipshadow_name_allocation(pool, "weights pool #0");
    size_t offset[4], at = 0;
    for (int t = 0; t < 4; t++) {
        offset[t] = at;
        hipshadow_region_register(pool + at, tensors[t].bytes, tensors[t].name);
        at = (at + tensors[t].bytes + align - 1) & ~(align - 1);
    }
    char *host = malloc(tensors[2].bytes + 4096);
    for (int t = 0; t < 4; t++) {
        size_t n = tensors[t].bytes + (overrun && t == 2 ? 4096 : 0);
        MUST(hipMemcpyDtoH(host, pool + offset[t], n));
    }
    for (int t = 0; t < 4; t++)
        hipshadow_region_unregister(pool + offset[t]);
    MUST(hipFree(pool));
    free(host);
    puts("pool read back");
    return 0;
}
