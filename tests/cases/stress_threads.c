/* Hardening: THREADS threads x OPS wrapped calls each, mixed at random (seeded per thread):
 * hipMalloc, H2D, D2H, async copies both ways on a per-thread stream, syncs, hipFree.  Every read
 * back is compared with what the thread wrote, so a copy that hipshadow lost, blocked or
 * misdirected shows.  The program counts each wrapped call it makes by API and prints the counts,
 * so a post-mortem log (log_mode=full) can be checked against them exactly.
 *   stress_threads [THREADS [OPS]]     (default 16 x 100000) */
#include "common.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

enum { SLOTS = 4, MAXBYTES = 4096 };

enum {
    C_MALLOC,
    C_FREE,
    C_HTOD,
    C_DTOH,
    C_ASYNC,
    C_SYNC,
    C_STREAM_CREATE,
    C_STREAM_DESTROY,
    C_HOST_MALLOC,
    C_HOST_FREE,
    C_COUNT
};
static const char *const api_of[C_COUNT] = {
    "hipMalloc",       "hipFree",          "hipMemcpyHtoD", "hipMemcpyDtoH", "hipMemcpyAsync", "hipStreamSynchronize",
    "hipStreamCreate", "hipStreamDestroy", "hipHostMalloc", "hipHostFree"};

typedef struct {
    unsigned char *dev;
    size_t bytes;
    unsigned char mirror[MAXBYTES]; /* what the device allocation holds */
} slot;

typedef struct {
    uint64_t rng;
    long ops, limit;
    uint64_t calls[C_COUNT];
    uint64_t h2d, d2h, mismatches;
    hipStream_t s;
    unsigned char *pin; /* pinned: async copies stay async */
    bool pending;       /* async work issued since the last sync */
    bool verify;        /* the pending work includes a D2H into pin: check at sync */
    size_t v_off, v_len;
    unsigned char expect[MAXBYTES];
    slot slots[SLOTS];
} worker;

static uint64_t rnd(worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

#define CALL(w, c, call)                                                                                               \
    do {                                                                                                               \
        (w)->calls[c]++;                                                                                               \
        (w)->ops++;                                                                                                    \
        if (TRY(call) != hipSuccess)                                                                                   \
            exit(99);                                                                                                  \
    } while (0)

static void sync_stream(worker *w)
{
    CALL(w, C_SYNC, hipStreamSynchronize(w->s));
    if (w->verify && memcmp(w->pin, w->expect, w->v_len))
        w->mismatches++;
    w->pending = w->verify = false;
}

/* Before the CPU touches pin, or a synchronous call touches device memory: the stream is done. */
static void settle(worker *w)
{
    if (w->pending)
        sync_stream(w);
}

static void fill(worker *w, unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)rnd(w);
}

static void range(worker *w, const slot *s, size_t *off, size_t *len)
{
    *off = rnd(w) % s->bytes;
    *len = 1 + rnd(w) % (s->bytes - *off);
}

