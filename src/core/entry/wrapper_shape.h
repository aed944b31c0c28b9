/* The one shape of every wrapper, shared by the front-ends: resolve (once), guard, describe,
 * check and decide, forward, record; a clean copy and a clean launch take their fast paths
 * (fast_copy.h, fast_launch.h).  A front-end defines, before including this:
 *   real_<name>        the resolved real function (NULL when the runtime lacks it)
 *   resolve_once, resolve_all
 * and expands HS_WRAPPER once per entry of its api.inc. */
#ifndef HS_WRAPPER_SHAPE_H
#define HS_WRAPPER_SHAPE_H

#include "path/core.h"
#include "path/fast_copy.h"
#include "path/fast_launch.h"
#include "path/init.h"
#include "entry/lookup.h"
#include "streams/ordering.h"
#include "runtime/own_calls.h"
#include "kernels/redzones.h"
#include "process/util.h"
#include "process/stacks.h"
#include "process/stats.h"

#include <errno.h>
#include <pthread.h>

/* ret_t: the layer's error type; blocked: what a blocked call returns; missing: what a call
 * returns when the runtime lacks the symbol; resolve: a statement that resolves the layer's real
 * functions (once).  A lookup (HS_OP_LOOKUP: get-proc-address) hands out wrappers even when the
 * guard is held, since the runtime's own lookups run under wrapped calls. */
#define HS_CALL_OF(api_id, ...)                                                                                        \
    {                                                                                                                  \
        .api = api_id, .caller = (uintptr_t)__builtin_return_address(0), __VA_ARGS__                                   \
    }

/* The runtime's own call, its time kept apart under stats=1 (the *_ns kinds are hipshadow's
 * share of a call: stats.h). */
#define HS_RUNTIME_CALL(lhs, expr)                                                                                     \
    do {                                                                                                               \
        uint64_t c0_ = hs_stat_clock();                                                                                \
        lhs = expr;                                                                                                    \
        if (HS_UNLIKELY(c0_))                                                                                          \
            in_runtime_ += hs_order_stamp() - c0_;                                                                     \
    } while (0)
#define HS_TIME_KIND(op)                                                                                               \
    ((op) == HS_OP_LAUNCH                         ? HS_STAT_launch_ns                                                  \
     : (op) == HS_OP_COPY || (op) == HS_OP_MEMSET ? HS_STAT_copy_ns                                                    \
                                                  : HS_STAT_other_ns)

/* The calls an engine makes at every token (passthrough=): the rest keep the shadow map, the
 * streams and the events as they are, so that hipshadow stays consistent around them. */
static inline bool hs_passes_through(int op)
{
    return op == HS_OP_LAUNCH || op == HS_OP_COPY || op == HS_OP_MEMSET || op == HS_OP_SYNC ||
           op == HS_OP_EVENT_RECORD || op == HS_OP_STREAM_WAIT;
}

/* `call` is what a front-end's args may name (REDZONE, HOST_FN_ARGS); where they do not, the
 * compiler drops it.  quick_ is read field by field, never whole, so the fast path of a clean
 * copy never builds the 352-byte description. */
