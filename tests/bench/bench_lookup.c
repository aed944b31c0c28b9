/* The shadow map's own cost, apart from any runtime: N allocations of 64..256 bytes, 4 KiB apart
 * as the simulator places them, then random interior lookups (hs_shadow_lookup, what a copy does
 * per device side) and the same from the briefs (hs_shadow_brief, the fast path's), then frees in a
 * random order.  Prints "N lookup NS brief NS add NS release NS".  With ROUNDS, then ROUNDS times
 * the same N allocations made again and freed in order (a steady state: the quarantine full, each
 * free evicting), and "churn_add NS churn_release NS" (the first round not counted).
 * Usage: bench_lookup N [LOOKUPS [ROUNDS]] */
#include "shadow/shadow.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000, lookups = argc > 2 ? atol(argv[2]) : 2000000;
    long rounds = argc > 3 ? atol(argv[3]) : 0;
    if (n < 1 || lookups < 1 || hs_shadow_init(16ull << 30, 0) != 0)
        return 2;
    uintptr_t base = (uintptr_t)1 << 40;
    size_t *sizes = malloc((size_t)n * sizeof *sizes);
    uint32_t rng = 777;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        rng = rng * 1103515245u + 12345u;
        sizes[i] = 64 + (rng >> 8) % 193;
        hs_span s = {.base = base + (uintptr_t)i * 4096, .size = sizes[i], .kind = HS_MEM_DEVICE};
        hs_shadow_add(&s);
    }
    double add_ns = (now_ns() - t0) / n;
    uint64_t found = 0;
    t0 = now_ns();
    for (long c = 0; c < lookups; c++) {
        rng = rng * 1103515245u + 12345u;
        long i = (long)((rng >> 4) % (uint32_t)n);
        hs_span s;
        found += hs_shadow_lookup(base + (uintptr_t)i * 4096 + (rng >> 20) % sizes[i], &s) == HS_WHERE_LIVE;
    }
    double lookup_ns = (now_ns() - t0) / lookups;
    /* the same lookups from the briefs alone (hs_shadow_brief: the fast path's, no record read) */
    t0 = now_ns();
    for (long c = 0; c < lookups; c++) {
        rng = rng * 1103515245u + 12345u;
        long i = (long)((rng >> 4) % (uint32_t)n);
        hs_where where;
        uint32_t kind;
        found += hs_shadow_brief(base + (uintptr_t)i * 4096 + (rng >> 20) % (sizes[i] - 31), 32, &where, &kind) &&
                 where == HS_WHERE_LIVE;
    }
    double brief_ns = (now_ns() - t0) / lookups;
    long *order = malloc((size_t)n * sizeof *order);
    for (long i = 0; i < n; i++)
        order[i] = i;
    for (long i = n - 1; i > 0; i--) {
        rng = rng * 1103515245u + 12345u;
        long j = (long)((rng >> 4) % (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    t0 = now_ns();
    for (long i = 0; i < n; i++) {
        hs_span s;
        hs_shadow_release(base + (uintptr_t)order[i] * 4096, 0, 0, 0, &s);
    }
    double release_ns = (now_ns() - t0) / n;
    printf("%ld lookup %.1f brief %.1f add %.1f release %.1f%s", n, lookup_ns, brief_ns, add_ns, release_ns,
           found == 2 * (uint64_t)lookups ? "" : " (LOOKUPS MISSED)");
    double churn_add = 0, churn_release = 0;
    for (long r = 0; r < rounds; r++) {
        t0 = now_ns();
        for (long i = 0; i < n; i++) {
            hs_span s = {.base = base + (uintptr_t)i * 4096, .size = sizes[i], .kind = HS_MEM_DEVICE};
            hs_shadow_add(&s);
        }
        double t1 = now_ns();
        for (long i = 0; i < n; i++) {
            hs_span s;
            hs_shadow_release(base + (uintptr_t)i * 4096, 0, 0, 0, &s);
        }
        if (r) {
            churn_add += t1 - t0;
            churn_release += now_ns() - t1;
        }
    }
    if (rounds > 1)
        printf(" churn_add %.1f churn_release %.1f", churn_add / (n * (rounds - 1)),
               churn_release / (n * (rounds - 1)));
    printf("\n");
    return 0;
}
