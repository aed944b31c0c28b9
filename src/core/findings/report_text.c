#define _GNU_SOURCE
#include "findings/report_text.h"
#include "findings/report_races.h"
#include "findings/report_regions.h"
#include "findings/report_sides.h"
#include "kernels/fault_report.h"
#include "kernels/kernel_info.h"
#include "process/environment.h"
#include "process/print.h"
#include "process/stacks.h"
#include "rules/check.h"
#include "runtime/frontend.h"
#include "shadow/regions.h"
#include "torch/block_report.h"
#include "torch/pystacks.h"

#include <string.h>
#include <unistd.h>

static const hs_options *opt;

void hs_report_text_init(const hs_options *o) { opt = o; }

static const char *side_name(hs_side_id id) { return id == HS_SIDE_DST ? "destination" : "source"; }

static uint64_t largest_pow2_dividing(uint64_t x) { return x ? x & (~x + 1) : 0; }

static void print_alloc_line(FILE *f, const hs_side *s, const char *label)
{
    const hs_span *a = &s->alloc;
    fprintf(f, "  %s allocation #%llu: %s memory [0x%lx, 0x%lx), %llu bytes (", label, (unsigned long long)a->id,
            hs_mem_kind_name(a->kind), (unsigned long)a->base, (unsigned long)(a->base + a->size),
            (unsigned long long)a->size);
    hs_print_human_size(f, a->size);
    fprintf(f, ")");
    if (s->runtime_known)
        fprintf(f, ", not allocated through a wrapped call (the runtime knows it)");
    else if (a->api < 0xffff)
        fprintf(f, ", from %s", hs_frontend_active.api_names[a->api]);
    char name[256];
    if (a->id && hs_alloc_name(a->id, name, sizeof name))
        fprintf(f, ", named '%s'", name);
    fprintf(f, ", device %d%s\n", a->device, s->where == HS_WHERE_FREED ? ", FREED" : "");
    uint64_t offset = s->ptr - a->base;
    if (s->ptr >= a->base) {
        if (offset)
            fprintf(
                f, "  the %s pointer is interior: base + %llu (0x%llx); offset %% 4096 = %llu, offset alignment %llu\n",
                label, (unsigned long long)offset, (unsigned long long)offset, (unsigned long long)(offset % 4096),
                (unsigned long long)largest_pow2_dividing(offset));
        else
            fprintf(f, "  the %s pointer is the allocation's base (offset 0)\n", label);
    }
}

static const char *memset_or_copy(const hs_call *c) { return c->op == HS_OP_MEMSET ? "memset" : "copy"; }

/* ---- what is wrong, kind by kind ---- */

typedef void hs_what_fn(FILE *f, const hs_event *e);

static void what_out_of_bounds(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    const hs_side *s = side_of(e, e->finding->side);
    if (s && s->unmapped) {
        fprintf(f,
                "  the %s range [0x%lx, 0x%lx) lies in reserved address space [0x%lx, 0x%lx) that is not mapped\n"
                "  (%llu bytes outside any map); the nearest map is allocation #%llu\n",
                side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
                (unsigned long)s->reservation.base, (unsigned long)(s->reservation.base + s->reservation.size),
                (unsigned long long)fi->overrun, (unsigned long long)s->alloc.id);
    } else if (s && side_has_alloc(s)) {
        fprintf(f, "  the %s range [0x%lx, 0x%lx) runs %llu bytes past the end of %s #%llu\n", side_name(fi->side),
                (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent), (unsigned long long)fi->overrun,
                s->contiguous > s->alloc.size ? "the maps that follow allocation" : "allocation",
                (unsigned long long)s->alloc.id);
        if (s->contiguous > s->alloc.size)
            fprintf(f, "  (mapped without a gap: [0x%lx, 0x%lx), %llu bytes)\n", (unsigned long)s->alloc.base,
                    (unsigned long)(s->alloc.base + s->contiguous), (unsigned long long)s->contiguous);
    } else if (s && s->host_checked) {
        fprintf(f, "  the %s range [0x%lx, 0x%lx) is %s at 0x%lx (mapping %s %s): the %s would %s it\n",
                side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
                s->host.status == HS_HOST_UNMAPPED ? "not mapped" : "not accessible", (unsigned long)s->host.bad_at,
                s->host.perms[0] ? s->host.perms : "----", s->host.mapping[0] ? s->host.mapping : "(none)",
                memset_or_copy(c), fi->side == HS_SIDE_DST ? "write" : "read");
    }
}

