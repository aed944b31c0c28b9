#define _GNU_SOURCE
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
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

uint64_t hs_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
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

uint64_t hs_start_ns(void)
{
    if (!started_ns)
        started_ns = hs_now_ns();
    return started_ns;
}

uint32_t hs_thread_id(void)
{
    if (!cached_tid)
        cached_tid = (uint32_t)syscall(SYS_gettid);
    return cached_tid;
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
