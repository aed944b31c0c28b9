/* Seed 001's KV-cache dump: a per-layer cache sized for max_seq_len, dumped with a stride
 * computed from seq_len_used, which has run past max_seq_len. */
#include "common.h"

int main(void)
{
    const size_t layers = 4, heads = 8, head_dim = 128, max_seq_len = 512, seq_len_used = 520;
    const size_t cache_bytes = heads * max_seq_len * head_dim * sizeof(float);
    float *k_cache[4];
    for (size_t l = 0; l < layers; l++)
        MUST(hipMalloc((void **)&k_cache[l], cache_bytes));
    const size_t kv_layer_stride_bytes = heads * seq_len_used * head_dim * sizeof(float);
    float *host = malloc(kv_layer_stride_bytes);
    hipError_t e = TRY(hipMemcpy(host, k_cache[2], kv_layer_stride_bytes, hipMemcpyDeviceToHost));
    for (size_t l = 0; l < layers; l++)
        MUST(hipFree(k_cache[l]));
    free(host);
    return e == hipErrorInvalidValue ? 0 : 1;
}
