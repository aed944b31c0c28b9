/* The stream and event registry: which handles exist, which were destroyed, and each live
 * stream's record (flags, capture state, the work pending on it; see ordering.h).  Handle
 * lookups are lock-free (span_index), so validating the stream of an async copy is one
 * binary search. */
#ifndef HS_STREAMS_H
#define HS_STREAMS_H

#include "shadow/span.h"
#include "process/spin.h"

#include <stdbool.h>

#include <pthread.h>
#include <stdatomic.h>

typedef enum hs_stream_state {
    HS_STREAM_OK = 0, /* live, or a built-in handle (null, per-thread) */
    HS_STREAM_DESTROYED,
    HS_STREAM_NEVER_CREATED,
} hs_stream_state;

enum { HS_VCLOCK_MAX = 32 };

/* What a stream's next operation is ordered after: for other streams, the last of their
 * operations that happens before it (sparse, sorted by stream index). */
typedef struct hs_vclock {
    uint32_t n;
    struct {
        uint32_t stream;
        uint64_t seq;
    } e[HS_VCLOCK_MAX];
} hs_vclock;

/* An async operation enqueued and not yet known to be complete. */
typedef struct hs_pending_op {
    uint64_t seq;
    uint64_t stamp;             /* hs_order_stamp() when it was enqueued (hs_stamp_ns: its time) */
    uintptr_t host_lo, host_hi; /* the host range it reads or writes (hi == lo: none) */
    bool host_write;
    uint8_t dir;
    uint16_t api;
    uint32_t thread;
    uint64_t alloc_ids[2]; /* device allocations it uses (0: none) */
    uint64_t bytes;
} hs_pending_op;

typedef struct hs_stream {
    _Atomic(uintptr_t) handle; /* atomic: a reused record gets a new one while others read */
    uint32_t index;            /* 0 is the legacy null stream */
    atomic_bool blocking;      /* synchronises with the legacy null stream (atomic: as handle) */
    atomic_bool capturing;
    int capture_mode;
    hs_spin lock;              /* this stream's own: there is no global one (short sections only: spin.h) */
    uint64_t seq;              /* operations enqueued */
    atomic_uint_fast64_t done; /* operations known complete */
    hs_vclock vc;
    hs_pending_op *pending; /* ring, oldest first */
    uint32_t pending_cap, pending_head, pending_n;
    atomic_uint pending_host; /* pending ops with a host range: 0 lets others skip this stream */
    /* a range holding every pending op's host range (empty when none is left): others skip this
     * stream, lock-free, when their host range is outside it.  A cache line of its own, written
     * only when the range changes: every other stream's copies read it. */
    _Alignas(64) _Atomic(uintptr_t) pending_host_lo;
    _Atomic(uintptr_t) pending_host_hi;
    _Alignas(64) bool overflowed;       /* stopped tracking: pending_cap reached without a sync */
    bool retired;                       /* destroyed, or its thread exited: reused once its work is done */
    _Atomic(struct hs_ledger *) ledger; /* its recent launches (ledger.c), made at the first */
    atomic_bool no_ledger;              /* ledger_max was spent before its first launch: none is kept */
} hs_stream;

typedef struct hs_gpu_event {
    uintptr_t handle;
    pthread_mutex_t lock;
    bool recorded;
    uint32_t stream; /* where it was last recorded */
    uint64_t seq;    /* that stream's last operation before the record */
    hs_vclock vc;    /* everything the record is ordered after */
} hs_gpu_event;

/* max_streams (streams_max): stream records at once, the legacy null stream's and per-thread
 * streams' included; a retired record is reused by a new stream once its work is known complete.
 * A stream made when none is free is live and valid but has no record: hs_stream_get gives NULL
 * (no ordering, as for streams the runtime made unseen).  As many destroyed handles are
 * remembered (the oldest forgotten first).  max_events (events_max): the same for events.  Each
 * cap, once reached, is said once on stderr. */
int hs_streams_init(const uintptr_t *builtin, int n_builtin, uintptr_t per_thread_handle, uintptr_t legacy_handle,
                    uint32_t max_streams, uint32_t max_events);

/* device: the one current at creation, which the stream works for (-1: unknown). */
void hs_stream_created(uintptr_t handle, unsigned flags_nonblocking, int device, uint32_t stack, uint32_t thread,
                       uint64_t now_ns);
/* Marks the handle destroyed; returns its state before (so destroying twice is caught). */
hs_stream_state hs_stream_destroyed(uintptr_t handle, uint32_t stack, uint32_t thread, uint64_t now_ns, hs_span *info);
/* Lock-free. info is filled for live and destroyed handles. */
hs_stream_state hs_stream_state_of(uintptr_t handle, hs_span *info);

/* The record behind a handle (null and per-thread streams included); NULL if not live. */
hs_stream *hs_stream_get(uintptr_t handle);
/* The same, from what hs_stream_state_of just answered for handle (info): the live record it
 * found names the stream, so the index is not searched twice in one call. */
hs_stream *hs_stream_of_state(uintptr_t handle, const hs_span *info);
/* A fast path's lookup: the record of the null stream, of this thread's per-thread stream once
 * made, or of a live stream the program created; NULL for anything else (the full path decides). */
hs_stream *hs_stream_live(uintptr_t handle);
hs_stream *hs_stream_by_index(uint32_t index);
uint32_t hs_stream_count(void); /* indices are 0 .. count-1 */
hs_stream *hs_stream_null(void);
/* Records besides the null stream's that are blocking (retired ones included until reused): none,
 * and what the legacy stream orders itself with is itself alone, without a scan of every stream. */
extern atomic_uint hs_streams_blocking;

void hs_event_created(uintptr_t handle, int device);
void hs_event_destroyed(uintptr_t handle);
hs_gpu_event *hs_event_get(uintptr_t handle);
/* Lock-free: the device a live stream or event was created for; -1 when unknown (a handle never
 * seen, a device not known at creation).  A built-in stream (null, per-thread) is the current
 * device's: `current`. */
int hs_stream_device(uintptr_t handle, int current);
int hs_event_device(uintptr_t handle);

void hs_streams_after_fork(void);

#endif
