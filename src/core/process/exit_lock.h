/* A lock that knows whether this thread holds it.  A signal can land while a thread holds one of
 * the locks a report needs, and a program's handler may call exit(): the exit SUMMARY and the
 * leak walk then run on that same thread, and waiting for the lock would wait forever.  Each
 * thread keeps a mark per lock, so its own later turns see "held here" and take another way (the
 * SUMMARY straight to stderr, a stack left out) instead of waiting.
 *
 * The mark is set before the lock is taken: a signal can land once the lock is held and before
 * the next instruction (TSan delivers signals as its lock interceptor returns), and a mark set
 * after would miss that window.  A signal landing just before the lock is held sees the mark too,
 * which costs that one turn its output and never hangs. */
#ifndef HS_EXIT_LOCK_H
#define HS_EXIT_LOCK_H

#include "process/util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    HS_EXIT_LOCK_REPORT, /* findings/report.c: the text report and findings= */
    HS_EXIT_LOCK_DEEP,   /* process/deep_stack.c: hipshadow's own stack */
    HS_EXIT_LOCK_DEPOT,  /* process/stacks.c: the stack depot */
} hs_exit_lock;

extern HS_TLS uint32_t hs_exit_locks_mine; /* bit per hs_exit_lock: held or being taken here */

static inline bool hs_exit_lock_held_here(hs_exit_lock which) { return hs_exit_locks_mine & (1u << which); }

static inline void hs_exit_lock_take(pthread_mutex_t *m, hs_exit_lock which)
{
    hs_exit_locks_mine |= 1u << which;
    pthread_mutex_lock(m);
}

/* As hs_exit_lock_take, waiting until `until` (CLOCK_REALTIME) at most; false: not taken. */
static inline bool hs_exit_lock_take_until(pthread_mutex_t *m, hs_exit_lock which, const struct timespec *until)
{
    hs_exit_locks_mine |= 1u << which;
    if (pthread_mutex_timedlock(m, until) == 0)
        return true;
    hs_exit_locks_mine &= ~(1u << which);
    return false;
}

static inline void hs_exit_lock_drop(pthread_mutex_t *m, hs_exit_lock which)
{
    pthread_mutex_unlock(m);
    hs_exit_locks_mine &= ~(1u << which);
}

#endif
