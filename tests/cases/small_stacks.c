/* Wrapped calls on threads made with small stacks: 16 KiB (PTHREAD_STACK_MIN) and 32 KiB.  The
 * process's first wrapped call is on the 16 KiB thread (hipshadow creates its log there), and
 * each thread makes a copy past the end of its allocation (a report, the findings file, the
 * text report).  Before, the first of these crashed the program: a stack walk, the loader, a
 * path buffer or unbuffered stderr ran off the end of the stack.  Prints "small stacks: 2
 * threads done".  Sanitizer builds need far more stack than this: the program says it cannot
 * run there (exit 77). */
#include "common.h"

#include <pthread.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static void *work(void *arg)
{
    float *dev = NULL, host[8];
    MUST(hipMalloc((void **)&dev, 16));
    TRY(hipMemcpy(host, dev, sizeof host, hipMemcpyDeviceToHost)); /* 16 bytes past the end */
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    MUST(hipMemcpyAsync(host, dev, 16, hipMemcpyDeviceToHost, s));
    MUST(hipStreamSynchronize(s));
    MUST(hipStreamDestroy(s));
    MUST(hipFree(dev));
    return arg;
}

int main(void)
{
    if (SANITIZED)
        return 77;
    const size_t kib[] = {16, 32};
    for (int i = 0; i < 2; i++) {
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        if (pthread_attr_setstacksize(&attr, kib[i] << 10) != 0 || pthread_create(&t, &attr, work, NULL) != 0)
            return 99;
        pthread_join(t, NULL);
        pthread_attr_destroy(&attr);
    }
    printf("small stacks: 2 threads done\n");
    return 0;
}
