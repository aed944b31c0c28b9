/* Start, stop and fork.  Every failure here disables the tool with one warning; the program
 * always carries on. */
#define _GNU_SOURCE
#include "path/init.h"
#include "streams/access.h"
#include "process/deep_stack.h"
#include "process/environment.h"
#include "kernels/kernel_info.h"
#include "kernels/ledger.h"
#include "kernels/redzones.h"
#include "rules/check.h"
#include "findings/policy.h"
#include "kernels/fallback.h"
#include "runtime/frontend.h"
#include "shadow/hostmem.h"
#include "process/log.h"
#include "process/options.h"
#include "process/stats.h"
#include "shadow/region_access.h"
#include "shadow/regions.h"
#include "findings/report.h"
#include "shadow/shadow.h"
#include "process/stacks.h"
#include "streams/streams.h"
#include "torch/blocks.h"
#include "torch/pystacks.h"
#include "torch/torch_bridge.h"
#include "process/util.h"
#include "shadow/vmm.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

HS_HOT_DATA bool hs_ready;
HS_HOT_DATA atomic_bool hs_disabled;
HS_HOT_DATA atomic_bool hs_used;
atomic_int hs_pause_depth;
HS_HOT_DATA bool hs_passthrough_calls;
HS_TLS _Atomic(uint64_t) *hs_my_calls;

/* ---- checked calls, counted per thread ----
 * Each thread that makes a wrapped call takes a counter of the table below for as long as it
 * lives; the SUMMARY adds them all up, the counters of threads still running at exit among them
 * (before, those were read only when a thread exited, and a program whose workers outlived
 * main said "418 findings ... in 1 checked calls").  An exiting thread leaves its count in its
 * counter, and the next thread to take it counts on from there: only the sum is wanted.  When
 * every counter is taken, a thread counts in its own variable, added up when it exits. */
enum { COUNTERS = 4096 };

typedef struct call_counter {
    _Atomic(uint64_t) calls;
    atomic_bool taken;
} __attribute__((aligned(64))) call_counter; /* one cache line each: threads never share one */

/* The first few in the page of the flags every call reads (HS_HOT_DATA): a program's first
 * threads, its busiest, count without a page of their own to touch. */
enum { HOT_COUNTERS = 8 };
HS_HOT_DATA static call_counter hot_counters[HOT_COUNTERS];
static call_counter cold_counters[COUNTERS - HOT_COUNTERS];
static call_counter *counter(int i) { return i < HOT_COUNTERS ? &hot_counters[i] : &cold_counters[i - HOT_COUNTERS]; }
static atomic_int counters_used;             /* the highest counter ever taken, + 1 */
static atomic_uint_fast64_t calls_of_exited; /* threads that had no counter, once they exited */
static HS_TLS _Atomic(uint64_t) own_calls;   /* this thread's count when it has no counter */

static pthread_key_t count_key;
static pthread_once_t count_key_once = PTHREAD_ONCE_INIT;
static bool have_count_key;

static void thread_exits(void *unused)
{
    (void)unused;
    _Atomic(uint64_t) *n = hs_my_calls;
    if (n == &own_calls) {
        atomic_fetch_add(&calls_of_exited, atomic_load(&own_calls));
        atomic_store(&own_calls, 0);
    } else if (n) {
        call_counter *c = (call_counter *)((char *)n - offsetof(call_counter, calls));
        atomic_store(&c->taken, false); /* after the last count: the next taker goes on from it */
    }
    hs_my_calls = &own_calls; /* calls from this thread's last destructors are not counted */
}

static void make_count_key(void) { have_count_key = pthread_key_create(&count_key, thread_exits) == 0; }

/* The first call of a thread does more: it keeps the program's errno, as every wrapped call
 * does (wrapper_shape.h). */
