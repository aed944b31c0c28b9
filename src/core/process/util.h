/* Small helpers shared by the core: clocks, thread ids, a bounded text builder. */
#ifndef HS_UTIL_H
#define HS_UTIL_H

#include <signal.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define HS_EXPORT __attribute__((visibility("default")))
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_TLS __thread __attribute__((tls_model("initial-exec")))
/* The code of a clean launch, copy, sync and block event: placed together (.text.hot), so that
 * an engine's launch, which runs between the runtime's own code, touches eleven pages of
 * hipshadow's code instead of eighteen spread over the library (each a TLB miss, cold);
 * tests/check_hot_placement.py keeps it so.  Each starts a cache line: the lines a launch
 * executes (cold, between the runtime's own code) then no longer move by up to ten with where
 * a change anywhere else in the library leaves a function's first byte. */
#define HS_HOT __attribute__((hot, aligned(64)))
/* The functions every launch and every PyTorch block event runs, apart from the rest of
 * .text.hot: the linker's default script places .text.sorted.* sections right after it, so
 * these lie together on as few pages as their size fills (an engine's own work between two
 * calls can leave each page hipshadow touches out of the address-translation caches: a page walk
 * each).  tools/bench_pages.py counts the pages; tests/check_hot_placement.py keeps them together. */
#define HS_HOT_PATH __attribute__((hot, aligned(64), section(".text.sorted.hs_path.1")))
/* A PyTorch block event's own functions, right after the launch's: a launch without PyTorch
 * does not have them between its own. */
#define HS_HOT_BLOCK_PATH __attribute__((hot, aligned(64), section(".text.sorted.hs_path.2")))
/* A small function of the launch path that more than one path calls: inlined into each (across
 * files, by link-time optimisation) rather than called, as it was while it had one caller. */
#define HS_INLINE_HOT __attribute__((hot, always_inline)) inline
/* The small state that code reads at every launch (flags, options, the real functions): kept
 * together in a few lines of one page (its section starts a page: process/hot_data.ld), not a
 * page each among the library's large tables. */
#define HS_HOT_DATA __attribute__((section(".hs_hot_data")))

uint64_t hs_now_ns(void);              /* CLOCK_REALTIME, for records that are compared across processes */
uint64_t hs_coarse_ns(void);           /* the same clock at a few ms resolution, for the hot path's ages */
uint64_t hs_coarse_monotonic_ns(void); /* a few ms resolution, never steps back: for rate limits */
uint64_t hs_order_stamp(void);         /* a cheap, monotonic stamp: which of two events came first */
/* A stamp's time on hs_coarse_ns's clock, worked out when it is read (a launch records no clock
 * of its own): the stamp's distance from the one taken at hs_start_ns, at the rate the two clocks
 * have advanced since then. */
uint64_t hs_stamp_ns(uint64_t stamp);
double hs_ns_per_stamp(void); /* the stamps' rate since hs_start_ns (1 where they are ns already) */
uint32_t hs_thread_id(void);  /* kernel tid, cached per thread */
uint64_t hs_start_ns(void);   /* when hipshadow started in this process */
void hs_thread_id_after_fork(void);
/* This thread's errno by its address, asked of the C library once: `errno` itself is a call
 * into it (a page of its code) at every use, and every wrapper keeps the program's errno. */
extern HS_TLS int *hs_errno_at;
static inline int *hs_errno(void)
{
    int *at = hs_errno_at;
    return HS_LIKELY(at != NULL) ? at : (hs_errno_at = &errno);
}
/* The fork gate: code that takes the dynamic loader's or libunwind's locks (stack walks,
 * dl_iterate_phdr) runs inside it, and fork waits (pthread_atfork prepare) until no thread is
 * inside.  glibc does not reset the lock dl_iterate_phdr takes in a fork child: a fork while
 * another thread walked a stack left the child hung at its first stack capture.  Inside, the
 * asynchronous signals are held, as for the loader's calls below (that lock is recursive too).
 * Re-entrant per thread. */
void hs_fork_gate_enter(void);
void hs_fork_gate_leave(void);
void hs_fork_gate_close(void); /* atfork prepare */
void hs_fork_gate_open(void);  /* atfork parent */
void hs_fork_gate_reset(void); /* atfork child */
/* The loader's lock (dladdr, dlopen and dlsym take it) is a recursive mutex, and a signal that
 * lands inside its lock or unlock leaves it held but not known as this thread's: an exit() from
 * the program's handler then waits for it in _dl_fini for ever.  hipshadow's own calls into the
 * loader run with the asynchronous signals held; they are delivered as the call returns. */
void hs_loader_signals_hold(sigset_t *saved);
void hs_loader_signals_release(const sigset_t *saved);
/* getenv, also from a program's .preinit_array, which runs before the C library sets environ
 * (getenv finds nothing then): the initial environment is read from /proc/self/environ. */
const char *hs_getenv(const char *name);

/* printf into buf[*len..cap): never past cap (a full buffer keeps its last byte for a NUL), no
 * allocation; *len grows by what fitted. */
void hs_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* write() until all of buf is written, again after a signal; what was written, or -1. */
ssize_t hs_write_all(int fd, const char *buf, size_t len);
/* One message to the program's standard error (whatever descriptor 2 is now), for hipshadow's
 * warnings and notes: formatted into a 1.5 KiB buffer (a longer one is cut, ending "..."), one
 * write, errno kept.  Not fprintf(stderr): stderr is unbuffered, and glibc then formats through
 * an 8 KiB buffer on the stack, which a thread with a small stack (16 KiB: PTHREAD_STACK_MIN)
 * does not have. */
void hs_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Bytes of stack left below the caller on this thread; SIZE_MAX on the main thread (its stack
 * grows on demand) or when the bounds cannot be read.  For the few deep paths (a stack walk, the
 * loader) that a thread made with a small stack cannot afford. */
size_t hs_stack_room(void);
/* For longer output to standard error (reports, the options' help): a stdio stream onto
 * descriptor 2 with a buffer of its own, so formatting takes no 8 KiB of stack.  Its users
 * fflush it at the end of each piece.  stderr itself if the stream cannot be made. */
FILE *hs_stderr_stream(void);

#endif
