/* The launch ledger (see ledger.h).  Each stream's ring is kept under that stream's lock, the one
 * its launch takes for its place in stream order anyway: launches on different streams never
 * contend, a launch takes one lock for both, and the reader (a fault report) is cold.  Rings are made at a stream's
 * first launch, out of one budget of ledger_max launches (an atomic count, no lock), and are
 * never freed: a stream record that is reused (streams.c) keeps its ring. */
#include "kernels/ledger.h"
#include "streams/holders.h"
#include "process/hot_memory.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hs_ledger {
    unsigned cap, head, n; /* under the stream's lock */
    /* deferred accesses (hs_launch.deferred): some record may hold them, up to launch number
     * deferred_upto (under the stream's lock; the flag is read lock-free too) */
    atomic_bool deferring;
    uint64_t deferred_upto;
    uint64_t taken_upto; /* the records up to this launch number were handed over (or completed) */
    hs_launch ring[];
};

HS_HOT_DATA static atomic_uint streams_deferring; /* ledgers whose `deferring` is set */

static unsigned entries_per_stream = 1024;
static unsigned entries_max = 262144;
static atomic_uint entries_taken; /* by the rings made so far */
static atomic_bool budget_spent;  /* a stream got a short ring or none (said once) */

void hs_ledger_init(unsigned entries, unsigned max_entries)
{
    entries_per_stream = entries ? entries : 1;
    entries_max = max_entries ? max_entries : 1;
}

/* Takes up to want entries from the budget; how many it got. */
static unsigned take_entries(unsigned want)
{
    unsigned taken = atomic_load(&entries_taken), got;
    do {
        got = taken >= entries_max ? 0 : entries_max - taken < want ? entries_max - taken : want;
    } while (got && !atomic_compare_exchange_weak(&entries_taken, &taken, taken + got));
    if (got < want && !atomic_exchange(&budget_spent, true))
        hs_say("hipshadow: WARNING: ledger_max=%u reached (each stream's ring takes ledger_size=%u launches); "
               "launches on further streams are not remembered, so device-fault reports may not name them\n",
               entries_max, entries_per_stream);
    return got;
}

static void give_back(unsigned n) { atomic_fetch_sub(&entries_taken, n); }

HS_HOT_PATH hs_launch *hs_ledger_claim_locked(hs_stream *s)
{
    struct hs_ledger *lg = atomic_load_explicit(&s->ledger, memory_order_acquire);
    if (!lg) {
        if (atomic_load_explicit(&s->no_ledger, memory_order_relaxed))
            return NULL; /* the budget was spent when this stream first launched */
        unsigned cap = take_entries(entries_per_stream);
        size_t bytes = sizeof(struct hs_ledger) + cap * sizeof(hs_launch);
        struct hs_ledger *made = !cap ? NULL : hs_hot_memory(bytes) ?: malloc(bytes); /* written at every launch */
        if (!made) {
            if (cap)
                give_back(cap);
            atomic_store_explicit(&s->no_ledger, true, memory_order_relaxed);
            return NULL;
        }
        made->cap = cap;
        made->head = made->n = 0;
        atomic_init(&made->deferring, false);
        made->deferred_upto = made->taken_upto = 0;
        if (!atomic_compare_exchange_strong(&s->ledger, &lg, made)) {
            if (!hs_hot_memory_holds(made))
                free(made); /* another thread made it first: lg is theirs (a carved one stays unused) */
            give_back(cap);
        } else {
            lg = made;
        }
    }
    unsigned at = lg->head + lg->n; /* < 2 cap: no division at every launch */
    hs_launch *slot = &lg->ring[at >= lg->cap ? at - lg->cap : at];
    if (lg->n < lg->cap)
        lg->n++;
    else
        lg->head = lg->head + 1 == lg->cap ? 0 : lg->head + 1; /* the oldest is forgotten */
    return slot;
}

