/* The fork gate (util.h): fork waits until no thread is inside a stack walk.  glibc does not
 * reset the lock dl_iterate_phdr holds in a fork child, so a fork while another thread walked a
 * stack (libunwind calls dl_iterate_phdr) left the child hung at its first walk.  Here a thread
 * holds that lock inside the gate for 300 ms; a fork made meanwhile must wait for it, and the
 * child's own dl_iterate_phdr must return.  Also: a thread's nested entries while fork waits. */
#define _GNU_SOURCE
#include "process/util.h"
#include "unit.h"

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int inside, left;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int slow_callback(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size, (void)arg;
    atomic_store(&inside, 1);
    sleep_ms(300); /* the loader's lock is held all this time */
    return 1;
}

static int quick_callback(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size;
    ++*(int *)arg;
    return 0;
}

static void *walker(void *arg)
{
    int nested = arg != NULL;
    hs_fork_gate_enter();
    if (nested)
        hs_fork_gate_enter(); /* a walk inside a walk: takes the lock once */
    dl_iterate_phdr(slow_callback, NULL);
    atomic_store(&left, 1);
    if (nested)
        hs_fork_gate_leave();
    hs_fork_gate_leave();
    return NULL;
}

/* Forks while a walker is inside; 0 if the child's dl_iterate_phdr returned within 5 s. */
static int fork_while_walking(int nested)
{
    atomic_store(&inside, 0);
    atomic_store(&left, 0);
    pthread_t t;
    pthread_create(&t, NULL, walker, nested ? (void *)1 : NULL);
    while (!atomic_load(&inside))
        sleep_ms(1);
    pid_t pid = fork();
    if (pid == 0) {
        int n = 0;
        dl_iterate_phdr(quick_callback, &n);
        _exit(n > 0 ? 0 : 2);
    }
    CHECK(atomic_load(&left) == 1); /* fork waited for the walker to leave the gate */
    int status = -1, hung = 1;
    for (int i = 0; i < 5000 && hung; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            hung = 0;
        else
            sleep_ms(1);
    }
    if (hung) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    pthread_join(t, NULL);
    return hung ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

int main(void)
{
    CHECK(pthread_atfork(hs_fork_gate_close, hs_fork_gate_open, hs_fork_gate_reset) == 0); /* as init.c does */
    CHECK_EQ(fork_while_walking(0), 0);
    CHECK_EQ(fork_while_walking(1), 0);
    /* the gate still works after the forks, in the parent */
    hs_fork_gate_enter();
    hs_fork_gate_leave();
    return UNIT_DONE();
}
