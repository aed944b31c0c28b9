/* The runtime's rules for a call's arguments (runtime_rules.h); the table is runtime_rules.inc. */
#include "rules/runtime_rules.h"

#include <stdint.h>
#include <stdio.h>

typedef bool (*rule_fn)(const hs_rule_input *in, char *what, size_t n);

static const char axis[3] = {'x', 'y', 'z'};

/* ---- copies and memsets ---- */

static bool copy_pitch(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    if (c->op != HS_OP_COPY || !c->width || !c->height)
        return false;
    bool dst = c->dst_pitch < c->width;
    if (!dst && c->src_pitch >= c->width)
        return false;
    snprintf(what, n, "the %s pitch %zu is below the width %zu", dst ? "destination" : "source",
             dst ? c->dst_pitch : c->src_pitch, c->width);
    return true;
}

static bool memset_pitch(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    if (c->op != HS_OP_MEMSET || !c->width || !c->height || c->dst_pitch >= c->width)
        return false;
    snprintf(what, n, "the pitch %zu is below the width %zu", c->dst_pitch, c->width);
    return true;
}

static bool copy_kind(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    if (c->op != HS_OP_COPY || c->dir_by_address || (c->dir >= HS_DIR_H2H && c->dir <= HS_DIR_DEFAULT))
        return false;
    snprintf(what, n, "the kind %d is not a memcpy kind", c->dir);
    return true;
}

