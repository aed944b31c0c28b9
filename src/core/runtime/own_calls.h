/* hipshadow's own calls into the runtime, invisible to the program.
 *
 * Every runtime or driver call hipshadow makes for itself (a kernel's name and parameters, the
 * current device, a pointer query, a redzone's fill or read-back, a serializing sync, its own
 * kernels and staging copies) is reached through the accessors below, and nowhere else
 * (tests/check_layers.py keeps it so).  The first of them in a wrapped call saves what the
 * program can observe of the runtime: the per-thread last error (Get/Peek), the current device
 * or context, errno.  Before the program's own call is forwarded, and when the wrapper hands
 * control back, that state is put back.
 *
 * A runtime cannot be told to hold an error again once a call of hipshadow's replaced or
 * cleared it, so the front-end takes it out (Get) and hipshadow owes it to the program: the
 * wrapped Get and Peek answer it while the runtime holds nothing newer, and a forwarded call
 * of the program that replaces the runtime's last error settles the debt. */
#ifndef HS_OWN_CALLS_H
#define HS_OWN_CALLS_H

#include "runtime/frontend.h"
#include "process/util.h"

/* What the program can see of the runtime, as a front-end saves it (hs_frontend.save_visible). */
typedef struct hs_visible {
    bool has_last_error, has_device, has_context;
    int last_error;      /* as the runtime's Peek answers */
    int device;          /* the calling thread's current device */
    void *context;       /* the calling thread's current context (CUDA driver) */
    int runtime_version; /* for the rule of the last error (HIP: changed in ROCm 7) */
} hs_visible;

struct hs_own_thread {
    bool saved; /* a bracket is open: the state below is the program's */
    int err_no;
    int owed; /* a last error the runtime no longer holds (0: none) */
    hs_visible visible;
};
extern HS_TLS struct hs_own_thread hs_own_thread;

void hs_own_save(void);
void hs_own_restore(void);

/* Before hipshadow calls the runtime for itself (the accessors below open it). */
static inline void hs_own_begin(void)
{
    if (HS_UNLIKELY(!hs_own_thread.saved))
        hs_own_save();
}

/* Where control goes to the program's own call or back to the program: the wrapper, before it
 * forwards and when it returns (hs_leave). */
static inline void hs_own_end(void)
{
    if (HS_UNLIKELY(hs_own_thread.saved))
        hs_own_restore();
}

/* The program's call reached the runtime (api, its result), or hipshadow blocked it (the code
 * it returned instead, which a failing runtime call would have left as the last error). */
void hs_own_settle(unsigned api, int result);
static inline void hs_own_forwarded(unsigned api, int result)
{
    if (HS_UNLIKELY(hs_own_thread.owed))
        hs_own_settle(api, result);
}
void hs_own_blocked(unsigned api, int code);

/* The program asks for the last error: the runtime's answer, or what hipshadow owes it.  take:
 * Get (the debt is paid) rather than Peek. */
static inline int hs_own_last_error(int runtime_answer, bool take)
{
    int owed = hs_own_thread.owed;
    if (HS_LIKELY(!owed))
        return runtime_answer;
    if (take || runtime_answer != 0)
        hs_own_thread.owed = 0; /* paid, or the runtime holds a newer error */
    return runtime_answer != 0 ? runtime_answer : owed;
}

/* ---- the front-end's functions that reach the runtime, each inside the bracket ---- */

int hs_own_current_device(const hs_layer *layer);
const char *hs_own_kernel_name(const hs_layer *layer, const void *kernel, int ref, uintptr_t stream);
int hs_own_kernel_params(const hs_layer *layer, const void *kernel, int ref, hs_kernel_param *out, int max);
int hs_own_stream_sync(const hs_layer *layer, uintptr_t stream);
/* The limits of `device`, asked of the runtime once per device (then kept); NULL: unknown. */
const hs_device_limits *hs_own_device_limits(const hs_layer *layer, int device);
int hs_own_fill(const hs_layer *layer, uintptr_t device, int value, size_t n);
int hs_own_read(const hs_layer *layer, void *host, uintptr_t device, size_t n);
bool hs_own_query_pointer(uintptr_t p, hs_span *span);
/* hipshadow's GPU kernels and their memory (gpu_kernels.h); NULL when none were built. */
const struct hs_kernel_ops *hs_own_kernels(void);

#endif
