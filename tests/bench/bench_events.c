/* Per-event cost of each kind of wrapped call on the simulated runtime, whatever is preloaded (run
 * it plain and under hipshadow, interleaved: tools/bench.sh events does).
 *   bench_events LIVE CALLS [KINDS]
 * makes LIVE allocations of 4 KiB, then times, each CALLS times:
 *   launch  hipModuleLaunchKernel of `scale` (two pointer arguments into live allocations, n = 1)
 *   copy    hipMemcpy D2H of 32 bytes from an interior pointer into a stack buffer (the fast path)
 *   alloc   hipMalloc of 256 bytes, the stack captured as by default
 *   free    hipFree of those, in the order made (the quarantine full of the LIVE frees before)
 *   sync    hipStreamSynchronize of a stream with nothing pending
 * (BENCH_NONBLOCKING=1: on a non-blocking stream, which turns stream-race tracking on)
 * and, only when KINDS names it:
 *   arena   hipModuleLaunchKernel of `scale` with two interior pointers of one 64 MiB allocation,
 *           at offsets that move through 32 tensors (BENCH_ARENA_TENSORS=N: N, up to 1,000; an
 *           engine's token makes a few hundred distinct launches), a stream sync every 64 launches, and before
 *           each 64 an async H2D of the inputs into the arena on a second stream, synchronised
 *           (an engine's graph over its pool arena, its inputs set through another stream: ggml);
 *           with BENCH_NONBLOCKING=1, what stream-race tracking costs when every launch touches
 *           the one allocation that two streams use
 *   cold    with arena: before each launch, 48 KiB of straight-line code run and 64 KiB of data
 *           touched (about what a runtime's own launch runs), so the launch path's code and data
 *           start out of the first-level caches, as between an engine's launches (the churn's
 *           own time is in the plain run too)
 *   tlb     with arena: as cold, and then one line of code in each of 256 pages run and one line in
 *           each of 4,096 pages of data touched: a runtime's launch also spans many pages, and the
 *           launch path then starts with its pages out of the address-translation caches too
 *   d2d     with arena: after each launch, an async D2D hipMemcpyAsync of 1 KiB between two
 *           interior pointers of the arena on the launch's stream (an engine's copy of a view
 *           into its cache: ggml)
 *   maps    hipMemcpyAsync D2H of 64 bytes into a heap buffer and a stream sync, with 256 KiB
 *           mapped and unmapped before each (an interpreter's arenas come and go between a
 *           program's copies: PyTorch): what a copy's host check costs while the process's
 *           mappings keep changing elsewhere
 *   big     hipMemcpy D2H of 16 MiB into a heap buffer (the full path: the range spans chunks),
 *   mid     hipMemcpy D2H of one 64 KiB chunk into a static buffer (the fast path):
 *           run without SIMHIP_NULL, the simulator moves the bytes, and the runtime's own time is
 *           most of the call, which stats=1's copy_ns must leave out
 *   paths   hipMalloc and hipFree of 256 bytes through one helper, reached in turn by four
 *           paths that differ only further out (an engine's copies from several places through
 *           one function): with stats=1, how often the stacks' per-thread cache missed
 * and prints one line: "launch NS copy NS alloc NS free NS sync NS" (mean ns per call; KINDS, e.g.
 * "launch,sync", times only those, for a profiler).  Exits 77
 * without the simulator or its kernels (no AMD code object was built). */
#include "bench_kernel.h"
#include "cache_churn.h"

#include <hip/hip_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static const char *kinds;

