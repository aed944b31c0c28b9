/* A call's accesses of device memory, for stream-race and initcheck (streams/access.h): found
 * before the call is forwarded (hs_gather_accesses: facts.access), remembered once it was
 * (hs_model_accesses, with the stream's operation number: 0 for a synchronous call).  The path
 * comes here only while hs_access_tracking(). */
#ifndef HS_ACCESSES_H
#define HS_ACCESSES_H

#include "call.h"

void hs_gather_accesses(const hs_call *c, hs_call_state *st);
void hs_model_accesses(const hs_call *c, hs_call_state *st, uint64_t seq);

#endif
