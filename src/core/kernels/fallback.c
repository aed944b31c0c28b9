#include "kernels/fallback.h"
#include "runtime/frontend.h"
#include "kernels/gpu_kernels.h"
#include "runtime/own_calls.h"

#include <stdio.h>
#include <string.h>

static struct {
    bool on;
    uint64_t staging_max;
    pthread_mutex_t lock; /* one staging buffer, reused: rescues take turns */
    unsigned char *buf;
    size_t size;
} fb = {.lock = PTHREAD_MUTEX_INITIALIZER};
HS_HOT_DATA static bool fallback_always; /* read at every launch: with the other such flags */

void hs_fallback_init(const hs_options *o)
{
    /* the options parser took only off, stage or transpose, and fallback_staging in 1m..16g */
    const char *v = o->fallback;
    fb.on = strcmp(v, "off") != 0;
    fallback_always = fb.on && o->fallback_always;
    fb.staging_max = o->fallback_staging;
    if (fb.on && !hs_frontend_active.kernels)
        hs_say("hipshadow: fallback=%s: this build has no GPU kernels; nothing will be rescued\n", v);
}

bool hs_fallback_always(void) { return fallback_always; }

void hs_fallback_after_fork(void) { pthread_mutex_init(&fb.lock, NULL); }

bool hs_fallback_applies(const hs_call *c, const hs_call_state *st)
{
    if (!fb.on || !hs_frontend_active.kernels || c->op != HS_OP_COPY || !c->bytes)
        return false;
    if (st->facts.dir != HS_DIR_D2H || (c->src_extent && c->src_extent != c->bytes))
        return false; /* 1-D device-to-host copies only */
    const hs_side *s = &st->facts.src;
    if (s->where != HS_WHERE_LIVE || !hs_mem_kind_is_device(s->alloc.kind) || s->ptr == s->alloc.base)
        return false; /* only sub-buffers (interior pointers) of known device allocations */
    for (int i = 0; i < st->n_findings; i++)
        if (st->findings[i].severity == HS_SEV_ERROR)
            return false;
    return true;
}

/* Under fb.lock: a staging buffer of at least `want` bytes (up to the bound). */
static int reserve(size_t want)
{
    const hs_kernel_ops *k = hs_own_kernels();
    if (want > fb.staging_max)
        want = fb.staging_max;
    if (fb.buf && fb.size >= want)
        return 0;
    size_t size = want < (1u << 20) ? (1u << 20) : want;
    void *p = NULL;
    int rc = k->alloc(&p, size);
    if (rc)
        return rc;
    /* the old, smaller buffer is kept: it may still be the source of a copy in flight elsewhere */
    fb.buf = p;
    fb.size = size;
    return 0;
}

int hs_fallback_stage(const hs_call *c, hs_call_state *st)
{
    const hs_kernel_ops *k = hs_own_kernels();
    uintptr_t stream = c->has_stream ? c->stream : 0;
    pthread_mutex_lock(&fb.lock);
    int rc = reserve(c->bytes);
    size_t chunk = fb.size;
    for (size_t off = 0; !rc && off < c->bytes; off += chunk) {
        size_t n = c->bytes - off < chunk ? c->bytes - off : chunk;
        const unsigned char *from = (const unsigned char *)c->src + off;
        /* to the buffer's start: a runtime that refuses sub-buffers must not see one here */
        unsigned char *to = fb.buf;
        rc = hs_gpu_copy(to, from, n, stream);
        if (!rc)
            rc = k->sync(stream);
        if (!rc)
            rc = k->d2h((unsigned char *)c->dst + off, to, n);
    }
    pthread_mutex_unlock(&fb.lock);
    st->fallback_used = rc == 0;
    return rc;
}
