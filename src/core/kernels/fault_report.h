/* Cold path: how the reports word what happened on the device: a GPU memory fault the runtime
 * announced, and the launches suspected of a device fault (text and the JSON Lines fields).
 * The findings' reports (findings/report_text.c, findings/report_json.c) call these. */
#ifndef HS_FAULT_REPORT_H
#define HS_FAULT_REPORT_H

#include "call.h"
#include "kernels/ledger.h"
#include "process/print.h"

#include <stdio.h>

/* "inside", "past-end", ...: where a faulting address falls (hs_fault_where). */
const char *hs_fault_where_name(int where);

/* "  the GPU faulted on address ..." and where the address falls; e->gpu_fault is set. */
void hs_print_gpu_fault(FILE *f, const hs_event *e);
/* "Suspects (...):" the launches not known to have completed, newest first. */
void hs_print_suspects(FILE *f, const hs_suspects *s, uint64_t now_ns);

/* ,"fault":{"address", "reasons": [..], "where", "alloc", "below", "above"} */
void hs_json_gpu_fault(hs_jbuf *b, const hs_gpu_fault *g);
/* ,"kernels":[{"name", "stream", "args": [...]}]: the suspects of a device fault, or the launch
 * of a kernel-use-after-free; nothing for other findings. */
void hs_json_kernels(hs_jbuf *b, const hs_event *e);

#endif
