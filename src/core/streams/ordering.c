#include "streams/ordering.h"
#include "process/util.h"

#include <stdlib.h>

#include <string.h>

HS_HOT_DATA static atomic_uint capturing_streams; /* read at every launch: with the other flags */
/* The legacy null stream has waited for an event: its clock may name any stream. */
static atomic_bool legacy_waited_on_event;

static uint64_t last_seq(hs_stream *s) { return __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE); }

/* A clock's used entries only: a whole one is 32 entries (~520 bytes), and a sync copied all of
 * them (a `rep movs` that was the largest part of a sync's added cost); nothing reads past n. */
static void vc_copy(hs_vclock *to, const hs_vclock *from)
{
    to->n = from->n;
    memcpy(to->e, from->e, (size_t)from->n * sizeof from->e[0]);
}

/* The stream's next operation number.  Its writers all hold s->lock, so the count is stored, not
 * incremented with a locked instruction (a launch's, a copy's: one fewer bus lock each); readers
 * without the lock load it atomically. */
static uint64_t next_seq_locked(hs_stream *s)
{
    uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&s->seq, seq, __ATOMIC_RELEASE);
    return seq;
}

/* ---- vector clocks ---- */

static uint64_t vc_get(const hs_vclock *vc, uint32_t stream)
{
    for (uint32_t i = 0; i < vc->n; i++)
        if (vc->e[i].stream == stream)
            return vc->e[i].seq;
    return 0;
}

static void vc_raise(hs_vclock *vc, uint32_t stream, uint64_t seq)
{
    uint32_t i = 0;
    while (i < vc->n && vc->e[i].stream < stream)
        i++;
    if (i < vc->n && vc->e[i].stream == stream) {
        if (seq > vc->e[i].seq)
            vc->e[i].seq = seq;
        return;
    }
    if (vc->n == HS_VCLOCK_MAX)
        return; /* forgetting an ordering can only add a report, never hide one */
    memmove(&vc->e[i + 1], &vc->e[i], (vc->n - i) * sizeof vc->e[0]);
    vc->e[i].stream = stream;
    vc->e[i].seq = seq;
    vc->n++;
}

static void vc_join(hs_vclock *dst, const hs_vclock *src)
{
    for (uint32_t i = 0; i < src->n; i++)
        vc_raise(dst, src->e[i].stream, src->e[i].seq);
}

/* ---- pending operations (stream lock held) ----
 * pending_n is also read without the lock, by scan_others to skip idle streams: it is stored
 * atomically (relaxed; the lock orders everything else), so that read is not a data race. */

static void set_pending_n(hs_stream *s, uint32_t n) { __atomic_store_n(&s->pending_n, n, __ATOMIC_RELAXED); }

/* Stream lock held: the host ranges of the pending ops now lie in [lo, hi) (empty: lo >= hi). */
static void host_bounds_grow(hs_stream *s, uintptr_t lo, uintptr_t hi)
{
    uintptr_t old_lo = atomic_load_explicit(&s->pending_host_lo, memory_order_relaxed);
    uintptr_t old_hi = atomic_load_explicit(&s->pending_host_hi, memory_order_relaxed);
    if (old_lo >= old_hi) { /* was empty */
        old_lo = lo;
        old_hi = hi;
    }
    uintptr_t new_lo = lo < old_lo ? lo : old_lo, new_hi = hi > old_hi ? hi : old_hi;
    if (new_lo != atomic_load_explicit(&s->pending_host_lo, memory_order_relaxed)) /* stores only on change */
        atomic_store_explicit(&s->pending_host_lo, new_lo, memory_order_relaxed);
    if (new_hi != atomic_load_explicit(&s->pending_host_hi, memory_order_relaxed))
        atomic_store_explicit(&s->pending_host_hi, new_hi, memory_order_relaxed);
}

HS_HOT_PATH static void host_bounds_clear_if_none(hs_stream *s)
{
    if (atomic_load_explicit(&s->pending_host, memory_order_relaxed) == 0 &&
        atomic_load_explicit(&s->pending_host_hi, memory_order_relaxed) != 0) {
        atomic_store_explicit(&s->pending_host_lo, 0, memory_order_relaxed);
        atomic_store_explicit(&s->pending_host_hi, 0, memory_order_relaxed);
    }
}

