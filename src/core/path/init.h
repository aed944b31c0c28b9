/* Lifecycle and process-wide state: start, disable, exit and fork, and the few globals every
 * wrapper reads (ready, disabled, used, paused, the count of checked calls). */
#ifndef HS_INIT_H
#define HS_INIT_H

#include "process/options.h"
#include "process/util.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

extern bool hs_ready;             /* set once everything is initialised */
extern atomic_bool hs_disabled;   /* the tool's own failure: wrappers forward untouched */
extern atomic_bool hs_used;       /* a wrapped call happened: the exit summary is worth printing */
extern atomic_int hs_pause_depth; /* > 0: copies and memsets are forwarded unchecked */
extern bool hs_passthrough_calls; /* passthrough=calls|all: a call of a kind hs_passes_through forwarded untouched */
/* This thread's count of checked calls (NULL before its first): a counter of its own in a table
 * that the exit SUMMARY adds up, so threads still running at exit are counted too. */
extern HS_TLS _Atomic(uint64_t) *hs_my_calls;
_Atomic(uint64_t) *hs_count_thread(void);

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

/* A checked call: counted in this thread's own counter (no shared cache line per call). */
static inline void hs_count_call(void)
{
    if (HS_UNLIKELY(!atomic_load_explicit(&hs_used, memory_order_relaxed)))
        hs_first_call();
    _Atomic(uint64_t) *n = hs_my_calls;
    if (HS_UNLIKELY(!n))
        n = hs_count_thread();
    /* this thread is its only writer: a plain add, no locked instruction */
    atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1, memory_order_relaxed);
}

static inline bool hs_paused(void) { return atomic_load_explicit(&hs_pause_depth, memory_order_relaxed) > 0; }
void hs_pause_push(void);
void hs_pause_pop(void);

#endif
