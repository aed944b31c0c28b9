/* Bounded memory: PAIRS hipMalloc/hipFree pairs, sizes 1..4096 bytes, from four
 * call sites, with 16 allocations live at a time (each step frees the oldest and makes a new
 * one), sampling the process's resident set (/proc/self/statm) after WARMUP pairs and at the end.
 * Usage: alloc_free_rss PAIRS WARMUP MAX_GROWTH_KIB
 * Prints "rss: warm-up KIB KiB after N pairs, end KIB KiB after M pairs, growth KIB KiB; S s"
 * and exits 1 when the end is more than MAX_GROWTH_KIB above the warm-up figure (0: no limit).
 * The simulator gives every allocation fresh address space (4 KiB at least) out of its 64 GiB
 * aperture and never reuses it, so PAIRS stays under 15 million.  In a sanitizer build (the
 * sanitizer's own shadow and quarantine grow with what is touched and freed) it makes a tenth
 * of the pairs and checks nothing. */
#include "common.h"

#include <stdint.h>
#include <time.h>
#include <unistd.h>

enum { LIVE = 16 };

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Four call sites, so allocations and frees have a few distinct stacks (as a program has). */
__attribute__((noinline)) static void *alloc_a(size_t n)
{
    void *p = NULL;
    return hipMalloc(&p, n) == hipSuccess ? p : NULL;
}
__attribute__((noinline)) static void *alloc_b(size_t n)
{
    void *p = NULL;
    return hipMalloc(&p, n) == hipSuccess ? p : NULL;
}
__attribute__((noinline)) static void *alloc_c(size_t n)
{
    void *p = NULL;
    return hipMalloc(&p, n) == hipSuccess ? p : NULL;
}
__attribute__((noinline)) static void *alloc_d(size_t n)
{
    void *p = NULL;
    return hipMalloc(&p, n) == hipSuccess ? p : NULL;
}
__attribute__((noinline)) static int free_a(void *p) { return hipFree(p) != hipSuccess; }
__attribute__((noinline)) static int free_b(void *p) { return hipFree(p) != hipSuccess; }

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: alloc_free_rss PAIRS WARMUP MAX_GROWTH_KIB\n");
        return 2;
    }
    long pairs = atol(argv[1]), warmup = atol(argv[2]), max_growth = atol(argv[3]);
    if (pairs < 1 || warmup < 0 || warmup > pairs || pairs > 15000000) {
        fprintf(stderr, "alloc_free_rss: need 1 <= PAIRS <= 15000000 and 0 <= WARMUP <= PAIRS\n");
        return 2;
    }
    if (SANITIZED) {
        pairs /= 10;
        warmup /= 10;
        max_growth = 0;
    }
    void *live[LIVE] = {0};
    uint32_t rng = 12345;
    long warm_rss = -1;
    double t0 = now_s();
    for (long i = 0; i < pairs; i++) {
        if (i == warmup)
            warm_rss = rss_kib();
        int slot = (int)(i % LIVE);
        if (live[slot] && ((i & 1) ? free_a(live[slot]) : free_b(live[slot]))) {
            fprintf(stderr, "hipFree failed at pair %ld\n", i);
            return 99;
        }
        rng = rng * 1103515245u + 12345u;
        size_t n = 1 + (rng >> 8) % 4096;
        switch ((rng >> 20) & 3) {
        case 0: live[slot] = alloc_a(n); break;
        case 1: live[slot] = alloc_b(n); break;
        case 2: live[slot] = alloc_c(n); break;
        default: live[slot] = alloc_d(n); break;
        }
        if (!live[slot]) {
            fprintf(stderr, "hipMalloc(%zu) failed at pair %ld\n", n, i);
            return 99;
        }
    }
    for (int s = 0; s < LIVE; s++)
        if (live[s] && free_a(live[s]))
            return 99;
    long end_rss = rss_kib();
    if (warm_rss < 0)
        warm_rss = end_rss;
    long growth = end_rss - warm_rss;
    printf("rss: warm-up %ld KiB after %ld pairs, end %ld KiB after %ld pairs, growth %ld KiB; %.1f s%s\n", warm_rss,
           warmup, end_rss, pairs, growth, now_s() - t0, SANITIZED ? " (sanitizer build: not checked)" : "");
    if (max_growth > 0 && growth > max_growth) {
        printf("rss grew by %ld KiB after warm-up, more than %ld KiB\n", growth, max_growth);
        return 1;
    }
    return 0;
}
