/* What the post-mortem log records about each wrapped call: the glue between the core's
 * description of a call and the on-disk records of log_format.h. */
#ifndef HS_RECORD_H
#define HS_RECORD_H

#include "core.h"
#include "report.h"

/* Before forwarding: a copy/memset record with its result pending, so a crash inside the
 * runtime call still leaves it in the log. */
void hs_record_before(const hs_call *c, hs_call_state *st, bool paused);
/* After the call: fills in the result, or writes the record of an alloc/free/sync/stream call. */
void hs_record_after(const hs_call *c, hs_call_state *st, int result);
/* A finding, as reported; returns its sequence number in this process (1, 2, ...). */
uint32_t hs_record_finding(const hs_event *e, hs_call_state *st);

#endif
