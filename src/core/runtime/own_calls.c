/* hipshadow's own calls into the runtime, invisible to the program (own_calls.h). */
#include "runtime/own_calls.h"
#include "process/stats.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

HS_TLS struct hs_own_thread hs_own_thread;

void hs_own_save(void)
{
    struct hs_own_thread *t = &hs_own_thread;
    t->err_no = errno;
    hs_stat_count(HS_STAT_own_save);
    t->visible = (hs_visible){0};
    if (hs_frontend_active.save_visible)
        hs_frontend_active.save_visible(&t->visible);
    t->saved = true;
    errno = t->err_no;
}

void hs_own_restore(void)
{
    struct hs_own_thread *t = &hs_own_thread;
    t->saved = false;
    if (hs_frontend_active.restore_visible) {
        int owed = hs_frontend_active.restore_visible(&t->visible);
        if (owed)
            t->owed = owed;
    }
    errno = t->err_no;
}

void hs_own_settle(unsigned api, int result)
{
    if (hs_frontend_active.replaces_last_error &&
        hs_frontend_active.replaces_last_error(api, result, hs_own_thread.visible.runtime_version))
        hs_own_thread.owed = 0;
}

void hs_own_blocked(unsigned api, int code)
{
    /* A runtime that refused the call would hold its code as the last error. */
    if (hs_frontend_active.replaces_last_error && hs_frontend_active.replaces_last_error(api, code, 0) &&
        hs_layer_of(api)->is_failure(code))
        hs_own_thread.owed = code;
}

/* ---- the accessors ---- */

int hs_own_current_device(const hs_layer *layer)
{
    if (!layer->current_device)
        return -1;
    hs_own_begin();
    return layer->current_device();
}

const char *hs_own_kernel_name(const hs_layer *layer, const void *kernel, int ref, uintptr_t stream)
{
    if (!layer->kernel_name)
        return NULL;
    hs_own_begin();
    return layer->kernel_name(kernel, ref, stream);
}

int hs_own_kernel_params(const hs_layer *layer, const void *kernel, int ref, hs_kernel_param *out, int max)
{
    if (!layer->kernel_params)
        return -1;
    hs_own_begin();
    return layer->kernel_params(kernel, ref, out, max);
}

int hs_own_stream_sync(const hs_layer *layer, uintptr_t stream)
{
    hs_own_begin();
    return layer->stream_sync(stream);
}

const hs_device_limits *hs_own_device_limits(const hs_layer *layer, int device)
{
    /* Asked only after the runtime refused a call: once per device, then kept. */
    static hs_device_limits cache[HS_LIMITS_MAX_DEVICES];
    static atomic_uchar state[HS_LIMITS_MAX_DEVICES]; /* 0: not asked, 1: known, 2: unknown */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    if (device < 0 || device >= HS_LIMITS_MAX_DEVICES || !layer->device_limits)
        return NULL;
    int s = atomic_load_explicit(&state[device], memory_order_acquire);
    if (!s) {
        pthread_mutex_lock(&lock);
        s = atomic_load_explicit(&state[device], memory_order_relaxed);
        if (!s) {
            hs_device_limits *l = &cache[device];
            hs_own_begin();
            l->known = layer->device_limits(device, l);
            atomic_store_explicit(&state[device], s = l->known ? 1 : 2, memory_order_release);
        }
        pthread_mutex_unlock(&lock);
    }
    return s == 1 ? &cache[device] : NULL;
}

int hs_own_fill(const hs_layer *layer, uintptr_t device, int value, size_t n)
{
    hs_own_begin();
    return layer->fill(device, value, n);
}

int hs_own_read(const hs_layer *layer, void *host, uintptr_t device, size_t n)
{
    hs_own_begin();
    return layer->read(host, device, n);
}

bool hs_own_query_pointer(uintptr_t p, hs_span *span)
{
    if (!hs_frontend_active.query_pointer)
        return false;
    hs_stat_count(HS_STAT_own_query);
    hs_own_begin();
    return hs_frontend_active.query_pointer(p, span);
}

const struct hs_kernel_ops *hs_own_kernels(void)
{
    if (!hs_frontend_active.kernels)
        return NULL;
    hs_own_begin();
    return hs_frontend_active.kernels;
}
