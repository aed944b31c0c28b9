/* The access history that stream-race and uninitialized-read are checked against.  For each
 * allocation: its recent accesses (stream, that stream's operation number, byte range, read or
 * write) and, with initcheck=1, the byte ranges written so far.
 *
 * Nothing is kept until it can matter: races need two streams that nothing orders (a second
 * stream made or used, or a non-blocking one), initcheck needs initcheck=1.  Until then
 * hs_access_tracking() is false and the path does not come here: a program with one stream
 * pays one relaxed load per copy and launch.
 *
 * Bounded: access_history accesses per allocation (the oldest forgotten), 32 written ranges per
 * allocation (past them it counts as written), access_max allocations in all (later ones are
 * not tracked); each cap is said once.  Sharded locks: no global lock. */
#ifndef HS_ACCESS_H
#define HS_ACCESS_H

#include "streams/streams.h"

#include <stdatomic.h>

/* One access of one allocation by one call. */
typedef struct hs_access {
    uint64_t lo, hi;    /* offsets from the allocation's base */
    uint64_t seq;       /* its stream's operation number; 0: synchronous (complete when it returned) */
    uint64_t stamp;     /* hs_order_stamp() at the call (hs_stamp_ns: its time): no clock read a call */
    uint64_t bytes;     /* what the call asked for */
    uintptr_t stream;   /* the stream's handle */
    uintptr_t caller;   /* the program's return address */
    const char *kernel; /* a launch: the kernel's name (NULL: not a launch, or unknown) */
    uint32_t stream_index;
    uint32_t stack; /* stack id (stacks.h); 0: none */
    uint32_t thread;
    uint16_t api;
    uint8_t op;  /* the call's hs_op (copy, memset, launch) */
    uint8_t arg; /* a launch: the argument's index */
    bool write;
    bool assumed; /* a kernel argument whose access the platform does not say: taken for a write */
    bool launch;  /* by a kernel */
    bool open;    /* a kernel's interior pointer of unknown extent (see hs_access_find_first_race) */
} hs_access;

/* A stream-race: this call's access and the earlier one on another stream that nothing orders
 * before it. */
typedef struct hs_race {
    hs_access mine, other;
    uint64_t alloc_id;
    uintptr_t alloc_base;
    uint64_t alloc_size;
    uint64_t lo, hi; /* the overlap, offsets from alloc_base */
    uint8_t side;    /* the call's side (hs_side_id) that races */
} hs_race;

enum { HS_WRITTEN_MAX = 32, HS_GAPS_MAX = 4 };

/* What initcheck found: the ranges of [lo, hi) never written (gaps, up to HS_GAPS_MAX, n_gaps
 * counts all), the ranges written, and the last write not by a kernel. */
typedef struct hs_uninit {
    uint64_t alloc_id;
    uintptr_t alloc_base;
    uint64_t alloc_size;
    uint64_t lo, hi; /* the range read */
    uint32_t n_gaps, n_written;
    struct {
        uint64_t lo, hi;
    } gaps[HS_GAPS_MAX], written[HS_GAPS_MAX];
    bool has_last_write;
    hs_access last_write;
    uint8_t side; /* the call's side (hs_side_id) that reads */
} hs_uninit;

extern atomic_bool hs_access_live;
static inline bool hs_access_tracking(void) { return atomic_load_explicit(&hs_access_live, memory_order_relaxed); }
bool hs_access_initcheck(void);
bool hs_access_races(void); /* two streams nothing orders are in play: accesses are remembered */

void hs_access_init(uint32_t history, uint32_t max, bool initcheck, bool races);
/* A stream was made (created: true) or used by a copy, memset or launch: races become possible
 * once two streams that nothing orders are in play. */
void hs_access_stream_seen(const hs_stream *s, bool created);

/* An earlier access of allocation `id` on another stream that overlaps a, one of them writing,
 * and that the clock of a's stream (what its work is ordered after) does not order before it.
 * An open access (a kernel given a pointer inside an allocation, not its base, that no PyTorch
 * block or region holds: a pool's sub-buffer, whose end nobody says) has a start but no known
 * end: it overlaps only an open access at the same address and an exact one (a copy or memset)
 * containing its address, so kernels on disjoint sub-buffers of one pool are no race, and a copy
 * into the sub-buffer a kernel reads still is.  A pair of call sites is reported once: a pair
 * already found is not found again.
 * Of one call's accesses[0..n) (allocation ids[i], all on `stream`): the index of the first that
 * has such a race, *out filled but for alloc_base and alloc_size, or -1.  *clock gets stream's
 * clock only when some allocation holds another stream's access (else it is not taken). */
int hs_access_find_first_race(const uint64_t *ids, const hs_access *const *accesses, int n, hs_stream *stream,
                              hs_vclock *clock, hs_race *out);
/* Whether a call on the stream numbered stream_index could race with what the histories hold:
 * false when every access they hold is that stream's own (lock-free). */
bool hs_access_may_race(uint32_t stream_index);
/* initcheck: [lo, hi) of allocation `id` holds bytes never written.  kernel: a kernel reads it,
 * and only a partly written allocation, written by no kernel, is a finding (once per
 * allocation).  open: a kernel's open access (see hs_access_find_first_race), whose end is not known:
 * only its first byte is checked, and the gap named runs from it to the next written byte (or
 * hi).  false when the allocation is not tracked. */
bool hs_access_find_unwritten(uint64_t id, uintptr_t base, uint64_t size, uint64_t lo, uint64_t hi, bool kernel,
                              bool open, hs_uninit *out);
/* Remember accesses[0..n), each of allocation ids[i] (asynchronous: in the history; writes: in
 * the written ranges too). */
void hs_access_add_all(const uint64_t *ids, const hs_access *const *accesses, int n);
/* The allocation is gone: its record too. */
void hs_access_forget(uint64_t id);
/* initcheck: [lo, hi) of allocation id holds no data any more (a PyTorch block handed out anew). */
void hs_access_unwrite(uint64_t id, uint64_t lo, uint64_t hi);

void hs_access_after_fork(void);

#endif