static void what_use_after_free(FILE *f, const hs_event *e)
{
    const hs_finding *fi = e->finding;
    const hs_side *s = side_of(e, e->finding->side);
    if (s->region_freed) {
        char who[32];
        snprintf(who, sizeof who, "the %s pointer", side_name(fi->side));
        hs_report_region_freed(f, e, s, who);
        return;
    }
    if (s->block_state == HS_BLOCK_FREED) {
        char who[32];
        snprintf(who, sizeof who, "the %s pointer", side_name(fi->side));
        hs_block_print_freed(f, BLOCK_VIEW(s), e->time_ns, who);
        return;
    }
    fprintf(f, "  the %s pointer 0x%lx lies in allocation #%llu, which was freed %.6f s before this call\n",
            side_name(fi->side), (unsigned long)s->ptr, (unsigned long long)s->alloc.id,
            (e->time_ns - s->alloc.end_time_ns) / 1e9);
}

static void what_unknown_pointer(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    const hs_side *s = side_of(e, e->finding->side);
    fprintf(f,
            "  the %s pointer 0x%lx should be device memory for a %s %s, but no live or recently freed "
            "allocation holds it and the runtime does not know it either\n",
            side_name(fi->side), (unsigned long)s->ptr, hs_dir_name(e->facts->dir), memset_or_copy(c));
}

static void what_null_pointer(FILE *f, const hs_event *e)
{
    const hs_finding *fi = e->finding;
    fprintf(f, "  the %s pointer is NULL\n", side_name(fi->side));
}

static void what_direction_mismatch(FILE *f, const hs_event *e)
{
    const hs_finding *fi = e->finding;
    const hs_side *s = side_of(e, e->finding->side);
    if (fi->expected_role == HS_ROLE_REVERSED) {
        const hs_side *other = side_of(e, fi->side == HS_SIDE_DST ? HS_SIDE_SRC : HS_SIDE_DST);
        fprintf(f,
                "  the call says %s, but its %s 0x%lx is %s memory and its %s 0x%lx is in no device allocation\n"
                "  (host memory): the direction is reversed, or the pointers are swapped\n",
                hs_dir_name(e->facts->dir), side_name(fi->side), (unsigned long)s->ptr,
                side_has_alloc(s) ? hs_mem_kind_name(s->alloc.kind) : "device",
                side_name(fi->side == HS_SIDE_DST ? HS_SIDE_SRC : HS_SIDE_DST),
                (unsigned long)(other ? other->ptr : 0));
        return;
    }
    fprintf(f, "  the call says %s, but its %s 0x%lx is %s memory, not %s memory\n", hs_dir_name(e->facts->dir),
            side_name(fi->side), (unsigned long)s->ptr, side_has_alloc(s) ? hs_mem_kind_name(s->alloc.kind) : "host",
            fi->expected_role == HS_ROLE_DEVICE ? "device" : "host");
}

static void what_invalid_stream(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    fprintf(f, "  stream 0x%lx was %s\n", (unsigned long)c->stream,
            e->facts->stream_state == HS_STREAM_DESTROYED ? "destroyed before this call" : "never created");
}

static void what_invalid_free(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    if (e->facts->dst.where == HS_WHERE_FREED)
        fprintf(f, "  0x%lx was already freed (double free)\n", (unsigned long)c->free_ptr);
    else if (e->facts->dst.where == HS_WHERE_LIVE)
        fprintf(f, "  0x%lx is not the start of an allocation: it is base + %llu\n", (unsigned long)c->free_ptr,
                (unsigned long long)(c->free_ptr - e->facts->dst.alloc.base));
    else
        fprintf(f, "  0x%lx was never allocated through a wrapped call\n", (unsigned long)c->free_ptr);
}

