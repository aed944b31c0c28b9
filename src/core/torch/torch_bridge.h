/* PyTorch: the core's side of the plugin (include/hipshadow/torch_plugin.h).  When PyTorch's
 * libc10_cuda.so is in the process, the first device allocation after it arrived loads
 * libhipshadow-torch.so (found next to this library, or torch_plugin=PATH) and every segment
 * allocation asks it to attach its tracker to the caching allocator, until that succeeds: the
 * allocator makes its first segment before it hands out its first block, so no block is missed.
 * Where that cannot be done (no plugin, another PyTorch, another allocator backend), one info
 * line says why, and hipshadow checks at the level of the allocator's segments as before. */
#ifndef HS_TORCH_BRIDGE_H
#define HS_TORCH_BRIDGE_H

#include "process/options.h"
#include "torch/blocks.h"

#include <stdbool.h>
#include <stdint.h>

void hs_torch_init(const hs_options *o);
/* At a device allocation, a reservation or a map: cheap once attached or given up. */
void hs_torch_poll(void);
/* The calling thread's Python stack for a report (a pystacks.h id), 0 when none or
 * python_stacks=off.  moves_data: the call is a copy, a memset or a launch.  Only then is the GIL
 * taken: never where the caching allocator may hold its lock (its cudaMalloc, cudaFree, syncs),
 * which a Python thread could be waiting for. */
uint32_t hs_torch_python_stack(bool moves_data);
/* Lock-free: are device allocations split into smaller pieces that every copy must be checked
 * against (PyTorch caching-allocator blocks)?  The fast copy path cannot see them. */
static inline bool hs_torch_splits_allocations(void) { return hs_blocks_any(); }
/* Exit: the trace file flushed; with verbosity >= 1, one line of block statistics. */
void hs_torch_at_exit(void);
void hs_torch_after_fork(void);

#endif
