/* stats=1: how many events of each kind the process made, printed at exit as one line
 * ("hipshadow: STATS launch=N copy=N ..."), so an end-to-end ratio can be explained as event
 * counts times per-event costs (tests/gpu/bench_engines.py reads it).  Off (the default), each
 * counting point is one predictable branch on a flag read once. */
#ifndef HS_STATS_H
#define HS_STATS_H

#include "process/util.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

// clang-format off
#define HS_STAT_KINDS(X)                                                                                     \
    X(launch) X(launch_fast) X(copy) X(copy_fast) X(memset) X(alloc) X(free) X(sync) X(event) X(stream)       \
    X(other) X(launch_memo) X(copy_async_fast)                                                                \
    X(own_save) X(own_query) X(stack_walk) X(launch_word) X(maps_change) X(maps_read)                         \
    X(block_alloc) X(block_free_requested) X(block_free_completed) X(block_segment) X(block_other)            \
    X(access_add) X(access_wait) X(access_late_asked) X(access_late_full)                                   \
    X(launch_ns) X(copy_ns) X(block_ns) X(other_ns)
// clang-format on

/* The *_ns kinds: the time spent in hipshadow's own code, by the kind of call, in the engine
 * itself (the runtime's own call left out): kept in timestamp-counter ticks, printed in ns. */
#define HS_STAT_IS_TIME(k) ((k) >= HS_STAT_launch_ns)

typedef enum hs_stat {
#define HS_STAT_ENUM(name) HS_STAT_##name,
    HS_STAT_KINDS(HS_STAT_ENUM)
#undef HS_STAT_ENUM
        HS_STAT_COUNT
} hs_stat;

extern bool hs_stats_on;
extern _Atomic(uint64_t) hs_stats[HS_STAT_COUNT];

static inline void hs_stat_add(hs_stat k, uint64_t n)
{
    if (HS_UNLIKELY(hs_stats_on))
        atomic_fetch_add_explicit(&hs_stats[k], n, memory_order_relaxed);
}

static inline void hs_stat_count(hs_stat k) { hs_stat_add(k, 1); }

/* stats=1: a timestamp to time hipshadow's share of a call by (0 when stats are off). */
static inline uint64_t hs_stat_clock(void) { return HS_UNLIKELY(hs_stats_on) ? hs_order_stamp() : 0; }
/* The ticks since `since` (hs_stat_clock at the call's start), less `runtime` (the ticks the
 * runtime's own call took), added to the time kind k. */
static inline void hs_stat_time(hs_stat k, uint64_t since, uint64_t runtime)
{
    if (HS_UNLIKELY(since != 0)) {
        uint64_t all = hs_order_stamp() - since;
        hs_stat_add(k, all > runtime ? all - runtime : 0);
    }
}

/* The line printed at exit, or now (hipshadow_print_stats): stats=1 only; false when off. */
bool hs_stats_print(void);

#endif
