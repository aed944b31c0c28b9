/* Bounded memory: each structure's cap is reached, said once, and the program runs on.
 * Usage: caps MODE, run by run_case.py with a tiny cap:
 *   streams-reused  (streams_max=4) 200 streams made, used and destroyed one after another, 8
 *                   threads' per-thread streams, a stream destroyed with work pending, an
 *                   ordering through a stream whose record is reused: records are reused, the cap
 *                   is never reached; a planted async-overlap between reused records is found
 *   streams-cap     (streams_max=4) 10 streams live at once: the cap is said once, the untracked
 *                   ones work; a destroyed untracked stream is still invalid-stream; once they are
 *                   destroyed, new streams are tracked again (a planted async-overlap is found)
 *   streams-churn   (streams_max=4) 8 threads, 50 rounds: each makes a stream, all wait at a
 *                   barrier (8 live at once: the cap is said once), copy, synchronise, destroy;
 *                   records are taken and reused concurrently (run under TSan too); no finding
 *   stacks          (stack_depot_max=4k) 256 distinct allocation stacks (recursion paths), then an
 *                   out-of-bounds D2H: its report still has a stack, its allocation's is "not recorded"
 *   ledger          (ledger_size=4:ledger_max=10) 5 streams launch 6 host functions each
 *   events          (events_max=4) 8 events live at once, then 4 made again and used to order two
 *                   streams (no finding: reused records order as before) */
#include "common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

enum { CHUNK = 4096 };
static float *dev;
static char *pinned;

#define BARRIER() __asm__ volatile("" ::: "memory") /* no tail calls: each level is a frame */

static void d2h(void *dst, hipStream_t s) { MUST(hipMemcpyAsync(dst, dev, CHUNK, hipMemcpyDeviceToHost, s)); }

static void *per_thread_copy(void *arg)
{
    char *dst = arg;
    d2h(dst, hipStreamPerThread);
    MUST(hipStreamSynchronize(hipStreamPerThread));
    return NULL;
}