static void what_runtime_error(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    fprintf(f, "  the runtime returned %s (%d)\n", hs_layer_of(c->api)->error_name(e->result), e->result);
    if (e->action == HS_ACTION_FALLBACK)
        fprintf(f,
                "  the copy is in bounds: hipshadow staged it through its own GPU kernel and a D2H from the\n"
                "  staging buffer, and the program got success (fallback=%s)\n",
                opt->fallback);
    if (e->n_earlier) {
        fprintf(f, "  before forwarding, hipshadow had found:");
        for (int i = 0; i < e->n_earlier; i++)
            fprintf(f, " %s", hs_kind_name(e->earlier[i].kind));
        fprintf(f, "\n");
    } else if (c->op == HS_OP_COPY || c->op == HS_OP_MEMSET) {
        fprintf(f, "  the checks before forwarding found nothing wrong with the ranges\n");
    }
    if (e->cause)
        fprintf(f, "  cause: %s (rule %s)\n", e->cause, e->cause_rule);
}

static void what_leak(FILE *f, const hs_event *e)
{
    fprintf(f, "  allocation #%llu is still live at exit\n", (unsigned long long)e->facts->dst.alloc.id);
}

static void what_region_overrun(FILE *f, const hs_event *e)
{
    const hs_finding *fi = e->finding;
    const hs_side *s = side_of(e, e->finding->side);
    char name[256];
    const hs_span *r = &s->region;
    if (!s->in_region && s->block_state == HS_BLOCK_LIVE) {
        const hs_span *b = &s->block;
        fprintf(f,
                "  the %s range [0x%lx, 0x%lx) runs %llu bytes past the end of %s #%llu [0x%lx, 0x%lx)\n"
                "  (%zu bytes asked for; the range starts at offset %llu of the block) but stays inside the\n"
                "  allocator's memory: the runtime cannot see this\n",
                side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
                (unsigned long long)fi->overrun, HS_BLOCK_NOUN, (unsigned long long)b->id, (unsigned long)b->base,
                (unsigned long)(b->base + b->size), b->size, (unsigned long long)(s->ptr - b->base));
        hs_block_print_segment(f, BLOCK_VIEW(s));
        return;
    }
    fprintf(f,
            "  the %s range [0x%lx, 0x%lx) runs %llu bytes past the end of region %s "
            "(pool offset %llu, %zu bytes) but stays inside allocation #%llu: the runtime cannot see this\n",
            side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
            (unsigned long long)fi->overrun, hs_report_region_label(r, name, sizeof name),
            (unsigned long long)(r->base - s->alloc.base), r->size, (unsigned long long)s->alloc.id);
}

static void what_region_permission(FILE *f, const hs_event *e)
{
    const hs_finding *fi = e->finding;
    const hs_side *s = side_of(e, e->finding->side);
    hs_report_region_permission(f, s, side_name(fi->side), fi->side == HS_SIDE_DST);
}

static void what_pending_conflict(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    const hs_conflict *k = &e->facts->conflict;
    if (fi->kind == HS_KIND_ASYNC_OVERLAP)
        fprintf(f,
                "  this async %s %s host memory [0x%lx, 0x%lx) that a pending %s (%s, %llu bytes) on stream 0x%lx\n"
                "  also %s, and nothing orders the two: no synchronisation, no event between the streams\n",
                memset_or_copy(c), fi->side == HS_SIDE_DST ? "writes" : "reads", (unsigned long)k->op.host_lo,
                (unsigned long)k->op.host_hi, hs_frontend_active.api_names[k->op.api], hs_dir_name(k->op.dir),
                (unsigned long long)k->op.bytes, (unsigned long)k->stream, k->op.host_write ? "writes" : "reads");
    else
        fprintf(f,
                "  allocation #%llu is freed while a pending %s (%s, %llu bytes) on stream 0x%lx still uses it,\n"
                "  and nothing orders that operation before the free\n",
                (unsigned long long)e->facts->dst.alloc.id, hs_frontend_active.api_names[k->op.api],
                hs_dir_name(k->op.dir), (unsigned long long)k->op.bytes, (unsigned long)k->stream);
    fprintf(f, "  the other operation was enqueued by thread T%u, %.6f s before this call\n", k->op.thread,
            (e->time_ns - hs_stamp_ns(k->op.stamp)) / 1e9);
}

static void what_capture_violation(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    fprintf(f, "  stream 0x%lx is being captured into a graph: a synchronous %s is not allowed during capture\n",
            (unsigned long)e->facts->capturing_stream, c->op == HS_OP_SYNC ? "synchronisation" : memset_or_copy(c));
}

