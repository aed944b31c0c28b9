#include "streams.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { PENDING_CAP = 4096, MAX_STREAMS = 1 << 16, MAX_EVENTS = 1 << 20 };

static struct {
    hs_span_index live, destroyed, events;
    uintptr_t builtin[4];
    int n_builtin;
    uintptr_t per_thread_handle, legacy_handle;
    pthread_mutex_t lock;          /* creation and destruction only */
    hs_stream **by_index;          /* MAX_STREAMS slots, mapped once */
    atomic_uint n_streams;
    hs_gpu_event **events_by_id;       /* MAX_EVENTS slots */
    uint32_t n_events;
    uint32_t *free_event_ids;      /* records of destroyed events, reused by new ones */
    uint32_t n_free_event_ids;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Each thread's per-thread default stream (hipStreamPerThread / cudaStreamPerThread). */
static HS_TLS hs_stream *per_thread;

static void *map_table(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static hs_stream *new_stream(uintptr_t handle, bool blocking)
{
    hs_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->handle = handle;
    s->blocking = blocking;
    pthread_mutex_init(&s->lock, NULL);
    s->pending_cap = PENDING_CAP;
    s->pending = malloc(PENDING_CAP * sizeof *s->pending);
    if (!s->pending) {
        free(s);
        return NULL;
    }
    uint32_t index = atomic_load(&st.n_streams);
    if (index >= MAX_STREAMS) {
        free(s->pending);
        free(s);
        return NULL;
    }
    s->index = index;
    st.by_index[index] = s;
    atomic_store(&st.n_streams, index + 1); /* publish after the slot is filled */
    return s;
}

int hs_streams_init(const uintptr_t *builtin, int n_builtin, uintptr_t per_thread_handle, uintptr_t legacy_handle)
{
    st.legacy_handle = legacy_handle;
    st.n_builtin = n_builtin > 4 ? 4 : n_builtin;
    memcpy(st.builtin, builtin, st.n_builtin * sizeof *builtin);
    st.per_thread_handle = per_thread_handle;
    st.by_index = map_table(MAX_STREAMS * sizeof *st.by_index);
    st.events_by_id = map_table(MAX_EVENTS * sizeof *st.events_by_id);
    st.free_event_ids = map_table(MAX_EVENTS * sizeof *st.free_event_ids);
    if (!st.by_index || !st.events_by_id || !st.free_event_ids || hs_span_index_init(&st.live) || hs_span_index_init(&st.destroyed) ||
        hs_span_index_init(&st.events))
        return -1;
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
            pthread_mutex_init(&st.by_index[i]->lock, NULL);
    for (uint32_t i = 0; i < st.n_events; i++)
        if (st.events_by_id[i])
            pthread_mutex_init(&st.events_by_id[i]->lock, NULL);
}

void hs_stream_created(uintptr_t handle, unsigned nonblocking, uint32_t stack, uint32_t thread, uint64_t now_ns)
{
    pthread_mutex_lock(&st.lock);
    hs_stream *rec = new_stream(handle, !nonblocking);
    hs_span s = {.base = handle, .size = 1, .time_ns = now_ns, .stack = stack, .thread = thread,
                 .id = rec ? rec->index : 0, .kind = nonblocking};
    /* The runtime may hand out a destroyed stream's address again. */
    hs_span_lock(&st.destroyed);
    hs_span_remove_locked(&st.destroyed, handle, 0, NULL);
    hs_span_unlock(&st.destroyed);
    hs_span_lock(&st.live);
    hs_span_insert_locked(&st.live, &s, NULL);
    hs_span_unlock(&st.live);
    pthread_mutex_unlock(&st.lock);
}

hs_stream_state hs_stream_destroyed(uintptr_t handle, uint32_t stack, uint32_t thread, uint64_t now_ns,
                                    hs_span *info)
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
        hs_span_lock(&st.destroyed);
        hs_span_insert_locked(&st.destroyed, &gone, NULL);
        hs_span_unlock(&st.destroyed);
        /* The record stays (index slots are never reused): pending work of a destroyed stream
         * still completes, and reports may name it. */
    }
    pthread_mutex_unlock(&st.lock);
    return before;
}

hs_stream_state hs_stream_state_of(uintptr_t handle, hs_span *info)
{
    for (int i = 0; i < st.n_builtin; i++)
        if (handle == st.builtin[i]) {
            memset(info, 0, sizeof *info);
            info->base = handle;
            return HS_STREAM_OK;
        }
    if (hs_span_find_exact(&st.live, handle, info))
        return HS_STREAM_OK;
    if (hs_span_find_exact(&st.destroyed, handle, info))
        return HS_STREAM_DESTROYED;
    memset(info, 0, sizeof *info);
    return HS_STREAM_NEVER_CREATED;
}

hs_stream *hs_stream_null(void) { return st.by_index[0]; }
uint32_t hs_stream_count(void) { return atomic_load_explicit(&st.n_streams, memory_order_acquire); }
hs_stream *hs_stream_by_index(uint32_t index) { return index < hs_stream_count() ? st.by_index[index] : NULL; }

hs_stream *hs_stream_get(uintptr_t handle)
{
    if (handle == 0 || (handle == st.legacy_handle && handle))
        return st.by_index[0];
    if (handle == st.per_thread_handle && st.per_thread_handle) {
        if (!per_thread) {
            pthread_mutex_lock(&st.lock);
            per_thread = new_stream(handle, true);
            pthread_mutex_unlock(&st.lock);
        }
        return per_thread;
    }
    hs_span s;
    if (!hs_span_find_exact(&st.live, handle, &s))
        return NULL;
    return hs_stream_by_index((uint32_t)s.id);
}

void hs_event_created(uintptr_t handle)
{
    pthread_mutex_lock(&st.lock);
    hs_gpu_event *e = NULL;
    uint32_t id = 0;
    if (st.n_free_event_ids) {
        id = st.free_event_ids[--st.n_free_event_ids];
        e = st.events_by_id[id];
    } else if (st.n_events < MAX_EVENTS && (e = calloc(1, sizeof *e))) {
        id = st.n_events++;
        pthread_mutex_init(&e->lock, NULL);
        st.events_by_id[id] = e;
    }
    if (e) {
        pthread_mutex_lock(&e->lock);
        e->handle = handle;
        e->recorded = false;
        e->vc.n = 0;
        pthread_mutex_unlock(&e->lock);
        hs_span s = {.base = handle, .size = 1, .id = id};
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