static int streams_reused(void)
{
    for (int i = 0; i < 200; i++) {
        hipStream_t s;
        MUST(hipStreamCreate(&s));
        d2h(pinned + (i % 8) * CHUNK, s);
        MUST(hipStreamSynchronize(s));
        MUST(hipStreamDestroy(s));
    }
    for (int i = 0; i < 8; i++) { /* one after another: each thread's record is retired at its exit */
        pthread_t t;
        if (pthread_create(&t, NULL, per_thread_copy, pinned + i * CHUNK) || pthread_join(t, NULL))
            return 99;
    }
    /* destroyed with its copy pending: its record is reused only after the device is synchronised */
    hipStream_t pending;
    MUST(hipStreamCreate(&pending));
    d2h(pinned, pending);
    MUST(hipStreamDestroy(pending));
    MUST(hipDeviceSynchronize());

    /* b is ordered after a's first copy (an event); a is destroyed, and c takes its record: c's
     * copy comes after everything b was ordered after, so b's write into the same buffer races it */
    hipStream_t a, b, c;
    hipEvent_t e;
    MUST(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    MUST(hipEventCreate(&e));
    d2h(pinned, a);
    MUST(hipEventRecord(e, a));
    MUST(hipStreamWaitEvent(b, e, 0));
    MUST(hipStreamSynchronize(a));
    MUST(hipStreamDestroy(a));
    MUST(hipStreamCreateWithFlags(&c, hipStreamNonBlocking));
    d2h(pinned + CHUNK, c);
    d2h(pinned + CHUNK, b); /* the planted async-overlap */
    MUST(hipDeviceSynchronize());
    MUST(hipEventDestroy(e));
    MUST(hipStreamDestroy(b));
    MUST(hipStreamDestroy(c));
    printf("streams reused\n");
    return 0;
}

static int streams_cap(void)
{
    hipStream_t s[10];
    for (int i = 0; i < 10; i++)
        MUST(hipStreamCreateWithFlags(&s[i], hipStreamNonBlocking));
    for (int i = 0; i < 10; i++)
        d2h(pinned + i * CHUNK, s[i]);
    for (int i = 0; i < 10; i++)
        MUST(hipStreamSynchronize(s[i]));
    for (int i = 0; i < 10; i++)
        MUST(hipStreamDestroy(s[i]));
    hipError_t late = TRY(hipMemcpyAsync(pinned, dev, CHUNK, hipMemcpyDeviceToHost, s[9])); /* invalid-stream */
    hipStream_t x, y;
    MUST(hipStreamCreateWithFlags(&x, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&y, hipStreamNonBlocking));
    d2h(pinned, x);
    d2h(pinned, y); /* the planted async-overlap: x and y have records again */
    MUST(hipDeviceSynchronize());
    MUST(hipStreamDestroy(x));
    MUST(hipStreamDestroy(y));
    printf("streams capped\n");
    return late != hipSuccess ? 0 : 1;
}

enum { CHURN_THREADS = 8, CHURN_ROUNDS = 50 };
static pthread_barrier_t churn_barrier;

static void *churn(void *arg)
{
    char *dst = arg;
    for (int r = 0; r < CHURN_ROUNDS; r++) {
        hipStream_t s;
        MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
        pthread_barrier_wait(&churn_barrier); /* every thread's stream is live now */
        d2h(dst, s);
        MUST(hipStreamSynchronize(s));
        MUST(hipStreamDestroy(s));
        pthread_barrier_wait(&churn_barrier);
    }
    return NULL;
}

static int streams_churn(void)
{
    pthread_t t[CHURN_THREADS];
    pthread_barrier_init(&churn_barrier, NULL, CHURN_THREADS);
    for (int i = 0; i < CHURN_THREADS; i++)
        if (pthread_create(&t[i], NULL, churn, pinned + i * CHUNK))
            return 99;
    for (int i = 0; i < CHURN_THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&churn_barrier);
    printf("streams churned\n");
    return 0;
}

/* 2^8 paths of left/right calls down to one allocation: 256 distinct stacks. */
static void step(int depth, unsigned path);
__attribute__((noinline)) static void leaf(void)
{
    void *p;
    MUST(hipMalloc(&p, 64));
    MUST(hipFree(p));
    BARRIER();
}
__attribute__((noinline)) static void left(int depth, unsigned path)
{
    step(depth, path);
    BARRIER();
}
__attribute__((noinline)) static void right(int depth, unsigned path)
{
    step(depth, path);
    BARRIER();
}
__attribute__((noinline)) static void step(int depth, unsigned path)
{
    if (depth == 0)
        leaf();
    else if (path & 1)
        right(depth - 1, path >> 1);
    else
        left(depth - 1, path >> 1);
    BARRIER();
}

__attribute__((noinline)) static int stacks(void)
{
    for (unsigned path = 0; path < 256; path++)
        step(8, path);
    float *small;
    MUST(hipMalloc((void **)&small, CHUNK));                         /* a stack not seen before: not recorded */
    TRY(hipMemcpy(pinned, small, 2 * CHUNK, hipMemcpyDeviceToHost)); /* out-of-bounds, with its stack */
    MUST(hipFree(small));
    printf("stacks done\n");
    return 0;
}

static void host_fn(void *arg) { ++*(int *)arg; }

static int ledger(void)
{
    static int ran;
    /* Debian's libamdhip64 (ROCm 5.2) does not export it; the simulator and hipshadow do */
    hipError_t (*launch_host_fn)(hipStream_t, hipHostFn_t, void *);
    *(void **)&launch_host_fn = dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
    if (!launch_host_fn)
        return 77;
    hipStream_t s[5];
    for (int i = 0; i < 5; i++)
        MUST(hipStreamCreate(&s[i]));
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < 5; i++)
            MUST(launch_host_fn(s[i], host_fn, &ran));
    for (int i = 0; i < 5; i++) {
        MUST(hipStreamSynchronize(s[i]));
        MUST(hipStreamDestroy(s[i]));
    }
    printf("host functions ran %d times\n", ran);
    return ran == 30 ? 0 : 1;
}

static int events(void)
{
    hipStream_t s1, s2;
    hipEvent_t e[8];
    MUST(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    for (int i = 0; i < 8; i++)
        MUST(hipEventCreate(&e[i]));
    for (int i = 0; i < 8; i++) {
        d2h(pinned + i * CHUNK, s1);
        MUST(hipEventRecord(e[i], s1));
    }
    for (int i = 0; i < 8; i++)
        MUST(hipEventSynchronize(e[i]));
    for (int i = 0; i < 8; i++)
        MUST(hipEventDestroy(e[i]));
    /* made again: tracked, and they order s2 after s1 as any event does */
    for (int i = 0; i < 4; i++)
        MUST(hipEventCreate(&e[i]));
    for (int i = 0; i < 4; i++) {
        d2h(pinned + i * CHUNK, s1);
        MUST(hipEventRecord(e[i], s1));
        MUST(hipStreamWaitEvent(s2, e[i], 0));
        d2h(pinned + i * CHUNK, s2);
    }
    MUST(hipDeviceSynchronize());
    for (int i = 0; i < 4; i++)
        MUST(hipEventDestroy(e[i]));
    MUST(hipStreamDestroy(s1));
    MUST(hipStreamDestroy(s2));
    printf("events done\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    MUST(hipMalloc((void **)&dev, CHUNK));
    MUST(hipHostMalloc((void **)&pinned, 16 * CHUNK, 0));
    int rc = !strcmp(mode, "streams-reused")  ? streams_reused()
             : !strcmp(mode, "streams-cap")   ? streams_cap()
             : !strcmp(mode, "streams-churn") ? streams_churn()
             : !strcmp(mode, "stacks")        ? stacks()
             : !strcmp(mode, "ledger")        ? ledger()
             : !strcmp(mode, "events")        ? events()
                                              : 2;
    MUST(hipHostFree(pinned));
    MUST(hipFree(dev));
    return rc;
}
