/* hipshadow's own stack (see deep_stack.h): a switch with swapcontext, made only when the thread
 * has less than DEEP_ROOM left, so the common thread (8 MiB) never pays its system calls. */
#include "process/deep_stack.h"
#include "process/exit_lock.h"
#include "process/util.h"

#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

enum {
    DEEP_ROOM = 64 << 10,   /* a report's worst case, with margin */
    DEEP_STACK = 256 << 10, /* hipshadow's own, mapped at the first switch */
    GUARD = 4096,
};

static pthread_mutex_t deep_lock = PTHREAD_MUTEX_INITIALIZER;
static char *deep_stack; /* NULL: not mapped yet; MAP_FAILED: could not be */
static ucontext_t deep_ctx, caller_ctx;
static void (*deep_fn)(void *);
static void *deep_arg;

static void deep_entry(void) { deep_fn(deep_arg); } /* returning resumes caller_ctx (uc_link) */

void hs_run_deep(void (*fn)(void *), void *arg)
{
    /* This thread already holds the deep stack: a signal handler (exit() from one) that interrupted
     * it there.  Waiting for the lock would wait for itself; it runs where it is. */
    if (hs_stack_room() >= DEEP_ROOM || hs_exit_lock_held_here(HS_EXIT_LOCK_DEEP)) {
        fn(arg);
        return;
    }
    hs_exit_lock_take(&deep_lock, HS_EXIT_LOCK_DEEP);
    if (!deep_stack) {
        deep_stack = mmap(NULL, GUARD + DEEP_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                          -1, 0);
        if (deep_stack != MAP_FAILED)
            mprotect(deep_stack, GUARD, PROT_NONE); /* overflowing it faults, not corrupts */
    }
    if (deep_stack == MAP_FAILED || getcontext(&deep_ctx) != 0) {
        hs_exit_lock_drop(&deep_lock, HS_EXIT_LOCK_DEEP);
        fn(arg); /* no other stack to be had: as before */
        return;
    }
    deep_ctx.uc_stack.ss_sp = deep_stack + GUARD;
    deep_ctx.uc_stack.ss_size = DEEP_STACK;
    deep_ctx.uc_link = &caller_ctx;
    makecontext(&deep_ctx, deep_entry, 0);
    deep_fn = fn;
    deep_arg = arg;
    swapcontext(&caller_ctx, &deep_ctx);
    hs_exit_lock_drop(&deep_lock, HS_EXIT_LOCK_DEEP);
}

void hs_deep_stack_after_fork(void) { pthread_mutex_init(&deep_lock, NULL); }
