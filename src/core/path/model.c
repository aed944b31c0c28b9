/* The model's changes, one function per operation (see model.h). */
#include "path/model.h"
#include "path/accesses.h"
#include "kernels/gpu_kernels.h"
#include "runtime/frontend.h"
#include "path/init.h"
#include "process/stacks.h"
#include "kernels/kernel_info.h"
#include "kernels/ledger.h"
#include "runtime/own_calls.h"
#include "kernels/redzones.h"
#include "torch/torch_bridge.h"
#include "process/util.h"
#include "shadow/vmm.h"

#include <string.h>

/* ---- claims ---- */

void hs_model_release(const hs_call *c, hs_call_state *st)
{
    if (!c->free_ptr)
        return; /* freeing NULL is a no-op in both runtimes */
    st->stack = hs_stack_capture();
    st->facts.release = hs_shadow_release(c->free_ptr, st->stack, hs_thread_id(), hs_call_time(st), &st->freed);
    st->released = st->facts.release == HS_RELEASED;
}

void hs_model_destroy_stream(const hs_call *c, hs_call_state *st)
{
    uint32_t stack = hs_stack_capture();
    st->facts.stream_state = hs_stream_destroyed(c->stream, stack, hs_thread_id(), hs_call_time(st),
                                                 &st->facts.stream_info);
    if (st->facts.stream_state == HS_STREAM_NEVER_CREATED && hs_layer_of(c->api)->unannounced_streams)
        st->facts.stream_state = HS_STREAM_OK; /* a stream the runtime made unseen */
    if (st->facts.stream_state != HS_STREAM_OK)
        st->stack = stack;
}

void hs_model_unclaim(const hs_call *c, hs_call_state *st)
{
    (void)c;
    if (st->released)
        hs_shadow_restore(&st->freed); /* st->released stays set: the log records what was attempted */
    if (st->launch_seq)
        hs_ledger_withdraw(st->stream, st->launch_seq); /* the runtime refused the launch */
    hs_order_host_fn_box_discard(st->host_box);         /* never handed over, or refused: it will not run */
    st->host_box = NULL;
}

/* ---- after success ---- */

void hs_model_alloc(const hs_call *c, hs_call_state *st)
{
    uintptr_t base = c->register_ptr ? c->register_ptr : (c->out_ptr ? (uintptr_t)*c->out_ptr : 0);
    if (!base)
        return;
    size_t size = c->out_pitch ? *c->out_pitch * c->alloc_rows : c->alloc_bytes;
    const hs_layer *layer = hs_layer_of(c->api);
    int device = hs_own_current_device(layer);
    uint32_t redzone = hs_redzone_of(c, size);
    /* A stream-ordered allocation is filled in its stream's order: the memory may still be in
     * use by that stream's earlier work. */
    if (redzone &&
        hs_gpu_redzone_fill((void *)(base + size), redzone, HS_REDZONE_PATTERN, c->async ? c->stream : 0, !c->async) !=
            0 &&
        (!layer->fill || hs_own_fill(layer, base + size, HS_REDZONE_PATTERN, redzone) != 0))
        redzone = 0; /* filled neither by hipshadow's kernel nor by the runtime's memset: not checked */
    if (redzone)
        hs_redzone_allocated_on(device);
    hs_span s = {
        .base = base,
        .size = size,
        .kind = c->mem_kind,
        .api = c->api,
        .device = device < 0 ? 0 : device,
        .owner = c->pool,
        .stack = hs_stack_capture(),
        .thread = hs_thread_id(),
        .time_ns = hs_call_time(st),
        .redzone = redzone,
    };
    if (hs_shadow_add(&s) != 0)
        hs_disable("out of memory for the shadow map");
    st->allocated = s;
    if (hs_mem_kind_is_device(c->mem_kind))
        hs_torch_poll(); /* PyTorch's caching allocator may make its first segment: attach to it now */
}

void hs_model_free(const hs_call *c, hs_call_state *st)
{
    if (st->released && !c->async && hs_mem_kind_is_device(st->freed.kind))
        hs_order_complete_device(); /* hipFree / cudaFree synchronise the device */
    if (st->released && HS_UNLIKELY(hs_access_tracking()))
        hs_access_forget(st->freed.id);
}

/* A synchronous operation (or a successful sync) on s: its earlier work is done. */
static void complete_stream(hs_stream *s, const hs_vclock *clock)
{
    hs_order_complete_clock(clock);
    if (s == hs_stream_null())
        hs_order_complete_legacy();
}

HS_HOT void hs_model_copy(const hs_call *c, hs_call_state *st)
{
    hs_stream *s = st->stream;
    if (s && st->facts.has_pending)
        hs_order_append(s, &st->facts.pending);
    else if (s && !c->async)
        complete_stream(s, &st->sync_clock);
    if (HS_UNLIKELY(st->facts.access != NULL))
        hs_model_accesses(c, st, s && st->facts.has_pending ? st->facts.pending.seq : 0);
}

