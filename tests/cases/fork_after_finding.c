/* The parent has a finding, then forks.  `quiet`: the child makes no runtime call and exits 0;
 * it must not inherit the parent's findings, SUMMARY or exitcode=.  `own`: the child makes one
 * bad copy of its own; its SUMMARY counts that one only.  Prints the child's exit status. */
#include "common.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int own = argc > 1 && !strcmp(argv[1], "own");
    char *dev, host[256];
    MUST(hipMalloc((void **)&dev, 64));
    TRY(hipMemcpyDtoH(host, dev, 128)); /* the parent's bug */
    TRY(hipMemcpyDtoH(host, dev, 100)); /* and another */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (own)
            TRY(hipMemcpyDtoH(host, dev, 65)); /* the child's one bug */
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
