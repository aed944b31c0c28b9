/* Where a program's time goes, on machines without a profiler (the GPU machines have no perf): a
 * wall-clock sampler of one thread, preloaded.  Each sample is the thread's program counter,
 * taken by a timer signal aimed at that thread alone (timer_create with SIGEV_THREAD_ID), so a
 * thread that is waiting (a CUDA synchronisation spinning or sleeping) is sampled too: its
 * shares add up to the wall time, as a token's time does.
 *
 *   HS_SAMPLER_OUT=PREFIX  on: at exit, PREFIX.<pid> holds the samples ("P <pc>"), the process's
 *                          mappings ("M <line of /proc/self/maps>") and counters ("C <name> <n>")
 *   HS_SAMPLER_HZ=N        samples a second (default 10000)
 *   HS_SAMPLER_ALL=1       sample the thread that loads the program, from the start; otherwise
 *                          a thread sampling starts and stops each time it raises SIGUSR2 itself
 *                          (signal.raise_signal in Python: around the part to measure)
 *
 * Counters, over the sampled windows, for the sampled thread: its CPU time, page faults,
 * context switches and migrations (software counters, always there), and cycles, instructions
 * and cache and TLB misses where the machine exposes a PMU (a virtual machine often does not:
 * then "n/a").  tools/sampler/report.py turns the files into shares by module and function.
 *
 * A diagnosis aid for benchmarks (tests/gpu/bench_engines.py --steps profile), not part of
 * hipshadow: it takes SIGPROF and SIGUSR2 for itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { MAX_SAMPLES = 4 << 20 };

static const struct {
    unsigned type;
    unsigned long long config;
    const char *name;
} counter_kinds[] = {
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "cpu_ns"},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page_faults"},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context_switches"},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "migrations"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "llc_misses"},
    {PERF_TYPE_HW_CACHE,
     PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
     "dtlb_misses"},
};
enum { N_COUNTERS = sizeof counter_kinds / sizeof counter_kinds[0] };

static struct {
    uintptr_t *pcs;
    atomic_ulong n;
    timer_t timer;
    int on;
    int fds[N_COUNTERS];
    unsigned long long totals[N_COUNTERS];
    int had[N_COUNTERS]; /* the counter could be opened at least once */
    struct timespec started;
    double wall_ns;
} sp;

static uintptr_t program_counter(const void *uc)
{
#if defined(__x86_64__)
    return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

static void on_sample(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    unsigned long i = atomic_fetch_add_explicit(&sp.n, 1, memory_order_relaxed);
    if (i < MAX_SAMPLES)
        sp.pcs[i] = program_counter(uc);
}

static void counters_open(void)
{
    for (int i = 0; i < N_COUNTERS; i++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = counter_kinds[i].type;
        a.config = counter_kinds[i].config;
        a.exclude_hv = 1;
        sp.fds[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        if (sp.fds[i] < 0) { /* kernel events may be refused (perf_event_paranoid): the user's */
            a.exclude_kernel = 1;
            sp.fds[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        }
        sp.had[i] |= sp.fds[i] >= 0;
    }
}

static void counters_close(void)
{
    for (int i = 0; i < N_COUNTERS; i++) {
        unsigned long long v = 0;
        if (sp.fds[i] >= 0 && read(sp.fds[i], &v, sizeof v) == (ssize_t)sizeof v)
            sp.totals[i] += v;
        if (sp.fds[i] >= 0)
            close(sp.fds[i]);
        sp.fds[i] = -1;
    }
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Starts or stops sampling the calling thread. */
static void toggle(int sig)
{
    (void)sig;
    int saved = errno;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (!sp.on) {
        const char *hz_text = getenv("HS_SAMPLER_HZ");
        long hz = hz_text ? atol(hz_text) : 10000;
        if (hz < 1 || hz > 100000)
            hz = 10000;
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = SIGPROF;
        sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        if (timer_create(CLOCK_MONOTONIC, &sev, &sp.timer) == 0) {
            its.it_interval.tv_nsec = its.it_value.tv_nsec = 1000000000L / hz;
            counters_open();
            sp.wall_ns -= now_ns();
            timer_settime(sp.timer, 0, &its, NULL);
            sp.on = 1;
        }
    } else {
        timer_settime(sp.timer, 0, &its, NULL);
        timer_delete(sp.timer);
        sp.wall_ns += now_ns();
        counters_close();
        sp.on = 0;
    }
    errno = saved;
}

__attribute__((constructor)) static void sampler_start(void)
{
    if (!getenv("HS_SAMPLER_OUT"))
        return;
    for (int i = 0; i < N_COUNTERS; i++)
        sp.fds[i] = -1;
    void *p = mmap(NULL, MAX_SAMPLES * sizeof *sp.pcs, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    sp.pcs = p;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = toggle;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &sa, NULL);
    if (getenv("HS_SAMPLER_ALL"))
        toggle(0);
}

__attribute__((destructor)) static void sampler_write(void)
{
    if (!sp.pcs)
        return;
    if (sp.on)
        toggle(0);
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", getenv("HS_SAMPLER_OUT"), (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps))
        fprintf(f, "M %s", line);
    if (maps)
        fclose(maps);
    fprintf(f, "C wall_ns %.0f\n", sp.wall_ns);
    for (int i = 0; i < N_COUNTERS; i++)
        if (sp.had[i])
            fprintf(f, "C %s %llu\n", counter_kinds[i].name, sp.totals[i]);
        else
            fprintf(f, "C %s n/a\n", counter_kinds[i].name);
    unsigned long n = atomic_load(&sp.n);
    for (unsigned long i = 0; i < n && i < MAX_SAMPLES; i++)
        fprintf(f, "P %lx\n", (unsigned long)sp.pcs[i]);
    fclose(f);
}
