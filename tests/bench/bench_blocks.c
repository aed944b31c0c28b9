/* How many caching-allocator events per second the block state machine absorbs (blocks.c),
 * replaying a trace recorded from a real PyTorch workload (tests/unit/data, torch_trace=), and
 * what one lookup of the copy path costs once the blocks are there.  Prints figures; never a test.
 * Usage: bench_blocks TRACE [ROUNDS] [cold]
 *   cold: before each event, 48 KiB of straight-line code run and 64 KiB of data touched, about
 *         what PyTorch's own work between two of its allocator's events does to the caches: the
 *         event then starts with its code and data out of the first-level caches (run it under
 *         callgrind's cache model; the churn's own time is in the figure) */
#define _GNU_SOURCE
#include "torch/blocks.h"
#include "path/init.h"
#include "cache_churn.h"

#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    bool cold = argc > 3 && !strcmp(argv[3], "cold");
    hs_ensure_init();
    FILE *f = fopen(argv[1], "r");
    if (!f)
        return perror(argv[1]), 1;
    size_t cap = 1 << 20, n = 0;
    hipshadow_block_event *ev = malloc(cap * sizeof *ev);
    char line[512];
    while (fgets(line, sizeof line, f) && n < cap)
        if (hs_block_event_parse(line, &ev[n]) == 1)
            n++;
    fclose(f);
    double t0 = now();
    for (int r = 0; r < rounds; r++) {
        hipshadow_block_event reset = {.action = HIPSHADOW_BLOCK_SEGMENT_FREE, .addr = 0, .size = UINT64_MAX};
        hs_blocks_event(&reset, 0, 1, 0);
        for (size_t i = 0; i < n; i++) {
            if (cold)
                cache_churn();
            hs_blocks_event(&ev[i], 0, 1, (uint64_t)i);
        }
    }
    double t = now() - t0;
    printf("block events: %zu per round x %d rounds in %.3f s: %.2f M events/s, %.0f ns per event\n", n, rounds, t,
           n * rounds / t / 1e6, t / (n * rounds) * 1e9);
    /* lookups as the copy path makes them: every address an alloc named, live or quarantined now */
    size_t looked = 0, hits = 0;
    t0 = now();
    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < n; i++)
            if (ev[i].action == HIPSHADOW_BLOCK_ALLOC) {
                hs_span b;
                hits += hs_block_lookup(ev[i].addr + ev[i].size / 2, &b) != HS_BLOCK_NONE;
                looked++;
            }
    t = now() - t0;
    printf("block lookups: %zu (%zu in a block) in %.3f s: %.1f ns per lookup\n", looked, hits, t, t / looked * 1e9);
    free(ev);
    return 0;
}
