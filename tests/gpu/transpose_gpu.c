/* hipshadow's transpose kernel on a real NVIDIA GPU (run under the preload: the API lives there).
 *   transpose_gpu check   every element size and odd shapes (1 x N, N x 1, primes, pitched), fresh
 *                         random data each time, the output poisoned first, compared byte for byte
 *                         with a CPU transpose (pitch padding must keep its poison)
 *   transpose_gpu bench   bandwidth (bytes read + written per second) of fp32 and fp16 transposes
 *                         of 64 MiB to 1 GiB against a device-to-device copy of the same bytes
 *   transpose_gpu d2h N   median time of an N-byte D2H from an interior pointer (run it with and
 *                         without fallback_always=1 to compare staged with direct) */
#include "gpu_common.h"
#include "hipshadow/hipshadow.h"

#include <string.h>
#include <time.h>

static unsigned long long rng = 88172645463325252ull;
static unsigned char next_byte(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned char)rng;
}

static int check_one(size_t rows, size_t cols, size_t elem, size_t spad, size_t dpad)
{
    size_t spitch = cols * elem + spad, dpitch = rows * elem + dpad, sbytes = rows * spitch, dbytes = cols * dpitch;
    unsigned char *src = malloc(sbytes), *got = malloc(dbytes), *want = malloc(dbytes), *d_src, *d_dst;
    for (size_t i = 0; i < sbytes; i++)
        src[i] = next_byte();
    memset(want, 0xA5, dbytes);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            memcpy(want + c * dpitch + r * elem, src + r * spitch + c * elem, elem);
    MUST(cudaMalloc((void **)&d_src, sbytes));
    MUST(cudaMalloc((void **)&d_dst, dbytes));
    MUST(cudaMemcpy(d_src, src, sbytes, cudaMemcpyHostToDevice));
    MUST(cudaMemset(d_dst, 0xA5, dbytes));
    int rc = hipshadow_transpose2d_pitched(d_dst, dpitch, d_src, spitch, rows, cols, elem, NULL);
    MUST(cudaDeviceSynchronize());
    MUST(cudaMemcpy(got, d_dst, dbytes, cudaMemcpyDeviceToHost));
    int ok = rc == 0 && !memcmp(got, want, dbytes);
    if (!ok)
        printf("  WRONG: %zu x %zu, elem %zu, pads %zu/%zu (rc %d)\n", rows, cols, elem, spad, dpad, rc);
    MUST(cudaFree(d_src));
    MUST(cudaFree(d_dst));
    free(src);
    free(got);
    free(want);
    return ok;
}

static int check(void)
{
    static const size_t shapes[][2] = {{1, 100003}, {100003, 1}, {1021, 509}, {97, 131}, {4096, 4096},
                                       {3, 70001},  {70001, 3},  {257, 255},  {1, 1}};
    static const size_t elems[] = {1, 2, 4, 8, 16};
    int total = 0, good = 0;
    for (size_t e = 0; e < 5; e++) {
        int here = 0, n = 0;
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++, n++)
            here += check_one(shapes[s][0], shapes[s][1], elems[e], 0, 0);
        here += check_one(1021, 509, elems[e], 3 * elems[e] + 64, 128), n++; /* pitched both sides */
        here += check_one(300, 77, elems[e], 0, 17 * elems[e]), n++;
        printf("elem %2zu bytes: %d of %d shapes right\n", elems[e], here, n);
        good += here;
        total += n;
    }
    printf("transpose correctness: %d of %d right\n", good, total);
    return good == total ? 0 : 1;
}

static float median_ms(float *t, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            float x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[n / 2];
}

static int bench(void)
{
    static const struct {
        const char *type;
        size_t elem, rows, cols;
    } cases[] = {
        {"fp32", 4, 4096, 4096}, {"fp32", 4, 8192, 8192},  {"fp32", 4, 16384, 16384},
        {"fp16", 2, 4096, 8192}, {"fp16", 2, 8192, 16384}, {"fp16", 2, 16384, 32768},
    };
    cudaEvent_t a, b;
    MUST(cudaEventCreate(&a));
    MUST(cudaEventCreate(&b));
    printf("%-5s %13s %9s %16s %16s %7s\n", "type", "matrix", "MiB", "transpose GB/s", "D2D copy GB/s", "ratio");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t bytes = cases[i].rows * cases[i].cols * cases[i].elem;
        unsigned char *src, *dst;
        MUST(cudaMalloc((void **)&src, bytes));
        MUST(cudaMalloc((void **)&dst, bytes));
        unsigned char *h = malloc(1 << 24);
        for (size_t k = 0; k < 1 << 24; k++)
            h[k] = next_byte();
        for (size_t off = 0; off < bytes; off += 1 << 24) /* random data, not zeros */
            MUST(cudaMemcpy(src + off, h, bytes - off < (1 << 24) ? bytes - off : (1 << 24), cudaMemcpyHostToDevice));
        free(h);
        float tt[10], tc[10];
        for (int rep = -3; rep < 10; rep++) {
            MUST(cudaEventRecord(a, 0));
            if (hipshadow_transpose2d(dst, src, cases[i].rows, cases[i].cols, cases[i].elem, NULL) != 0)
                return 1;
            MUST(cudaEventRecord(b, 0));
            MUST(cudaEventSynchronize(b));
            if (rep >= 0)
                MUST(cudaEventElapsedTime(&tt[rep], a, b));
            MUST(cudaEventRecord(a, 0));
            MUST(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
            MUST(cudaEventRecord(b, 0));
            MUST(cudaEventSynchronize(b));
            if (rep >= 0)
                MUST(cudaEventElapsedTime(&tc[rep], a, b));
        }
        double mt = median_ms(tt, 10), mc = median_ms(tc, 10);
        double gt = 2.0 * bytes / (mt * 1e6), gc = 2.0 * bytes / (mc * 1e6);
        printf("%-5s %6zu x %-6zu %9zu %16.0f %16.0f %6.1f%%\n", cases[i].type, cases[i].rows, cases[i].cols,
               bytes >> 20, gt, gc, 100.0 * gt / gc);
        MUST(cudaFree(src));
        MUST(cudaFree(dst));
    }
    return 0;
}

static int d2h(size_t n)
{
    unsigned char *dev, *host;
    MUST(cudaMalloc((void **)&dev, n + 4096));
    MUST(cudaMallocHost((void **)&host, n));
    double t[7];
    for (int rep = -1; rep < 7; rep++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        MUST(cudaMemcpy(host, dev + 4096, n, cudaMemcpyDeviceToHost)); /* an interior pointer */
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (rep >= 0)
            t[rep] = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    }
    for (int i = 1; i < 7; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    printf("D2H_MS %.3f\n", t[3]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "check"))
        return check();
    if (argc > 1 && !strcmp(argv[1], "bench"))
        return bench();
    if (argc > 2 && !strcmp(argv[1], "d2h"))
        return d2h(strtoull(argv[2], NULL, 10));
    fprintf(stderr, "usage: transpose_gpu check|bench|d2h BYTES\n");
    return 2;
}
