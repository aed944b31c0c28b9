/* hipshadow's own calls into the runtime, invisible to the program (own_calls.h). */
#include "own_calls.h"

#include <errno.h>

HS_TLS struct hs_own_thread hs_own_thread;

void hs_own_save(void)
{
    struct hs_own_thread *t = &hs_own_thread;
    t->err_no = errno;
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
