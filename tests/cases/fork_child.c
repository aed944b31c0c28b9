/* After fork, the child's findings go to its own file (findings=...%p). */
#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    char *dev, host[128];
    MUST(hipMalloc((void **)&dev, 64));
    pid_t pid = fork();
    if (pid == 0) {
        TRY(hipMemcpyDtoH(host, dev, 128)); /* the child's bug */
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    TRY(hipMemcpyDtoH(host, dev, 100)); /* the parent's bug */
    printf("child pid %d\n", (int)pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