static void one_op(worker *w)
{
    slot *s = &w->slots[rnd(w) % SLOTS];
    unsigned op = (unsigned)(rnd(w) % 8);
    if (!s->dev) { /* alloc, and fill it whole (H2D) */
        settle(w);
        s->bytes = 256 + rnd(w) % (MAXBYTES - 255);
        CALL(w, C_MALLOC, hipMalloc((void **)&s->dev, s->bytes));
        fill(w, s->mirror, s->bytes);
        CALL(w, C_HTOD, hipMemcpyHtoD(s->dev, s->mirror, s->bytes));
        w->h2d++;
        return;
    }
    size_t off, len;
    range(w, s, &off, &len);
    switch (op) {
    case 0: /* free */
        settle(w);
        CALL(w, C_FREE, hipFree(s->dev));
        s->dev = NULL;
        break;
    case 1: { /* H2D */
        settle(w);
        fill(w, s->mirror + off, len);
        CALL(w, C_HTOD, hipMemcpyHtoD(s->dev + off, s->mirror + off, len));
        w->h2d++;
        break;
    }
    case 2: { /* D2H, checked */
        unsigned char back[MAXBYTES];
        settle(w);
        CALL(w, C_DTOH, hipMemcpyDtoH(back, s->dev + off, len));
        w->d2h++;
        if (memcmp(back, s->mirror + off, len))
            w->mismatches++;
        break;
    }
    case 3: /* async D2H into pin, checked at the next sync */
        settle(w);
        CALL(w, C_ASYNC, hipMemcpyAsync(w->pin, s->dev + off, len, hipMemcpyDeviceToHost, w->s));
        w->d2h++;
        memcpy(w->expect, s->mirror + off, len);
        w->pending = w->verify = true;
        w->v_len = len;
        break;
    case 4: /* async H2D from pin */
        settle(w);
        fill(w, w->pin, len);
        memcpy(s->mirror + off, w->pin, len);
        CALL(w, C_ASYNC, hipMemcpyAsync(s->dev + off, w->pin, len, hipMemcpyHostToDevice, w->s));
        w->h2d++;
        w->pending = true;
        break;
    case 5: /* an async copy right behind another on the same stream (ordered by it) */
        if (w->pending && !w->verify) {
            CALL(w, C_ASYNC, hipMemcpyAsync(w->pin, s->dev + off, len, hipMemcpyDeviceToHost, w->s));
            w->d2h++;
            /* pin was the source of the pending H2D; that H2D runs first, so the device holds it */
            memcpy(w->expect, s->mirror + off, len);
            w->verify = true;
            w->v_len = len;
        } else {
            sync_stream(w);
        }
        break;
    default: /* sync */ sync_stream(w); break;
    }
}

/* All threads make their first wrapped call at once: the process's first calls race each other
 * (hipshadow opens its log at the first one; the others must wait for it, not go unlogged). */
static pthread_barrier_t start;

static void *run(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(&start);
    CALL(w, C_STREAM_CREATE, hipStreamCreate(&w->s));
    CALL(w, C_HOST_MALLOC, hipHostMalloc((void **)&w->pin, MAXBYTES, 0));
    while (w->ops < w->limit)
        one_op(w);
    settle(w);
    for (int i = 0; i < SLOTS; i++)
        if (w->slots[i].dev)
            CALL(w, C_FREE, hipFree(w->slots[i].dev));
    CALL(w, C_HOST_FREE, hipHostFree(w->pin));
    CALL(w, C_STREAM_DESTROY, hipStreamDestroy(w->s));
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    long ops = argc > 2 ? atol(argv[2]) : 100000;
    if (threads < 1 || threads > 256 || ops < 1)
        return 2;
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    if (!w || !t || pthread_barrier_init(&start, NULL, (unsigned)threads))
        return 2;
    for (int i = 0; i < threads; i++) {
        w[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        w[i].limit = ops;
        if (pthread_create(&t[i], NULL, run, &w[i]))
            return 2;
    }
    uint64_t calls[C_COUNT] = {0}, h2d = 0, d2h = 0, bad = 0, total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        for (int c = 0; c < C_COUNT; c++)
            calls[c] += w[i].calls[c];
        h2d += w[i].h2d;
        d2h += w[i].d2h;
        bad += w[i].mismatches;
        total += (uint64_t)w[i].ops;
    }
    for (int c = 0; c < C_COUNT; c++)
        printf("calls %s %llu\n", api_of[c], (unsigned long long)calls[c]);
    printf("copies H2D %llu D2H %llu\n", (unsigned long long)h2d, (unsigned long long)d2h);
    printf("stress: %d threads x %ld ops (%llu calls): %llu mismatches\n", threads, ops, (unsigned long long)total,
           (unsigned long long)bad);
    return bad ? 1 : 0;
}
