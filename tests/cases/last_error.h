/* The last-error program (last_error.c, last_error_spt.c): one row per wrapped HIP entry point.
 * A row is the call in a failing form, then in a succeeding form (so that an error is pending
 * while it succeeds), each followed by the return code and hipPeekAtLastError, then
 * hipGetLastError.  run_as_plain.py requires the same output with and without hipshadow: what
 * hipshadow's own runtime calls leave behind, or clear, shows.  The program also checks the
 * runtime against its documented rule (before ROCm 7 every call sets the last error to its own
 * result; from 7 only failures other than hipErrorNotReady do), so the simulator is held to it. */
#ifndef LAST_ERROR_H
#define LAST_ERROR_H

#include <hip/hip_runtime_api.h>

/* What the rows work on, made by last_error.c. */
typedef struct le_res {
    char *dev, *dev2, *host, *pinned; /* 4096 bytes each (host: pageable, 8192) */
    hipStream_t stream, gone;         /* gone: destroyed */
    hipEvent_t event;                 /* recorded on stream */
    const void *stub;                 /* poke's host stub, registered as hipcc does */
} le_res;

void le_row(const char *name);
hipError_t le_form(const char *what, hipError_t rc);
void le_end(void);
#define FAIL(call) le_form("fail", (call))
#define OK(call) le_form("ok", (call))

/* last_error_spt.c: the rows of the per-thread-default-stream forms (the _spt entry points). */
void le_rows_per_thread(const le_res *r);

#endif
