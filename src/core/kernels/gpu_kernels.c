#include "kernels/gpu_kernels.h"
#include "runtime/own_calls.h"

#include <pthread.h>

const char *const hs_kernel_names[HS_K_COUNT] = {
    "hs_transpose_e1",  "hs_transpose_e2",        "hs_transpose_e4",        "hs_transpose_e8",
    "hs_transpose_e16", "hs_transpose_e1_packed", "hs_transpose_e2_packed", "hs_copy16",
    "hs_copy1",         "hs_redzone_fill",        "hs_redzone_verify",
};

static const hs_kernel_ops *ops(void) { return hs_own_kernels(); }

int hs_gpu_transpose(void *dst, size_t dpitch, const void *src, size_t spitch, size_t rows, size_t cols, size_t elem,
                     uintptr_t stream)
{
    const hs_kernel_ops *k = ops();
    if (!k || !k->launch)
        return k ? k->not_supported : -1;
    hs_kernel kernel;
    unsigned tile;
    /* small elements move as words when both sides allow it (kernels/transpose.hip): bytes as
     * 32-bit words, halves as 64-bit words */
    uintptr_t align = (uintptr_t)dst | (uintptr_t)src | dpitch | spitch;
    switch (elem) {
    case 1:
        kernel = (align & 3) == 0 ? HS_K_TRANSPOSE_E1_PACKED : HS_K_TRANSPOSE_E1;
        tile = 128;
        break;
    case 2:
        kernel = (align & 7) == 0 ? HS_K_TRANSPOSE_E2_PACKED : HS_K_TRANSPOSE_E2;
        tile = 128;
        break;
    case 4:
        kernel = HS_K_TRANSPOSE_E4;
        tile = 64;
        break;
    case 8:
        kernel = HS_K_TRANSPOSE_E8;
        tile = 64;
        break;
    case 16:
        kernel = HS_K_TRANSPOSE_E16;
        tile = 32;
        break;
    default: return k->invalid_value;
    }
    if (!rows || !cols)
        return 0;
    if (!dst || !src || spitch < cols * elem || dpitch < rows * elem)
        return k->invalid_value;
    unsigned long long col_tiles = (cols + tile - 1) / tile, row_tiles = (rows + tile - 1) / tile;
    if (col_tiles > 0x7fffffffull)
        return k->invalid_value;
    unsigned grid_y = row_tiles > 65535 ? 65535 : (unsigned)row_tiles;
    unsigned long long dp = dpitch, sp = spitch, r = rows, c = cols;
    void *params[] = {&dst, &dp, &src, &sp, &r, &c, &row_tiles, &grid_y};
    return k->launch(kernel, (unsigned)col_tiles, grid_y, 32, 8, params, stream);
}

static int launch_copy(hs_kernel kernel, void *dst, const void *src, unsigned long long n, uintptr_t stream)
{
    if (!n)
        return 0;
    unsigned long long blocks = (n + 255) / 256;
    unsigned grid = blocks > (1u << 20) ? (1u << 20) : (unsigned)blocks; /* then each thread loops */
    unsigned long long stride = (unsigned long long)grid * 256;
    void *params[] = {&dst, &src, &n, &stride};
    return ops()->launch(kernel, grid, 1, 256, 1, params, stream);
}

int hs_gpu_copy(void *dst, const void *src, size_t bytes, uintptr_t stream)
{
    const hs_kernel_ops *k = ops();
    if (!k || !k->launch)
        return k ? k->not_supported : -1;
    unsigned char *d = dst;
    const unsigned char *s = src;
    /* 16-byte vectors need both sides aligned alike: bytes up to the first aligned address,
     * vectors, then the tail */
    if (((uintptr_t)d & 15) != ((uintptr_t)s & 15) || bytes < 64)
        return launch_copy(HS_K_COPY1, d, s, bytes, stream);
    size_t head = (16 - ((uintptr_t)s & 15)) & 15, body = (bytes - head) / 16, tail = bytes - head - body * 16;
    int rc = launch_copy(HS_K_COPY1, d, s, head, stream);
    if (!rc)
        rc = launch_copy(HS_K_COPY16, d + head, s + head, body, stream);
    if (!rc)
        rc = launch_copy(HS_K_COPY1, d + head + body * 16, s + head + body * 16, tail, stream);
    return rc;
}

/* ---- redzones ---- */

int hs_gpu_redzone_fill(void *dst, size_t n, unsigned pattern, uintptr_t stream, bool wait)
{
    const hs_kernel_ops *k = ops();
    if (!k || !k->launch || !k->sync)
        return k ? k->not_supported : -1;
    if (!n)
        return 0;
    unsigned long long blocks = (n + 255) / 256, len = n;
    unsigned grid = blocks > 4096 ? 4096 : (unsigned)blocks;
    unsigned long long stride = (unsigned long long)grid * 256;
    void *params[] = {&dst, &len, &pattern, &stride};
    int rc = k->launch(HS_K_REDZONE_FILL, grid, 1, 256, 1, params, stream);
    return rc || !wait ? rc : k->sync(stream); /* filled before the program can use the allocation */
}

/* The device buffer of a check: HS_GPU_REDZONE_MAX (address, length) pairs, then the results. */
static struct {
    pthread_once_t once;
    int error;
    unsigned char *device;
} scratch = {.once = PTHREAD_ONCE_INIT};

static void make_scratch(void)
{
    void *p = NULL;
    scratch.error = ops()->alloc(&p, HS_GPU_REDZONE_MAX * (2 * sizeof(uint64_t) + 2 * sizeof(uint32_t)));
    scratch.device = p;
}

int hs_gpu_redzone_verify(const uintptr_t *addr, const uint32_t *len, int n, unsigned pattern, uint32_t *first,
                          uint32_t *last)
{
    const hs_kernel_ops *k = ops();
    if (!k || !k->launch || !k->alloc || !k->h2d || !k->d2h || n > HS_GPU_REDZONE_MAX)
        return k ? k->not_supported : -1;
    if (n <= 0)
        return 0;
    pthread_once(&scratch.once, make_scratch);
    if (scratch.error || !scratch.device)
        return scratch.error ? scratch.error : k->not_supported;
    static uint64_t desc[2 * HS_GPU_REDZONE_MAX]; /* callers hold the redzone set's lock */
    static uint32_t out[2 * HS_GPU_REDZONE_MAX];
    for (int i = 0; i < n; i++)
        desc[2 * i] = addr[i], desc[2 * i + 1] = len[i];
    unsigned long long *d_desc = (unsigned long long *)scratch.device;
    unsigned *d_out = (unsigned *)(scratch.device + HS_GPU_REDZONE_MAX * 2 * sizeof(uint64_t));
    int rc = k->h2d(d_desc, desc, (size_t)n * 2 * sizeof(uint64_t));
    void *params[] = {&d_desc, &pattern, &d_out};
    if (!rc)
        rc = k->launch(HS_K_REDZONE_VERIFY, (unsigned)n, 1, 256, 1, params, 0);
    if (!rc)
        rc = k->d2h(out, d_out, (size_t)n * 2 * sizeof(uint32_t)); /* waits for the launch */
    for (int i = 0; !rc && i < n; i++)
        first[i] = out[2 * i], last[i] = out[2 * i + 1];
    return rc;
}
