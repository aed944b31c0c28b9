/* The GPU-side rescue of device-to-host copies (option fallback=).  A D2H from an interior
 * pointer that the runtime rejected (or, with fallback_always=1, every such D2H) is done by
 * hipshadow's own kernel into a staging buffer, then by a D2H from the staging buffer's start.
 * A copy the checks found wrong is never rescued: bounds errors stay errors. */
#ifndef HS_FALLBACK_H
#define HS_FALLBACK_H

#include "call.h"
#include "process/options.h"

/* Whether this call may be rescued (the option, the kernels, an in-bounds interior D2H). */
bool hs_fallback_applies(const hs_call *c, const hs_call_state *st);
bool hs_fallback_always(void);
/* Does the copy through the staging buffer; returns the runtime's code (0 on success). */
int hs_fallback_stage(const hs_call *c, hs_call_state *st);
/* Checks the option's value at start; a bad one is named and fallback stays off. */
void hs_fallback_init(const hs_options *o);
/* In a forked child: the staging lock may have been held by a thread that is gone. */
void hs_fallback_after_fork(void);

#endif
