/* The built-in demo: an inference-like program with seed 003's bug planted in it.
 *
 * It loads "weights" into one 2403 MiB memory arena (every tensor is a sub-buffer), runs a few
 * decode steps on a stream (memset, device-to-device "layers", a small D2H of logits into a
 * pinned buffer, synchronise), then reads the embedding back for a CPU transpose, as seed 003
 * did: 544,538,624 bytes at offset 1,976,131,072.  That range ends 941,568 bytes past the
 * arena, and the runtime says only "hipMemcpyDtoH failed with code 1". */
#include "common.h"

#include <stdint.h>
#include <string.h>

static const size_t ARENA_BYTES = 2403 * MiB;              /* 2,519,728,128 */
static const size_t EMBEDDING_OFFSET = 1976131072;         /* where the loader placed token_embd */
static const size_t EMBEDDING_BYTES = 896ull * 151936 * 4; /* 544,538,624 (519 MB) */

__attribute__((noinline)) int transpose_embedding(uint8_t *arena)
{
    void *host = malloc(EMBEDDING_BYTES);
    if (!host)
        return 1;
    hipError_t e = TRY(hipMemcpyDtoH(host, arena + EMBEDDING_OFFSET, EMBEDDING_BYTES));
    if (e != hipSuccess)
        fprintf(stderr,
                "ERROR: Failed to transpose embedding: hipMemcpyDtoH failed with code %d "
                "(base_ptr=%p, offset=%zu, size=%zu MB)\n",
                (int)e, (void *)arena, EMBEDDING_OFFSET, (size_t)(EMBEDDING_BYTES / MiB));
    free(host);
    return e != hipSuccess;
}

__attribute__((noinline)) void decode_steps(uint8_t *arena, hipStream_t stream, float *logits_host, int steps)
{
    const size_t hidden = 896 * sizeof(float), vocab_slice = 1024 * sizeof(float);
    uint8_t *activations = arena + 64 * MiB, *layer_out = arena + 65 * MiB, *logits = arena + 66 * MiB;
    for (int step = 0; step < steps; step++) {
        MUST(hipMemsetAsync(activations, step, hidden, stream));
        for (int layer = 0; layer < 24; layer++)
            MUST(hipMemcpyDtoDAsync(layer_out, activations, hidden, stream));
        MUST(hipMemcpyDtoDAsync(logits, layer_out, hidden, stream));
        MUST(hipMemcpyAsync(logits_host, logits, vocab_slice, hipMemcpyDeviceToHost, stream));
        MUST(hipStreamSynchronize(stream));
        printf("step %d: token %u\n", step, ((unsigned *)logits_host)[0] & 0xff);
    }
}

int main(void)
{
    uint8_t *arena;
    MUST(hipMalloc((void **)&arena, ARENA_BYTES));
    printf("memory arena: %zu MB allocated\n", (size_t)(ARENA_BYTES / MiB));

    static float weights[4096];
    for (int i = 0; i < 4096; i++)
        weights[i] = (float)i;
    for (size_t t = 0; t < 8; t++) /* a few tensors, each a sub-buffer of the arena */
        MUST(hipMemcpyHtoD(arena + t * 4 * MiB, weights, sizeof weights));

    hipStream_t stream;
    MUST(hipStreamCreate(&stream));
    float *logits_host;
    MUST(hipHostMalloc((void **)&logits_host, 1024 * sizeof(float), 0));
    decode_steps(arena, stream, logits_host, 3);

    int failed = transpose_embedding(arena);

    MUST(hipHostFree(logits_host));
    MUST(hipStreamDestroy(stream));
    MUST(hipFree(arena));
    return failed;
}
