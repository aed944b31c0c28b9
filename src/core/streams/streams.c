/* The stream and event registry (see streams.h).  Memory is bounded by the caps: stream records
 * (streams_max, reused once retired and quiet), destroyed handles (a ring of as many), event
 * records (events_max, reused once destroyed).  Handles the program keeps live past a cap are
 * still in the live index (they are valid), without a record. */
#include "streams/streams.h"
#include "shadow/span_index.h"
#include "process/hot_memory.h"
#include "process/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { PENDING_CAP = 4096 };
#define UNTRACKED UINT32_MAX /* a live stream's span id when it has no record */

typedef struct gone_handle {
    uintptr_t handle;
    uint64_t when; /* its end_time_ns in the destroyed index: which destruction */
} gone_handle;

/* by_index[0], the null stream's record, made first and never replaced: every launch on it
 * reads it here, with the other flags (one page), not through the table's own page. */
HS_HOT_DATA static hs_stream *null_stream;

static struct {
    hs_span_index live, destroyed, events;
    uintptr_t builtin[4];
    int n_builtin;
    uintptr_t per_thread_handle, legacy_handle;
    pthread_mutex_t lock;             /* creation and destruction only */
    uint32_t max_streams, max_events; /* streams_max, events_max */
    hs_stream **by_index;             /* max_streams slots, mapped once */
    atomic_uint n_streams;
    uint32_t *retired; /* indices of retired records (max_streams slots) */
    uint32_t n_retired;
    gone_handle *gone; /* destroyed handles remembered, oldest first: a ring of max_streams */
    uint32_t gone_head, gone_n;
    hs_gpu_event **events_by_id; /* max_events slots */
    uint32_t n_events;
    uint32_t *free_event_ids; /* records of destroyed events, reused by new ones */
    uint32_t n_free_event_ids;
    pthread_key_t thread_key; /* a thread's per-thread stream record, retired at its exit */
    bool have_thread_key;
    atomic_bool warned_streams, warned_events;
} st HS_HOT_DATA = {.lock = PTHREAD_MUTEX_INITIALIZER, .max_streams = 4096, .max_events = 65536};

/* Each thread's per-thread default stream (hipStreamPerThread / cudaStreamPerThread), and
 * whether streams_max left it without a record (then it is not asked for again). */
static HS_TLS hs_stream *per_thread;
static HS_TLS bool per_thread_untracked;

static void *map_table(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* A retired record whose work is all known complete, made fresh for a new stream (st.lock
 * held).  Its operation numbers go on from where they were: what other streams and events are
 * ordered after (an index and a number) never covers the new stream's work, and its old
 * launches stay complete in its ledger ring, which it keeps. */
static hs_stream *reuse_record(uintptr_t handle, bool blocking)
{
    for (uint32_t k = 0; k < st.n_retired; k++) {
        hs_stream *s = st.by_index[st.retired[k]];
        hs_spin_lock(&s->lock);
        bool quiet = atomic_load(&s->done) >= __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) && !atomic_load(&s->capturing);
        if (quiet) {
            s->handle = handle;
            if (s->blocking != blocking)
                atomic_fetch_add(&hs_streams_blocking, blocking ? 1u : (unsigned)-1);
            s->blocking = blocking;
            s->vc.n = 0;
            s->pending_head = 0;
            __atomic_store_n(&s->pending_n, 0, __ATOMIC_RELAXED); /* all complete (read lock-free too) */
            atomic_store(&s->pending_host, 0);
            s->overflowed = false;
            s->retired = false;
        }
        hs_spin_unlock(&s->lock);
        if (quiet) {
            st.retired[k] = st.retired[--st.n_retired];
            return s;
        }
    }
    return NULL;
}

/* Its stream is gone: the record may be reused once its work is done (st.lock held). */
HS_HOT static void retire_locked(hs_stream *s)
{
    if (!s || s->index == 0 || s->retired)
        return;
    hs_spin_lock(&s->lock);
    s->retired = true;
    hs_spin_unlock(&s->lock);
    st.retired[st.n_retired++] = s->index;
}

/* pthread key destructor, in the exiting thread: its per-thread stream record is retired (a
 * wrapped call made later in its exit, from another destructor, goes unordered). */
static void thread_gone(void *rec)
{
    per_thread = NULL;
    per_thread_untracked = true;
    pthread_mutex_lock(&st.lock);
    retire_locked(rec);
    pthread_mutex_unlock(&st.lock);
}

