/* What happens after a finding: suppressions, counting, the mode (warn/block/abort), the exit code. */
#ifndef HS_POLICY_H
#define HS_POLICY_H

#include "check.h"
#include "options.h"
#include "report.h"

typedef enum hs_decision { HS_FORWARD = 0, HS_BLOCK, HS_ABORT, HS_RESCUED } hs_decision;

/* Loads the suppressions file; problems are printed naming the file and line. */
void hs_policy_init(const hs_options *o);
/* Cold: does a suppression silence this finding (matched on api and call stack frames)? */
bool hs_policy_suppressed(hs_kind kind, const char *api, uint32_t stack);
/* What the mode says to do about these (unsuppressed) findings. */
hs_decision hs_policy_decide(const hs_finding *f, int n);
void hs_policy_count(const hs_finding *f);
/* Exit: prints the summary and applies exitcode=. */
void hs_policy_at_exit(void);

#endif
