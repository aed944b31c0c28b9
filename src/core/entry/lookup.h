/* Lookups: a program that asks for a function by name (hipGetProcAddress, cuGetProcAddress,
 * cudaGetDriverEntryPoint, dlsym, dlvsym on a runtime's handle) gets hipshadow's wrapper where
 * there is one, so calls made through the pointer are checked like direct calls.  Served from
 * the front-end's one sorted table, whether or not the re-entrancy guard is held: a runtime's
 * own lookups made under a wrapped call must hand out wrappers too. */
#ifndef HS_LOOKUP_H
#define HS_LOOKUP_H

#include <stdbool.h>

/* Is `name` one of the wrapped entry points?  (Binary search; no runtime call.) */
bool hs_lookup_is_wrapped(const char *name);
/* The wrapper for a real function (or an alias a get-proc-address answered with); NULL when
 * `fn` is none of the wrapped functions, e.g. another library's function of the same name. */
void *hs_lookup_wrapper_for(const void *fn);
/* A get-proc-address style answer: *result is replaced by the wrapper when it is a real one. */
void hs_lookup_redirect(void **result);

#endif
