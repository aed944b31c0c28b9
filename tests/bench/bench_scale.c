/* The scale benchmark, run with and without hipshadow by tools/bench.sh scale.
 * Usage: bench_scale LIVE CALLS THREADS [sync|async]
 *   after one untimed hipMalloc/hipFree (start-up), LIVE allocations of 64..256 bytes are made
 *   and kept live (the times of the hipMalloc calls are measured); then each of THREADS threads
 *   makes CALLS D2H copies of 32 bytes from a random interior pointer into a pageable buffer on
 *   its own stack: hipMemcpy (sync, the default), or
 *   hipMemcpyAsync on a stream of its own, synchronised at the end (async); then every allocation
 *   is freed in a random order (timed).
 * Prints one line: "copy NS alloc NS free NS rss KB total S", where copy is the mean time of one
 * copy call as one thread sees it, rss the peak resident set (getrusage), total the whole run. */
#include <hip/hip_runtime_api.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void **allocs;
static size_t *sizes;
static int live, calls, async_copies;

static void *copier(void *arg)
{
    double *ns_per_copy = arg;
    char host[64]; /* pageable, on this thread's stack */
    hipStream_t s;
    if (hipStreamCreate(&s) != hipSuccess)
        return (void *)1;
    uint32_t rng = (uint32_t)(uintptr_t)arg * 2654435761u + 12345u;
    double t0 = now_ns();
    for (int c = 0; c < calls; c++) {
        rng = rng * 1103515245u + 12345u;
        int i = (int)((rng >> 8) % (uint32_t)live);
        size_t off = (rng >> 4) % (sizes[i] - 32 + 1); /* an interior pointer; 32 bytes stay inside */
        if (async_copies)
            hipMemcpyAsync(host, (char *)allocs[i] + off, 32, hipMemcpyDeviceToHost, s);
        else
            hipMemcpy(host, (char *)allocs[i] + off, 32, hipMemcpyDeviceToHost);
    }
    hipStreamSynchronize(s);
    *ns_per_copy = (now_ns() - t0) / calls;
    hipStreamDestroy(s);
    return NULL;
}

int main(int argc, char **argv)
{
    double start = now_ns();
    live = argc > 1 ? atoi(argv[1]) : 1000;
    calls = argc > 2 ? atoi(argv[2]) : 200000;
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    async_copies = argc > 4 && !strcmp(argv[4], "async");
    if (live < 1 || calls < 1 || threads < 1 || threads > 256 ||
        (argc > 4 && !async_copies && strcmp(argv[4], "sync"))) {
        fprintf(stderr, "usage: bench_scale LIVE>=1 CALLS>=1 THREADS(1..256) [sync|async]\n");
        return 2;
    }
    allocs = calloc((size_t)live, sizeof *allocs);
    sizes = calloc((size_t)live, sizeof *sizes);
    uint32_t rng = 777;
    /* One allocation first, untimed: the runtime's and the tool's one-time start-up is not a
     * cost per allocation (at 1000 allocations it would add hundreds of ns to each). */
    void *warm;
    if (hipMalloc(&warm, 64) != hipSuccess || hipFree(warm) != hipSuccess) {
        fprintf(stderr, "bench_scale: the warm-up hipMalloc/hipFree failed\n");
        return 1;
    }
    double a0 = now_ns();
    for (int i = 0; i < live; i++) {
        rng = rng * 1103515245u + 12345u;
        sizes[i] = 64 + (rng >> 8) % 193;
        if (hipMalloc(&allocs[i], sizes[i]) != hipSuccess) {
            fprintf(stderr, "bench_scale: hipMalloc %d failed\n", i);
            return 1;
        }
    }
    double alloc_ns = (now_ns() - a0) / live;

    pthread_t tid[256];
    double per_thread[256];
    for (int t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, copier, &per_thread[t]);
    double copy_ns = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        copy_ns += per_thread[t] / threads;
    }

    for (int i = live - 1; i > 0; i--) { /* frees in a random order */
        rng = rng * 1103515245u + 12345u;
        int j = (int)((rng >> 8) % (uint32_t)(i + 1));
        void *t = allocs[i];
        allocs[i] = allocs[j];
        allocs[j] = t;
    }
    double f0 = now_ns();
    for (int i = 0; i < live; i++)
        hipFree(allocs[i]);
    double free_ns = (now_ns() - f0) / live;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("copy %.1f alloc %.1f free %.1f rss %ld total %.3f\n", copy_ns, alloc_ns, free_ns, ru.ru_maxrss,
           (now_ns() - start) / 1e9);
    return 0;
}
