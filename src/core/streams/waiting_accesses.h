/* A stream's copies and memsets whose accesses wait before going into the access history
 * (access.h), as a launch's wait in its ledger record (path/accesses.h): an engine's compute
 * stream copies into its caches and arena call after call, synchronised before any other
 * stream touches them, and adding each copy to the history would cost a lock and a history
 * update for nothing.  They go in when another stream's call could race with them
 * (hs_waiting_take, before that call's search), or, the stream's ring being full, the oldest
 * first.  Only those still in flight then: a completed access can race with nothing. */
#ifndef HS_WAITING_ACCESSES_H
#define HS_WAITING_ACCESSES_H

#include "streams/access.h"

/* The n accesses of one call on s (allocation ids[i]) wait.  false: they cannot (s is past the
 * streams counted, or memory ran out): the caller adds them to the history itself. */
bool hs_waiting_add(hs_stream *s, const uint64_t *ids, const hs_access *const *accesses, int n);
/* Whether a stream other than `me` has accesses waiting (lock-free). */
bool hs_waiting_others(const hs_stream *me);
/* s's waiting accesses that are still in flight go into the history; none waits after. */
void hs_waiting_take(hs_stream *s);

#endif