HS_HOT_PATH static void retire_locked(hs_stream *s)
{
    uint64_t done = atomic_load(&s->done);
    while (s->pending_n && s->pending[s->pending_head].seq <= done) {
        if (s->pending[s->pending_head].host_hi > s->pending[s->pending_head].host_lo)
            atomic_fetch_sub(&s->pending_host, 1);
        s->pending_head = (s->pending_head + 1) % s->pending_cap;
        set_pending_n(s, s->pending_n - 1);
    }
    host_bounds_clear_if_none(s);
}

static void append_locked(hs_stream *s, const hs_pending_op *op)
{
    if (s->pending_n == s->pending_cap) { /* no synchronisation seen for a long time: forget the oldest */
        s->overflowed = true;
        if (s->pending[s->pending_head].host_hi > s->pending[s->pending_head].host_lo)
            atomic_fetch_sub(&s->pending_host, 1);
        s->pending_head = (s->pending_head + 1) % s->pending_cap;
        set_pending_n(s, s->pending_n - 1);
    }
    s->pending[(s->pending_head + s->pending_n) % s->pending_cap] = *op;
    set_pending_n(s, s->pending_n + 1);
    host_bounds_clear_if_none(s);
    if (op->host_hi > op->host_lo) {
        host_bounds_grow(s, op->host_lo, op->host_hi); /* before the count: a reader that sees it sees them */
        atomic_fetch_add(&s->pending_host, 1);
    }
}

/* The legacy null stream waits for every blocking stream, and blocking streams wait for it. */
HS_HOT_PATH static void legacy_order_locked(hs_stream *s)
{
    hs_stream *null = hs_stream_null();
    if (s == null) {
        if (!atomic_load_explicit(&hs_streams_blocking, memory_order_acquire))
            return;
        uint32_t n = hs_stream_count();
        for (uint32_t i = 1; i < n; i++) {
            hs_stream *t = hs_stream_by_index(i);
            if (t && t->blocking)
                vc_raise(&s->vc, i, __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE));
        }
    } else if (s->blocking) {
        vc_raise(&s->vc, 0, __atomic_load_n(&null->seq, __ATOMIC_ACQUIRE));
    }
}

static bool ordered_before(const hs_pending_op *a, uint32_t a_stream, const hs_vclock *clock)
{
    hs_stream *t = hs_stream_by_index(a_stream);
    return vc_get(clock, a_stream) >= a->seq || (t && atomic_load(&t->done) >= a->seq);
}

bool hs_order_before(uint32_t stream, uint64_t seq, const hs_vclock *clock)
{
    hs_stream *t = hs_stream_by_index(stream);
    return vc_get(clock, stream) >= seq || (t && atomic_load(&t->done) >= seq);
}

typedef bool (*op_matches)(const hs_pending_op *a, const void *arg);

/* Whether every pending host range of t lies outside op's (lock-free; a stale view only makes
 * the scan walk a stream it could have skipped, or skip one whose overlapping op was enqueued
 * concurrently, which the program did not order either). */
static bool bounds_miss(hs_stream *t, const void *arg)
{
    const hs_pending_op *op = arg;
    uintptr_t lo = atomic_load_explicit(&t->pending_host_lo, memory_order_relaxed);
    uintptr_t hi = atomic_load_explicit(&t->pending_host_hi, memory_order_relaxed);
    return lo >= hi || op->host_hi <= lo || hi <= op->host_lo; /* empty: nothing pending has a host range */
}

/* Scans every other stream with pending work, one stream lock at a time. */
static void scan_others(uint32_t self, const hs_vclock *clock, bool host_only, op_matches match, const void *arg,
                        hs_conflict *out)
{
    uint32_t n = hs_stream_count();
    for (uint32_t i = 0; i < n && !out->found; i++) {
        hs_stream *t = hs_stream_by_index(i);
        /* host_only: the stream's host range (a line that rarely changes) decides first, without
         * reading its busy counters (lines its own thread writes at every operation) */
        if (!t || i == self || (host_only && bounds_miss(t, arg)) ||
            (!host_only && !__atomic_load_n(&t->pending_n, __ATOMIC_RELAXED)))
            continue;
        hs_spin_lock(&t->lock);
        retire_locked(t);
        for (uint32_t k = 0; k < t->pending_n; k++) {
            const hs_pending_op *a = &t->pending[(t->pending_head + k) % t->pending_cap];
            if (match(a, arg) && (!clock || !ordered_before(a, i, clock))) {
                out->found = true;
                out->op = *a;
                out->stream = t->handle;
                break;
            }
        }
        hs_spin_unlock(&t->lock);
    }
}