static void what_device_fault(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    if (e->gpu_fault) {
        hs_print_gpu_fault(f, e);
        return;
    }
    fprintf(f,
            "  the runtime returned %s (%d): a fault of asynchronous work already on the device,\n"
            "  not of this call",
            hs_layer_of(c->api)->error_name(e->result), e->result);
    if (e->suspects && e->suspects->serialized)
        fprintf(f, " (serialize=1: the launch below, waited for right after it was made)\n");
    else if (e->n_earlier)
        fprintf(f, "; this call's own checks found:%s%s\n", e->n_earlier ? " " : "", hs_kind_name(e->earlier[0].kind));
    else
        fprintf(f, "; this call's own arguments were checked and are clean\n");
}

static void what_kernel_out_of_bounds_write(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_side *d = &e->facts->dst;
    uint64_t first = d->ptr - (d->alloc.base + d->alloc.size);
    fprintf(f,
            "  bytes %llu..%llu past the end of allocation #%llu were overwritten (its redzone of %u bytes,\n"
            "  checked %s %s): a kernel wrote past the end; the launches that\n"
            "  had a pointer into it are below\n",
            (unsigned long long)first, (unsigned long long)(first + d->extent - 1), (unsigned long long)d->alloc.id,
            d->alloc.redzone,
            c->op == HS_OP_FREE    ? "at its free"
            : c->op == HS_OP_OTHER ? "at exit"
                                   : "at this synchronisation point",
            e->facts->redzone_by_kernel ? "by hipshadow's kernel" : "by reading it back");
}

static void what_kernel_use_after_free(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_facts *fa = e->facts;
    if (fa->dst.region_freed) {
        const hs_kernel_info *k = hs_kernel_info_of(c);
        char who[64] = "an argument";
        for (int i = 0; i < fa->n_args; i++)
            if (fa->args[i].value == fa->dst.ptr)
                snprintf(who, sizeof who, "argument %u =", fa->args[i].index);
        fprintf(f, "  kernel '%s' is launched with a pointer into a freed region:\n", k && k->name ? k->name : "?");
        hs_report_region_freed(f, e, &fa->dst, who);
        return;
    }
    if (fa->dst.block_state == HS_BLOCK_FREED) {
        const hs_kernel_info *k = hs_kernel_info_of(c);
        char who[64];
        for (int i = 0; i < fa->n_args; i++)
            if (fa->args[i].value == fa->dst.ptr)
                snprintf(who, sizeof who, "argument %u =", fa->args[i].index);
        fprintf(f, "  kernel '%s' is launched with a pointer into a freed %s:\n", k && k->name ? k->name : "?",
                HS_BLOCK_NOUN);
        hs_block_print_freed(f, BLOCK_VIEW(&fa->dst), e->time_ns, who);
        return;
    }
    for (int i = 0; i < fa->n_args; i++)
        if (fa->args[i].state == HS_ARG_FREED) {
            const hs_kernel_info *k = hs_kernel_info_of(c);
            fprintf(f, "  kernel '%s' is launched with a pointer into freed memory:\n", k && k->name ? k->name : "?");
            fprintf(f,
                    "  argument %u = 0x%lx (%s) points into allocation #%llu + %lld, freed %.6f s before this launch\n",
                    fa->args[i].index, (unsigned long)fa->args[i].value,
                    fa->args[i].how == HS_ARG_EXACT ? "a pointer parameter" : "found by scanning the arguments",
                    (unsigned long long)fa->args[i].alloc_id, (long long)fa->args[i].offset,
                    (e->time_ns - fa->dst.alloc.end_time_ns) / 1e9);
            return;
        }
}

static void what_pageable_async(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    fprintf(f,
            "  the destination 0x%lx is pageable host memory: the runtime stages the copy and it becomes\n"
            "  synchronous; pin the buffer (hipHostMalloc/cudaHostAlloc, or register it) for a truly\n"
            "  asynchronous copy\n"
            "  (said once per call site)\n",
            (unsigned long)c->dst);
}

