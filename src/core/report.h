/* Cold path only: the ASan-style text report and the JSON Lines findings file. */
#ifndef HS_REPORT_H
#define HS_REPORT_H

#include "check.h"
#include "options.h"

typedef enum hs_action { HS_ACTION_FORWARDED, HS_ACTION_BLOCKED, HS_ACTION_ABORTED, HS_ACTION_FALLBACK } hs_action;

/* Everything one report says. */
typedef struct hs_event {
    const hs_call *call;
    const hs_facts *facts;
    const hs_finding *finding;
    hs_action action;
    bool has_result;          /* runtime-error: the runtime's answer */
    int result;
    const hs_finding *earlier;/* runtime-error: what the checks had found before forwarding */
    int n_earlier;
    uint32_t stack;           /* the program's stack at the call */
    uint32_t thread;
    uint64_t time_ns;
} hs_event;

void hs_report_init(const hs_options *o);
void hs_report_finding(const hs_event *e);
/* Exit: "SUMMARY: hipshadow: ..." with counts by kind. */
void hs_report_summary(const uint64_t counts[HS_KIND_COUNT], uint64_t errors);
const char *hs_action_name(hs_action a);
/* The side whose allocation a finding is about (NULL if none has one). */
const hs_side *hs_report_subject(const hs_event *e);
/* Opens "%p"-templated paths: pid is substituted. Returns an fd or -1. */
int hs_open_template(const char *template, int flags);
void hs_report_flush(void);
void hs_report_after_fork(void);

#endif
