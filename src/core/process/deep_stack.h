/* hipshadow's own stack, for its few deep paths (writing a report, creating its files) when the
 * calling thread was made with a small stack.  A program may run HIP calls on threads of 16 KiB
 * (PTHREAD_STACK_MIN) or 32 KiB; a report formats through path buffers of 4 KiB and stdio, and
 * would run off the end of such a stack.  Stack walks are not moved here (they must walk the
 * program's stack): stacks.c skips them when the room is short. */
#ifndef HS_DEEP_STACK_H
#define HS_DEEP_STACK_H

/* Runs fn(arg): directly when the thread has room left, else on hipshadow's own stack (one at a
 * time, under a lock), back on the caller's stack when it returns. */
void hs_run_deep(void (*fn)(void *), void *arg);
/* In a fork child: a parent thread may have held the lock. */
void hs_deep_stack_after_fork(void);

#endif
