/* What the post-mortem log records about each wrapped call: the glue between the core's
 * description of a call and the on-disk records of log_format.h.  The operations table
 * (ops.c) names, per operation, the record written before forwarding and the one after. */
#ifndef HS_RECORD_H
#define HS_RECORD_H

#include "call.h"

/* Takes the call's start time, when logging is on. */
void hs_record_start(hs_call_state *st);

/* Copies and memsets: a record with its result pending, written before forwarding so a crash
 * inside the runtime call still leaves it in the log; patched with the result after. */
void hs_record_copy_start(const hs_call *c, hs_call_state *st, bool paused);
void hs_record_copy_end(const hs_call *c, hs_call_state *st, int result);

/* After the call (forwarded or blocked), one record of each operation's kind. */
void hs_record_alloc(const hs_call *c, hs_call_state *st, int result);
void hs_record_free(const hs_call *c, hs_call_state *st, int result);
void hs_record_sync(const hs_call *c, hs_call_state *st, int result);
void hs_record_stream(const hs_call *c, hs_call_state *st, int result); /* create and destroy */
void hs_record_event_create(const hs_call *c, hs_call_state *st, int result);
void hs_record_event_record(const hs_call *c, hs_call_state *st, int result);
void hs_record_stream_wait(const hs_call *c, hs_call_state *st, int result);
void hs_record_event_destroy(const hs_call *c, hs_call_state *st, int result);
void hs_record_capture_begin(const hs_call *c, hs_call_state *st, int result);
void hs_record_capture_end(const hs_call *c, hs_call_state *st, int result);

/* A kernel, graph or host-function launch, after the call: geometry, kernel name, the stream's
 * operation number and the arguments that point into known allocations. */
void hs_record_launch(const hs_call *c, hs_call_state *st, int result);

/* A finding, as reported; returns its sequence number in this process (1, 2, ...). */
uint32_t hs_record_finding(const hs_event *e, hs_call_state *st);
/* The GPU_FAULT record of a device-fault from the runtime's fault event (e->gpu_fault). */
void hs_record_gpu_fault(const hs_event *e, uint32_t finding_seq);

#endif
