#include "torch/block_report.h"
#include "process/stacks.h"
#include "torch/pystacks.h"

/* "segment [a, b) (size, stream, pool), allocation #N" */
void hs_block_print_segment(FILE *f, const hs_block_view *v)
{
    hs_block_segment seg;
    if (hs_block_segment_of(v->block->base, &seg)) {
        fprintf(f, "  the block lies in the allocator's %ssegment [0x%lx, 0x%lx) (",
                seg.expandable ? "expandable " : "", (unsigned long)seg.base, (unsigned long)(seg.base + seg.size));
        hs_print_human_size(f, seg.size);
        fprintf(f, ", stream 0x%lx, pool (%llu,%llu)), allocation #%llu\n", (unsigned long)seg.stream,
                (unsigned long long)seg.pool[0], (unsigned long long)seg.pool[1], (unsigned long long)v->alloc->id);
    } else {
        fprintf(f, "  the block lies in allocation #%llu [0x%lx, 0x%lx), one of the allocator's segments\n",
                (unsigned long long)v->alloc->id, (unsigned long)v->alloc->base,
                (unsigned long)(v->alloc->base + v->alloc->size));
    }
}

void hs_block_print_freed(FILE *f, const hs_block_view *v, uint64_t now_ns, const char *who)
{
    const hs_span *b = v->block;
    hs_block_info info;
    bool has_info = hs_block_info_of(b, &info);
    fprintf(f,
            "  %s 0x%lx lies in %s #%llu [0x%lx, 0x%lx) (%zu bytes asked for, offset %llu), which was freed:\n"
            "  its free completed %.6f s before this call",
            who, (unsigned long)v->ptr, HS_BLOCK_NOUN, (unsigned long long)b->id, (unsigned long)b->base,
            (unsigned long)(b->base + b->size), b->size, (unsigned long long)(v->ptr - b->base),
            (now_ns - b->end_time_ns) / 1e9);
    if (has_info && info.free_requested_ns && info.free_requested_ns < b->end_time_ns)
        fprintf(f, " (the tensor let go of it %.6f s before)", (now_ns - info.free_requested_ns) / 1e9);
    fprintf(f, ", and the allocator has not handed it out again:\n  the memory is still the allocator's, so the "
               "runtime cannot see this\n");
    hs_block_print_segment(f, v);
}

/* The block's own stacks: where it was handed out and where its tensor let go of it. */
void hs_block_print_stacks(FILE *f, const hs_block_view *v)
{
    const hs_span *b = v->block;
    hs_block_info info = {0};
    hs_block_info_of(b, &info);
    fprintf(f, "Block #%llu (%s) handed out by thread T%u, %.6f s after start, on stream 0x%lx:\n",
            (unsigned long long)b->id, HS_BLOCK_NOUN, b->thread, (b->time_ns - hs_start_ns()) / 1e9,
            (unsigned long)b->owner);
    bool any = false;
    if (b->stack) {
        hs_stack_print(b->stack, f);
        any = true;
    }
    if (info.alloc_pystack) {
        fprintf(f, "  Python:\n");
        hs_pystack_print(info.alloc_pystack, f);
        any = true;
    }
    if (!any)
        fprintf(f, "    <not recorded: python_stacks=alloc records the stacks of every block allocation and free>\n");
    if (v->state != HS_BLOCK_FREED)
        return;
    fprintf(f, "Block #%llu freed by thread T%u, %.6f s after start:\n", (unsigned long long)b->id, b->end_thread,
            ((info.free_requested_ns ? info.free_requested_ns : b->end_time_ns) - hs_start_ns()) / 1e9);
    any = false;
    if (b->end_stack) {
        hs_stack_print(b->end_stack, f);
        any = true;
    }
    if (info.free_pystack) {
        fprintf(f, "  Python:\n");
        hs_pystack_print(info.free_pystack, f);
        any = true;
    }
    if (!any)
        fprintf(f, "    <not recorded: python_stacks=alloc records the stacks of every block allocation and free>\n");
}

/* "key": ["file:line in function", ...], innermost first ([] when none). */
void hs_pystack_json(hs_jbuf *b, const char *key, uint32_t id)
{
    const char *texts[HS_PYSTACK_MAX_FRAMES];
    int n = id ? hs_pystack_frames(id, texts, HS_PYSTACK_MAX_FRAMES) : 0;
    hs_jb(b, ",\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        hs_jb(b, i ? "," : "");
        hs_jb_string(b, texts[i]);
    }
    hs_jb(b, "]");
}

/* "block": the PyTorch caching-allocator block a finding is about, or null (v NULL). */
void hs_block_json(hs_jbuf *b, const hs_block_view *v)
{
    if (!v) {
        hs_jb(b, ",\"block\":null");
        return;
    }
    const hs_span *k = v->block;
    hs_block_info info = {0};
    hs_block_info_of(k, &info);
    hs_jb(
        b,
        ",\"block\":{\"id\":%llu,\"base\":\"0x%lx\",\"size\":%zu,\"offset\":%lld,\"state\":\"%s\",\"stream\":\"0x%lx\","
        "\"pool\":[%llu,%llu],\"segment\":",
        (unsigned long long)k->id, (unsigned long)k->base, k->size, (long long)(v->ptr - k->base),
        v->state == HS_BLOCK_FREED ? "freed" : "live", (unsigned long)k->owner, (unsigned long long)info.pool[0],
        (unsigned long long)info.pool[1]);
    hs_block_segment seg;
    if (hs_block_segment_of(k->base, &seg))
        hs_jb(b, "{\"base\":\"0x%lx\",\"size\":%zu,\"expandable\":%s}", (unsigned long)seg.base, seg.size,
              seg.expandable ? "true" : "false");
    else
        hs_jb(b, "null");
    hs_pystack_json(b, "alloc_python_stack", info.alloc_pystack);
    hs_pystack_json(b, "free_python_stack", info.free_pystack);
    hs_jb(b, "}");
}
