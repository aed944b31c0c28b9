/* The happens-before model of streams: what async work is pending where, and what is ordered
 * after what.  Each stream numbers its operations; a vector clock per stream says which
 * operations of other streams its next one is ordered after (stream order, the legacy null
 * stream, events waited on).  Synchronisation marks operations complete.  Two operations
 * conflict only if neither is complete and neither is ordered before the other. */
#ifndef HS_ORDERING_H
#define HS_ORDERING_H

#include "streams/streams.h"

typedef struct hs_conflict {
    bool found;
    hs_pending_op op; /* the other operation */
    uintptr_t stream; /* its stream's handle */
} hs_conflict;

/* Before an async operation on s is forwarded: a pending operation on another stream that
 * touches an overlapping host range (one of them writing) and is not ordered before it. */
void hs_order_find_overlap(hs_stream *s, const hs_pending_op *op, hs_conflict *overlap);
/* Operation seq of the stream with that index happens before an operation whose stream is
 * ordered after `clock` (an event waited on, the legacy stream), or is known complete. */
bool hs_order_before(uint32_t stream, uint64_t seq, const hs_vclock *clock);
/* The operation was forwarded: it is pending on s from now on (not while s is captured). */
void hs_order_append(hs_stream *s, hs_pending_op *op);
/* Work that touches no host range (a kernel): it only takes the stream's next operation number,
 * which says when it is known complete.  0 while s is captured. */
uint64_t hs_order_enqueue(hs_stream *s);
/* hs_order_enqueue, and then, while the stream's lock is still held, record(s, seq, arg) unless
 * the stream is being captured (0 is returned): what is kept in stream order (the launch ledger)
 * takes no lock of its own. */
uint64_t hs_order_enqueue_recorded(hs_stream *s, void (*record)(hs_stream *s, uint64_t seq, void *arg), void *arg);

/* Free-while-pending: a pending operation, on a stream other than `freeing` (NULL: any stream,
 * for host frees that happen now), that uses allocation `alloc_id` or the host range
 * [host_lo, host_hi) and is not ordered before the free. */
void hs_order_find_user(hs_stream *freeing, uint64_t alloc_id, uintptr_t host_lo, uintptr_t host_hi, hs_conflict *out);

/* What a synchronisation of s waits for: its operations so far and, through its clock,
 * everything they were ordered after.  Taken before the call... */
void hs_order_snapshot(hs_stream *s, hs_vclock *out);
/* ...and applied when it succeeded (stream synchronize, query success, sync copy). */
void hs_order_complete_clock(const hs_vclock *clock);
void hs_order_complete(hs_stream *s, uint64_t upto);
/* How many times a stream's completed work advanced, in all: unchanged, no access became done. */
uint64_t hs_order_completions(void);
/* A synchronous operation on the legacy null stream: it and every blocking stream drained. */
void hs_order_complete_legacy(void);
void hs_order_complete_device(void);
/* Lock-free: a synchronous operation on the legacy null stream would find nothing to complete
 * (no work pending on it or on a blocking stream; on any stream once it waited for an event),
 * so it needs no snapshot.  false, too, past 64 streams. */
bool hs_order_legacy_idle(void);

void hs_order_event_record(hs_gpu_event *e, hs_stream *s);
void hs_order_stream_wait(hs_stream *s, hs_gpu_event *e);
void hs_order_event_complete(hs_gpu_event *e);

/* Host functions run in stream order (hipLaunchHostFunc, cudaLaunchHostFunc, cuLaunchHostFunc),
 * and so do stream callbacks (hipStreamAddCallback, cudaStreamAddCallback, cuStreamAddCallback):
 * when one runs, the work before it on its stream is complete.  A box carries the program's
 * function and data to hipshadow's trampoline, which says so, then calls them.  The box is NULL
 * when memory runs out: then the program's own function is passed on unchanged. */
typedef void (*hs_host_fn)(void *);
/* A stream callback: (stream, status, data).  Each runtime's stream is a pointer and its status
 * an enum, so one trampoline serves hipStreamCallback_t, cudaStreamCallback_t and CUstreamCallback. */
typedef void (*hs_stream_callback)(void *, int, void *);
/* The box of a host function (fn) or stream callback (cb) that took operation number seq on its
 * stream, made before it is forwarded. */
void *hs_order_host_fn_box(uintptr_t stream, uint64_t seq, hs_host_fn fn, hs_stream_callback cb, void *data);
void hs_order_host_fn_trampoline(void *box);
/* A box the runtime refused (or never got): it will not run.  NULL: nothing. */
void hs_order_host_fn_box_discard(void *box);
void hs_order_stream_callback_trampoline(void *stream, int status, void *box);

/* Capture: streams being captured, and how many (for checks of legacy-stream syncs). */
void hs_order_capture(hs_stream *s, bool on, int mode);
unsigned hs_order_capturing_streams(void);

#endif