HS_HOT void hs_model_sync(const hs_call *c, hs_call_state *st)
{
    if (c->sync == HS_SYNC_DEVICE) {
        hs_order_complete_device();
    } else if (c->sync == HS_SYNC_EVENT) {
        hs_gpu_event *e = hs_event_get(c->event);
        if (e)
            hs_order_event_complete(e);
    } else if (st->stream) {
        complete_stream(st->stream, &st->sync_clock);
    }
}

void hs_model_stream_create(const hs_call *c, hs_call_state *st)
{
    if (c->out_stream) {
        hs_stream_created(*(uintptr_t *)c->out_stream, c->stream_flags, hs_own_current_device(hs_layer_of(c->api)),
                          st->stack = hs_stack_capture(), hs_thread_id(), hs_call_time(st));
        hs_access_stream_seen(hs_stream_get(*(uintptr_t *)c->out_stream), true);
    }
}

void hs_model_event_create(const hs_call *c, hs_call_state *st)
{
    (void)st;
    if (c->out_event)
        hs_event_created(*(uintptr_t *)c->out_event, hs_own_current_device(hs_layer_of(c->api)));
}

void hs_model_event_destroy(const hs_call *c, hs_call_state *st)
{
    (void)st;
    hs_event_destroyed(c->event);
}

void hs_model_event_record(const hs_call *c, hs_call_state *st)
{
    (void)st;
    hs_gpu_event *e = hs_event_get(c->event);
    hs_stream *on = hs_stream_get(c->stream);
    if (e && on)
        hs_order_event_record(e, on);
}

void hs_model_stream_wait(const hs_call *c, hs_call_state *st)
{
    (void)st;
    hs_gpu_event *e = hs_event_get(c->event);
    hs_stream *on = hs_stream_get(c->stream);
    if (e && on)
        hs_order_stream_wait(on, e);
}

void hs_model_capture_begin(const hs_call *c, hs_call_state *st)
{
    (void)st;
    hs_stream *on = hs_stream_get(c->stream);
    if (on)
        hs_order_capture(on, true, c->capture_mode);
}

void hs_model_pool_destroy(const hs_call *c, hs_call_state *st)
{
    (void)st;
    hs_shadow_release_owned(c->pool, hs_stack_capture(), hs_thread_id(), hs_call_time(st));
}

/* ---- launches ---- */

/* What a launch's ledger record is made of, handed to hs_order_enqueue_recorded. */
typedef struct launch_record {
    const hs_call *c;
    const hs_facts *f;
    const hs_kernel_info *k;
    uint32_t stack;
    bool deferred;
    bool recorded;
} launch_record;

/* Under the stream's lock, with the launch's place in stream order: its record, written in its
 * ledger slot.  A deferred launch about to be overwritten gives its accesses to the history first. */
HS_HOT_PATH static void record_launch(hs_stream *s, uint64_t seq, void *arg)
{
    launch_record *r = arg;
    const hs_launch *old = hs_ledger_next_overwritten_locked(s, seq);
    if (old)
        hs_accesses_add_overwritten(s, old);
    hs_launch *l = hs_ledger_claim_locked(s);
    if (!l)
        return;
    const hs_call *c = r->c;
    l->seq = seq;
    l->stamp = hs_order_stamp();
    l->stream = c->stream;
    l->caller = c->caller;
    l->stack = r->stack;
    l->thread = hs_thread_id();
    l->name = r->k ? r->k->name : NULL;
    l->kernel = c->kernel;
    for (int i = 0; i < 3; i++) {
        l->grid[i] = c->grid[i];
        l->block[i] = c->block[i];
    }
    l->shmem = (uint32_t)c->shmem;
    l->api = c->api;
    l->kernel_ref = c->kernel_ref;
    l->n_args = r->f->n_args;
    l->deferred = r->deferred;
    for (int i = 0; i < l->n_args; i++) /* readers look at args[0..n_args); a few, each copied inline */
        l->args[i] = r->f->args[i];
    hs_ledger_commit_locked(s, l);
    r->recorded = true;
}

