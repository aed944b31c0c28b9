#define _GNU_SOURCE /* fopencookie, syscall */
#include "process/util.h"

#include <errno.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static HS_TLS uint32_t cached_tid;
static uint64_t started_ns;

uint64_t hs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The C library's clock_gettime, by a pointer kept with the per-call flags: called through the
 * PLT, every block event would read its slot on a page of its own (the GOT's last).  Volatile,
 * so the compiler does not turn the call back into a direct one. */
HS_HOT_DATA static int (*volatile coarse_clock)(clockid_t, struct timespec *) = clock_gettime;

HS_HOT_BLOCK_PATH uint64_t hs_coarse_ns(void)
{
    struct timespec ts;
    coarse_clock(CLOCK_REALTIME_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

HS_TLS int *hs_errno_at;

uint64_t hs_coarse_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t hs_order_stamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc(); /* invariant TSC: ordered across cores, a few cycles */
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

/* The stamp and the coarse clock at hs_start_ns: what hs_stamp_ns measures from */
static uint64_t started_stamp, started_coarse_ns;

uint64_t hs_start_ns(void)
{
    if (!started_ns) {
        started_stamp = hs_order_stamp();
        started_coarse_ns = hs_coarse_ns();
        started_ns = hs_now_ns();
    }
    return started_ns;
}

/* The rate from the time since the start (seconds to days: a coarse clock's few ms of error make
 * it more exact the longer it runs); the caller checked that both clocks advanced. */
static double rate_since_start(uint64_t now_stamp, uint64_t now_ns)
{
    return (double)(now_ns - started_coarse_ns) / (double)(now_stamp - started_stamp);
}

double hs_ns_per_stamp(void)
{
    uint64_t now_stamp = hs_order_stamp(), now_ns = hs_coarse_ns();
    if (!started_stamp || now_stamp <= started_stamp || now_ns <= started_coarse_ns)
        return 1;
    return rate_since_start(now_stamp, now_ns);
}

uint64_t hs_stamp_ns(uint64_t stamp)
{
    uint64_t now_stamp = hs_order_stamp(), now_ns = hs_coarse_ns();
    if (!started_stamp || stamp >= now_stamp || now_ns <= started_coarse_ns)
        return now_ns;
    if (stamp <= started_stamp)
        return started_coarse_ns;
    return now_ns - (uint64_t)((double)(now_stamp - stamp) * rate_since_start(now_stamp, now_ns));
}

uint32_t hs_thread_id(void)
{
    if (!cached_tid)
        cached_tid = (uint32_t)syscall(SYS_gettid);
    return cached_tid;
}

/* ---- the fork gate (util.h) ----
 * Readers are the stack walks, the writer is fork: writer-preferring, so a steady stream of walks
 * cannot hold fork off.  A thread's nested entries take the lock once (a writer waiting between
 * two read locks of one thread would deadlock them).  A fork from inside the gate (a signal
 * handler interrupting a walk) does not wait for itself. */
static pthread_rwlock_t fork_gate = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static HS_TLS int gate_depth;
static HS_TLS int gate_closed_here;
static HS_TLS sigset_t gate_signals; /* the thread's mask outside the gate */

void hs_loader_signals_hold(sigset_t *saved)
{
    sigset_t async;
    sigfillset(&async);
    /* a fault in the loader is delivered as always (held, it would kill the process unseen) */
    static const int synchronous[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof synchronous / sizeof *synchronous; i++)
        sigdelset(&async, synchronous[i]);
    pthread_sigmask(SIG_BLOCK, &async, saved);
}

void hs_loader_signals_release(const sigset_t *saved) { pthread_sigmask(SIG_SETMASK, saved, NULL); }

void hs_fork_gate_enter(void)
{
    if (gate_depth++ == 0) {
        hs_loader_signals_hold(&gate_signals);
        pthread_rwlock_rdlock(&fork_gate);
    }
}

void hs_fork_gate_leave(void)
{
    if (--gate_depth == 0) {
        pthread_rwlock_unlock(&fork_gate);
        hs_loader_signals_release(&gate_signals);
    }
}

void hs_fork_gate_close(void) { gate_closed_here = gate_depth == 0 && pthread_rwlock_wrlock(&fork_gate) == 0; }

void hs_fork_gate_open(void)
{
    if (gate_closed_here)
        pthread_rwlock_unlock(&fork_gate);
    gate_closed_here = 0;
}

/* ThreadSanitizer's runtime, when it is in the process: it must hear that the write lock the
 * fork took is gone (else it reports the child's read locks against it). */
extern int __tsan_mutex_pre_unlock(void *addr, unsigned flags) __attribute__((weak));
extern void __tsan_mutex_post_unlock(void *addr, unsigned flags) __attribute__((weak));

void hs_fork_gate_reset(void)
{
    /* Re-made, not unlocked: glibc's rwlock knows its writer by thread id, and the child's thread
     * has a new one (an unlock would be taken for a reader's and leave it write-locked). */
    if (gate_closed_here && __tsan_mutex_pre_unlock && __tsan_mutex_post_unlock) {
        __tsan_mutex_pre_unlock(&fork_gate, 0);
        __tsan_mutex_post_unlock(&fork_gate, 0);
    }
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&fork_gate, &attr);
    pthread_rwlockattr_destroy(&attr);
    gate_depth = gate_closed_here = 0;
}

/* A wrapped call made from a program's .preinit_array initialises hipshadow before the C library
 * has set environ: getenv("HIPSHADOW_OPTIONS") was NULL there, and every option (findings, log,
 * mode, exitcode) was silently dropped.  Then the process's initial environment, which is what
 * environ will hold, is read once from /proc/self/environ (single-threaded: nothing runs yet). */
const char *hs_getenv(const char *name)
{
    extern char **environ;
    static char *initial;
    static size_t initial_len;
    if (environ)
        return getenv(name);
    if (!initial) {
        int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
        size_t cap = 0;
        for (ssize_t n = 1; fd >= 0 && n > 0;) {
            if (initial_len + 4096 + 1 > cap) {
                char *grown = realloc(initial, cap = cap * 2 + 8192);
                if (!grown)
                    break;
                initial = grown;
            }
            n = read(fd, initial + initial_len, cap - initial_len - 1);
            initial_len += n > 0 ? (size_t)n : 0;
        }
        if (fd >= 0)
            close(fd);
        if (!initial)
            return NULL;
        initial[initial_len] = 0;
    }
    size_t len = strlen(name);
    for (const char *p = initial; p < initial + initial_len; p += strlen(p) + 1)
        if (!strncmp(p, name, len) && p[len] == '=')
            return p + len + 1;
    return NULL;
}

/* Runs in the child after fork, on the only thread there: its tid changed. */
void hs_thread_id_after_fork(void) { cached_tid = 0; }

void hs_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

ssize_t hs_write_all(int fd, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return done ? (ssize_t)done : -1;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

void hs_say(const char *fmt, ...)
{
    int errno_in = errno;
    char buf[1536];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) {
        size_t len = (size_t)n;
        if (len >= sizeof buf) { /* cut: say so, and end the line */
            len = sizeof buf - 1;
            memcpy(buf + len - 4, "...\n", 4);
        }
        hs_write_all(2, buf, len);
    }
    errno = errno_in;
}

static ssize_t write_fd2(void *cookie, const char *buf, size_t size)
{
    (void)cookie;
    return hs_write_all(2, buf, size);
}

static FILE *stderr_stream;
static void make_stderr_stream(void)
{
    static char buffer[4096];
    FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = write_fd2});
    if (f && setvbuf(f, buffer, _IOFBF, sizeof buffer) != 0) {
        fclose(f);
        f = NULL;
    }
    stderr_stream = f ? f : stderr;
}

FILE *hs_stderr_stream(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_stderr_stream);
    return stderr_stream;
}

static HS_TLS uintptr_t stack_floor; /* this thread's lowest stack address; 0: not read yet, 1: none known */

size_t hs_stack_room(void)
{
    if (!stack_floor) {
        stack_floor = 1;
        pthread_attr_t attr;
        void *lo;
        size_t size;
        if (hs_thread_id() != (uint32_t)getpid() && pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &lo, &size) == 0)
                stack_floor = (uintptr_t)lo;
            pthread_attr_destroy(&attr);
        }
    }
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    return stack_floor == 1 || here < stack_floor ? SIZE_MAX : here - stack_floor;
}
