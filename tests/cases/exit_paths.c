/* Exit and reporting under pressure (run_harden_case.py).
 *   exit_paths alarm-exit        bad copies in a loop (each a finding, most of the time spent
 *                                reporting); SIGALRM 20 ms after the first calls exit(3) from its
 *                                handler, wherever the copy loop was.  Exits 3.
 *   exit_paths threads live N    N threads make 100 bad copies each (hipMalloc, 100 x hipMemcpyDtoH,
 *                                one past the end each), then block; main exits while they are
 *                                still alive.
 *   exit_paths threads joined N  the same, the threads joined before main exits: the SUMMARY's
 *                                count of checked calls must be the same as with live threads.
 *   exit_paths alarm-exit-allocs as alarm-exit, over allocations and frees (the shadow map's
 *                                lock held much of the time) with a bad copy each.  Exits 3.
 *   exit_paths flood N           N bad copies, one after the other.
 * Prints "exit_paths MODE: done" from main (not in alarm-exit). */
#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

enum { COPIES_PER_THREAD = 100 };

static void on_alarm(int sig)
{
    (void)sig;
    exit(3); /* not async-signal-safe, and programs do it */
}

static void bad_copies(int n)
{
    char *dev, host[256];
    MUST(hipMalloc((void **)&dev, 128));
    for (int i = 0; i < n; i++)
        hipMemcpyDtoH(host, dev, 200); /* 72 bytes past the end: a finding (and the runtime's error) */
    MUST(hipFree(dev));
}

static pthread_barrier_t done;

static void *copier(void *arg)
{
    (void)arg;
    bad_copies(COPIES_PER_THREAD);
    pthread_barrier_wait(&done);
    return NULL;
}

static void *copier_then_wait(void *arg)
{
    copier(arg);
    for (;;)
        pause(); /* alive at exit */
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "alarm-exit-allocs")) {
        bad_copies(1);
        signal(SIGALRM, on_alarm);
        struct itimerval t = {.it_value = {.tv_usec = 20000}};
        setitimer(ITIMER_REAL, &t, NULL);
        for (;;)
            bad_copies(1);
    }
    if (argc >= 2 && !strcmp(argv[1], "alarm-exit")) {
        bad_copies(1); /* hipshadow has started (slowly, under a sanitizer) before the clock runs */
        signal(SIGALRM, on_alarm);
        struct itimerval t = {.it_value = {.tv_usec = 20000}};
        setitimer(ITIMER_REAL, &t, NULL);
        for (;;)
            bad_copies(1000);
    }
    if (argc == 4 && !strcmp(argv[1], "threads")) {
        int n = atoi(argv[3]), live = !strcmp(argv[2], "live");
        pthread_t t[64];
        if (n < 1 || n > 64)
            return 2;
        pthread_barrier_init(&done, NULL, (unsigned)n + 1);
        for (int i = 0; i < n; i++)
            pthread_create(&t[i], NULL, live ? copier_then_wait : copier, NULL);
        pthread_barrier_wait(&done); /* every thread made its calls */
        for (int i = 0; i < n && !live; i++)
            pthread_join(t[i], NULL);
        printf("exit_paths threads %s: done\n", argv[2]);
        fflush(stdout);
        return 0; /* exit() with the live threads still there */
    }
    if (argc == 3 && !strcmp(argv[1], "flood")) {
        bad_copies(atoi(argv[2]));
        printf("exit_paths flood: done\n");
        return 0;
    }
    return 2;
}