static bool host_overlap(const hs_pending_op *a, const void *arg)
{
    const hs_pending_op *b = arg;
    return a->host_hi > a->host_lo && a->host_lo < b->host_hi && b->host_lo < a->host_hi &&
           (a->host_write || b->host_write);
}

void hs_order_find_overlap(hs_stream *s, const hs_pending_op *op, hs_conflict *overlap)
{
    memset(overlap, 0, sizeof *overlap);
    if (op->host_hi <= op->host_lo || atomic_load_explicit(&s->capturing, memory_order_relaxed))
        return;
    hs_spin_lock(&s->lock);
    legacy_order_locked(s);
    hs_vclock clock = s->vc;
    hs_spin_unlock(&s->lock);
    scan_others(s->index, &clock, true, host_overlap, op, overlap);
}

void hs_order_append(hs_stream *s, hs_pending_op *op)
{
    if (atomic_load_explicit(&s->capturing, memory_order_relaxed))
        return; /* captured into a graph: it runs when the graph is launched */
    hs_spin_lock(&s->lock);
    legacy_order_locked(s);
    retire_locked(s);
    op->seq = next_seq_locked(s);
    append_locked(s, op);
    hs_spin_unlock(&s->lock);
}

typedef struct user_query {
    uint64_t alloc_id;
    uintptr_t host_lo, host_hi;
} user_query;

static bool uses(const hs_pending_op *a, const void *arg)
{
    const user_query *q = arg;
    if (q->alloc_id && (a->alloc_ids[0] == q->alloc_id || a->alloc_ids[1] == q->alloc_id))
        return true;
    return q->host_hi > q->host_lo && a->host_hi > a->host_lo && a->host_lo < q->host_hi && q->host_lo < a->host_hi;
}

void hs_order_find_user(hs_stream *freeing, uint64_t alloc_id, uintptr_t host_lo, uintptr_t host_hi, hs_conflict *out)
{
    memset(out, 0, sizeof *out);
    user_query q = {alloc_id, host_lo, host_hi};
    hs_vclock clock = {0};
    if (freeing) {
        hs_spin_lock(&freeing->lock);
        legacy_order_locked(freeing);
        clock = freeing->vc;
        hs_spin_unlock(&freeing->lock);
    }
    scan_others(freeing ? freeing->index : UINT32_MAX, freeing ? &clock : NULL, false, uses, &q, out);
}

void hs_order_snapshot(hs_stream *s, hs_vclock *out)
{
    hs_spin_lock(&s->lock);
    legacy_order_locked(s);
    vc_copy(out, &s->vc);
    uint64_t seq = s->seq;
    hs_spin_unlock(&s->lock);
    vc_raise(out, s->index, seq);
}

void hs_order_complete_clock(const hs_vclock *clock)
{
    for (uint32_t i = 0; i < clock->n; i++) {
        hs_stream *t = hs_stream_by_index(clock->e[i].stream);
        if (t)
            hs_order_complete(t, clock->e[i].seq);
    }
}

HS_HOT_PATH uint64_t hs_order_enqueue_recorded(hs_stream *s, void (*record)(hs_stream *, uint64_t, void *), void *arg)
{
    if (atomic_load_explicit(&s->capturing, memory_order_relaxed))
        return 0;
    hs_spin_lock(&s->lock);
    legacy_order_locked(s);
    retire_locked(s);
    uint64_t seq = next_seq_locked(s);
    if (record)
        record(s, seq, arg);
    hs_spin_unlock(&s->lock);
    return seq;
}

uint64_t hs_order_enqueue(hs_stream *s) { return hs_order_enqueue_recorded(s, NULL, NULL); }

static atomic_uint_fast64_t completions;

uint64_t hs_order_completions(void) { return atomic_load_explicit(&completions, memory_order_acquire); }

void hs_order_complete(hs_stream *s, uint64_t upto)
{
    uint64_t done = atomic_load(&s->done);
    while (done < upto)
        if (atomic_compare_exchange_weak(&s->done, &done, upto)) {
            atomic_fetch_add_explicit(&completions, 1, memory_order_release);
            break;
        }
}

void hs_order_complete_legacy(void)
{
    uint32_t n = atomic_load_explicit(&hs_streams_blocking, memory_order_acquire) ? hs_stream_count() : 1;
    for (uint32_t i = 0; i < n; i++) {
        hs_stream *t = hs_stream_by_index(i);
        if (t && (i == 0 || t->blocking))
            hs_order_complete(t, last_seq(t));
    }
}

