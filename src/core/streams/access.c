/* The access history (see access.h). */
#include "streams/access.h"
#include "streams/ordering.h"
#include "process/util.h"

#include <stdlib.h>
#include <string.h>

HS_HOT_DATA atomic_bool hs_access_live;
HS_HOT_DATA static atomic_bool races_live;

enum { SHARDS = 64, BUCKETS = 1024, REPORTED_SLOTS = 4096, COUNTED_STREAMS = 1024 };

enum { RING_NONE = UINT32_MAX, RING_MIXED = UINT32_MAX - 1 };

typedef struct range {
    uint64_t lo, hi;
} range;

typedef struct rec {
    struct rec *next;
    uint64_t id;
    uint32_t n, head; /* the ring of accesses: n of them, oldest at head */
    bool written_all; /* initcheck gave up on its ranges: counts as written */
    bool by_kernel;   /* a kernel that may write it was launched with a pointer into it */
    bool warned;      /* initcheck's kernel warning was said */
    bool has_last_write;
    uint32_t n_written;
    uint64_t scanned_at; /* hs_order_completions() when its ring was last pruned */
    /* The stream of every access in its ring (RING_NONE: empty, RING_MIXED: several, or may be):
     * a call on that stream has nothing in it to race with, and no clock is taken to check. */
    uint32_t ring_only;
    /* Its ring may not be in stream order: a deferred launch (path/accesses.c) came in after a
     * later call of its stream.  Pruning then looks at every access, not just the oldest. */
    bool unordered;
    uint32_t dead; /* accesses dropped where they lie (seq 0) since the last pruning */
    range written[HS_WRITTEN_MAX];
    hs_access last_write; /* the last write not by a kernel */
    /* A bit per ring slot: it holds an exact access (not open), the only kind a later access can
     * cover.  An exact access looks at these alone, not at every open one between them. */
    uint64_t *exact;
    hs_access ring[];
} rec;

typedef struct shard {
    pthread_mutex_t lock;
    rec **buckets;
} shard;

static struct {
    uint32_t history, max;
    shard shards[SHARDS];
    atomic_uint records;
    atomic_bool full_said, ring_said, ranges_said;
    atomic_bool full;      /* access_max was reached: a missing record is not "never written" */
    uint32_t first_stream; /* index of the first non-null stream seen; 0: none */
    /* Which streams the histories hold, counted over records by their ring_only: a call on the
     * one stream that every non-empty history holds alone (an engine's compute stream between
     * two synchronisations: ggml) has nothing to race with, and searches without a lock. */
    atomic_uint mixed_records;              /* ring_only RING_MIXED, or a stream past COUNTED_STREAMS */
    atomic_uint single_records;             /* ring_only one stream */
    atomic_uint single_of[COUNTED_STREAMS]; /* ... that stream */
    atomic_uint created;
    _Atomic uint64_t reported[REPORTED_SLOTS];
} ac = {.history = 16, .max = 65536};
HS_HOT_DATA static bool initcheck_on; /* read at every launch: with the other such flags */
HS_HOT_DATA static bool races_off;    /* races=0; read at every launch too */

void hs_access_init(uint32_t history, uint32_t max, bool initcheck, bool races)
{
    races_off = !races;
    ac.history = history ? history : 1;
    ac.max = max ? max : 1;
    initcheck_on = initcheck;
    for (int i = 0; i < SHARDS; i++)
        pthread_mutex_init(&ac.shards[i].lock, NULL);
    if (initcheck)
        atomic_store(&hs_access_live, true);
}

bool hs_access_initcheck(void) { return initcheck_on; }

bool hs_access_races(void) { return atomic_load_explicit(&races_live, memory_order_relaxed); }

static void start(void)
{
    if (races_off)
        return;
    atomic_store(&races_live, true);
    atomic_store(&hs_access_live, true);
}