/* The slot the next launch on this ring takes, made ready for writing now: a ring of ledger_size
 * records is long out of the cache when its turn comes, and the stores that fill a record each
 * wait for their line at the stream lock's release (a locked instruction drains the store
 * buffer), where the launch waits with them.  Fetched here, the lines arrive while the runtime
 * makes this launch.  As many lines as this record took: the next launch is mostly alike. */
static void prepare_next_slot(const struct hs_ledger *lg, const hs_launch *l)
{
    unsigned at = lg->head + lg->n;
    const char *next = (const char *)&lg->ring[at >= lg->cap ? at - lg->cap : at];
    uintptr_t line = (uintptr_t)next & ~(uintptr_t)63;
    uintptr_t end = (uintptr_t)next + offsetof(hs_launch, args) + (size_t)l->n_args * sizeof l->args[0];
    for (; line < end; line += 64)
        __builtin_prefetch((const void *)line, 1, 3);
}

HS_HOT_PATH void hs_ledger_commit_locked(hs_stream *s, const hs_launch *l)
{
    struct hs_ledger *lg = atomic_load_explicit(&s->ledger, memory_order_relaxed);
    if (l->deferred) {
        lg->deferred_upto = l->seq;
        hs_holder_set(&streams_deferring, &lg->deferring, true);
    }
    prepare_next_slot(lg, l);
}

HS_HOT_PATH const hs_launch *hs_ledger_next_overwritten_locked(hs_stream *s, uint64_t seq)
{
    struct hs_ledger *lg = atomic_load_explicit(&s->ledger, memory_order_acquire);
    if (!lg || lg->n < lg->cap)
        return NULL;
    /* Answered without reading the oldest record where it must be complete, as it mostly is: its
     * line is long out of the cache (the ring is ledger_size records), and a load that misses
     * stalls the launch, where the stores that overwrite it do not.  Each launch since it took a
     * stream operation number of its own: its number is at most seq - cap. */
    uint64_t done = atomic_load_explicit(&s->done, memory_order_acquire);
    if (lg->deferred_upto <= done || seq - lg->cap <= done)
        return NULL;
    return &lg->ring[lg->head];
}

HS_INLINE_HOT bool hs_ledger_others_deferred(const hs_stream *me)
{
    if (!atomic_load_explicit(&streams_deferring, memory_order_relaxed))
        return false;
    struct hs_ledger *mine = me ? atomic_load_explicit(&me->ledger, memory_order_acquire) : NULL;
    return hs_holders_besides(&streams_deferring, mine ? &mine->deferring : NULL);
}

void hs_ledger_take_deferred(hs_stream *s, void (*fn)(hs_stream *s, const hs_launch *l))
{
    struct hs_ledger *lg = atomic_load_explicit(&s->ledger, memory_order_acquire);
    if (!lg || !atomic_load_explicit(&lg->deferring, memory_order_relaxed))
        return;
    hs_spin_lock(&s->lock);
    uint64_t done = atomic_load(&s->done);
    /* Only the records since the last hand-over that have not completed: found from the newest
     * back (records are in launch order; a withdrawn one, numbered 0, is stepped over), so two
     * streams that ask for each other's launches at every call each walk their new ones once.
     * All complete (a synchronised stream, the common case): none.  Flags left on completed
     * records are harmless: a completed launch is never handed over. */
    uint64_t from = done > lg->taken_upto ? done : lg->taken_upto;
    unsigned k = lg->n;
    while (from < lg->deferred_upto && k > 0) {
        uint64_t seq = lg->ring[(lg->head + k - 1) % lg->cap].seq;
        if (seq && seq <= from)
            break;
        k--;
    }
    for (; from < lg->deferred_upto && k < lg->n; k++) {
        hs_launch *l = &lg->ring[(lg->head + k) % lg->cap];
        if (l->deferred && l->seq > done)
            fn(s, l);
        l->deferred = false;
    }
    lg->taken_upto = lg->deferred_upto;
    hs_holder_set(&streams_deferring, &lg->deferring, false);
    hs_spin_unlock(&s->lock);
}

