/* The one path every wrapper takes: enter (guard), before (describe, check, decide),
 * forward (the front-end calls the real function), after (record, runtime-error), leave. */
#ifndef HS_CORE_H
#define HS_CORE_H

#include "call.h"
#include "check.h"
#include "policy.h"

typedef struct hs_call_state {
    hs_facts facts;
    hs_finding findings[HS_MAX_FINDINGS_PER_CALL];
    int n_findings;
    uint32_t stack;           /* captured only when something is reported */
    hs_span freed;            /* HS_OP_FREE: what was released before forwarding */
    bool released;
    hs_span allocated;        /* HS_OP_ALLOC: what was registered after the call */
    hs_decision decision;
    /* streams */
    hs_stream *stream;        /* the stream record the call works on (NULL: none or invalid) */
    hs_pending_op pending;    /* async copies/memsets: what becomes pending if forwarded */
    bool has_pending;
    hs_vclock sync_clock;     /* syncs and sync copies: what they wait for, taken at the call */
    /* post-mortem log */
    uint64_t start_ns;
    void *log_record;         /* the pending copy/memset record, patched after the call */
    uint32_t first_finding;
    /* fallback: the result of a copy hipshadow did itself (decision HS_RESCUED) */
    int rescued_result;
    bool fallback_used;
} hs_call_state;

/* False when the wrapper must forward untouched: re-entered from the runtime, tool disabled. */
bool hs_enter(void);
void hs_leave(void);
/* Wrapped calls checked so far (for the exit summary; other threads' last few may be missing). */
uint64_t hs_calls_seen(void);
hs_decision hs_before(const hs_call *call, hs_call_state *st);
/* Returns what the wrapper returns: `result`, or success when a fallback rescued the copy. */
int hs_after(const hs_call *call, hs_call_state *st, int result);

/* The tool's own failure: one warning, then every wrapper forwards untouched. */
void hs_disable(const char *why);
/* Runs once, from the constructor or the first wrapped call, whichever comes first. */
void hs_ensure_init(void);
const hs_options *hs_opts(void);

#endif
