/* PyTorch's caching allocator, block by block: a state machine driven by the allocator's trace
 * (include/hipshadow/torch_plugin.h), so that a tensor is a region of its segment and a freed
 * tensor's memory is quarantined until the allocator hands it out again.
 *
 *   alloc            -> a live block [addr, addr + the size asked for); any quarantined block it
 *                       overlaps is forgotten (the allocator's reuse is not a bug)
 *   free_requested   -> still live: work already queued in stream order may use it
 *   free_completed   -> quarantined: an access through the old pointer is a use after free
 *   segment_free/unmap -> every block in the range, live or quarantined, is forgotten (the
 *                       shadow map's own allocation goes to quarantine with cudaFree/cuMemUnmap)
 *
 * Lookups are lock-free (one span index holds live and quarantined blocks; a block handed out
 * again where one was changes its span in place); events take one mutex. */
#ifndef HS_BLOCKS_H
#define HS_BLOCKS_H

#include "hipshadow/torch_plugin.h"
#include "shadow/span.h"

#include <stdbool.h>
#include <stdio.h>

typedef enum hs_block_state { HS_BLOCK_NONE = 0, HS_BLOCK_LIVE, HS_BLOCK_FREED } hs_block_state;

/* A block's span: base, size (as asked for), id (the block's own numbering), time_ns (handed
 * out), end_time_ns (free completed; set only once it is), owner (its stream), device,
 * stack/end_stack and thread/end_thread (allocated / free requested; stacks with
 * python_stacks=alloc).  Times are the coarse clock's (a few milliseconds): an event is stamped
 * at the cost of a memory read, not a clock reading. */

/* What a report says about a block besides its span. */
typedef struct hs_block_info {
    uint64_t pool[2]; /* MempoolId_t */
    uint32_t alloc_pystack, free_pystack;
    uint64_t free_requested_ns; /* 0: no free requested */
} hs_block_info;

typedef struct hs_block_segment {
    uintptr_t base;
    size_t size;
    uintptr_t stream;
    int device;
    bool expandable; /* mapped ranges of an expandable segment (adjacent maps joined) */
    uint64_t pool[2];
} hs_block_segment;

typedef struct hs_blocks_stats {
    uint64_t events[HIPSHADOW_BLOCK_ACTION_COUNT];
    uint64_t unmatched; /* frees of blocks never seen handed out */
    uint64_t live, quarantined, segments;
    uint64_t evicted; /* quarantined blocks forgotten to stay under the limits */
} hs_blocks_stats;

/* quarantine_bytes: the most bytes of freed blocks remembered (0: none). */
void hs_blocks_init(uint64_t quarantine_bytes);
/* Every event written as one text line to path (torch_trace=); NULL or "": none. */
void hs_blocks_trace_to(const char *path);
void hs_blocks_trace_close(void);
/* One trace entry.  stack/thread/now describe who made it (stack 0: not captured). */
void hs_blocks_event(const hipshadow_block_event *e, uint32_t stack, uint32_t thread, uint64_t now_ns);

/* Lock-free: are blocks tracked at all (any event seen)? */
bool hs_blocks_any(void);
/* Lock-free: the live block holding addr, else the quarantined one; *block filled for both. */
hs_block_state hs_block_lookup(uintptr_t addr, hs_span *block);

/* Cold: more about a block that a lookup returned (false when it is forgotten since), and the
 * segment holding addr. */
bool hs_block_info_of(const hs_span *block, hs_block_info *out);
bool hs_block_segment_of(uintptr_t addr, hs_block_segment *out);
void hs_blocks_get_stats(hs_blocks_stats *out);
/* Visit every live or quarantined block in address order (tests, exit statistics). */
void hs_blocks_foreach(hs_block_state which, void (*fn)(const hs_span *, void *), void *arg);

/* The trace's text form, one event a line: "<action> <device> 0x<addr> <size> 0x<stream>
 * <pool0> <pool1>", action as PyTorch names it (alloc, free_requested, ...). */
const char *hs_block_action_name(uint32_t action);
/* 1 when line is an event (filled into *e), 0 for a comment or blank line, -1 when malformed. */
int hs_block_event_parse(const char *line, hipshadow_block_event *e);
void hs_block_event_format(const hipshadow_block_event *e, char *buf, size_t len);

void hs_blocks_after_fork(void);

#endif
