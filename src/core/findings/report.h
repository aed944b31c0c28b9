/* Cold path only: the ASan-style text report (report_text.c) and the JSON Lines findings file
 * (report_json.c), written under one lock, a finding at a time. */
#ifndef HS_REPORT_H
#define HS_REPORT_H

#include "call.h"
#include "process/options.h"

void hs_report_init(const hs_options *o);
void hs_report_finding(const hs_event *e);
/* Exit: "SUMMARY: hipshadow: ..." with counts by kind and the number of checked calls.  It never
 * waits for a report that its own thread was writing when a signal came (exit() from a handler):
 * then it goes straight to stderr, and says so. */
void hs_report_summary(const uint64_t counts[HS_KIND_COUNT], uint64_t errors, uint64_t calls_checked);
/* The side whose allocation a finding is about (NULL if none has one). */
const hs_side *hs_report_subject(const hs_event *e);
/* One line "hipshadow: <text>" into the text report. */
void hs_report_note(const char *text);
void hs_report_flush(void);
void hs_report_after_fork(void);

#endif
