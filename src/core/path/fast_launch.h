/* The fast path of a clean kernel launch.  A launch of a kernel hipshadow already knows, on a
 * live stream, while nothing is switched on that the full path does more for (the log, redzones,
 * serialize, launch_stacks, staging every copy), is gathered and checked by the same functions
 * as on the full path (facts.c, check.c, model.c), into a call state of which only what a launch
 * reads is set: the full path's clearing of the whole state, its dispatch through the operations
 * table and its after-call steps that a launch has nothing for are left out.  A launch with
 * anything to say (a finding, a kernel not seen before, a stream not live) takes the full path,
 * before anything was recorded, so findings never depend on this file. */
#ifndef HS_FAST_LAUNCH_H
#define HS_FAST_LAUNCH_H

#include "call.h"

/* Before forwarding: true when the launch was clean and is recorded (stream order, ledger;
 * *launch_seq: its operation number, 0 when captured into a graph); the caller forwards it and
 * then calls hs_fast_launch_done.  False: nothing was recorded, and
 * the launch takes the full path. */
bool hs_fast_launch(const hs_call *c, uint64_t *launch_seq);
/* After forwarding, with the launch's stream operation number hs_fast_launch gave: what the
 * program gets (a refusal is explained, and its ledger record withdrawn, as the full path would). */
int hs_fast_launch_done(const hs_call *c, uint64_t launch_seq, int result);

#endif
