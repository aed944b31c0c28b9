/* Cold path: what the text report says about the region (hipshadow_region_register, NVTX) that
 * a finding's range starts in, live or freed through NVTX.  Kept apart from report.c, which
 * calls these at its fixed places. */
#ifndef HS_REPORT_REGIONS_H
#define HS_REPORT_REGIONS_H

#include "call.h"

#include <stdio.h>

/* "'name'", or "#id" for a region that has none. */
const char *hs_report_region_label(const hs_span *region, char *buf, size_t len);
/* "  the <label> pointer lies in region 'name' [...]": every report of a region names it. */
void hs_report_region_line(FILE *f, const hs_side *s, const char *label);
/* use-after-free and kernel-use-after-free of a freed region: who is the pointer ("the source
 * pointer", "argument 0 ="). */
void hs_report_region_freed(FILE *f, const hs_event *e, const hs_side *s, const char *who);
/* region-permission: the access the range needs and the thread lacks. */
void hs_report_region_permission(FILE *f, const hs_side *s, const char *side, bool write);
/* "Region ... freed by thread T.., <when>:" and the stack of the NVTX call that freed it. */
void hs_report_region_stacks(FILE *f, const hs_side *s);

#endif
