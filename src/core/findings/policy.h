/* What happens after a finding: suppressions, counting, the mode (warn/block/abort), the exit code. */
#ifndef HS_POLICY_H
#define HS_POLICY_H

#include "call.h"
#include "process/options.h"

/* Loads the suppressions file; problems are printed naming the file and line. */
void hs_policy_init(const hs_options *o);
/* Cold: does a suppression silence this finding (matched on the api, the launched kernel's name
 * when there is one (NULL: none), and the call stack's frames)? */
bool hs_policy_suppressed(hs_kind kind, const char *api, const char *kernel, uint32_t stack);
/* What the mode says to do about these (unsuppressed) findings. */
hs_decision hs_policy_decide(const hs_finding *f, int n);
void hs_policy_count(const hs_finding *f);
/* Info notes are said once per call site (the program's return address into its code). */
bool hs_policy_first_at_site(uintptr_t caller);
/* Exit: prints the summary (with the number of checked calls) and applies exitcode=.  A
 * finding made after it (an exit handler registered later, a thread) is still reported and
 * said to come late. */
void hs_policy_at_exit(uint64_t calls_checked);
/* A sticky device fault is reported once: every later call that returns it is the same fault.
 * True for the first. */
bool hs_policy_first_device_fault(void);
/* In a forked child: the counts start from zero (the parent's findings are the parent's). */
void hs_policy_after_fork(void);

#endif
