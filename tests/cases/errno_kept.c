/* A wrapped call leaves errno as the runtime's call does: hipshadow's own system calls (reading
 * the host mappings, msync probes, writing the log, the findings file and the report) must not
 * change the program's errno.  Sets errno before each call and checks it after: a clean copy
 * into memory mapped just before (the host probe's slow path), allocations, a stream, a bad copy
 * (reported, so written out) and frees; on the main thread, then on a second one (each thread's
 * errno is its own: hipshadow keeps the address it read on that thread).  Prints "errno kept: N
 * calls" or the first call that changed it. */
#include "common.h"

#include <errno.h>
#include <sys/mman.h>

#include <pthread.h>

static int checked;

#define KEEPS(call)                                                                                                    \
    do {                                                                                                               \
        errno = EILSEQ;                                                                                                \
        (void)(call);                                                                                                  \
        if (errno != EILSEQ) {                                                                                         \
            printf("errno changed by %s: %d\n", #call, errno);                                                         \
            return 1;                                                                                                  \
        }                                                                                                              \
        checked++;                                                                                                     \
    } while (0)

static int calls(void)
{
    float *dev = NULL;
    hipStream_t stream;
    KEEPS(hipMalloc((void **)&dev, 4096));
    KEEPS(hipStreamCreate(&stream));
    for (int i = 0; i < 8; i++) {
        /* fresh host memory each time: the host check finds its snapshot stale */
        float *host = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (host == MAP_FAILED)
            return 99;
        KEEPS(hipMemcpy(host, dev, 4096, hipMemcpyDeviceToHost));
        KEEPS(hipMemcpyAsync(host, dev, 4096, hipMemcpyDeviceToHost, stream));
        KEEPS(hipStreamSynchronize(stream));
        munmap(host, 8192);
    }
    float small[8];
    KEEPS(hipMemcpy(small, dev + 1020, sizeof small, hipMemcpyDeviceToHost)); /* 16 bytes past the end */
    KEEPS(hipStreamDestroy(stream));
    KEEPS(hipFree(dev));
    KEEPS(hipFree(dev)); /* twice: reported */
    return 0;
}

static void *second_thread(void *result)
{
    *(int *)result = calls();
    return NULL;
}

int main(void)
{
    int rc = calls(), second = 99;
    pthread_t t;
    if (rc || pthread_create(&t, NULL, second_thread, &second) != 0)
        return rc ? rc : 99;
    pthread_join(t, NULL);
    if (second)
        return second;
    printf("errno kept: %d calls\n", checked);
    return 0;
}
