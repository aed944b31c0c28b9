/* Per-call cost of a small D2H copy, with whatever is preloaded (run it with and without
 * hipshadow; tools/bench.sh does both, interleaved).  Usage: bench_copy LIVE_ALLOCS CALLS HOST
 * where HOST is "pinned" or "pageable".  Prints ns per copy on its first line, then
 * "alloc NS free NS": the mean time of each hipMalloc and, in a random order, each hipFree. */
#include <hip/hip_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int live = argc > 1 ? atoi(argv[1]) : 1000, calls = argc > 2 ? atoi(argv[2]) : 200000;
    int pinned = argc > 3 ? !strcmp(argv[3], "pinned") : 1;
    void **allocs = calloc((size_t)live, sizeof *allocs);
    double a0 = now_ns();
    for (int i = 0; i < live; i++)
        if (hipMalloc(&allocs[i], 4096) != hipSuccess)
            return 1;
    double alloc_ns = (now_ns() - a0) / live;
    char *host;
    if (pinned)
        hipHostMalloc((void **)&host, 4096, 0);
    else
        host = malloc(4096);
    hipStream_t s;
    hipStreamCreate(&s);
    unsigned rng = 12345;
    double t0 = now_ns();
    for (int c = 0; c < calls; c++) {
        rng = rng * 1103515245u + 12345u;
        char *src = (char *)allocs[(rng >> 8) % (unsigned)live] + 64; /* interior pointer */
        hipMemcpyAsync(host, src, 4, hipMemcpyDeviceToHost, s);
        if ((c & 1023) == 1023)
            hipStreamSynchronize(s);
    }
    hipStreamSynchronize(s);
    double t1 = now_ns();
    printf("%.1f\n", (t1 - t0) / calls);
    for (int i = live - 1; i > 0; i--) { /* frees in a random order */
        rng = rng * 1103515245u + 12345u;
        int j = (int)((rng >> 8) % (unsigned)(i + 1));
        void *t = allocs[i];
        allocs[i] = allocs[j];
        allocs[j] = t;
    }
    double f0 = now_ns();
    for (int i = 0; i < live; i++)
        hipFree(allocs[i]);
    printf("alloc %.1f free %.1f\n", alloc_ns, (now_ns() - f0) / live);
    return 0;
}
