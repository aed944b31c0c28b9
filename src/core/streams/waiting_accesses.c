/* Waiting accesses of copies and memsets (see waiting_accesses.h).  Each stream's ring (about
 * 24 KiB) is made at its first waiting access and kept under that stream's lock. */
#include "streams/waiting_accesses.h"
#include "streams/holders.h"

#include "process/stats.h"

#include <stdlib.h>

/* accesses a stream may have waiting: a copy has two (ggml's GPT-2 makes about 100 between
 * two synchronisations) */
enum { RING = 256, STREAMS = 1024 };

typedef struct ring {
    uint32_t head, n;
    atomic_bool counted; /* in `streams_waiting` (written under the stream's lock, read without) */
    uint64_t newest_seq; /* of the newest access in it */
    uint64_t ids[RING];
    hs_access a[RING];
} ring;

static _Atomic(ring *) rings[STREAMS];
HS_HOT_DATA static atomic_uint streams_waiting; /* rings with an access in them */

/* s's lock held: the oldest access goes into the history if it is still in flight. */
static void drop_oldest(hs_stream *s, ring *r, hs_stat why)
{
    const hs_access *a = &r->a[r->head];
    if (a->seq > atomic_load(&s->done)) {
        hs_stat_count(why);
        hs_access_add_all(&r->ids[r->head], &a, 1);
    }
    r->head = (r->head + 1) % RING;
    r->n--;
}

HS_HOT static ring *ring_of(hs_stream *s, bool make)
{
    if (s->index >= STREAMS)
        return NULL;
    ring *r = atomic_load_explicit(&rings[s->index], memory_order_acquire);
    if (r || !make)
        return r;
    ring *made = calloc(1, sizeof *made);
    if (!made)
        return NULL;
    if (!atomic_compare_exchange_strong(&rings[s->index], &r, made)) {
        free(made); /* another thread made it first */
        return r;
    }
    return made;
}

bool hs_waiting_add(hs_stream *s, const uint64_t *ids, const hs_access *const *accesses, int n)
{
    ring *r = s && n <= RING ? ring_of(s, true) : NULL;
    if (!r)
        return false;
    hs_spin_lock(&s->lock);
    for (int i = 0; i < n; i++) {
        if (r->n == RING)
            drop_oldest(s, r, HS_STAT_access_late_full);
        uint32_t at = (r->head + r->n) % RING;
        r->ids[at] = ids[i];
        r->a[at] = *accesses[i];
        r->n++;
        if (accesses[i]->seq > r->newest_seq)
            r->newest_seq = accesses[i]->seq;
    }
    hs_holder_set(&streams_waiting, &r->counted, r->n > 0);
    hs_spin_unlock(&s->lock);
    return true;
}

HS_INLINE_HOT bool hs_waiting_others(const hs_stream *me)
{
    if (!atomic_load_explicit(&streams_waiting, memory_order_relaxed))
        return false;
    ring *mine = me && me->index < STREAMS ? atomic_load_explicit(&rings[me->index], memory_order_acquire) : NULL;
    return hs_holders_besides(&streams_waiting, mine ? &mine->counted : NULL);
}

void hs_waiting_take(hs_stream *s)
{
    ring *r = ring_of(s, false);
    if (!r || !atomic_load_explicit(&r->counted, memory_order_relaxed))
        return;
    hs_spin_lock(&s->lock);
    if (r->newest_seq <= atomic_load(&s->done))
        r->head = r->n = 0; /* all complete (a synchronised stream): nothing goes in */
    while (r->n)
        drop_oldest(s, r, HS_STAT_access_late_asked);
    hs_holder_set(&streams_waiting, &r->counted, false);
    hs_spin_unlock(&s->lock);
}
