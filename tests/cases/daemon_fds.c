/* A program that closes every descriptor it did not open, as daemons do, then opens a file of
 * its own and gives it every number up to 2048 (as a busy server's files and sockets would
 * take them): hipshadow's log, findings file and text report were open before, and must never
 * write into the program's file through their old numbers, nor close it.
 * Usage: daemon_fds OWN_FILE.  Prints "own file intact" and "own descriptors open" or what broke. */
#include "common.h"

#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char own_data[] = "the program's own data\n";

__attribute__((noinline)) static void read_past_end(float *dev)
{
    float host[64];
    TRY(hipMemcpy(host, dev + 32, sizeof host, hipMemcpyDeviceToHost)); /* 32 floats past the end */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: daemon_fds OWN_FILE\n");
        return 2;
    }
    float *dev, host[64];
    MUST(hipMalloc((void **)&dev, sizeof host));
    read_past_end(dev); /* the findings file and the text report are open from here on */

    struct rlimit rl;
    int top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2048 ? (int)rl.rlim_cur : 2048;
    for (int fd = 3; fd < 4096; fd++)
        close(fd);
    int own = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (own < 0 || write(own, own_data, strlen(own_data)) != (ssize_t)strlen(own_data))
        return 99;
    for (int fd = 3; fd < top; fd++)
        if (fd != own && dup2(own, fd) != fd)
            return 99;

    /* enough logged copies (log_mode=full) that the log must map more of its file */
    for (int i = 0; i < 100000; i++)
        MUST(hipMemcpy(host, dev, sizeof host, hipMemcpyDeviceToHost));
    read_past_end(dev); /* a finding after the close: to the findings file, the text report */
    MUST(hipFree(dev));

    int still_open = 0;
    for (int fd = 3; fd < top; fd++)
        still_open += fcntl(fd, F_GETFD) != -1;
    char back[4096] = {0};
    int in = open(argv[1], O_RDONLY);
    ssize_t n = in >= 0 ? read(in, back, sizeof back - 1) : -1;
    if (n == (ssize_t)strlen(own_data) && !strcmp(back, own_data))
        printf("own file intact\n");
    else
        printf("own file CORRUPTED: %zd bytes, begins '%.60s'\n", n, back);
    if (still_open == top - 3)
        printf("own descriptors open: all %d\n", still_open);
    else
        printf("own descriptors CLOSED: %d of %d open\n", still_open, top - 3);
    return 0;
}
