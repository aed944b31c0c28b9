/* The region of hot structures (process/hot_memory.h): pieces carved by threads at once are
 * 64-byte aligned, zeroed, inside the region and disjoint; the region starts on a 2 MiB boundary
 * and is offered to huge pages (its mapping carries the kernel's "hg" flag); a piece of 2 MiB or
 * more starts a huge page; once spent, or for a request larger than it, the answer is NULL,
 * which callers take as "map your own". */
#define _GNU_SOURCE
#include "process/hot_memory.h"
#include "unit.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, MAX_PIECES = 1 << 16, REGION = 16 << 20, HUGE = 2 << 20 };

typedef struct piece {
    unsigned char *p;
    size_t bytes;
} piece;

static piece pieces[THREADS][MAX_PIECES];
static size_t n_pieces[THREADS];

static void *carver(void *arg)
{
    size_t t = (size_t)arg;
    unsigned seed = (unsigned)t + 1;
    for (size_t i = 0; i < MAX_PIECES; i++) {
        size_t bytes = 1 + (size_t)rand_r(&seed) % 3000;
        unsigned char *p = hs_hot_memory(bytes);
        if (!p)
            break;
        size_t zero = 0;
        while (zero < bytes && !p[zero])
            zero++;
        CHECK_EQ(zero, bytes); /* zeroed when carved */
        memset(p, (int)(t + 1), bytes);
        pieces[t][n_pieces[t]++] = (piece){p, bytes};
    }
    return NULL;
}

/* Whether the mapping holding p has VmFlags "hg" (MADV_HUGEPAGE); -1 when smaps cannot say. */
static int huge_advised(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0, found = -1;
    while (fgets(line, sizeof line, f)) {
        uintptr_t lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && !strncmp(line, "VmFlags:", 8)) {
            found = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return found;
}

int main(void)
{
    unsigned char *first = hs_hot_memory(1);
    CHECK(first != NULL);
    CHECK_EQ((uintptr_t)first % HUGE, 0);
    CHECK(hs_hot_memory_holds(first));
    int hg = huge_advised(first);
    if (hg >= 0)
        CHECK_EQ(hg, 1);
    CHECK(hs_hot_memory((size_t)REGION + 1) == NULL);
    /* a piece of a huge page or more starts one (the bytes before it stay unused) */
    unsigned char *big = hs_hot_memory(HUGE + 1);
    CHECK(big == first + HUGE);
    CHECK(hs_hot_memory_holds(big) && hs_hot_memory_holds(big + HUGE));

    pthread_t th[THREADS];
    for (size_t t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, carver, (void *)t);
    for (size_t t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);

    size_t carved = 2 * HUGE + 64; /* the first piece, the gap after it, the big one */
    for (size_t t = 0; t < THREADS; t++)
        for (size_t i = 0; i < n_pieces[t]; i++) {
            piece *c = &pieces[t][i];
            carved += (c->bytes + 63) & ~(size_t)63;
            CHECK_EQ((uintptr_t)c->p % 64, 0);
            CHECK(hs_hot_memory_holds(c->p) && hs_hot_memory_holds(c->p + c->bytes - 1));
            size_t same = 0; /* still this thread's bytes: no other piece overlapped it */
            while (same < c->bytes && c->p[same] == t + 1)
                same++;
            CHECK_EQ(same, c->bytes);
        }
    /* spent: every thread stopped at a NULL, with less left than its next request */
    CHECK(carved <= REGION && carved > REGION - THREADS * 3072);
    CHECK(hs_hot_memory(4096) == NULL);
    CHECK(!hs_hot_memory_holds(&carved));
    fprintf(stderr, "carved %zu bytes in %zu+%zu+%zu+%zu pieces; huge pages advised: %d\n", carved, n_pieces[0],
            n_pieces[1], n_pieces[2], n_pieces[3], hg);
    return UNIT_DONE();
}