/* What each kind says after the headline, one function per kind (none: nothing more). */
static hs_what_fn *const what_of[HS_KIND_COUNT] = {
    [HS_KIND_OUT_OF_BOUNDS] = what_out_of_bounds,
    [HS_KIND_HOST_OUT_OF_BOUNDS] = what_out_of_bounds,
    [HS_KIND_USE_AFTER_FREE] = what_use_after_free,
    [HS_KIND_UNKNOWN_POINTER] = what_unknown_pointer,
    [HS_KIND_NULL_POINTER] = what_null_pointer,
    [HS_KIND_DIRECTION_MISMATCH] = what_direction_mismatch,
    [HS_KIND_INVALID_STREAM] = what_invalid_stream,
    [HS_KIND_INVALID_FREE] = what_invalid_free,
    [HS_KIND_RUNTIME_ERROR] = what_runtime_error,
    [HS_KIND_LEAK] = what_leak,
    [HS_KIND_REGION_OVERRUN] = what_region_overrun,
    [HS_KIND_REGION_PERMISSION] = what_region_permission,
    [HS_KIND_ASYNC_OVERLAP] = what_pending_conflict,
    [HS_KIND_FREE_WHILE_PENDING] = what_pending_conflict,
    [HS_KIND_CAPTURE_VIOLATION] = what_capture_violation,
    [HS_KIND_DEVICE_FAULT] = what_device_fault,
    [HS_KIND_KERNEL_OUT_OF_BOUNDS_WRITE] = what_kernel_out_of_bounds_write,
    [HS_KIND_KERNEL_USE_AFTER_FREE] = what_kernel_use_after_free,
    [HS_KIND_PAGEABLE_ASYNC] = what_pageable_async,
    [HS_KIND_STREAM_RACE] = hs_report_access_text,
    [HS_KIND_UNINITIALIZED_READ] = hs_report_access_text,
};

/* The environment behind GPU memory behaviour, once, with the first report; a variable known to
 * cause faults when misused, beside every device-fault (the reader's first suspect then). */
static void print_environment(FILE *f, const hs_finding *fi, bool *environment_said)
{
    const char *all = hs_environment_text();
    const char *risky = hs_environment_fault_prone();
    if (hs_finding_is_device_fault(fi) && *risky) {
        fprintf(f, "Set for this process, and known to cause device faults when misused:\n");
        for (const char *l = risky; *l;) {
            const char *end = strchr(l, '\n');
            fprintf(f, "    %.*s\n", (int)(end - l), l);
            l = end + 1;
        }
    }
    if (*environment_said || !*all)
        return;
    *environment_said = true;
    fprintf(f, "Environment (variables that change GPU memory behaviour, as set for this process):\n");
    for (const char *l = all; *l;) {
        const char *end = strchr(l, '\n');
        fprintf(f, "    %.*s\n", (int)(end - l), l);
        l = end + 1;
    }
}

