/* A lock for short critical sections on the hot path, released with a plain store.
 *
 * A mutex's release is a locked instruction, and a locked instruction waits until every store
 * before it has reached the cache: a call that wrote a record into lines long out of the cache
 * waits for all of them at the unlock.  Released with a store, the writes drain while the call
 * goes on into the runtime.  Taking it is one exchange when it is free; a waiter spins a little,
 * then yields the processor, then sleeps, so a holder that was preempted is not starved.  Only
 * for sections that never block (no call into the runtime, no lock that may be held across one). */
#ifndef HS_SPIN_H
#define HS_SPIN_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

typedef struct hs_spin {
    atomic_bool held;
} hs_spin;

#define HS_SPIN_INIT                                                                                                   \
    {                                                                                                                  \
        false                                                                                                          \
    }

static inline void hs_spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline void hs_spin_init(hs_spin *l) { atomic_init(&l->held, false); }

static inline bool hs_spin_try(hs_spin *l)
{
    return !atomic_load_explicit(&l->held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->held, true, memory_order_acquire);
}

static inline void hs_spin_lock(hs_spin *l)
{
    if (__builtin_expect(!atomic_exchange_explicit(&l->held, true, memory_order_acquire), 1))
        return;
    for (unsigned spins = 0; !hs_spin_try(l); spins++) {
        if (spins < 64) {
            hs_spin_pause();
        } else if (spins < 1024) {
            sched_yield();
        } else { /* a holder that yielding does not let run (a real-time waiter on its core): sleep */
            struct timespec nap = {0, 50000};
            nanosleep(&nap, NULL);
        }
    }
}

static inline void hs_spin_unlock(hs_spin *l) { atomic_store_explicit(&l->held, false, memory_order_release); }

#endif