static bool peer_device(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    if (c->op != HS_OP_COPY || !c->devices_stated)
        return false;
    int count = in->limits ? in->limits->device_count : 0;
    const struct {
        const char *side;
        int device;
    } sides[2] = {{"destination", c->dst_device}, {"source", c->src_device}};
    for (int i = 0; i < 2; i++)
        if (sides[i].device < 0 || (count > 0 && sides[i].device >= count)) {
            if (sides[i].device < 0)
                snprintf(what, n, "the %s device %d is negative", sides[i].side, sides[i].device);
            else
                snprintf(what, n, "the %s device is %d, but there %s %d device%s", sides[i].side, sides[i].device,
                         count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
            return true;
        }
    return false;
}

/* ---- launches ---- */

static bool is_kernel(const hs_call *c)
{
    return c->op == HS_OP_LAUNCH && (c->kernel_ref == HS_KREF_STUB || c->kernel_ref == HS_KREF_FUNCTION);
}

/* ---- sizes ---- */

enum { ADDRESS_BITS = 48 }; /* no GPU addresses more: x86-64 and AMD/NVIDIA GPU virtual addresses */

static bool alloc_size(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    if ((c->op != HS_OP_ALLOC && c->op != HS_OP_VMM_RESERVE && c->op != HS_OP_VMM_CREATE) ||
        c->alloc_bytes < (1ull << ADDRESS_BITS))
        return false;
    if ((int64_t)c->alloc_bytes < 0)
        snprintf(what, n, "the size %zu is %lld as a signed number, above 2^%d bytes", c->alloc_bytes,
                 (long long)(int64_t)c->alloc_bytes, ADDRESS_BITS);
    else
        snprintf(what, n, "the size %zu is above 2^%d bytes", c->alloc_bytes, ADDRESS_BITS);
    return true;
}

static bool vmm_size_zero(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    bool zero = ((c->op == HS_OP_VMM_RESERVE || c->op == HS_OP_VMM_CREATE) && !c->alloc_bytes) ||
                (c->op == HS_OP_VMM_MAP && !c->bytes);
    if (zero)
        snprintf(what, n, "the size is 0");
    return zero;
}

/* ---- devices of streams and events ---- */

static bool event_device(const hs_rule_input *in, char *what, size_t n)
{
    if (in->call->op != HS_OP_EVENT_RECORD || in->event_device < 0 || in->stream_device < 0 ||
        in->event_device == in->stream_device)
        return false;
    snprintf(what, n, "the event was created on device %d and the stream is device %d's", in->event_device,
             in->stream_device);
    return true;
}

static bool launch_stream_device(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    bool kernel = c->op == HS_OP_LAUNCH && (c->kernel_ref == HS_KREF_STUB || c->kernel_ref == HS_KREF_FUNCTION);
    if (!in->kernels_on_current_device || !kernel || in->stream_device < 0 || in->current_device < 0 ||
        in->stream_device == in->current_device)
        return false;
    snprintf(what, n, "the stream is device %d's and the current device is %d", in->stream_device, in->current_device);
    return true;
}

static bool launch_empty(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    if (!is_kernel(c))
        return false;
    const uint32_t *dims[2] = {c->grid, c->block};
    for (int i = 0; i < 2; i++)
        if (!dims[i][0] || !dims[i][1] || !dims[i][2]) {
            snprintf(what, n, "the %s (%u, %u, %u) has a zero dimension", i ? "block" : "grid", dims[i][0], dims[i][1],
                     dims[i][2]);
            return true;
        }
    return false;
}

static bool launch_block_threads(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    const hs_device_limits *l = in->limits;
    if (!is_kernel(c) || !l || !l->max_threads_per_block)
        return false;
    uint64_t threads = (uint64_t)c->block[0] * c->block[1] * c->block[2];
    if (threads <= l->max_threads_per_block)
        return false;
    snprintf(what, n, "the block (%u, %u, %u) has %llu threads, over the device's %u", c->block[0], c->block[1],
             c->block[2], (unsigned long long)threads, l->max_threads_per_block);
    return true;
}

/* The first dimension d where v[d] exceeds a known max[d]; -1: none. */
static int over(const uint32_t *v, const uint32_t *max)
{
    for (int d = 0; d < 3; d++)
        if (max[d] && v[d] > max[d])
            return d;
    return -1;
}

static bool launch_block_dim(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    int d = is_kernel(c) && in->limits ? over(c->block, in->limits->max_block) : -1;
    if (d < 0)
        return false;
    snprintf(what, n, "block.%c is %u, over the device's maximum %u", axis[d], c->block[d], in->limits->max_block[d]);
    return true;
}

static bool launch_grid_dim(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    int d = is_kernel(c) && in->limits ? over(c->grid, in->limits->max_grid) : -1;
    if (d < 0)
        return false;
    snprintf(what, n, "grid.%c is %u, over the device's maximum %u", axis[d], c->grid[d], in->limits->max_grid[d]);
    return true;
}

static bool launch_shared_memory(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    const hs_device_limits *l = in->limits;
    if (!is_kernel(c) || !l)
        return false;
    /* Between the default and the opt-in limit a kernel attribute decides, which is not known here. */
    uint64_t max = l->max_shmem_optin > l->max_shmem ? l->max_shmem_optin : l->max_shmem;
    if (!max || c->shmem <= max)
        return false;
    snprintf(what, n, "%zu bytes of dynamic shared memory are asked for, over the device's %llu per block", c->shmem,
             (unsigned long long)max);
    return true;
}

static bool launch_grid_size(const hs_rule_input *in, char *what, size_t n)
{
    const hs_call *c = in->call;
    if (!is_kernel(c) || !in->limits || !in->limits->aql_grid_32bit)
        return false;
    for (int d = 0; d < 3; d++) {
        uint64_t items = (uint64_t)c->grid[d] * c->block[d];
        if (items > UINT32_MAX) {
            snprintf(what, n, "grid.%c * block.%c = %u * %u = %llu work-items, over 4294967295", axis[d], axis[d],
                     c->grid[d], c->block[d], (unsigned long long)items);
            return true;
        }
    }
    return false;
}

/* ---- the table ---- */

static const struct {
    const char *name;
    rule_fn check;
    const char *sentence;
} rules[] = {
#define HS_RUNTIME_RULE(name, check, sentence) {name, check, sentence},
#include "rules/runtime_rules.inc"
#undef HS_RUNTIME_RULE
};

bool hs_runtime_cause(const hs_rule_input *in, hs_cause *out)
{
    out->rule = NULL;
    out->text[0] = 0;
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
        char what[192];
        if (!rules[i].check(in, what, sizeof what))
            continue;
        out->rule = rules[i].name;
        snprintf(out->text, sizeof out->text, "%s: %s", what, rules[i].sentence);
        return true;
    }
    return false;
}
