/* The output formats of `hipshadow report`; one file each. */
#ifndef HSR_FORMATS_H
#define HSR_FORMATS_H

#include "summary.h"

#include <stdio.h>

typedef void (*hsr_format_fn)(hsr_set *set, const hsr_summary *s, FILE *out);

void hsr_format_text(hsr_set *set, const hsr_summary *s, FILE *out);
void hsr_format_json(hsr_set *set, const hsr_summary *s, FILE *out);
void hsr_format_csv(hsr_set *set, const hsr_summary *s, FILE *out);
void hsr_format_perfetto(hsr_set *set, const hsr_summary *s, FILE *out);
void hsr_format_html(hsr_set *set, const hsr_summary *s, FILE *out);
void hsr_format_sarif(hsr_set *set, const hsr_summary *s, FILE *out);
void hsr_format_junit(hsr_set *set, const hsr_summary *s, FILE *out);

/* Shared helpers. */
/* The next finding of the merged timeline at or after *i (then *i points past it), with its log;
 * NULL when there are no more.  Start with *i = 0. */
const hs_log_finding *hsr_next_finding(hsr_set *set, size_t *i, hsr_log **log);
const char *hsr_severity_name(unsigned severity);
const char *hsr_action_name(unsigned action);
/* One line describing a finding ("out-of-bounds on hipMemcpyDtoH: D2H of N bytes ..."). */
void hsr_finding_message(const hsr_log *log, const hs_log_finding *f, char *buf, size_t len);
/* The lines a finding's parts add (a runtime-error's cause, a stream-race's other access, an
 * uninitialized-read's ranges), as the live text report says them, each ending in '\n'.  Strings
 * from the log have their control characters as \xNN: a line cannot be split by one. */
void hsr_finding_details(const hsr_log *log, const hs_log_finding *f, const hsr_finding_parts *p, char *buf,
                         size_t len);
/* hsr_finding_message, then those lines joined with "; ": one line for HTML, SARIF, JUnit, Perfetto. */
void hsr_finding_message_full(const hsr_log *log, const hs_log_finding *f, char *buf, size_t len);
/* "hip", "cuda" or "cu": the runtime an API name belongs to, for the calls that order a race. */
const char *hsr_call_prefix(const char *api);
/* Where a GPU memory fault's address fell (GPU_FAULT records). */
const char *hsr_fault_where_name(unsigned where);
/* The innermost frame of the program's own code (not libc, the runtime or hipshadow) with a
 * source line; false when none has one. */
bool hsr_own_frame(hsr_log *log, uint32_t stack, char *file, size_t file_len, int *line);

#endif
