/* Every rule: facts about one call in, findings out.  Pure functions of their input (no
 * runtime, no shadow map, no clock), so the whole rule set is unit-tested with hand-made facts
 * (tests/unit/test_check.c, tests/unit/test_rules.c).  A rule appends at most `max` findings
 * to `out` and returns how many it appended. */
#ifndef HS_CHECK_H
#define HS_CHECK_H

#include "call.h"
#include "kernels/redzones.h"

typedef int (*hs_rule_fn)(const hs_call *call, const hs_facts *facts, hs_finding *out, int max);

const char *hs_kind_name(hs_kind k);
hs_severity hs_kind_severity(hs_kind k);
const char *hs_severity_name(hs_severity s);
const char *hs_dir_name(int dir);

/* Is this side device memory as far as the shadow (or the runtime) knows? */
bool hs_side_is_device(const hs_side *s);
/* hipMemcpyDefault: the direction the pointers imply. */
int hs_effective_direction(int stated, const hs_side *dst, const hs_side *src);
/* The role a side must play for a direction (HS_ROLE_NONE: the direction says nothing). */
hs_role hs_role_of(int dir, hs_side_id side);
/* Does the call wait for its stream's earlier work (sync copies and memsets, stream and device syncs)? */
bool hs_is_sync_like(const hs_call *c);

/* Every call that names a stream: invalid-stream (destroyed or never created). */
int hs_check_stream_handle(const hs_call *call, const hs_facts *facts, hs_finding *out, int max);
/* Copies and memsets, before forwarding: the ranges (hs_check_memory_op), then the stream
 * rules (hs_check_stream_work). */
int hs_check_copy(const hs_call *call, const hs_facts *facts, hs_finding *out, int max);
int hs_check_memory_op(const hs_call *call, const hs_facts *facts, hs_finding *out, int max);
/* The same range rules for a synchronous 1-D copy the fast path knows only briefly
 * (fast_copy.c): true when they cannot find anything in it, false when the full path must
 * gather the facts and decide.  test_check.c holds it to hs_check_copy. */
bool hs_check_copy_brief_clean(int dir, const hs_brief_side *dst, const hs_brief_side *src);
/* capture-violation, async-overlap, pageable-async. */
int hs_check_stream_work(const hs_call *call, const hs_facts *facts, hs_finding *out, int max);
/* Launches: kernel-use-after-free (an argument points into freed memory: an error when the
 * platform says the argument is a pointer, a warning when a scan found it). */
int hs_check_launch(const hs_call *call, const hs_facts *facts, hs_finding *out, int max);
/* Frees: invalid-free (double, interior, never allocated), free-while-pending. */
int hs_check_free(const hs_call *call, const hs_facts *facts, hs_finding *out, int max);

/* After forwarding, when the runtime failed: device-fault when the failure is a sticky fault
 * (facts->device_fault) and the checks before forwarding found nothing, else runtime-error, pointing at the side the checks
 * before forwarding blamed.  `rescued`: hipshadow's fallback did the copy instead (a warning).
 * Requests a program must expect to be refused (allocations, reservations, physical handles,
 * pools, lookups: out of memory, an unsupported property, a symbol this driver lacks) are no
 * finding by themselves.  Returns the number of findings written to *out (0 or 1). */
int hs_check_result(const hs_call *call, const hs_facts *facts, bool rescued, const hs_finding *earlier, int n_earlier,
                    hs_finding *out);
/* A redzone found overwritten: kernel-out-of-bounds-write; overrun = the last byte written past
 * the allocation's end + 1. */
hs_finding hs_check_redzone(const hs_redzone_damage *d);
/* A GPU memory fault the runtime announced (hs_gpu_fault): device-fault. */
hs_finding hs_check_gpu_fault(const hs_gpu_fault *fault);
/* Does this finding report a device fault (it carries the launch ledger's suspects, and the
 * same sticky fault is reported once)? */
bool hs_finding_is_device_fault(const hs_finding *f);
/* At exit, for each allocation still live (facts->dst describes it): leak. */
hs_finding hs_check_leak(const hs_facts *facts);

#endif
