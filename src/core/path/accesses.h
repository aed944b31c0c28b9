/* A call's accesses of device memory, for stream-race and initcheck (streams/access.h): found
 * before the call is forwarded (hs_gather_accesses: facts.access), remembered once it was
 * (hs_model_accesses, with the stream's operation number: 0 for a synchronous call), or, for a
 * launch, kept in its ledger record until another stream needs them.  The path comes here only
 * while hs_access_tracking(). */
#ifndef HS_ACCESSES_H
#define HS_ACCESSES_H

#include "call.h"
#include "kernels/ledger.h"

void hs_gather_accesses(const hs_call *c, hs_call_state *st);
/* The same where the call needs no search of the histories (a launch whose accesses wait, or
 * with none tracked); false, with nothing searched, where it does: a search says each race it
 * finds once, so it is left to the full path. */
bool hs_gather_accesses_unsearched(const hs_call *c, hs_call_state *st);
void hs_model_accesses(const hs_call *c, hs_call_state *st, uint64_t seq);

/* A launch's accesses may wait in its ledger record (hs_launch.deferred) rather than go into
 * the history: they are added when another stream's call could race with them (that call's
 * hs_gather_accesses adds them first) or before the record is overwritten.  An engine's compute
 * stream, synchronised before any other stream touches its memory, then adds none. */
bool hs_accesses_deferrable(void);
/* The launch just gathered was recorded deferred: nothing to remember now. */
void hs_accesses_deferred(void);
/* s's lock held: l, about to be overwritten in s's ledger, goes into the history if it is
 * deferred and still in flight. */
void hs_accesses_add_overwritten(hs_stream *s, const hs_launch *l);

/* An async copy between two live device allocations on stream s, as the fast path knows it. */
typedef struct hs_access_copy {
    uintptr_t dst_ptr, src_ptr, stream, caller;
    uint64_t bytes;
    uint16_t api;
    hs_span dst, src; /* the allocations holding each range */
} hs_access_copy;
/* Whether the search of such a copy's accesses is sure to find nothing: nothing of another
 * stream waits to go into the histories, every access remembered is s's own, and initcheck is
 * off (no unwritten bytes to look for).  Then the fast path forwards the copy unsearched... */
bool hs_accesses_copy_unsearched(const hs_stream *s);
/* ...and remembers its accesses once it was forwarded (seq: its place in s's order), as
 * hs_model_accesses would. */
void hs_accesses_copy_forwarded(hs_stream *s, const hs_access_copy *x, uint64_t seq);

#endif
