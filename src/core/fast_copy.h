/* The fast path of a clean synchronous copy (issue 11: tens of nanoseconds a copy at any number
 * of allocations).  A synchronous 1-D copy on the legacy stream whose sides the shadow map's
 * briefs place (a live allocation holding the whole range, or host memory the host probe's cache
 * knows) and that the rules' brief form calls clean is forwarded without the full path's call
 * state; every other copy, and every doubt, takes the full path.  fast_copies=0 turns it off. */
#ifndef HS_FAST_COPY_H
#define HS_FAST_COPY_H

#include "call.h"

/* Before forwarding: true when the copy is clean and needs nothing else from hipshadow. */
bool hs_fast_copy_clean(const hs_call *c);
/* After forwarding a copy hs_fast_copy_clean passed: the stream model, and a refusal handed to
 * the full path (explained, or rescued by fallback=stage).  Returns what the program gets. */
int hs_fast_copy_after(const hs_call *c, int result);

#endif
