/* Hardening: fork while other threads are inside wrapped calls.
 *   fork_storm storm N      N forks, each while BUSY threads allocate, copy and free in a loop
 *                           (each allocation and free walks the stack: libunwind takes the
 *                           loader's lock, which glibc does not reset in the child); each
 *                           child makes one bad copy (a finding of its own, so it must be checked,
 *                           not just forwarded) and a clean one, then exits 0.  The parent waits
 *                           for each child with a timeout: a child that hangs is killed and
 *                           counted.  Prints "N forks: H hung, F failed".
 *   fork_storm exec PROG ARG...   the same busy threads, then fork + exec PROG ARG... in the child
 *                           (which makes no wrapped call before exec); prints the child's pid and
 *                           status. */
#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { BUSY = 4 }; /* threads inside wrapped calls while main forks */

static atomic_bool stop;
static atomic_long busy_calls;

static void *busy(void *arg)
{
    (void)arg;
    char host[4096];
    memset(host, 7, sizeof host);
    while (!atomic_load(&stop)) {
        char *dev;
        if (hipMalloc((void **)&dev, 4096) != hipSuccess)
            exit(98);
        /* mostly allocations and frees: each walks the stack (libunwind, the loader's lock) */
        hipMemcpyHtoD(dev, host, sizeof host);
        hipMemcpyDtoH(host, dev, sizeof host);
        hipFree(dev);
        atomic_fetch_add(&busy_calls, 4);
    }
    return NULL;
}

/* Waits up to 10 s for pid; 1 if it had to be killed, else its status in *status. */
static int wait_with_timeout(pid_t pid, int *status)
{
    for (int i = 0; i < 10000; i++) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 0;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, status, 0);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    char *dev, host[256];
    MUST(hipMalloc((void **)&dev, 64)); /* the children's bad copy reads past this */
    pthread_t t[BUSY];
    for (int i = 0; i < BUSY; i++)
        pthread_create(&t[i], NULL, busy, NULL);
    while (atomic_load(&busy_calls) < 100) /* the threads are in full swing */
        sched_yield();
    int hung = 0, failed = 0, n = 0;
    if (!strcmp(argv[1], "storm")) {
        n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                failed++;
                continue;
            }
            if (pid == 0) {
                hipError_t bad = hipMemcpyDtoH(host, dev, 128); /* 64 bytes past the end */
                hipError_t ok = hipMemcpyDtoH(host, dev, 64);
                _exit(bad != hipSuccess && ok == hipSuccess ? 0 : 3);
            }
            int status = 0;
            if (wait_with_timeout(pid, &status)) {
                hung++;
                n = i + 1;
                break; /* one hang is the answer: no need to wait out the others */
            } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                failed++;
        }
    } else if (!strcmp(argv[1], "exec")) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            execv(argv[2], argv + 2);
            _exit(127);
        }
        int status = 0;
        hung = wait_with_timeout(pid, &status);
        failed = !hung && (!WIFEXITED(status) || WEXITSTATUS(status) != 0);
        printf("exec child %d status %d\n", (int)pid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        n = 1;
    } else {
        return 2;
    }
    atomic_store(&stop, true);
    for (int i = 0; i < BUSY; i++)
        pthread_join(t[i], NULL);
    MUST(hipFree(dev));
    printf("%d forks: %d hung, %d failed\n", n, hung, failed);
    return hung || failed;
}
