/* Cold path: one finding as ASan-style text (the headline, what is wrong, the allocation, the
 * stacks, SUMMARY).  What each kind says is its own function, in a table indexed by kind. */
#ifndef HS_REPORT_TEXT_H
#define HS_REPORT_TEXT_H

#include "call.h"
#include "process/options.h"

#include <stdio.h>

void hs_report_text_init(const hs_options *o);
/* The whole report of e into f.  *environment_said: the environment went out with an earlier
 * report of this process (set here when this one says it). */
void hs_report_text(FILE *f, const hs_event *e, bool *environment_said);

#endif
