/* hipshadow_transpose2d / _pitched: every element size, odd shapes (1 x N, N x 1, primes,
 * pitched), fresh data, the output poisoned first, compared byte for byte with a CPU transpose
 * (the pitch padding must stay poisoned).  Without the preload the calls return -1. */
#include "common.h"
#include "hipshadow/hipshadow.h"

#include <string.h>

static unsigned seed = 12345;
static unsigned char next_byte(void) { return (unsigned char)((seed = seed * 1103515245u + 12345u) >> 16); }

static int check(size_t rows, size_t cols, size_t elem, size_t spad, size_t dpad)
{
    size_t spitch = cols * elem + spad, dpitch = rows * elem + dpad;
    size_t sbytes = rows * spitch, dbytes = cols * dpitch;
    unsigned char *h_src = malloc(sbytes), *h_dst = malloc(dbytes), *want = malloc(dbytes);
    for (size_t i = 0; i < sbytes; i++)
        h_src[i] = next_byte();
    memset(want, 0xA5, dbytes); /* the poison: padding must keep it */
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            memcpy(want + c * dpitch + r * elem, h_src + r * spitch + c * elem, elem);
    unsigned char *d_src, *d_dst;
    MUST(hipMalloc((void **)&d_src, sbytes));
    MUST(hipMalloc((void **)&d_dst, dbytes));
    MUST(hipMemcpyHtoD(d_src, h_src, sbytes));
    MUST(hipMemsetD8(d_dst, 0xA5, dbytes));
    int rc = spad || dpad ? hipshadow_transpose2d_pitched(d_dst, dpitch, d_src, spitch, rows, cols, elem, NULL)
                          : hipshadow_transpose2d(d_dst, d_src, rows, cols, elem, NULL);
    MUST(hipDeviceSynchronize());
    MUST(hipMemcpyDtoH(h_dst, d_dst, dbytes));
    int ok = rc == 0 && !memcmp(h_dst, want, dbytes);
    printf("%4zu x %-5zu elem %2zu pitch +%zu/+%zu: %s\n", rows, cols, elem, spad, dpad, ok ? "ok" : "WRONG");
    MUST(hipFree(d_src));
    MUST(hipFree(d_dst));
    free(h_src);
    free(h_dst);
    free(want);
    return ok;
}

int main(void)
{
    int probe_rc = hipshadow_transpose2d(NULL, NULL, 0, 0, 4, NULL);
    if (probe_rc == -1) {
        puts("hipshadow is not loaded: hipshadow_transpose2d returned -1");
        return 0;
    }
    static const size_t shapes[][2] = {{1, 1000}, {1000, 1}, {97, 131}, {64, 64}, {33, 200}, {129, 7}};
    static const size_t elems[] = {1, 2, 4, 8, 16};
    int total = 0, good = 0;
    for (size_t e = 0; e < 5; e++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++, total++)
            good += check(shapes[s][0], shapes[s][1], elems[e], 0, 0);
    for (size_t e = 0; e < 5; e++, total++)
        good += check(101, 77, elems[e], 64 + elems[e], 128);
    int bad_elem = hipshadow_transpose2d((void *)16, (void *)16, 4, 4, 3, NULL);
    printf("transpose: %d of %d right; elem_size 3 -> %d\n", good, total, bad_elem);
    return good == total && bad_elem == hipErrorInvalidValue ? 0 : 1;
}