/* tlb: a jump through 256 pages of code, then a line read in each of 4,096 pages (16 MiB) */
static unsigned char *tlb_data;
__attribute__((noinline)) static void tlb_churn(void)
{
    __asm__ volatile(".rept 256\n\tjmp 1f\n\t.p2align 12\n1:\n\t.endr" ::: "memory");
    if (!tlb_data) {
        void *p = mmap(NULL, 4096u << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        tlb_data = p == MAP_FAILED ? NULL : p;
        if (tlb_data)
            madvise(tlb_data, 4096u << 12, MADV_NOHUGEPAGE);
    }
    for (size_t i = 0; tlb_data && i < 4096; i++)
        tlb_data[(i << 12) + ((i * 64) & 4095)]++;
}
static int want(const char *kind) { return !kinds || strstr(kinds, kind) != NULL; }

/* paths: the helper is reached from one call site at one depth whatever the path, so every
 * path enters hipshadow with the same return address at the same place */
#define BARRIER() __asm__ volatile("" ::: "memory")
__attribute__((noinline)) static void alloc_and_free(void)
{
    void *p;
    if (hipMalloc(&p, 256) == hipSuccess)
        hipFree(p);
    BARRIER();
}
static void path_step(int depth, unsigned path);
__attribute__((noinline)) static void path_left(int d, unsigned p)
{
    path_step(d, p);
    BARRIER();
}
__attribute__((noinline)) static void path_right(int d, unsigned p)
{
    path_step(d, p);
    BARRIER();
}
__attribute__((noinline)) static void path_step(int depth, unsigned path)
{
    if (depth == 0)
        alloc_and_free();
    else if (path & 1)
        path_right(depth - 1, path >> 1);
    else
        path_left(depth - 1, path >> 1);
    BARRIER();
}

int main(int argc, char **argv)
{
    int live = argc > 1 ? atoi(argv[1]) : 1000, calls = argc > 2 ? atoi(argv[2]) : 100000;
    kinds = argc > 3 ? argv[3] : NULL;
    hipFunction_t scale;
    int loaded = bench_load_scale(&scale);
    if (loaded)
        return loaded;
    void **allocs = calloc((size_t)live + 2, sizeof *allocs);
    void **fresh = calloc((size_t)calls, sizeof *fresh);
    if (!allocs || !fresh)
        return 1;
    for (int i = 0; i < live + 2; i++)
        if (hipMalloc(&allocs[i], 4096) != hipSuccess)
            return 1;
    hipStream_t s;
    /* BENCH_NONBLOCKING=1: the stream is non-blocking (unordered with the null stream), as an
     * engine's compute stream is: hipshadow's stream-race tracking is then on. */
    if (getenv("BENCH_NONBLOCKING"))
        hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
    else
        hipStreamCreate(&s);
    float *out = allocs[live], *in = allocs[live + 1];
    int n = 1;
    float k = 2;
    void *params[] = {&out, &in, &n, &k};
    for (int i = 0; i < 1000; i++) /* warm: the kernel's information is looked up once */
        hipModuleLaunchKernel(scale, 1, 1, 1, 64, 1, 1, 0, s, params, NULL);
    hipStreamSynchronize(s);

    int n_launch = want("launch") ? calls : 0, n_copy = want("copy") ? calls : 0, n_sync = want("sync") ? calls : 0;
    int n_alloc = want("alloc") || want("free") ? calls : 0, n_free = want("free") ? calls : 0;
    double t0 = now_ns();
    for (int c = 0; c < n_launch; c++) {
        hipModuleLaunchKernel(scale, 1, 1, 1, 64, 1, 1, 0, s, params, NULL);
        if ((c & 255) == 255)
            hipStreamSynchronize(s);
    }
    double launch = (now_ns() - t0) / calls;

    char host[32];
    unsigned rng = 12345;
    t0 = now_ns();
    for (int c = 0; c < n_copy; c++) {
        rng = rng * 1103515245u + 12345u;
        hipMemcpy(host, (char *)allocs[(rng >> 8) % (unsigned)live] + 64, sizeof host, hipMemcpyDeviceToHost);
    }
    double copy = (now_ns() - t0) / calls;

    t0 = now_ns();
    for (int c = 0; c < n_alloc; c++)
        if (hipMalloc(&fresh[c], 256) != hipSuccess)
            return 1;
    double alloc = (now_ns() - t0) / calls;
    t0 = now_ns();
    for (int c = 0; c < n_free; c++)
        hipFree(fresh[c]);
    double freed = (now_ns() - t0) / calls;

    t0 = now_ns();
    for (int c = 0; c < n_sync; c++)
        hipStreamSynchronize(s);
    double sync = (now_ns() - t0) / calls;
    if (kinds && strstr(kinds, "arena")) {
        char *arena;
        if (hipMalloc((void **)&arena, 64 << 20) != hipSuccess)
            return 1;
        float *a_out, *a_in;
        void *a_params[] = {&a_out, &a_in, &n, &k};
        hipStream_t inputs;
        hipStreamCreate(&inputs);
        char tokens[1024] = {0};
        int cold = strstr(kinds, "cold") != NULL || strstr(kinds, "tlb") != NULL, tlb = strstr(kinds, "tlb") != NULL;
        int d2d = strstr(kinds, "d2d") != NULL;
        const char *tensors_env = getenv("BENCH_ARENA_TENSORS");
        size_t tensors = tensors_env ? strtoul(tensors_env, NULL, 10) : 32, tensor_bytes = (32u << 20) / 1000;
        if (tensors < 1 || tensors > 1000)
            return fprintf(stderr, "bench_events: BENCH_ARENA_TENSORS=%s: want 1 to 1000\n", tensors_env), 2;
        if (tensors <= 32)
            tensor_bytes = 1 << 20;
        double ta = now_ns();
        for (int c = 0; c < calls; c++) {
            if (cold)
                cache_churn();
            if (tlb)
                tlb_churn();
            if ((c & 63) == 0) {
                hipMemcpyAsync(arena, tokens, sizeof tokens, hipMemcpyHostToDevice, inputs);
                hipStreamSynchronize(inputs);
            }
            a_out = (float *)(arena + ((size_t)c % tensors + 1) * tensor_bytes);
            a_in = (float *)(arena + ((size_t)c + 7) % tensors * tensor_bytes + 256);
            hipModuleLaunchKernel(scale, 1, 1, 1, 64, 1, 1, 0, s, a_params, NULL);
            if (d2d)
                hipMemcpyAsync(arena + (33 << 20) + ((size_t)c % 32) * 1024, a_out, 1024, hipMemcpyDeviceToDevice, s);
            if ((c & 63) == 63)
                hipStreamSynchronize(s);
        }
        printf("arena %.1f ", (now_ns() - ta) / (calls ? calls : 1));
    }
    if (kinds && strstr(kinds, "maps")) {
        char *heap = malloc(64);
        double copy_ns = 0;
        for (int c = 0; c < calls && heap; c++) {
            void *arena = mmap(NULL, 256 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (arena != MAP_FAILED) {
                *(volatile char *)arena = 1;
                munmap(arena, 256 << 10);
            }
            double tc = now_ns();
            hipMemcpyAsync(heap, allocs[0], 64, hipMemcpyDeviceToHost, s);
            hipStreamSynchronize(s);
            copy_ns += now_ns() - tc;
        }
        free(heap);
        printf("maps %.1f ", copy_ns / (calls ? calls : 1));
    }
    if (kinds && strstr(kinds, "big")) {
        enum { BIG = 16 << 20 };
        char *src = NULL, *dst = malloc(BIG);
        if (!dst || hipMalloc((void **)&src, BIG) != hipSuccess)
            return 1;
        double tb = now_ns();
        for (int c = 0; c < calls; c++)
            hipMemcpy(dst, src, BIG, hipMemcpyDeviceToHost);
        printf("big %.1f ", (now_ns() - tb) / (calls ? calls : 1));
        hipFree(src);
        free(dst);
    }
    if (kinds && strstr(kinds, "mid")) {
        enum { CHUNK = 64 << 10, MID = CHUNK };
        static char dst[MID];
        char *src = NULL;
        if (hipMalloc((void **)&src, 2 * CHUNK) != hipSuccess)
            return 1;
        const char *in_chunk = (const char *)(((uintptr_t)src + CHUNK - 1) & ~(uintptr_t)(CHUNK - 1));
        double tm = now_ns();
        for (int c = 0; c < calls; c++)
            hipMemcpy(dst, in_chunk, MID, hipMemcpyDeviceToHost);
        printf("mid %.1f ", (now_ns() - tm) / (calls ? calls : 1));
        hipFree(src);
    }
    if (kinds && strstr(kinds, "paths")) {
        double tp = now_ns();
        for (int c = 0; c < calls; c++)
            path_step(4, (unsigned)c % 4);
        printf("paths %.1f ", (now_ns() - tp) / (calls ? calls : 1));
    }
    printf("launch %.1f copy %.1f alloc %.1f free %.1f sync %.1f\n", launch, copy, alloc, freed, sync);
    return 0;
}
