/* How hipshadow's model of the program (the shadow map, streams, events, the happens-before
 * order) changes with each operation.  Each function is a column of the operations table
 * (ops.c): "claim" runs before forwarding, because other threads must see the change at once;
 * "apply" runs after the runtime succeeded; "settle" runs after forwarding whatever the result. */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include "call.h"

/* ---- claims (before forwarding) ---- */
/* Frees: the allocation moves to quarantine now; facts.release says what the shadow map found. */
void hs_model_release(const hs_call *c, hs_call_state *st);
/* Stream destruction: the handle is marked destroyed now; facts.stream_state is its state before. */
void hs_model_destroy_stream(const hs_call *c, hs_call_state *st);
/* The call was blocked, or the runtime refused it: undo the claim (a refused free stays live). */
void hs_model_unclaim(const hs_call *c, hs_call_state *st);

/* ---- after success ---- */
void hs_model_alloc(const hs_call *c, hs_call_state *st);
void hs_model_free(const hs_call *c, hs_call_state *st);
void hs_model_copy(const hs_call *c, hs_call_state *st); /* copies and memsets */
void hs_model_sync(const hs_call *c, hs_call_state *st);
void hs_model_stream_create(const hs_call *c, hs_call_state *st);
void hs_model_event_create(const hs_call *c, hs_call_state *st);
void hs_model_event_destroy(const hs_call *c, hs_call_state *st);
void hs_model_event_record(const hs_call *c, hs_call_state *st);
void hs_model_stream_wait(const hs_call *c, hs_call_state *st);
void hs_model_capture_begin(const hs_call *c, hs_call_state *st);
void hs_model_pool_destroy(const hs_call *c, hs_call_state *st);
/* A launch: the stream's next operation, and an entry of the stream's ledger. */
void hs_model_launch(const hs_call *c, hs_call_state *st);
/* Modules: the front-end remembers images and function names (for kernel metadata). */
void hs_model_module_load(const hs_call *c, hs_call_state *st);
void hs_model_function_get(const hs_call *c, hs_call_state *st);
/* Virtual memory: reservations, physical handles, maps (vmm.h). */
void hs_model_vmm_reserve(const hs_call *c, hs_call_state *st);
void hs_model_vmm_free(const hs_call *c, hs_call_state *st);
void hs_model_vmm_create(const hs_call *c, hs_call_state *st);
void hs_model_vmm_release(const hs_call *c, hs_call_state *st);
void hs_model_vmm_map(const hs_call *c, hs_call_state *st);
void hs_model_vmm_unmap(const hs_call *c, hs_call_state *st);

/* ---- whatever the result ---- */
void hs_model_capture_end(const hs_call *c, hs_call_state *st); /* capture ends whatever the runtime says */

#endif
