/* Cold path: how the reports word a PyTorch caching-allocator block (text and the JSON Lines
 * fields).  The findings' reports call these with the block a finding's pointer lies in. */
#ifndef HS_BLOCK_REPORT_H
#define HS_BLOCK_REPORT_H

#include "process/print.h"
#include "shadow/span.h"
#include "torch/blocks.h"

#include <stdint.h>
#include <stdio.h>

#define HS_BLOCK_NOUN "PyTorch caching-allocator block"

/* What the wording needs of a finding's side: its pointer, the block it lies in, and the
 * allocation (one of the allocator's segments) that holds the block. */
typedef struct hs_block_view {
    uintptr_t ptr;
    const hs_span *block;
    const hs_span *alloc;
    hs_block_state state;
} hs_block_view;

/* "  the block lies in the allocator's segment [a, b) (size, stream, pool), allocation #N" */
void hs_block_print_segment(FILE *f, const hs_block_view *v);
/* "  <who> 0x.. lies in PyTorch caching-allocator block #N ..., which was freed: ..." */
void hs_block_print_freed(FILE *f, const hs_block_view *v, uint64_t now_ns, const char *who);
/* The block's own stacks: where it was handed out and where its tensor let go of it. */
void hs_block_print_stacks(FILE *f, const hs_block_view *v);

/* ,"block":{"id", "base", "size", "offset", "state", "stream", "pool", "segment", ...} */
void hs_block_json(hs_jbuf *b, const hs_block_view *v);
/* ,"key":["file:line in function", ...], innermost first ([] when none). */
void hs_pystack_json(hs_jbuf *b, const char *key, uint32_t id);

#endif
