/* Cold path: what a stream-race report says about its two accesses, and an uninitialized-read
 * report about the ranges never written (text and the findings JSON's "race" / "uninit"). */
#ifndef HS_REPORT_RACES_H
#define HS_REPORT_RACES_H

#include "call.h"

#include <stdio.h>

void hs_report_access_text(FILE *f, const hs_event *e);
/* Appends ,"race":{...} or ,"uninit":{...} to the JSON line being built in buf. */
void hs_report_access_json(char *buf, size_t cap, size_t *n, const hs_event *e);

#endif
