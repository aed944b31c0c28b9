/* Makes copies for the post-mortem log tests, then ends as asked:
 *   log_writer exit N    N copies, then a normal exit
 *   log_writer kill N    N copies, then SIGKILL (nothing runs at exit)
 *   log_writer segv N    N copies, then one more of 12345 bytes into inaccessible host memory: the
 *                        runtime itself segfaults inside the call */
#include "common.h"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int n = atoi(argv[2]);
    char *dev, *host;
    hipStream_t s;
    MUST(hipMalloc((void **)&dev, 1 << 20));
    MUST(hipHostMalloc((void **)&host, 4096, 0));
    MUST(hipStreamCreate(&s));
    for (int i = 0; i < n; i++) {
        MUST(hipMemcpyAsync(host, dev + (i % 256) * 4096, 64 + i % 100, hipMemcpyDeviceToHost, s));
        if (i % 100 == 99)
            MUST(hipStreamSynchronize(s));
    }
    MUST(hipStreamSynchronize(s));
    if (!strcmp(argv[1], "kill")) {
        kill(getpid(), SIGKILL);
    } else if (!strcmp(argv[1], "segv")) {
        /* PROT_NONE, not unmapped: nothing else (hipshadow's own bookkeeping, the report) can be
         * mapped there before the copy, so the simulator's memmove faults on the host side */
        char *gone = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        mprotect(gone, 65536, PROT_NONE);
        hipMemcpyDtoH(gone, dev, 12345);
    }
    MUST(hipStreamDestroy(s));
    MUST(hipFree(dev));
    return 0;
}