#define HS_WRAPPER(ret_t, name, params, args, api_id, blocked, missing, resolve, ...)                                  \
    HS_EXPORT ret_t name params                                                                                        \
    {                                                                                                                  \
        resolve;                                                                                                       \
        if (HS_UNLIKELY(!real_##name))                                                                                 \
            return missing;                                                                                            \
        const hs_call quick_ = {.api = api_id, __VA_ARGS__};                                                           \
        void *host_box_ = NULL; /* a host function's box, once hs_before made it (HOST_FN_ARGS) */                     \
        (void)host_box_;                                                                                               \
        if (HS_UNLIKELY(hs_passthrough_calls) && hs_passes_through(quick_.op)) {                                       \
            const hs_call call = HS_CALL_OF(api_id, __VA_ARGS__);                                                      \
            (void)call;                                                                                                \
            return real_##name args;                                                                                   \
        }                                                                                                              \
        if (!hs_enter()) {                                                                                             \
            const hs_call call = HS_CALL_OF(api_id, __VA_ARGS__);                                                      \
            (void)call;                                                                                                \
            ret_t r = real_##name args;                                                                                \
            if (quick_.op == HS_OP_LOOKUP && (int)r == 0)                                                              \
                hs_lookup_redirect(quick_.lookup_result);                                                              \
            return r;                                                                                                  \
        }                                                                                                              \
        const uint64_t timed_ = hs_stat_clock();                                                                       \
        uint64_t in_runtime_ = 0;                                                                                      \
        if (quick_.op == HS_OP_COPY) {                                                                                 \
            const hs_copy_args a_ = HS_COPY_ARGS(quick_);                                                              \
            hs_fast_copy fc_;                                                                                          \
            if (hs_fast_copy_clean(&a_, &fc_)) {                                                                       \
                const hs_call call = HS_CALL_OF(api_id, __VA_ARGS__);                                                  \
                (void)call;                                                                                            \
                if (fc_.accesses) /* their stack is captured once forwarded: cached by this call site */               \
                    hs_stack_entry((uintptr_t)__builtin_frame_address(0) + sizeof(void *));                            \
                ret_t r;                                                                                               \
                HS_RUNTIME_CALL(r, real_##name args);                                                                  \
                hs_own_forwarded(api_id, (int)r);                                                                      \
                if (HS_UNLIKELY(!hs_fast_copy_done(a_.api, &fc_, (int)r))) {                                           \
                    const hs_call refused_ = HS_CALL_OF(api_id, __VA_ARGS__);                                          \
                    int errno_ = *hs_errno();                                                                          \
                    r = (ret_t)hs_after_refused_fast(&refused_, 0, (int)r);                                            \
                    *hs_errno() = errno_;                                                                              \
                }                                                                                                      \
                hs_leave();                                                                                            \
                hs_stat_time(HS_STAT_copy_ns, timed_, in_runtime_);                                                    \
                return r;                                                                                              \
            }                                                                                                          \
        }                                                                                                              \
        if (quick_.op == HS_OP_LAUNCH) {                                                                               \
            const hs_call call = HS_CALL_OF(api_id, __VA_ARGS__);                                                      \
            int *const errno_at_ = hs_errno(); /* one read of its address */                                           \
            int errno_ = *errno_at_;                                                                                   \
            uint64_t seq_ = 0;                                                                                         \
            if (hs_fast_launch(&call, &seq_)) {                                                                        \
                *errno_at_ = errno_;                                                                                   \
                ret_t r;                                                                                               \
                HS_RUNTIME_CALL(r, real_##name args);                                                                  \
                errno_ = *errno_at_;                                                                                   \
                hs_own_forwarded(api_id, (int)r);                                                                      \
                r = (ret_t)hs_fast_launch_done(&call, seq_, (int)r);                                                   \
                hs_leave();                                                                                            \
                hs_stat_time(HS_STAT_launch_ns, timed_, in_runtime_);                                                  \
                *errno_at_ = errno_;                                                                                   \
                return r;                                                                                              \
            }                                                                                                          \
            *errno_at_ = errno_;                                                                                       \
        }                                                                                                              \
        const hs_call call = HS_CALL_OF(api_id, __VA_ARGS__);                                                          \
        /* the slot of this wrapper's return address: event stacks are cached by it (stacks.c) */                      \
        hs_stack_entry((uintptr_t)__builtin_frame_address(0) + sizeof(void *));                                        \
        int *const errno_at_ = hs_errno();                                                                             \
        int errno_ = *errno_at_; /* the program's errno: as the runtime's call leaves it, not hipshadow's */           \
        hs_call_state st;                                                                                              \
        hs_decision d_ = hs_before(&call, &st);                                                                        \
        host_box_ = st.host_box;                                                                                       \
        hs_own_end(); /* the program's call meets the runtime as hipshadow found it */                                 \
        *errno_at_ = errno_;                                                                                           \
        ret_t r;                                                                                                       \
        HS_RUNTIME_CALL(r, d_ == HS_FORWARD   ? real_##name args                                                       \
                           : d_ == HS_RESCUED ? (ret_t)st.rescued_result                                               \
                                              : blocked);                                                              \
        errno_ = *errno_at_;                                                                                           \
        if (d_ == HS_FORWARD)                                                                                          \
            hs_own_forwarded(api_id, (int)r);                                                                          \
        else if (d_ == HS_BLOCK)                                                                                       \
            hs_own_blocked(api_id, (int)r);                                                                            \
        if (call.op == HS_OP_LOOKUP && (int)r == 0)                                                                    \
            hs_lookup_redirect(call.lookup_result);                                                                    \
        if (HS_UNLIKELY(d_ == HS_FORWARD && hs_redzone_retry(&call, (int)r != 0))) {                                   \
            *errno_at_ = errno_;                                                                                       \
            HS_RUNTIME_CALL(r, real_##name args); /* the allocation with a redzone failed: again, without one */       \
            errno_ = *errno_at_;                                                                                       \
            hs_own_forwarded(api_id, (int)r);                                                                          \
        }                                                                                                              \
        r = (ret_t)hs_after(&call, &st, (int)r);                                                                       \
        hs_leave();                                                                                                    \
        hs_stat_time(HS_TIME_KIND(call.op), timed_, in_runtime_);                                                      \
        *errno_at_ = errno_;                                                                                           \
        return r;                                                                                                      \
    }

/* A wrapper an engine calls around every kernel, placed with the core's hot path (HS_HOT):
 * declared so before api.inc defines it. */
#define HS_HOT_WRAPPER(name) extern __typeof__(name) name HS_HOT;
/* A launch's wrapper: with the rest of the launch path (HS_HOT_PATH). */
#define HS_PATH_WRAPPER(name) extern __typeof__(name) name HS_HOT_PATH;

/* The bytes touched by `height` rows of `width` bytes, `pitch` apart. */
#define HS_EXTENT_2D(pitch, width, height) ((height) ? ((height)-1) * (pitch) + (width) : 0)
/* Pitched geometry, as the runtime validates it (its rules explain a refusal: runtime_rules.c). */
#define HS_PITCHED(dpitch, spitch, width_, rows)                                                                       \
    .width = (width_), .height = (rows), .dst_pitch = (dpitch), .src_pitch = (spitch)
/* A 2-D copy's description: the extents the range checks use, and its geometry.  A 2-D memset
 * names no source (its pitch 0). */
#define HS_COPY_2D(dpitch, spitch, width_, height_)                                                                    \
    .dst_extent = HS_EXTENT_2D(dpitch, width_, height_), .src_extent = HS_EXTENT_2D(spitch, width_, height_),          \
    HS_PITCHED(dpitch, spitch, width_, height_)
#define HS_MEMSET_2D(pitch, width_, height_)                                                                           \
    .dst_extent = HS_EXTENT_2D(pitch, width_, height_), HS_PITCHED(pitch, 0, width_, height_)

/* A device allocation's size as forwarded: with the redzone (redzones=N) at the outermost call. */
#define REDZONE(size) hs_redzone_padded(&call, size)

/* A host function's arguments as forwarded: hipshadow's trampoline and box when hs_before made
 * the box (the launch is modelled: host_box_), else the program's own function and data.  The
 * box is made there, not in the call's description, which the wrapper builds more than once. */
#define HOST_FN_ARGS(fn_type, fn, data)                                                                                \
    host_box_ ? (fn_type)hs_order_host_fn_trampoline : (fn), host_box_ ? host_box_ : (data)
/* The same for a stream callback (stream, status, data). */
#define STREAM_CALLBACK_ARGS(cb_type, cb, data)                                                                        \
    host_box_ ? (cb_type)hs_order_stream_callback_trampoline : (cb), host_box_ ? host_box_ : (data)

/* dlsym(RTLD_NEXT, name), or, when the runtime was dlopen'ed with RTLD_LOCAL (as Python
 * extensions do) and RTLD_NEXT cannot see it, the already-loaded library found by one of its
 * sonames.  *handle caches that library between calls.  NULL: this runtime lacks the symbol. */
void *hs_resolve(const char *name, const char *const *sonames, void **handle);

#endif
