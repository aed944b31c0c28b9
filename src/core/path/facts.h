/* Fact gathering: what the shadow map, the stream model, the runtime and the host's page tables
 * say about one call, before the rules look at it.  No rule lives here: nothing is decided.
 * Each function is a column of the operations table (ops.c). */
#ifndef HS_FACTS_H
#define HS_FACTS_H

#include "call.h"

/* Every call that names a stream: is the handle live, destroyed or never created? */
void hs_gather_stream_state(const hs_call *c, hs_call_state *st);
/* Copies and memsets: both sides (shadow map, then the runtime or the host probe), the
 * effective direction, then the stream work (capture, what becomes pending, overlaps). */
void hs_gather_copy(const hs_call *c, hs_call_state *st);
/* Synchronisations: capture state, and what the sync waits for. */
void hs_gather_sync(const hs_call *c, hs_call_state *st);
/* Frees, after the model released the allocation (hs_model_release): the pointer's side, and
 * any pending work that still uses the memory. */
void hs_gather_free(const hs_call *c, hs_call_state *st);
/* Launches: the kernel (kernel_info.h), and every argument that points into a known allocation,
 * live or freed (AMD: the parameters the code object calls pointers; CUDA: every 8-byte
 * parameter; by-value structs and untyped argument buffers are scanned word by word). */
void hs_gather_launch(const hs_call *c, hs_call_state *st);
/* The same for the fast path (fast_launch.c): false where the launch's accesses need a search of
 * the histories, which is then left to the full path (hs_gather_accesses_unsearched). */
bool hs_gather_launch_unsearched(const hs_call *c, hs_call_state *st);
/* An async copy or memset about to become pending on its stream: what every one records (the
 * caller adds its allocations and host range). */
hs_pending_op hs_pending_of(uint16_t api, uint64_t bytes, int dir);
/* After a failed call: is the failure a sticky fault of asynchronous work? */
void hs_gather_result(const hs_call *c, hs_call_state *st, int result);
/* The runtime failed a copy or memset: learn what the fast path skipped (ask the runtime about
 * both sides), so the report and the record carry every fact. */
void hs_gather_after_failure(const hs_call *c, hs_call_state *st);
/* A GPU memory fault the runtime announced: where f->address falls (inside, just past or
 * before a live allocation, in a freed one, in an unmapped reservation, or near nothing, with
 * the nearest allocations).  Lock-free lookups only: it runs on the runtime's event thread. */
void hs_gather_gpu_fault(hs_gpu_fault *f);

#endif
