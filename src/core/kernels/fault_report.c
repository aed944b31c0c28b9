#include "kernels/fault_report.h"
#include "kernels/kernel_info.h"
#include "process/stacks.h"
#include "runtime/frontend.h"
#include "torch/blocks.h"

/* ---- GPU memory faults the runtime announced ---- */

static const struct {
    uint32_t bit;
    const char *name, *text;
} fault_reasons[] = {
    {HS_FAULT_PAGE_NOT_PRESENT, "page-not-present", "page not present or supervisor privilege"},
    {HS_FAULT_READ_ONLY, "read-only", "write to a read-only page"},
    {HS_FAULT_NX, "nx", "execute on a page marked no-execute"},
    {HS_FAULT_HOST_ONLY, "host-only", "GPU access to a host-only page"},
    {HS_FAULT_DRAMECC, "dram-ecc", "DRAM ECC failure"},
    {HS_FAULT_IMPRECISE, "imprecise", "imprecise: the GPU could not give the exact address"},
    {HS_FAULT_SRAMECC, "sram-ecc", "SRAM ECC failure"},
    {HS_FAULT_HANG, "hang", "GPU reset after a hang"},
};

const char *hs_fault_where_name(int where)
{
    static const char *const names[] = {"unknown", "inside", "past-end", "before-start", "freed", "reserved-unmapped"};
    return (unsigned)where < 6 ? names[where] : "unknown";
}

void hs_print_gpu_fault(FILE *f, const hs_event *e)
{
    const hs_gpu_fault *g = e->gpu_fault;
    const hs_span *a = &g->alloc;
    fprintf(f, "  the GPU faulted on address 0x%lx (", (unsigned long)g->address);
    const char *sep = "";
    for (size_t i = 0; i < sizeof fault_reasons / sizeof *fault_reasons; i++)
        if (g->reasons & fault_reasons[i].bit) {
            fprintf(f, "%s%s", sep, fault_reasons[i].text);
            sep = "; ";
        }
    fprintf(f, "%s)\n", *sep ? "" : "no reason given");
    fprintf(f,
            "  the runtime announced it (%s) as it happened: a kernel already on the device made the access,\n"
            "  not a call; this is reported before the runtime carries on (it aborts, or later calls fail)\n",
            hs_frontend_active.api_names[e->call->api]);
    switch (g->where) {
    case HS_FAULT_INSIDE:
        fprintf(f, "  the address is inside allocation #%llu [0x%lx, 0x%lx) at offset %lld\n",
                (unsigned long long)a->id, (unsigned long)a->base, (unsigned long)(a->base + a->size),
                (long long)g->offset);
        break;
    case HS_FAULT_PAST_END:
        fprintf(f,
                "  the address is %llu bytes past the end of allocation #%llu [0x%lx, 0x%lx), %zu bytes: offset %lld\n",
                (unsigned long long)(g->offset - (int64_t)a->size), (unsigned long long)a->id, (unsigned long)a->base,
                (unsigned long)(a->base + a->size), a->size, (long long)g->offset);
        break;
    case HS_FAULT_BEFORE_START:
        fprintf(f, "  the address is %lld bytes before the start of allocation #%llu [0x%lx, 0x%lx): offset %lld\n",
                -(long long)g->offset, (unsigned long long)a->id, (unsigned long)a->base,
                (unsigned long)(a->base + a->size), (long long)g->offset);
        break;
    case HS_FAULT_FREED:
        fprintf(
            f,
            "  the address is inside allocation #%llu [0x%lx, 0x%lx) at offset %lld, FREED %.6f s before the fault\n",
            (unsigned long long)a->id, (unsigned long)a->base, (unsigned long)(a->base + a->size), (long long)g->offset,
            (e->time_ns - a->end_time_ns) / 1e9);
        break;
    case HS_FAULT_RESERVED_UNMAPPED:
        fprintf(f,
                "  the address is inside the virtual-memory reservation [0x%lx, 0x%lx) at offset %lld, where nothing "
                "is mapped\n",
                (unsigned long)a->base, (unsigned long)(a->base + a->size), (long long)g->offset);
        break;
    default:
        fprintf(f, "  the address is near no allocation hipshadow knows");
        if (g->has_below)
            fprintf(f, "; the nearest below is allocation #%llu [0x%lx, 0x%lx), which ends %llu bytes before it",
                    (unsigned long long)g->below.id, (unsigned long)g->below.base,
                    (unsigned long)(g->below.base + g->below.size),
                    (unsigned long long)(g->address - (g->below.base + g->below.size)));
        if (g->has_above)
            fprintf(f, "; the nearest above is allocation #%llu [0x%lx, 0x%lx), which starts %llu bytes after it",
                    (unsigned long long)g->above.id, (unsigned long)g->above.base,
                    (unsigned long)(g->above.base + g->above.size), (unsigned long long)(g->above.base - g->address));
        fprintf(f, "\n");
    }
}

static const char *arg_state_name(int state)
{
    return state == HS_ARG_LIVE ? "live" : state == HS_ARG_FREED ? "freed" : "unknown";
}

static void print_launch_args(FILE *f, const hs_launch *l)
{
    for (int a = 0; a < l->n_args; a++) {
        const hs_launch_arg *x = &l->args[a];
        if (x->state == HS_ARG_UNKNOWN)
            fprintf(f, "      arg %u = 0x%lx: in no known allocation (%s)\n", x->index, (unsigned long)x->value,
                    x->how == HS_ARG_EXACT ? "a pointer parameter" : "scanned");
        else
            fprintf(f, "      arg %u = 0x%lx: allocation #%llu + %lld, %s%s%s\n", x->index, (unsigned long)x->value,
                    (unsigned long long)x->alloc_id, (long long)x->offset, x->state == HS_ARG_FREED ? "FREED" : "live",
                    x->block_state == HS_BLOCK_FREED ? ", in a FREED PyTorch block" : "",
                    x->how == HS_ARG_EXACT ? "" : " (scanned)");
    }
}

