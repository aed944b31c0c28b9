#include "streams.h"

#include <string.h>

static struct {
    hs_span_index live, destroyed;
    uintptr_t builtin[4];
    int n_builtin;
    pthread_mutex_t lock;
    uint64_t serial;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

int hs_streams_init(const uintptr_t *builtin, int n_builtin)
{
    st.n_builtin = n_builtin > 4 ? 4 : n_builtin;
    memcpy(st.builtin, builtin, st.n_builtin * sizeof *builtin);
    return hs_span_index_init(&st.live) || hs_span_index_init(&st.destroyed) ? -1 : 0;
}

void hs_streams_after_fork(void)
{
    pthread_mutex_init(&st.lock, NULL);
    hs_span_index_after_fork(&st.live);
    hs_span_index_after_fork(&st.destroyed);
}

const char *hs_stream_state_name(hs_stream_state s)
{
    return s == HS_STREAM_OK ? "live" : s == HS_STREAM_DESTROYED ? "destroyed" : "never created";
}

void hs_stream_created(uintptr_t handle, uint32_t stack, uint32_t thread, uint64_t now_ns)
{
    hs_span s = {.base = handle, .size = 1, .time_ns = now_ns, .stack = stack, .thread = thread};
    pthread_mutex_lock(&st.lock);
    s.id = ++st.serial;
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