HS_HOT_PATH void hs_access_stream_seen(const hs_stream *s, bool created)
{
    if (atomic_load_explicit(&races_live, memory_order_relaxed) || races_off)
        return;
    if (created) {
        /* a non-blocking stream is not ordered with the null stream; two streams not with each other */
        if (!s || !atomic_load(&s->blocking) || atomic_fetch_add(&ac.created, 1) >= 1)
            start();
        return;
    }
    if (!s || s->index == 0)
        return;
    if (!atomic_load(&s->blocking)) {
        start();
        return;
    }
    uint32_t expect = 0;
    if (!__atomic_compare_exchange_n(&ac.first_stream, &expect, s->index, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
        expect != s->index)
        start();
}

static shard *shard_of(uint64_t id) { return &ac.shards[(id * 0x9E3779B97F4A7C15ull) >> 58]; }
static uint32_t bucket_of(uint64_t id) { return (uint32_t)((id * 0xC2B2AE3D27D4EB4Full) >> 54) % BUCKETS; }

/* A record's ring_only counted in (delta 1) or out (delta -1, as unsigned) of the totals. */
static void count_ring(uint32_t only, unsigned delta)
{
    if (only == RING_NONE)
        return;
    if (only == RING_MIXED || only >= COUNTED_STREAMS) {
        atomic_fetch_add_explicit(&ac.mixed_records, delta, memory_order_release);
        return;
    }
    atomic_fetch_add_explicit(&ac.single_records, delta, memory_order_release);
    atomic_fetch_add_explicit(&ac.single_of[only], delta, memory_order_release);
}

/* Shard lock held.  The new count goes in before the old one goes out: a reader in between sees
 * one stream too many, never one too few. */
static void set_ring_only(rec *r, uint32_t only)
{
    if (r->ring_only == only)
        return;
    count_ring(only, 1);
    count_ring(r->ring_only, (unsigned)-1);
    r->ring_only = only;
}

/* Whether every access the histories hold is of stream `me` (or there is none). */
static bool only_mine_anywhere(uint32_t me)
{
    if (atomic_load_explicit(&ac.mixed_records, memory_order_acquire))
        return false;
    unsigned singles = atomic_load_explicit(&ac.single_records, memory_order_acquire);
    return !singles ||
           (me < COUNTED_STREAMS && singles == atomic_load_explicit(&ac.single_of[me], memory_order_acquire));
}

HS_INLINE_HOT bool hs_access_may_race(uint32_t stream_index)
{
    return hs_access_races() && !only_mine_anywhere(stream_index);
}

static uint32_t exact_words(void) { return (ac.history + 63) / 64; }
static void mark_exact(rec *r, uint32_t slot, bool exact)
{
    uint64_t bit = 1ull << (slot % 64);
    r->exact[slot / 64] = exact ? r->exact[slot / 64] | bit : r->exact[slot / 64] & ~bit;
}

/* Shard lock held. */
static rec *find(shard *sh, uint64_t id)
{
    if (!sh->buckets)
        return NULL;
    for (rec *r = sh->buckets[bucket_of(id)]; r; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

static rec *find_or_make(shard *sh, uint64_t id)
{
    rec *r = find(sh, id);
    if (r)
        return r;
    if (atomic_fetch_add(&ac.records, 1) >= ac.max) {
        atomic_fetch_sub(&ac.records, 1);
        atomic_store(&ac.full, true);
        if (!atomic_exchange(&ac.full_said, true))
            hs_say("hipshadow: WARNING: access_max=%u reached: accesses of further allocations are not tracked "
                   "(no stream-race or uninitialized-read about them; raise access_max)\n",
                   ac.max);
        return NULL;
    }
    if (!sh->buckets && !(sh->buckets = calloc(BUCKETS, sizeof *sh->buckets)))
        goto oom;
    r = calloc(1, sizeof *r + ac.history * sizeof r->ring[0] + exact_words() * sizeof(uint64_t));
    if (!r)
        goto oom;
    r->exact = (uint64_t *)&r->ring[ac.history];
    r->id = id;
    r->ring_only = RING_NONE;
    uint32_t b = bucket_of(id);
    r->next = sh->buckets[b];
    sh->buckets[b] = r;
    return r;
oom:
    atomic_fetch_sub(&ac.records, 1);
    atomic_store(&ac.full, true);
    return NULL;
}

/* The ring's k-th access from its head (k < history): no division on a loop's every step. */
static uint32_t ring_at(const rec *r, uint32_t k)
{
    uint32_t i = r->head + k;
    return i >= ac.history ? i - ac.history : i;
}

static bool overlap(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi) { return alo < bhi && blo < ahi; }

/* Two accesses' bytes meet.  An open access (a pool's sub-buffer passed to a kernel: its start
 * is known, its end is not) is taken as its first byte against an exact access (a copy or a
 * memset) and as its address against another open one: taking it to the allocation's end would
 * make every two kernels on sub-buffers of one pool a race.  An open access and a kernel
 * argument that is not open (its end is a guess too) do not meet. */
static bool meets(const hs_access *a, const hs_access *b)
{
    if (a->open && b->open)
        return a->lo == b->lo;
    if (a->open || b->open) {
        const hs_access *o = a->open ? a : b, *x = a->open ? b : a;
        return !x->launch && x->lo <= o->lo && o->lo < x->hi;
    }
    return overlap(a->lo, a->hi, b->lo, b->hi);
}

/* The pair of call sites, reported once. */
static bool first_report(uintptr_t a, uintptr_t b)
{
    uint64_t key = ((uint64_t)a * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)b * 0xC2B2AE3D27D4EB4Full) ^ 1;
    for (uint32_t i = 0, at = (uint32_t)(key >> 52) % REPORTED_SLOTS; i < 64; i++, at = (at + 1) % REPORTED_SLOTS) {
        uint64_t expect = 0;
        if (atomic_compare_exchange_strong(&ac.reported[at], &expect, key))
            return true;
        if (expect == key)
            return false;
    }
    return true; /* the table is crowded: said again rather than never */
}

static void forget_needless(rec *r, const hs_access *a);

/* Shard lock held: whether a pruning of r's ring could find an access done.  A ring of one
 * stream holds its accesses in that stream's order, so if its oldest is not done none is (an
 * engine's compute stream between two synchronisations: the completions of its other streams
 * would otherwise make every launch walk the arena's whole history for nothing). */
static bool maybe_done(const rec *r)
{
    if (!r->n)
        return false;
    if (r->ring_only == RING_MIXED || r->unordered)
        return true;
    const hs_access *oldest = &r->ring[r->head];
    hs_stream *t = hs_stream_by_index(oldest->stream_index);
    return t && atomic_load(&t->done) >= oldest->seq;
}

/* Shard lock held: whether r's ring holds an access of another stream than a's. */
static bool others_in(const rec *r, const hs_access *a)
{
    return r && r->ring_only != RING_NONE && r->ring_only != a->stream_index;
}

/* Shard lock held: hs_access_find_first_race for one access. */
static bool race_locked(shard *sh, uint64_t id, const hs_access *a, const hs_vclock *clock, hs_race *out)
{
    rec *r = find(sh, id);
    if (!others_in(r, a))
        return false;
    const hs_access *best = NULL;
    for (uint32_t k = 0; k < r->n; k++) {
        const hs_access *o = &r->ring[ring_at(r, k)];
        if (o->stream_index == a->stream_index || !o->seq || !(o->write || a->write) || !meets(o, a) ||
            hs_order_before(o->stream_index, o->seq, clock))
            continue;
        bool known = !o->assumed && !a->assumed;
        if (!best || (known && (best->assumed || a->assumed)))
            best = o; /* a known pair before an assumed one; else the oldest */
        if (known)
            break;
    }
    if (!best || !first_report(best->caller ? best->caller : best->api, a->caller ? a->caller : a->api))
        return false;
    out->mine = *a;
    out->other = *best;
    out->alloc_id = id;
    out->lo = a->lo > best->lo ? a->lo : best->lo;
    out->hi = a->hi < best->hi ? a->hi : best->hi;
    return true;
}

/* Moves from one access's shard to the next one's: a launch's arguments are mostly in one
 * allocation (a pool's arena), so mostly one lock for all of them. */
static void hold(shard **held, shard *sh)
{
    if (*held == sh)
        return;
    if (*held)
        pthread_mutex_unlock(&(*held)->lock);
    if (sh)
        pthread_mutex_lock(&sh->lock);
    *held = sh;
}

int hs_access_find_first_race(const uint64_t *ids, const hs_access *const *accesses, int n, hs_stream *stream,
                              hs_vclock *clock, hs_race *out)
{
    if (!hs_access_races() || !stream || n <= 0)
        return -1;
    if (only_mine_anywhere(accesses[0]->stream_index))
        return -1; /* every access remembered is this stream's own (a call's accesses share its stream) */
    /* First whether any of the allocations holds another stream's access: mostly none (an
     * engine's arena between two synchronisations), and then no clock is needed. */
    shard *held = NULL;
    bool others = false;
    for (int i = 0; i < n && !others; i++) {
        shard *sh = shard_of(ids[i]);
        hold(&held, sh);
        rec *r = find(sh, ids[i]);
        uint64_t completions = hs_order_completions();
        if (others_in(r, accesses[i]) && r->scanned_at != completions) {
            /* another stream's accesses, perhaps done since: forgotten if so, and the history
             * holds this stream's alone again (a synchronised copy of an engine's inputs) */
            r->scanned_at = completions;
            if (maybe_done(r))
                forget_needless(r, NULL);
        }
        others = others_in(r, accesses[i]);
    }
    hold(&held, NULL);
    if (!others)
        return -1;
    hs_order_snapshot(stream, clock); /* takes the stream's lock: never under a shard's */
    int found = -1;
    for (int i = 0; i < n && found < 0; i++) {
        shard *sh = shard_of(ids[i]);
        hold(&held, sh);
        if (race_locked(sh, ids[i], accesses[i], clock, out))
            found = i;
    }
    hold(&held, NULL);
    return found;
}

bool hs_access_find_unwritten(uint64_t id, uintptr_t base, uint64_t size, uint64_t lo, uint64_t hi, bool kernel,
                              bool open, hs_uninit *out)
{
    if (!initcheck_on || hi <= lo)
        return false;
    uint64_t end = hi;
    if (open)
        hi = lo + 1; /* only its first byte is known to be read; a gap found runs on to `end` */
    shard *sh = shard_of(id);
    pthread_mutex_lock(&sh->lock);
    rec *r = find(sh, id);
    bool found = false;
    memset(out, 0, sizeof *out);
    if (!r) {
        /* never written at all: a copy reading it is a finding, a kernel may be what fills it */
        if (!kernel && !atomic_load(&ac.full)) {
            out->n_gaps = 1;
            out->gaps[0].lo = lo;
            out->gaps[0].hi = hi;
            found = true;
        }
    } else if (!r->written_all && !(kernel && (r->by_kernel || r->warned || !r->n_written))) {
        uint64_t at = lo;
        for (uint32_t i = 0; i < r->n_written && at < hi; i++) {
            const range *w = &r->written[i];
            if (w->hi <= at)
                continue;
            if (w->lo >= hi)
                break;
            if (w->lo > at) {
                if (out->n_gaps < HS_GAPS_MAX)
                    out->gaps[out->n_gaps].lo = at, out->gaps[out->n_gaps].hi = w->lo;
                out->n_gaps++;
            }
            at = w->hi;
        }
        if (at < hi) {
            if (out->n_gaps < HS_GAPS_MAX)
                out->gaps[out->n_gaps].lo = at, out->gaps[out->n_gaps].hi = hi;
            out->n_gaps++;
        }
        if (open && out->n_gaps) {
            /* the gap at its first byte, as far as the next written byte */
            out->gaps[0].hi = end;
            for (uint32_t i = 0; i < r->n_written; i++)
                if (r->written[i].lo > lo) {
                    out->gaps[0].hi = r->written[i].lo < end ? r->written[i].lo : end;
                    break;
                }
            hi = out->gaps[0].hi;
        }
        found = out->n_gaps > 0;
        for (uint32_t i = 0; found && i < r->n_written && i < HS_GAPS_MAX; i++) {
            out->written[i].lo = r->written[i].lo;
            out->written[i].hi = r->written[i].hi;
        }
        out->n_written = found ? r->n_written : 0;
        out->has_last_write = r->has_last_write;
        out->last_write = r->last_write;
        if (found && kernel)
            r->warned = true;
    }
    if (found) {
        out->alloc_id = id;
        out->alloc_base = base;
        out->alloc_size = size;
        out->lo = lo;
        out->hi = hi;
    }
    pthread_mutex_unlock(&sh->lock);
    return found;
}

/* Shard lock held: [lo, hi) is written. */
static void add_written(rec *r, uint64_t lo, uint64_t hi)
{
    if (r->written_all || hi <= lo)
        return;
    range *w = r->written;
    uint32_t n = r->n_written, i = 0;
    while (i < n && w[i].hi < lo)
        i++;
    uint32_t j = i; /* [i, j): the ranges it touches or meets, merged into one */
    while (j < n && w[j].lo <= hi) {
        if (w[j].lo < lo)
            lo = w[j].lo;
        if (w[j].hi > hi)
            hi = w[j].hi;
        j++;
    }
    if (i == j && n == HS_WRITTEN_MAX) {
        r->written_all = true; /* too scattered to follow: taken as written, never a false report */
        if (!atomic_exchange(&ac.ranges_said, true))
            hs_say("hipshadow: WARNING: an allocation was written in more than %d separate ranges: initcheck "
                   "takes such allocations as written\n",
                   HS_WRITTEN_MAX);
        return;
    }
    memmove(&w[i + 1], &w[j], (n - j) * sizeof *w);
    w[i] = (range){lo, hi};
    r->n_written = n - (j - i) + 1;
}

/* Whether `later`, on the same stream after `old`, makes `old` needless to keep: whatever races
 * with `old` races with `later` as well, reported as surely.  A call that nothing orders after
 * `old` is not ordered after `later` either (later follows old on their stream); it conflicts
 * with `later` too when `later` covers old's bytes and writes wherever old wrote; and `later` is
 * no more assumed than `old` was.  (A deferred launch may come in after later calls of its
 * stream: it covers none of them.)  What is given up: such a race names the later access. */
static bool covers(const hs_access *later, const hs_access *old)
{
    return later->stream_index == old->stream_index && later->seq >= old->seq && !later->open && !old->open &&
           later->lo <= old->lo && later->hi >= old->hi && (later->write || !old->write) &&
           (!later->assumed || old->assumed);
}

/* Shard lock held: drops from r's ring the accesses `a` (if not NULL) covers and those whose stream has
 * finished them (nothing enqueued from now on can race with them), so that an allocation an
 * engine uses over and over on its streams keeps one access per stream and kind, not the last
 * access_history of them.  Compacted where it lies, oldest first from head: an engine's pool
 * arena is one allocation that every launch touches, so this runs at nearly every launch. */
static void forget_needless(rec *r, const hs_access *a)
{
    uint32_t kept = 0, last_stream = UINT32_MAX, only = RING_NONE;
    uint64_t done = 0; /* of last_stream: the ring's accesses come from few streams */
    uint64_t last_seq = 0;
    bool known = false, unordered = false;
    for (uint32_t k = 0; k < r->n; k++) {
        const hs_access *old = &r->ring[ring_at(r, k)];
        if (old->stream_index != last_stream) {
            hs_stream *t = hs_stream_by_index(old->stream_index);
            last_stream = old->stream_index;
            known = t != NULL;
            done = known ? atomic_load(&t->done) : 0;
        }
        if (!old->seq || (known && done >= old->seq) || (a && covers(a, old)))
            continue;
        if (kept != k)
            r->ring[ring_at(r, kept)] = *old;
        kept++;
        unordered |= old->seq < last_seq && only == old->stream_index;
        last_seq = old->seq;
        only = only == RING_NONE || only == old->stream_index ? old->stream_index : RING_MIXED;
    }
    r->n = kept;
    r->unordered = unordered;
    r->dead = 0;
    set_ring_only(r, only);
    memset(r->exact, 0, exact_words() * sizeof(uint64_t));
    for (uint32_t k = 0; k < kept; k++)
        if (!r->ring[ring_at(r, k)].open)
            mark_exact(r, ring_at(r, k), true);
}

/* Shard lock held: the exact accesses `a` covers are dropped where they lie (their seq cleared:
 * no search looks at them, the next pruning takes them out) without walking the open ones. */
static void forget_covered(rec *r, const hs_access *a)
{
    for (uint32_t w = 0; w < exact_words(); w++)
        for (uint64_t bits = r->exact[w]; bits; bits &= bits - 1) {
            uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(bits);
            hs_access *old = &r->ring[slot];
            if (old->seq && covers(a, old)) {
                old->seq = 0;
                mark_exact(r, slot, false);
                r->dead++;
            }
        }
}

/* Whether a is remembered at all: synchronous and reading, it is complete, and nothing later
 * can race with it. */
static bool kept(const hs_access *a) { return (a->seq && hs_access_races()) || (initcheck_on && a->write); }

/* Shard lock held. */
static void add_locked(shard *sh, uint64_t id, const hs_access *a)
{
    rec *r = find_or_make(sh, id);
    if (!r)
        return;
    if (a->seq && hs_access_races()) {
        /* An open access covers nothing, and no access is done that was not at the last
         * pruning unless a stream completed work since: then there is nothing to drop. */
        uint64_t completions = hs_order_completions();
        if (r->scanned_at != completions && maybe_done(r))
            forget_needless(r, a);
        else if (!a->open)
            forget_covered(r, a);
        r->scanned_at = completions;
        if (r->n == ac.history && r->dead)
            forget_needless(r, NULL); /* full of dropped accesses: they go before a live one does */
        if (r->n == ac.history) {
            const hs_access *old = &r->ring[r->head];
            mark_exact(r, r->head, false);
            hs_stream *t = hs_stream_by_index(old->stream_index);
            if (t && atomic_load(&t->done) < old->seq && !atomic_load_explicit(&ac.ring_said, memory_order_relaxed) &&
                !atomic_exchange(&ac.ring_said, true))
                hs_say("hipshadow: WARNING: access_history=%u reached: an allocation's oldest access still in "
                       "flight is forgotten (a race with it is not seen; raise access_history)\n",
                       ac.history);
            r->head = ring_at(r, 1);
            r->n--;
        }
        if (r->n && r->ring_only == a->stream_index && r->ring[ring_at(r, r->n - 1)].seq > a->seq)
            r->unordered = true;
        r->ring[ring_at(r, r->n)] = *a;
        mark_exact(r, ring_at(r, r->n), !a->open);
        r->n++;
        /* an eviction may have taken another stream's last access: "mixed" is then kept until the
         * next pruning, which only costs a search that finds nothing */
        set_ring_only(r, r->ring_only == RING_NONE || r->ring_only == a->stream_index ? a->stream_index : RING_MIXED);
    }
    if (initcheck_on && a->write) {
        add_written(r, a->lo, a->hi);
        if (a->launch)
            r->by_kernel = true;
        else {
            r->last_write = *a;
            r->has_last_write = true;
        }
    }
}

void hs_access_add_all(const uint64_t *ids, const hs_access *const *accesses, int n)
{
    shard *held = NULL;
    for (int i = 0; i < n; i++) {
        const hs_access *a = accesses[i];
        if (!kept(a))
            continue;
        shard *sh = shard_of(ids[i]);
        hold(&held, sh);
        add_locked(sh, ids[i], a);
    }
    hold(&held, NULL);
}

void hs_access_forget(uint64_t id)
{
    shard *sh = shard_of(id);
    pthread_mutex_lock(&sh->lock);
    if (sh->buckets) {
        for (rec **p = &sh->buckets[bucket_of(id)]; *p; p = &(*p)->next)
            if ((*p)->id == id) {
                rec *r = *p;
                *p = r->next;
                count_ring(r->ring_only, (unsigned)-1);
                free(r);
                atomic_fetch_sub(&ac.records, 1);
                break;
            }
    }
    pthread_mutex_unlock(&sh->lock);
}

void hs_access_unwrite(uint64_t id, uint64_t lo, uint64_t hi)
{
    if (!initcheck_on)
        return;
    shard *sh = shard_of(id);
    pthread_mutex_lock(&sh->lock);
    rec *r = find(sh, id);
    if (r && !r->written_all) {
        range keep[HS_WRITTEN_MAX + 1];
        uint32_t n = 0;
        for (uint32_t i = 0; i < r->n_written; i++) {
            range w = r->written[i];
            if (w.lo < lo && n <= HS_WRITTEN_MAX)
                keep[n++] = (range){w.lo, w.hi < lo ? w.hi : lo};
            if (w.hi > hi && n <= HS_WRITTEN_MAX)
                keep[n++] = (range){w.lo > hi ? w.lo : hi, w.hi};
        }
        if (n > HS_WRITTEN_MAX) {
            r->written_all = true;
        } else {
            memcpy(r->written, keep, n * sizeof *keep);
            r->n_written = n;
        }
        r->by_kernel = false;
        r->warned = false;
        r->has_last_write = false;
    }
    pthread_mutex_unlock(&sh->lock);
}

void hs_access_after_fork(void)
{
    for (int i = 0; i < SHARDS; i++)
        pthread_mutex_init(&ac.shards[i].lock, NULL);
}
