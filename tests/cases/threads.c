/* 8 threads, each doing thousands of alloc / H2D / D2H / free cycles: zero findings, no deadlock,
 * and the data each thread reads back is its own. */
#include "common.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

enum { THREADS = 8, CYCLES = 2000 };

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint32_t in[256], *out;
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    MUST(hipHostMalloc((void **)&out, 256 * sizeof *out, 0)); /* pinned: the async D2H stays async */
    for (int c = 0; c < CYCLES; c++) {
        for (int i = 0; i < 256; i++)
            in[i] = (uint32_t)(id << 24 | (uint32_t)c << 8 | (uint32_t)i);
        uint32_t *dev;
        size_t bytes = 1024 + (size_t)(c % 7) * 512; /* varied sizes: different layouts */
        MUST(hipMalloc((void **)&dev, bytes));
        MUST(hipMemcpyHtoD(dev, in, sizeof in));
        MUST(hipMemcpyAsync(out, dev, 256 * sizeof *out, hipMemcpyDeviceToHost, s));
        MUST(hipStreamSynchronize(s));
        MUST(hipFree(dev));
        if (memcmp(in, out, sizeof in))
            return (void *)1;
    }
    MUST(hipHostFree(out));
    MUST(hipStreamDestroy(s));
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += r != NULL;
    }
    printf("%d threads x %d cycles: %d threads saw wrong data\n", THREADS, CYCLES, bad);
    return bad;
}
