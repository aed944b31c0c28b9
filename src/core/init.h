/* Lifecycle and process-wide state: start, disable, exit and fork, and the few globals every
 * wrapper reads (ready, disabled, used, paused, the count of checked calls). */
#ifndef HS_INIT_H
#define HS_INIT_H

#include "options.h"
#include "util.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

extern bool hs_ready;                    /* set once everything is initialised */
extern atomic_bool hs_disabled;          /* the tool's own failure: wrappers forward untouched */
extern atomic_bool hs_used;              /* a wrapped call happened: the exit summary is worth printing */
extern atomic_int hs_pause_depth;        /* > 0: copies and memsets are forwarded unchecked */
extern atomic_uint_fast64_t hs_checked_calls;
extern HS_TLS unsigned hs_calls_here;    /* this thread's calls not yet added to hs_checked_calls */
extern HS_TLS bool hs_thread_counted;    /* its remainder is added when the thread exits */
void hs_count_thread(void);

/* Runs once, from the constructor or the first wrapped call, whichever comes first. */
void hs_ensure_init(void);
/* The tool's own failure: one warning, then every wrapper forwards untouched. */
void hs_disable(const char *why);
const hs_options *hs_opts(void);

static inline bool hs_tool_active(void)
{
    return hs_ready && !atomic_load_explicit(&hs_disabled, memory_order_relaxed);
}

/* This process's first wrapped call: it makes its files (the post-mortem log) now. */
void hs_first_call(void);

/* A checked call: counted per thread, added up in batches (no shared cache line per call). */
static inline void hs_count_call(void)
{
    if (HS_UNLIKELY(!atomic_load_explicit(&hs_used, memory_order_relaxed)))
        hs_first_call();
    if (HS_UNLIKELY(++hs_calls_here == 256)) {
        atomic_fetch_add_explicit(&hs_checked_calls, hs_calls_here, memory_order_relaxed);
        hs_calls_here = 0;
    } else if (HS_UNLIKELY(!hs_thread_counted)) {
        hs_count_thread();
    }
}

static inline bool hs_paused(void) { return atomic_load_explicit(&hs_pause_depth, memory_order_relaxed) > 0; }
void hs_pause_push(void);
void hs_pause_pop(void);

#endif