_Atomic(uint64_t) *hs_count_thread(void)
{
    int errno_in = errno;
    pthread_once(&count_key_once, make_count_key);
    _Atomic(uint64_t) *n = &own_calls;
    for (int i = 0; i < COUNTERS; i++) {
        if (atomic_load_explicit(&counter(i)->taken, memory_order_relaxed) || atomic_exchange(&counter(i)->taken, true))
            continue;
        int used = atomic_load(&counters_used);
        while (used < i + 1 && !atomic_compare_exchange_weak(&counters_used, &used, i + 1))
            ;
        n = &counter(i)->calls;
        break;
    }
    hs_my_calls = n;
    if (have_count_key)
        pthread_setspecific(count_key, (void *)1);
    errno = errno_in;
    return n;
}

/* Wrapped calls checked so far, by every thread: those still running too (a thread with no
 * counter of its own, past the first 4096 at once, is counted when it exits). */
static uint64_t calls_seen(void)
{
    uint64_t n = atomic_load(&calls_of_exited) + (hs_my_calls == &own_calls ? atomic_load(&own_calls) : 0);
    for (int i = 0, used = atomic_load(&counters_used); i < used; i++)
        n += atomic_load_explicit(&counter(i)->calls, memory_order_relaxed);
    return n;
}

/* In a fork child, on its only thread: the counts start again, and only this thread's counter
 * stays taken. */
static void counters_after_fork(void)
{
    for (int i = 0, used = atomic_load(&counters_used); i < used; i++) {
        atomic_store(&counter(i)->calls, 0);
        atomic_store(&counter(i)->taken, hs_my_calls == &counter(i)->calls);
    }
    atomic_store(&calls_of_exited, 0);
    atomic_store(&own_calls, 0);
}

HS_HOT_DATA static hs_options options;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

const hs_options *hs_opts(void) { return &options; }

void hs_pause_push(void) { atomic_fetch_add(&hs_pause_depth, 1); }

void hs_pause_pop(void)
{
    int depth = atomic_load(&hs_pause_depth);
    while (depth > 0 && !atomic_compare_exchange_weak(&hs_pause_depth, &depth, depth - 1))
        ;
}

void hs_disable(const char *why)
{
    bool was = atomic_exchange(&hs_disabled, true);
    if (!was)
        hs_say("hipshadow: WARNING: %s; hipshadow is now disabled and the program carries on unchecked\n", why);
}

/* Files are made by processes that use the runtime, not by every process.  hs_used is set only
 * once the log is open, and threads whose first call races the opener wait for it here: before,
 * they went on while the log was being created, so their calls were missing from it, or were
 * written with time 0 (the clock is read only when the log is on, and it came on mid-call). */
static pthread_mutex_t first_call_lock = PTHREAD_MUTEX_INITIALIZER;

void hs_first_call(void)
{
    int errno_in = errno;
    pthread_mutex_lock(&first_call_lock);
    if (!atomic_load(&hs_used)) {
        hs_log_open_for_process();
        atomic_store(&hs_used, true);
    }
    pthread_mutex_unlock(&first_call_lock);
    errno = errno_in;
}

/* The child is a process of its own: its own counts, files, findings and exit status. */
static void child_after_fork(void)
{
    hs_fork_gate_reset();
    pthread_mutex_init(&first_call_lock, NULL);
    atomic_store(&hs_used, false);
    counters_after_fork();
    hs_policy_after_fork();
    hs_thread_id_after_fork();
    hs_shadow_after_fork();
    hs_streams_after_fork();
    hs_access_after_fork();
    hs_hostmem_after_fork();
    hs_stacks_after_fork();
    hs_report_after_fork();
    hs_regions_after_fork();
    hs_region_access_after_fork();
    hs_blocks_after_fork();
    hs_pystacks_after_fork();
    hs_torch_after_fork();
    hs_vmm_after_fork();
    hs_redzones_after_fork();
    hs_kernel_info_after_fork();
    hs_fallback_after_fork();
    hs_log_after_fork();
    hs_deep_stack_after_fork();
}