bool hs_order_legacy_idle(void)
{
    enum { SCAN_MAX = 64 }; /* past it, scanning costs more than the snapshot it saves */
    uint32_t n = hs_stream_count();
    if (n > SCAN_MAX)
        return false;
    bool any_stream = atomic_load_explicit(&legacy_waited_on_event, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++) {
        hs_stream *t = hs_stream_by_index(i);
        if (!t || (i && !any_stream && !atomic_load_explicit(&t->blocking, memory_order_relaxed)))
            continue;
        if (atomic_load_explicit(&t->done, memory_order_acquire) < last_seq(t))
            return false;
    }
    return true;
}

void hs_order_complete_device(void)
{
    uint32_t n = hs_stream_count();
    for (uint32_t i = 0; i < n; i++) {
        hs_stream *t = hs_stream_by_index(i);
        if (t)
            hs_order_complete(t, last_seq(t));
    }
}

void hs_order_event_record(hs_gpu_event *e, hs_stream *s)
{
    hs_spin_lock(&s->lock);
    legacy_order_locked(s);
    hs_vclock clock = s->vc;
    uint64_t seq = s->seq;
    hs_spin_unlock(&s->lock);
    vc_raise(&clock, s->index, seq);
    pthread_mutex_lock(&e->lock);
    e->recorded = true;
    e->stream = s->index;
    e->seq = seq;
    e->vc = clock;
    pthread_mutex_unlock(&e->lock);
}

void hs_order_stream_wait(hs_stream *s, hs_gpu_event *e)
{
    pthread_mutex_lock(&e->lock);
    hs_vclock clock = e->vc;
    bool recorded = e->recorded;
    pthread_mutex_unlock(&e->lock);
    if (!recorded)
        return; /* waiting on an event never recorded is a no-op */
    if (s == hs_stream_null())
        atomic_store(&legacy_waited_on_event, true);
    hs_spin_lock(&s->lock);
    vc_join(&s->vc, &clock);
    hs_spin_unlock(&s->lock);
}

void hs_order_event_complete(hs_gpu_event *e)
{
    pthread_mutex_lock(&e->lock);
    hs_vclock clock = e->vc;
    bool recorded = e->recorded;
    pthread_mutex_unlock(&e->lock);
    if (recorded) /* everything the record was ordered after is complete too */
        hs_order_complete_clock(&clock);
}

void hs_order_capture(hs_stream *s, bool on, int mode)
{
    bool was = atomic_exchange(&s->capturing, on);
    s->capture_mode = mode;
    if (was != on) {
        if (on)
            atomic_fetch_add(&capturing_streams, 1);
        else
            atomic_fetch_sub(&capturing_streams, 1);
    }
}

unsigned hs_order_capturing_streams(void) { return atomic_load_explicit(&capturing_streams, memory_order_relaxed); }

/* ---- host functions ---- */

typedef struct host_fn_box {
    hs_host_fn fn;         /* a host function's, or */
    hs_stream_callback cb; /* a stream callback's */
    void *data;
    uintptr_t stream;
    uint64_t self; /* its operation number on the stream: all before it are done when it runs */
} host_fn_box;

void *hs_order_host_fn_box(uintptr_t stream, uint64_t seq, hs_host_fn fn, hs_stream_callback cb, void *data)
{
    host_fn_box *b = malloc(sizeof *b);
    if (b)
        *b = (host_fn_box){fn, cb, data, stream, seq};
    return b;
}

/* The work before the box's function is done when it runs; so is the function, once it returns. */
static void run_box(void *box, void *stream_arg, int status)
{
    host_fn_box b = *(host_fn_box *)box;
    free(box);
    hs_stream *s = hs_stream_get(b.stream);
    if (s)
        hs_order_complete(s, b.self - 1); /* everything enqueued before it, by any thread */
    if (b.cb)
        b.cb(stream_arg, status, b.data);
    else
        b.fn(b.data);
    if (s)
        hs_order_complete(s, b.self); /* it ran: it is done too */
}

void hs_order_host_fn_box_discard(void *box) { free(box); }
void hs_order_host_fn_trampoline(void *box) { run_box(box, NULL, 0); }
void hs_order_stream_callback_trampoline(void *stream, int status, void *box) { run_box(box, stream, status); }