static void keep_newest(hs_suspects *out, const hs_launch *l)
{
    int at = out->n < HS_MAX_SUSPECTS ? out->n++ : HS_MAX_SUSPECTS - 1;
    if (at == HS_MAX_SUSPECTS - 1 && out->n == HS_MAX_SUSPECTS && out->launch[at].stamp > l->stamp)
        return; /* older than every suspect kept */
    out->launch[at] = *l;
    for (; at > 0 && out->launch[at - 1].stamp < out->launch[at].stamp; at--) {
        hs_launch t = out->launch[at - 1];
        out->launch[at - 1] = out->launch[at];
        out->launch[at] = t;
    }
}

/* Does launch l have an argument into one of the allocations ids[0..n)? */
static bool points_into(const hs_launch *l, const uint64_t *ids, int n)
{
    for (int a = 0; a < l->n_args; a++)
        for (int i = 0; i < n; i++)
            if (ids[i] && l->args[a].alloc_id == ids[i] && l->args[a].state != HS_ARG_UNKNOWN)
                return true;
    return false;
}

/* Visits every stream's ledger: keeps the newest launches that are pending (if only_pending)
 * and, when want_ids, that point into one of ids[0..n_ids) (or, want_ids < 0, that do not). */
static void collect(hs_suspects *out, bool only_pending, int want_ids, const uint64_t *ids, int n_ids)
{
    uint32_t n = hs_stream_count();
    for (uint32_t i = 0; i < n; i++) {
        hs_stream *s = hs_stream_by_index(i);
        struct hs_ledger *lg = s ? atomic_load_explicit(&s->ledger, memory_order_acquire) : NULL;
        if (!lg)
            continue;
        uint64_t done = atomic_load(&s->done);
        hs_spin_lock(&s->lock);
        for (unsigned k = 0; k < lg->n; k++) {
            const hs_launch *l = &lg->ring[(lg->head + k) % lg->cap];
            if (only_pending && l->seq <= done)
                continue;
            if (want_ids && points_into(l, ids, n_ids) != (want_ids > 0))
                continue;
            keep_newest(out, l);
        }
        hs_spin_unlock(&s->lock);
    }
}

void hs_ledger_suspects(hs_suspects *out)
{
    memset(out, 0, sizeof *out);
    collect(out, true, 0, NULL, 0);
}

void hs_ledger_suspects_near(const uint64_t *ids, int n_ids, hs_suspects *out)
{
    memset(out, 0, sizeof *out);
    collect(out, true, 1, ids, n_ids);
    out->n_near = out->n;
    if (out->n == HS_MAX_SUSPECTS)
        return;
    hs_suspects rest;
    memset(&rest, 0, sizeof rest);
    collect(&rest, true, -1, ids, n_ids);
    for (int i = 0; i < rest.n && out->n < HS_MAX_SUSPECTS; i++)
        out->launch[out->n++] = rest.launch[i];
}

void hs_ledger_users(uint64_t alloc_id, hs_suspects *out)
{
    memset(out, 0, sizeof *out);
    out->users = true;
    collect(out, false, 1, &alloc_id, 1);
}

void hs_ledger_withdraw(hs_stream *s, uint64_t seq)
{
    struct hs_ledger *lg = s ? atomic_load_explicit(&s->ledger, memory_order_acquire) : NULL;
    if (!lg || !seq)
        return;
    hs_spin_lock(&s->lock);
    for (unsigned k = lg->n; k-- > 0;) {
        hs_launch *l = &lg->ring[(lg->head + k) % lg->cap];
        if (l->seq == seq) {
            l->seq = 0; /* complete from the start: never a suspect */
            break;
        }
    }
    hs_spin_unlock(&s->lock);
}

bool hs_ledger_last(hs_stream *s, hs_launch *out)
{
    struct hs_ledger *lg = s ? atomic_load_explicit(&s->ledger, memory_order_acquire) : NULL;
    if (!lg)
        return false;
    hs_spin_lock(&s->lock);
    bool any = lg->n > 0;
    if (any)
        *out = lg->ring[(lg->head + lg->n - 1) % lg->cap];
    hs_spin_unlock(&s->lock);
    return any;
}