static void init_once_body(void)
{
    hs_start_ns();
    hs_options_defaults(&options);
    FILE *err = hs_stderr_stream();
    hs_options_parse(&options, hs_getenv("HIPSHADOW_OPTIONS"), err); /* hs_getenv: see util.c */
    if (options.help) {
        hs_options d;
        hs_options_defaults(&d);
        hs_options_print_help(&d, err);
    }
    if (options.verbosity > 0)
        hs_options_print(&options, err);
    fflush(err);
    hs_stats_on = options.stats;
    hs_passthrough_calls = strcmp(options.passthrough, "off") != 0;
    hs_stacks_init((int)options.stack_depth, options.stack_depot_max, (const void *)&init_once_body);
    if (hs_shadow_init(options.quarantine, (size_t)options.shadow_max) || hs_hostmem_init() ||
        hs_streams_init(hs_frontend_active.builtin_streams, hs_frontend_active.n_builtin_streams,
                        hs_frontend_active.per_thread_stream, hs_frontend_active.legacy_stream,
                        (uint32_t)options.streams_max, (uint32_t)options.events_max) ||
        hs_regions_init() || hs_vmm_init()) {
        hs_disable("cannot map memory for the shadow map");
        return;
    }
    hs_ledger_init((unsigned)options.ledger_size, (unsigned)options.ledger_max);
    hs_access_init((uint32_t)options.access_history, (uint32_t)options.access_max, options.initcheck, options.races);
    hs_redzones_init(options.redzones);
    hs_environment_init();
    hs_report_init(&options);
    hs_torch_init(&options);
    hs_policy_init(&options);
    hs_fallback_init(&options);
    hs_log_configure(&options, hs_frontend_active.api_names, hs_frontend_active.n_apis, hs_frontend_active.runtime_id);
    /* fork waits for stack walks in other threads to end (the fork gate, util.h) */
    if (pthread_atfork(hs_fork_gate_close, hs_fork_gate_open, child_after_fork) != 0) {
        hs_disable("pthread_atfork failed");
        return;
    }
    hs_ready = true;
}

void hs_ensure_init(void)
{
    if (HS_UNLIKELY(!hs_ready)) {
        int errno_in = errno;
        pthread_once(&init_once, init_once_body);
        errno = errno_in;
    }
}

__attribute__((constructor)) static void hs_constructor(void) { hs_ensure_init(); }

static void report_leak(const hs_span *s, void *arg)
{
    (void)arg;
    hs_call call = {.api = (uint16_t)s->api, .op = HS_OP_OTHER};
    hs_facts facts = {.dst = {.ptr = s->base, .where = HS_WHERE_LIVE, .alloc = *s}};
    hs_finding f = hs_check_leak(&facts);
    hs_policy_count(&f);
    hs_event e = {.call = &call,
                  .facts = &facts,
                  .finding = &f,
                  .action = HS_ACTION_FORWARDED,
                  .stack = s->stack,
                  .thread = s->thread,
                  .time_ns = hs_now_ns()};
    hs_report_finding(&e);
}

/* The exit summary and exitcode=, after every library's destructor: registered while
 * destructors run, so exit() calls it once they are done (glibc runs handlers registered during
 * exit).  Findings made by destructors that run after hipshadow's are counted, and exitcode=
 * cuts no destructor short. */
static void final_exit(void *arg)
{
    (void)arg;
    hs_log_close();
    hs_stats_print();
    hs_policy_at_exit(calls_seen());
}

/* The Itanium C++ ABI's registration, with no DSO: atexit() from a shared library ties the
 * handler to the library, whose own finalisation would run it right after this destructor. */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso_handle);

/* Runs after the program's own destructors (we were initialised first).  State is left in
 * place: threads that outlive exit, and later destructors, may still call wrappers. */
enum { LEAK_WAIT_S = 2 }; /* how long the leak walk waits for the shadow map at exit */

__attribute__((destructor)) static void hs_destructor(void)
{
    if (!hs_ready || atomic_load(&hs_disabled) || !atomic_load(&hs_used))
        return;
    hs_torch_at_exit();
    if (options.detect_leaks && !hs_shadow_foreach_live(report_leak, NULL, LEAK_WAIT_S))
        hs_say("hipshadow: detect_leaks: the shadow map was held for %d s at exit (an exit() from a signal "
               "handler inside a wrapped call, or a thread stopped in one): leaks are not reported\n",
               LEAK_WAIT_S);
    if (__cxa_atexit(final_exit, NULL, NULL) != 0)
        final_exit(NULL);
}