/* A device fault's suspects: the launches not known to have completed, newest first. */
void hs_print_suspects(FILE *f, const hs_suspects *s, uint64_t now_ns)
{
    if (!s->n) {
        fprintf(f, "Suspects: no launch is pending that hipshadow saw (launches it does not wrap, or all completed)\n");
        return;
    }
    fprintf(f, "Suspects (%s",
            s->serialized ? "the launch that faulted"
            : s->users    ? "launches with a pointer into the allocation, newest first"
                          : "launches not yet known to have completed, newest first");
    if (s->n_near)
        fprintf(f, "; the first %d had a pointer into or next to the faulting address", s->n_near);
    fprintf(f, "):\n");
    for (int i = 0; i < s->n; i++) {
        const hs_launch *l = &s->launch[i];
        char where[512];
        hs_frame_describe(l->caller, where, sizeof where);
        fprintf(
            f,
            "  #%d kernel '%s' (%s) on stream 0x%lx, grid (%u,%u,%u) block (%u,%u,%u), %.6f s before, by thread T%u\n",
            i, l->name ? l->name : "?", hs_frontend_active.api_names[l->api], (unsigned long)l->stream, l->grid[0],
            l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
            (double)(int64_t)(now_ns - hs_stamp_ns(l->stamp)) / 1e9, l->thread);
        print_launch_args(f, l);
        if (l->stack) {
            fprintf(f, "    launched at:\n");
            hs_stack_print(l->stack, f);
        } else {
            fprintf(f, "    launched from %s (launch_stacks=1 keeps the whole stack)\n", where);
        }
    }
}

static void json_span(hs_jbuf *b, const char *key, bool has, const hs_span *a)
{
    if (has)
        hs_jb(b, ",\"%s\":{\"id\":%llu,\"base\":\"0x%lx\",\"size\":%zu}", key, (unsigned long long)a->id,
              (unsigned long)a->base, a->size);
    else
        hs_jb(b, ",\"%s\":null", key);
}

/* "fault": {"address", "reasons": [..], "where", "alloc": {"id", "base", "size", "offset"}, "below", "above"} */
void hs_json_gpu_fault(hs_jbuf *b, const hs_gpu_fault *g)
{
    hs_jb(b, ",\"fault\":{\"address\":\"0x%lx\",\"reasons\":[", (unsigned long)g->address);
    const char *sep = "";
    for (size_t i = 0; i < sizeof fault_reasons / sizeof *fault_reasons; i++)
        if (g->reasons & fault_reasons[i].bit) {
            hs_jb(b, "%s\"%s\"", sep, fault_reasons[i].name);
            sep = ",";
        }
    hs_jb(b, "],\"where\":\"%s\",\"alloc\":", hs_fault_where_name(g->where));
    if (g->where == HS_FAULT_UNKNOWN)
        hs_jb(b, "null");
    else
        hs_jb(b, "{\"id\":%llu,\"base\":\"0x%lx\",\"size\":%zu,\"offset\":%lld}",
              (unsigned long long)(g->where == HS_FAULT_RESERVED_UNMAPPED ? 0 : g->alloc.id),
              (unsigned long)g->alloc.base, g->alloc.size, (long long)g->offset);
    json_span(b, "below", g->has_below, &g->below);
    json_span(b, "above", g->has_above, &g->above);
    hs_jb(b, "}");
}

void hs_json_kernels(hs_jbuf *b, const hs_event *e)
{
    const hs_call *c = e->call;
    if (!e->suspects && e->finding->kind != HS_KIND_KERNEL_USE_AFTER_FREE)
        return;
    hs_jb(b, ",\"kernels\":[");
    int n = e->suspects ? e->suspects->n : 1;
    for (int i = 0; i < n; i++) {
        const hs_launch *l = e->suspects ? &e->suspects->launch[i] : NULL;
        const hs_launch_arg *args = l ? l->args : e->facts->args;
        int n_args = l ? l->n_args : e->facts->n_args;
        hs_jb(b, "%s{\"name\":", i ? "," : "");
        const hs_kernel_info *k = l ? NULL : hs_kernel_info_of(c);
        const char *name = l ? l->name : k ? k->name : NULL;
        if (name)
            hs_jb_string(b, name);
        else
            hs_jb(b, "null");
        hs_jb(b, ",\"stream\":\"0x%lx\",\"args\":[", (unsigned long)(l ? l->stream : c->stream));
        for (int a = 0; a < n_args; a++) {
            const hs_launch_arg *x = &args[a];
            hs_jb(b, "%s{\"index\":%u,\"alloc\":", a ? "," : "", x->index);
            if (x->state == HS_ARG_UNKNOWN)
                hs_jb(b, "null");
            else
                hs_jb(b, "{\"id\":%llu,\"offset\":%lld}", (unsigned long long)x->alloc_id, (long long)x->offset);
            hs_jb(b, ",\"state\":\"%s\",\"how\":\"%s\"}", arg_state_name(x->state),
                  x->how == HS_ARG_EXACT ? "exact" : "scanned");
        }
        hs_jb(b, "]}");
    }
    hs_jb(b, "]");
}
