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
    X(other) X(launch_memo)                                                                                   \
    X(own_save) X(own_query) X(stack_walk) X(launch_word) X(maps_change) X(maps_read)                         \
    X(block_alloc) X(block_free_requested) X(block_free_completed) X(block_segment) X(block_other)            \
    X(access_add) X(access_wait) X(access_late_asked) X(access_late_full)
// clang-format on

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

/* The exit line (stats=1 only). */
void hs_stats_print(void);

#endif
