/* Stream callbacks (hipStreamAddCallback) run in stream order, as host functions do.
 *   retires: an async D2H into a pinned buffer, then a callback; once the callback has run, the
 *            copy is done, and freeing the buffer races nothing.  The callback gets the program's
 *            stream, status and data.
 *   churn N: N host functions and N callbacks; the resident set must not grow with N (hipshadow
 *            boxes each one's function and data until it runs).  Prints the growth in KiB. */
#include "common.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

/* A sanitizer keeps freed memory in its quarantine: the resident set is not checked there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

typedef struct seen {
    hipStream_t stream;
    hipError_t status;
    int calls;
} seen;

static void note(hipStream_t stream, hipError_t status, void *data)
{
    seen *s = data;
    s->stream = stream;
    s->status = status;
    __atomic_add_fetch(&s->calls, 1, __ATOMIC_RELEASE);
}

static void count(void *data) { __atomic_add_fetch((int *)data, 1, __ATOMIC_RELEASE); }

static int retires(void)
{
    float *dev, *pinned;
    hipStream_t s;
    seen got = {0};
    MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    MUST(hipMalloc((void **)&dev, 1 << 16));
    MUST(hipHostMalloc((void **)&pinned, 1 << 16, 0));
    MUST(hipMemcpyAsync(pinned, dev, 1 << 16, hipMemcpyDeviceToHost, s));
    MUST(hipStreamAddCallback(s, note, &got, 0));
    while (!__atomic_load_n(&got.calls, __ATOMIC_ACQUIRE))
        usleep(100);           /* the callback ran: the copy before it is done */
    MUST(hipHostFree(pinned)); /* no stream synchronisation: the callback was the program's */
    printf("callback: %d call, own stream %s, status %d\n", got.calls, got.stream == s ? "yes" : "no", (int)got.status);
    hipError_t e = hipStreamAddCallback(s, NULL, NULL, 0); /* the runtime's to refuse, not hipshadow's to box */
    printf("no callback: %s\n", e == hipErrorInvalidValue ? "refused" : "accepted");
    hipError_t (*launch_host_func)(hipStream_t, void (*)(void *), void *) =
        (hipError_t(*)(hipStream_t, void (*)(void *), void *))dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
    if (launch_host_func)
        printf("no host function: %s\n",
               launch_host_func(s, NULL, NULL) == hipErrorInvalidValue ? "refused" : "accepted");
    MUST(hipFree(dev));
    MUST(hipStreamDestroy(s));
    return got.calls == 1 && got.stream == s && got.status == hipSuccess ? 0 : 1;
}

static long resident_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    if (f)
        fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int churn(long n)
{
    /* Debian's libamdhip64 5.2 does not export hipLaunchHostFunc: found at run time */
    hipError_t (*launch_host_func)(hipStream_t, void (*)(void *), void *) =
        (hipError_t(*)(hipStream_t, void (*)(void *), void *))dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    int ran = 0;
    seen got = {0};
    long before = 0;
    for (long i = 0; i < n; i++) {
        if (i == n / 10)
            before = resident_kib(); /* after a warm-up */
        if (launch_host_func)
            MUST(launch_host_func(s, count, &ran));
        MUST(hipStreamAddCallback(s, note, &got, 0));
    }
    MUST(hipStreamSynchronize(s));
    long growth = resident_kib() - before;
    printf("churn: %d host functions and %d callbacks ran, resident growth %ld KiB%s\n", ran, got.calls, growth,
           SANITIZED ? " (sanitizer build: not checked)" : "");
    MUST(hipStreamDestroy(s));
    return growth > 4096 && !SANITIZED ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "churn"))
        return churn(atol(argv[2]));
    return retires();
}
