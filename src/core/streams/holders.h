/* Which streams hold something waiting (a launch's deferred accesses in its ledger, a copy's in
 * its stream's ring): a flag in each holder, changed under its stream's lock, and a count over
 * all of them, so that a call asks "does a stream besides mine hold any?" with one or two loads. */
#ifndef HS_HOLDERS_H
#define HS_HOLDERS_H

#include <stdatomic.h>
#include <stdbool.h>

/* The holder's stream lock held: its flag set or cleared, the count kept with it. */
static inline void hs_holder_set(atomic_uint *count, atomic_bool *flag, bool on)
{
    if (atomic_load_explicit(flag, memory_order_relaxed) == on)
        return;
    atomic_store_explicit(flag, on, memory_order_relaxed);
    if (on)
        atomic_fetch_add_explicit(count, 1, memory_order_release);
    else
        atomic_fetch_sub_explicit(count, 1, memory_order_release);
}

/* Lock-free: whether a holder other than `mine` (NULL: none of the caller's) has its flag set. */
static inline bool hs_holders_besides(atomic_uint *count, const atomic_bool *mine)
{
    unsigned n = atomic_load_explicit(count, memory_order_acquire);
    return n > (mine && atomic_load_explicit(mine, memory_order_relaxed) ? 1u : 0u);
}

#endif