void hs_report_text(FILE *f, const hs_event *e, bool *environment_said)
{
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    const char *api = hs_frontend_active.api_names[c->api];
    fprintf(f, "=================================================================\n");
    fprintf(f, "==%d==%s: hipshadow: %s on %s", (int)getpid(),
            fi->severity == HS_SEV_ERROR     ? "ERROR"
            : fi->severity == HS_SEV_WARNING ? "WARNING"
                                             : "INFO",
            hs_kind_name(fi->kind), api);
    if (c->op == HS_OP_COPY)
        fprintf(f, " (%s, %zu bytes)\n", hs_dir_name(e->facts->dir), c->bytes);
    else if (c->op == HS_OP_MEMSET)
        fprintf(f, " (memset, %zu bytes)\n", c->bytes);
    else
        fprintf(f, "\n");
    if (c->op == HS_OP_COPY)
        fprintf(f, "  copy of %zu bytes from 0x%lx to 0x%lx%s\n", c->bytes, (unsigned long)c->src,
                (unsigned long)c->dst,
                c->dir == HS_DIR_DEFAULT ? " (hipMemcpyDefault: direction taken from the shadow map)" : "");
    else if (c->op == HS_OP_MEMSET)
        fprintf(f, "  memset of %zu bytes at 0x%lx\n", c->bytes, (unsigned long)c->dst);
    if (what_of[fi->kind])
        what_of[fi->kind](f, e);
    if (e->facts && (c->op == HS_OP_COPY || c->op == HS_OP_MEMSET || fi->kind == HS_KIND_INVALID_FREE ||
                     fi->kind == HS_KIND_LEAK)) {
        const hs_side *sides[2] = {&e->facts->src, &e->facts->dst};
        for (int i = 0; i < 2; i++)
            if (side_has_alloc(sides[i]) && sides[i]->ptr) {
                print_alloc_line(f, sides[i], c->op == HS_OP_COPY ? (i ? "destination" : "source") : "the");
                hs_report_region_line(f, sides[i], c->op == HS_OP_COPY ? (i ? "destination" : "source") : "the");
            }
    }
    if (c->has_stream || c->op == HS_OP_COPY || c->op == HS_OP_MEMSET)
        fprintf(f, "  stream 0x%lx%s;", (unsigned long)c->stream, c->stream ? "" : " (null stream)");
    else
        fprintf(f, " ");
    if (e->gpu_fault)
        fprintf(f, " reported on the runtime's event thread T%u (mode=%s)\n", e->thread, hs_mode_name(opt->mode));
    else
        fprintf(f, " action: %s (mode=%s)\n", hs_action_name(e->action), hs_mode_name(opt->mode));
    if (fi->kind != HS_KIND_LEAK && !e->gpu_fault) {
        fprintf(f, "Call stack (thread T%u):\n", e->thread);
        hs_stack_print(e->stack, f);
        if (e->pystack) {
            fprintf(f, "Python stack (thread T%u, innermost first):\n", e->thread);
            hs_pystack_print(e->pystack, f);
        }
    }
    const hs_side *sub = subject_side(e);
    bool stacks_already_shown = fi->kind == HS_KIND_RUNTIME_ERROR && e->n_earlier > 0;
    if (side_has_alloc(sub) && !sub->runtime_known && !stacks_already_shown) {
        fprintf(f, "Allocation #%llu made by thread T%u, %.6f s after start:\n", (unsigned long long)sub->alloc.id,
                sub->alloc.thread, (sub->alloc.time_ns - hs_start_ns()) / 1e9);
        hs_stack_print(sub->alloc.stack, f);
        if (sub->where == HS_WHERE_FREED) {
            fprintf(f, "Freed by thread T%u, %.6f s after start:\n", sub->alloc.end_thread,
                    (sub->alloc.end_time_ns - hs_start_ns()) / 1e9);
            hs_stack_print(sub->alloc.end_stack, f);
        }
    }
    if (!stacks_already_shown)
        hs_report_region_stacks(f, sub);
    const hs_side *bs = block_subject(e);
    if (bs)
        hs_block_print_stacks(f, BLOCK_VIEW(bs));
    if (fi->kind == HS_KIND_INVALID_STREAM && e->facts->stream_state == HS_STREAM_DESTROYED && !stacks_already_shown) {
        fprintf(f, "Stream created by thread T%u:\n", e->facts->stream_info.thread);
        hs_stack_print(e->facts->stream_info.stack, f);
        fprintf(f, "Stream destroyed by thread T%u:\n", e->facts->stream_info.end_thread);
        hs_stack_print(e->facts->stream_info.end_stack, f);
    }
    if (e->suspects)
        hs_print_suspects(f, e->suspects, e->time_ns);
    print_environment(f, fi, environment_said);
    fprintf(f, "SUMMARY: hipshadow: %s %s", hs_kind_name(fi->kind), api);
    if (e->gpu_fault)
        fprintf(f, " address=0x%lx where=%s", (unsigned long)e->gpu_fault->address,
                hs_fault_where_name(e->gpu_fault->where));
    if (side_has_alloc(sub))
        fprintf(f, " allocation #%llu%+lld", (unsigned long long)sub->alloc.id,
                (long long)(sub->ptr - sub->alloc.base));
    if (bs)
        fprintf(f, " block #%llu%+lld", (unsigned long long)bs->block.id, (long long)(bs->ptr - bs->block.base));
    if (c->op == HS_OP_COPY || c->op == HS_OP_MEMSET)
        fprintf(f, " bytes=%zu", c->bytes);
    if (fi->overrun)
        fprintf(f, " overrun=%llu", (unsigned long long)fi->overrun);
    fprintf(f, "\n=================================================================\n");
}
