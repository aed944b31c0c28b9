/* Cold path: the findings file (findings=PATH), one JSON object per line, each line whole or not
 * at all.  Its fields are include/hipshadow/finding_schema.inc's. */
#ifndef HS_REPORT_JSON_H
#define HS_REPORT_JSON_H

#include "call.h"
#include "process/options.h"

/* e's line into this process's findings file (created on the first finding, again after fork). */
void hs_findings_write(const hs_options *o, const hs_event *e);
/* fsync the findings file, if this process has one that is still its own. */
void hs_findings_sync(void);

#endif
