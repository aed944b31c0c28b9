/* The one path every wrapper takes: enter (guard), before (gather, check, decide), the
 * front-end forwards, after (settle, update the model, runtime-error, record), leave. */
#ifndef HS_CORE_H
#define HS_CORE_H

#include "call.h"

/* False when the wrapper must forward untouched: re-entered from the runtime, tool disabled. */
bool hs_enter(void);
void hs_leave(void);
hs_decision hs_before(const hs_call *call, hs_call_state *st);
/* Returns what the wrapper returns: `result`, or success when a fallback rescued the copy. */
int hs_after(const hs_call *call, hs_call_state *st, int result);
/* A call a fast path (fast_copy.h, fast_launch.h) forwarded and the runtime refused: its facts
 * gathered on the full path (the refused call changed nothing) and the refusal explained, without
 * a second enqueue; launch_seq: the stream operation number of the launch's ledger record, which
 * the fast path made and which is withdrawn (0: none).  Returns what the program gets. */
int hs_after_refused_fast(const hs_call *call, uint64_t launch_seq, int result);

#endif
