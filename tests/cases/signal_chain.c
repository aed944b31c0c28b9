/* Hardening: a program's own crash handlers stay its own under hipshadow.
 *  - its .preinit_array installs a SIGSEGV handler before hipshadow initialises, and records the
 *    dispositions of the other fatal signals (SIGBUS, SIGABRT, SIGILL, SIGFPE);
 *  - main makes wrapped calls (hipshadow is now initialised and, with log=, its log is open),
 *    including a bad copy (a finding: stacks, report, findings file, log record), then checks the
 *    handlers are unchanged and makes a real SIGSEGV: the program's handler must be the one that
 *    runs (it recovers with siglongjmp);
 *  - it installs a second SIGSEGV handler, makes more wrapped calls, and faults again: the second
 *    handler runs.
 * Prints "handlers: kept K of 5, ran R of 2"; exits 0 when all kept and both ran. */
#include "common.h"

#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
enum { N_FATAL = sizeof fatal / sizeof *fatal };
static struct sigaction before[N_FATAL];
static sigjmp_buf back;
static volatile sig_atomic_t ran_first, ran_second;

static void first_handler(int sig, siginfo_t *info, void *ctx)
{
    (void)sig, (void)info, (void)ctx;
    ran_first++;
    siglongjmp(back, 1);
}

static void second_handler(int sig, siginfo_t *info, void *ctx)
{
    (void)sig, (void)info, (void)ctx;
    ran_second++;
    siglongjmp(back, 1);
}

static void pre_init(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = first_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    for (int i = 0; i < N_FATAL; i++)
        sigaction(fatal[i], NULL, &before[i]);
}
__attribute__((section(".preinit_array"), used)) static void (*const pre_init_entry)(int, char **, char **) = pre_init;

static void some_calls(int bad)
{
    char *dev, host[256];
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    MUST(hipMalloc((void **)&dev, 128));
    MUST(hipMemcpyHtoD(dev, host, 128));
    MUST(hipMemcpyAsync(host, dev, 128, hipMemcpyDeviceToHost, s));
    MUST(hipStreamSynchronize(s));
    if (bad)
        TRY(hipMemcpyDtoH(host, dev, 192)); /* 64 bytes past the end: a finding */
    MUST(hipFree(dev));
    MUST(hipStreamDestroy(s));
}

static int fault(void)
{
    static char *page;
    if (!page)
        page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sigsetjmp(back, 1) == 0) {
        *(volatile char *)page = 1; /* SIGSEGV */
        return 0;
    }
    return 1;
}

static int same(const struct sigaction *a, const struct sigaction *b)
{
    return a->sa_sigaction == b->sa_sigaction && (a->sa_flags & SA_SIGINFO) == (b->sa_flags & SA_SIGINFO);
}

int main(void)
{
    some_calls(1);
    int kept = 0;
    for (int i = 0; i < N_FATAL; i++) {
        struct sigaction now;
        sigaction(fatal[i], NULL, &now);
        kept += same(&now, &before[i]);
        if (!same(&now, &before[i]))
            printf("signal %d (%s): the handler set before hipshadow started was replaced\n", fatal[i],
                   strsignal(fatal[i]));
    }
    fault();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = second_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    some_calls(0);
    struct sigaction now;
    sigaction(SIGSEGV, NULL, &now);
    if (now.sa_sigaction != second_handler)
        printf("SIGSEGV: the handler set after hipshadow started was replaced\n");
    fault();
    printf("handlers: kept %d of %d, ran %d of 2\n", kept, N_FATAL, (ran_first == 1) + (ran_second == 1));
    return kept == N_FATAL && ran_first == 1 && ran_second == 1 && now.sa_sigaction == second_handler ? 0 : 1;
}
