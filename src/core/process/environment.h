/* The environment behind GPU memory behaviour (environment.inc): read once at start, as set for
 * this process, for the post-mortem log's header and the text report. */
#ifndef HS_ENVIRONMENT_H
#define HS_ENVIRONMENT_H

#include <stdbool.h>
#include <stddef.h>

/* Reads the variables of environment.inc that are set (once, at start). */
void hs_environment_init(void);
/* "NAME=value" lines, one per set variable, in the table's order; "" when none is set.  Values
 * are cut at 256 bytes and their control characters replaced, so the text is one line each. */
const char *hs_environment_text(void);
/* The set variables known to cause device faults when misused, as "NAME=value (why)" lines;
 * "" when none is set. */
const char *hs_environment_fault_prone(void);
/* Why a variable of the table matters; NULL for one that is not in it. */
const char *hs_environment_why(const char *name);

#endif
