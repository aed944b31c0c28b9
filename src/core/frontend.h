/* What the core needs from a front-end (HIP or CUDA).  Each preload library links the core
 * with exactly one front-end, which defines hs_frontend_active. */
#ifndef HS_FRONTEND_H
#define HS_FRONTEND_H

#include "span_index.h"

struct hs_kernel_ops; /* gpu_kernels.h */

typedef struct hs_frontend {
    const char *runtime;                 /* "HIP", "CUDA" */
    int runtime_id;                      /* 1 HIP, 2 CUDA (the log header's `runtime`) */
    const char *const *api_names;        /* indexed by hs_call.api */
    int n_apis;
    const char *(*error_name)(int code);
    bool (*is_failure)(int code);        /* false for success and for "not ready" answers */
    /* A pointer the shadow map does not know: does the runtime know it as device memory?
     * Fills base/size/device of *span.  Called with the re-entrancy guard held. */
    bool (*query_pointer)(uintptr_t p, hs_span *span);
    const uintptr_t *builtin_streams;    /* handles valid without creation: null, legacy, per-thread */
    int n_builtin_streams;
    uintptr_t per_thread_stream;         /* the handle meaning "this thread's default stream" */
    uintptr_t legacy_stream;             /* another name of the legacy null stream (CUDA: 1), or 0 */
    const struct hs_kernel_ops *kernels;        /* hipshadow's own GPU kernels; NULL when none were built */
} hs_frontend;

extern const hs_frontend hs_frontend_active;

#endif