HS_HOT_PATH void hs_model_launch(const hs_call *c, hs_call_state *st)
{
    hs_stream *s = st->stream;
    if (!s || c->kernel_ref == HS_KREF_NONE)
        return;
    const hs_facts *f = &st->facts;
    launch_record rec = {.c = c,
                         .f = f,
                         .k = hs_kernel_info_of(c),
                         .stack = hs_opts()->launch_stacks || hs_opts()->serialize ? hs_stack_capture() : 0,
                         .deferred = HS_UNLIKELY(f->access != NULL) && hs_accesses_deferrable()};
    /* Its place in stream order and its ledger record under one hold of the stream's lock; a
     * launch captured into a graph gets neither (it runs when the graph does). */
    uint64_t seq = hs_order_enqueue_recorded(s, record_launch, &rec);
    st->launch_seq = seq; /* for the post-mortem log's LAUNCH record */
    if (!st->stack)
        st->stack = rec.stack; /* launch_stacks=1: the record carries it too */
    if (HS_UNLIKELY(f->access != NULL) && seq && rec.deferred && rec.recorded)
        hs_accesses_deferred(); /* its ledger record holds them */
    else if (HS_UNLIKELY(f->access != NULL) && seq)
        hs_model_accesses(c, st, seq);
    if (!seq)
        return;
    if (c->kernel_ref == HS_KREF_HOST_FN && c->kernel) { /* once it ran, it and all before it are done;
                                                           * no function: the runtime refuses it, unboxed */
        hs_host_fn fn = c->host_callback ? NULL : (hs_host_fn)c->kernel;
        hs_stream_callback cb = c->host_callback ? (hs_stream_callback)c->kernel : NULL;
        st->host_box = hs_order_host_fn_box(c->stream, seq, fn, cb, c->host_data);
    }
    for (int i = 0; HS_UNLIKELY(hs_redzones_on()) && i < f->n_args; i++) {
        const hs_launch_arg *a = &f->args[i];
        if (a->redzone && a->state == HS_ARG_LIVE) /* its redzone is read back at the next sync */
            hs_redzone_touch(a->value - (uintptr_t)a->offset, a->alloc_size, a->redzone, a->alloc_id);
    }
}

/* ---- modules ---- */

void hs_model_module_load(const hs_call *c, hs_call_state *st)
{
    (void)st;
    const hs_layer *layer = hs_layer_of(c->api);
    if (layer->module_loaded && c->out_module && *c->out_module)
        layer->module_loaded(*c->out_module, c->module_image);
}

void hs_model_function_get(const hs_call *c, hs_call_state *st)
{
    (void)st;
    const hs_layer *layer = hs_layer_of(c->api);
    if (layer->function_found && c->out_function && *c->out_function && c->function_name)
        layer->function_found(*c->out_function, c->module, c->function_name);
}

/* ---- virtual memory ---- */

void hs_model_vmm_reserve(const hs_call *c, hs_call_state *st)
{
    (void)st;
    if (c->out_ptr && *c->out_ptr)
        hs_vmm_reserved((uintptr_t)*c->out_ptr, c->alloc_bytes, hs_stack_capture(), hs_thread_id(), hs_call_time(st));
    hs_torch_poll(); /* expandable segments: a segment's address space comes first */
}

void hs_model_vmm_free(const hs_call *c, hs_call_state *st)
{
    (void)st;
    hs_vmm_reservation_freed(c->free_ptr);
}

void hs_model_vmm_create(const hs_call *c, hs_call_state *st)
{
    (void)st;
    if (c->out_vmm_handle)
        hs_vmm_handle_created(*(uint64_t *)c->out_vmm_handle, c->alloc_bytes, c->devices_stated ? c->dst_device : 0);
}

void hs_model_vmm_release(const hs_call *c, hs_call_state *st)
{
    (void)st;
    hs_vmm_handle_released(c->vmm_handle);
}

/* A map is an allocation of the shadow map: what the program can touch from dst on. */
void hs_model_vmm_map(const hs_call *c, hs_call_state *st)
{
    size_t handle_size = 0;
    int device = 0;
    hs_vmm_handle_info(c->vmm_handle, &handle_size, &device);
    hs_span reservation = {0};
    hs_vmm_reservation_of(c->dst, &reservation);
    hs_span s = {
        .base = c->dst,
        .size = c->bytes,
        .kind = HS_MEM_MAPPED,
        .api = c->api,
        .device = device,
        .owner = reservation.base,
        .stack = hs_stack_capture(),
        .thread = hs_thread_id(),
        .time_ns = hs_call_time(st),
    };
    if (hs_shadow_add(&s) != 0)
        hs_disable("out of memory for the shadow map");
    st->allocated = s;
}

/* Every map in [dst, dst + bytes) goes to quarantine: a later access through it is a use
 * after free, like any freed allocation's. */
void hs_model_vmm_unmap(const hs_call *c, hs_call_state *st)
{
    uint32_t stack = hs_stack_capture();
    uintptr_t at = c->dst, end = c->dst + c->bytes;
    for (int i = 0; i < 65536 && at < end; i++) {
        hs_span s, gone;
        if (hs_shadow_lookup(at, &s) != HS_WHERE_LIVE || s.kind != HS_MEM_MAPPED) {
            at += 4096; /* a hole: step over it, a page at a time, up to the next map */
            continue;
        }
        if (hs_shadow_release(s.base, stack, hs_thread_id(), hs_call_time(st), &gone) == HS_RELEASED && !st->released) {
            st->freed = gone; /* the log records the first map released (programs unmap one at a time) */
            st->released = true;
        }
        at = s.base + s.size;
    }
}

/* ---- whatever the result ---- */

void hs_model_capture_end(const hs_call *c, hs_call_state *st)
{
    (void)st;
    hs_stream *on = hs_stream_get(c->stream);
    if (on)
        hs_order_capture(on, false, 0);
}