static hs_stream *new_stream(uintptr_t handle, bool blocking)
{
    hs_stream *s = reuse_record(handle, blocking);
    if (s)
        return s;
    uint32_t index = atomic_load(&st.n_streams);
    if (index >= st.max_streams) {
        if (!atomic_exchange(&st.warned_streams, true))
            hs_say("hipshadow: WARNING: streams_max=%u reached (%u streams tracked at once); further streams are "
                   "valid but not ordered (async-overlap, free-while-pending and capture checks skip them) until "
                   "tracked ones are destroyed and done\n",
                   st.max_streams, st.max_streams);
        return NULL;
    }
    hs_pending_op *pending = malloc(PENDING_CAP * sizeof *pending);
    if (!pending)
        return NULL;
    /* read at every launch on it: with the other hot structures (hot_memory.h), 64-byte aligned
     * there too, as hs_stream keeps lines apart (streams.h) */
    s = hs_hot_memory(sizeof *s) ?: aligned_alloc(64, (sizeof *s + 63) & ~(size_t)63);
    if (!s) {
        free(pending);
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->handle = handle;
    s->blocking = blocking;
    hs_spin_init(&s->lock);
    s->pending_cap = PENDING_CAP;
    s->pending = pending;
    s->index = index;
    st.by_index[index] = s;
    if (index == 0)
        null_stream = s;
    if (blocking && index)
        atomic_fetch_add(&hs_streams_blocking, 1u);
    atomic_store(&st.n_streams, index + 1); /* publish after the slot is filled */
    return s;
}

int hs_streams_init(const uintptr_t *builtin, int n_builtin, uintptr_t per_thread_handle, uintptr_t legacy_handle,
                    uint32_t max_streams, uint32_t max_events)
{
    st.legacy_handle = legacy_handle;
    st.n_builtin = n_builtin > 4 ? 4 : n_builtin;
    memcpy(st.builtin, builtin, st.n_builtin * sizeof *builtin);
    st.per_thread_handle = per_thread_handle;
    st.max_streams = max_streams ? max_streams : 1;
    st.max_events = max_events ? max_events : 1;
    st.by_index = map_table(st.max_streams * sizeof *st.by_index);
    st.retired = map_table(st.max_streams * sizeof *st.retired);
    st.gone = map_table(st.max_streams * sizeof *st.gone);
    st.events_by_id = map_table(st.max_events * sizeof *st.events_by_id);
    st.free_event_ids = map_table(st.max_events * sizeof *st.free_event_ids);
    if (!st.by_index || !st.retired || !st.gone || !st.events_by_id || !st.free_event_ids ||
        hs_span_index_init(&st.live) || hs_span_index_init(&st.destroyed) || hs_span_index_init(&st.events))
        return -1;
    st.have_thread_key = pthread_key_create(&st.thread_key, thread_gone) == 0;
    return new_stream(0, true) ? 0 : -1; /* index 0: the legacy null stream */
}

void hs_streams_after_fork(void)
{
    pthread_mutex_init(&st.lock, NULL);
    hs_span_index_after_fork(&st.live);
    hs_span_index_after_fork(&st.destroyed);
    hs_span_index_after_fork(&st.events);
    for (uint32_t i = 0; i < atomic_load(&st.n_streams); i++)
        if (st.by_index[i])
            hs_spin_init(&st.by_index[i]->lock);
    for (uint32_t i = 0; i < st.n_events; i++)
        if (st.events_by_id[i])
            pthread_mutex_init(&st.events_by_id[i]->lock, NULL);
}

void hs_stream_created(uintptr_t handle, unsigned nonblocking, int device, uint32_t stack, uint32_t thread,
                       uint64_t now_ns)
{
    pthread_mutex_lock(&st.lock);
    hs_span old;
    if (hs_span_find_exact(&st.live, handle, &old)) { /* destroyed unseen: its record is free */
        retire_locked(hs_stream_by_index((uint32_t)old.id));
        hs_span_lock(&st.live);
        hs_span_remove_locked(&st.live, handle, 0, NULL);
        hs_span_unlock(&st.live);
    }
    hs_stream *rec = new_stream(handle, !nonblocking);
    hs_span s = {.base = handle,
                 .size = 1,
                 .time_ns = now_ns,
                 .stack = stack,
                 .thread = thread,
                 .id = rec ? rec->index : UNTRACKED,
                 .kind = nonblocking,
                 .device = device};
    /* The runtime may hand out a destroyed stream's address again. */
    hs_span_lock(&st.destroyed);
    hs_span_remove_locked(&st.destroyed, handle, 0, NULL);
    hs_span_unlock(&st.destroyed);
    hs_span_lock(&st.live);
    hs_span_insert_locked(&st.live, &s, NULL);
    hs_span_unlock(&st.live);
    pthread_mutex_unlock(&st.lock);
}

/* The destroyed index keeps the last max_streams destroyed handles (st.lock held). */
static void remember_destroyed_locked(const hs_span *gone)
{
    if (st.gone_n == st.max_streams) { /* forget the oldest, unless it was made again since */
        gone_handle o = st.gone[st.gone_head];
        hs_span old;
        if (hs_span_find_exact(&st.destroyed, o.handle, &old) && old.end_time_ns == o.when) {
            hs_span_lock(&st.destroyed);
            hs_span_remove_locked(&st.destroyed, o.handle, 0, NULL);
            hs_span_unlock(&st.destroyed);
        }
        st.gone_head = (st.gone_head + 1) % st.max_streams;
        st.gone_n--;
    }
    st.gone[(st.gone_head + st.gone_n) % st.max_streams] = (gone_handle){gone->base, gone->end_time_ns};
    st.gone_n++;
    hs_span_lock(&st.destroyed);
    hs_span_remove_locked(&st.destroyed, gone->base, 0, NULL); /* destroyed unseen before: keep the latest */
    hs_span_insert_locked(&st.destroyed, gone, NULL);
    hs_span_unlock(&st.destroyed);
}

hs_stream_state hs_stream_destroyed(uintptr_t handle, uint32_t stack, uint32_t thread, uint64_t now_ns, hs_span *info)
{
    pthread_mutex_lock(&st.lock);
    hs_stream_state before = hs_stream_state_of(handle, info);
    if (before == HS_STREAM_OK && hs_span_find_exact(&st.live, handle, info)) {
        hs_span gone = *info;
        gone.end_stack = stack;
        gone.end_thread = thread;
        gone.end_time_ns = now_ns;
        hs_span_lock(&st.live);
        hs_span_remove_locked(&st.live, handle, 0, NULL);
        hs_span_unlock(&st.live);
        remember_destroyed_locked(&gone);
        /* The record stays until its work is done (pending work of a destroyed stream still
         * completes, and reports may name it); then a new stream may reuse it. */
        retire_locked(hs_stream_by_index((uint32_t)gone.id));
    }
    pthread_mutex_unlock(&st.lock);
    return before;
}

HS_HOT_DATA atomic_uint hs_streams_blocking; /* read at every launch: with the other such flags */

/* This thread's last live stream found, good while the index of live streams is unchanged: a
 * program makes call after call on one stream, and the index's search is then skipped. */
static HS_TLS struct last_live {
    uintptr_t handle;
    unsigned generation;
    hs_span info;
} last_live;

/* The cache, filled with handle's record when handle is live (NULL: it is not). */
HS_HOT static const struct last_live *find_live(uintptr_t handle)
{
    unsigned generation = hs_span_generation(&st.live); /* before the search: a write after it misses */
    if (handle && last_live.handle == handle && last_live.generation == generation && !(generation & 1u))
        return &last_live;
    hs_span info;
    if (!hs_span_find_exact(&st.live, handle, &info))
        return NULL;
    last_live.handle = handle;
    last_live.generation = generation;
    last_live.info = info;
    return &last_live;
}

HS_HOT hs_stream_state hs_stream_state_of(uintptr_t handle, hs_span *info)
{
    for (int i = 0; i < st.n_builtin; i++)
        if (handle == st.builtin[i]) {
            memset(info, 0, sizeof *info);
            info->base = handle;
            return HS_STREAM_OK;
        }
    const struct last_live *live = find_live(handle);
    if (live) {
        *info = live->info;
        return HS_STREAM_OK;
    }
    if (hs_span_find_exact(&st.destroyed, handle, info))
        return HS_STREAM_DESTROYED;
    memset(info, 0, sizeof *info);
    return HS_STREAM_NEVER_CREATED;
}

HS_HOT hs_stream *hs_stream_null(void) { return null_stream; }
uint32_t hs_stream_count(void) { return atomic_load_explicit(&st.n_streams, memory_order_acquire); }
hs_stream *hs_stream_by_index(uint32_t index) { return index < hs_stream_count() ? st.by_index[index] : NULL; }

hs_stream *hs_stream_get(uintptr_t handle)
{
    if (handle == 0 || (handle == st.legacy_handle && handle))
        return null_stream;
    if (handle == st.per_thread_handle && st.per_thread_handle) {
        if (HS_UNLIKELY(!per_thread) && !per_thread_untracked) {
            pthread_mutex_lock(&st.lock);
            per_thread = new_stream(handle, true);
            pthread_mutex_unlock(&st.lock);
            per_thread_untracked = !per_thread; /* streams_max: this thread's stays unordered */
            if (per_thread && st.have_thread_key)
                pthread_setspecific(st.thread_key, per_thread); /* retired when the thread exits */
        }
        return per_thread;
    }
    const struct last_live *live = find_live(handle);
    return live ? hs_stream_by_index((uint32_t)live->info.id) : NULL;
}

HS_INLINE_HOT hs_stream *hs_stream_live(uintptr_t handle)
{
    if (handle == 0 || (handle == st.legacy_handle && handle))
        return null_stream;
    if (handle == st.per_thread_handle && handle)
        return per_thread; /* made at this thread's first call on it, on the full path */
    const struct last_live *live = find_live(handle);
    return live ? hs_stream_by_index((uint32_t)live->info.id) : NULL;
}

hs_stream *hs_stream_of_state(uintptr_t handle, const hs_span *info)
{
    if (handle && handle != st.legacy_handle && handle != st.per_thread_handle && info->base == handle && info->size)
        return hs_stream_by_index((uint32_t)info->id);
    return hs_stream_get(handle);
}

void hs_event_created(uintptr_t handle, int device)
{
    pthread_mutex_lock(&st.lock);
    hs_span old;
    hs_span_lock(&st.events);
    if (hs_span_remove_locked(&st.events, handle, 0, &old)) /* destroyed unseen: its record is free */
        st.free_event_ids[st.n_free_event_ids++] = (uint32_t)old.id;
    hs_span_unlock(&st.events);
    hs_gpu_event *e = NULL;
    uint32_t id = 0;
    if (st.n_free_event_ids) {
        id = st.free_event_ids[--st.n_free_event_ids];
        e = st.events_by_id[id];
    } else if (st.n_events < st.max_events && (e = calloc(1, sizeof *e))) {
        id = st.n_events++;
        pthread_mutex_init(&e->lock, NULL);
        st.events_by_id[id] = e;
    } else if (st.n_events == st.max_events && !atomic_exchange(&st.warned_events, true)) {
        hs_say("hipshadow: WARNING: events_max=%u reached (%u events live); further events are not modelled: what "
               "they order is not seen (which may add async-overlap reports) until events are destroyed\n",
               st.max_events, st.max_events);
    }
    if (e) {
        pthread_mutex_lock(&e->lock);
        e->handle = handle;
        e->recorded = false;
        e->vc.n = 0;
        pthread_mutex_unlock(&e->lock);
        hs_span s = {.base = handle, .size = 1, .id = id, .device = device};
        hs_span_lock(&st.events);
        hs_span_insert_locked(&st.events, &s, NULL);
        hs_span_unlock(&st.events);
    }
    pthread_mutex_unlock(&st.lock);
}

void hs_event_destroyed(uintptr_t handle)
{
    pthread_mutex_lock(&st.lock);
    hs_span gone;
    hs_span_lock(&st.events);
    bool found = hs_span_remove_locked(&st.events, handle, 0, &gone);
    hs_span_unlock(&st.events);
    if (found)
        st.free_event_ids[st.n_free_event_ids++] = (uint32_t)gone.id;
    pthread_mutex_unlock(&st.lock);
}

hs_gpu_event *hs_event_get(uintptr_t handle)
{
    hs_span s;
    if (!hs_span_find_exact(&st.events, handle, &s))
        return NULL;
    return (uint32_t)s.id < st.n_events ? st.events_by_id[s.id] : NULL;
}

int hs_stream_device(uintptr_t handle, int current)
{
    if (!handle)
        return current;
    for (int i = 0; i < st.n_builtin; i++)
        if (handle == st.builtin[i])
            return current;
    hs_span s;
    return hs_span_find_exact(&st.live, handle, &s) ? s.device : -1;
}

int hs_event_device(uintptr_t handle)
{
    hs_span s;
    return handle && hs_span_find_exact(&st.events, handle, &s) ? s.device : -1;
}
