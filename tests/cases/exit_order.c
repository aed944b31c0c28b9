/* Hardening: wrapped calls while the process exits.
 *   exit_order atexit   an atexit handler (registered in main, so it runs before hipshadow's
 *                       destructor) makes a bad copy and frees: counted in the SUMMARY, exitcode=
 *                       applies.
 *   exit_order late     the program's destructor registers an exit handler; it runs after
 *                       hipshadow's SUMMARY and makes a bad copy and a clean one: still reported
 *                       (with a line saying it came after the SUMMARY), no crash, exit 0.
 *   exit_order thread   a thread copies in a loop while main returns: exit runs under it.  No
 *                       crash, no hang, no finding.
 * Each prints "exit_order MODE: main done" from main and "exit_order: handler done" (stderr)
 * from its handler. */
#include "common.h"

#include <pthread.h>
#include <string.h>

static char *dev;

static void bad_copy_then_free(void)
{
    char host[256];
    TRY(hipMemcpyDtoH(host, dev, 200)); /* 72 bytes past the end */
    MUST(hipMemcpyDtoH(host, dev, 128));
    MUST(hipFree(dev));
    fprintf(stderr, "exit_order: handler done\n");
}

static int late_mode;

static void late_handler(void *arg)
{
    (void)arg;
    bad_copy_then_free();
}

/* Itanium C++ ABI; no DSO handle: atexit() from here would tie the handler to this program, whose
 * finalisation (right after this destructor) would run it before hipshadow's destructor. */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso_handle);

__attribute__((destructor)) static void program_destructor(void)
{
    /* registered during exit, before hipshadow's destructor registers its own (the SUMMARY):
     * exit runs the newest first, so this comes after the SUMMARY */
    if (late_mode)
        __cxa_atexit(late_handler, NULL, NULL);
}

static void *copier(void *arg)
{
    (void)arg;
    char host[128];
    for (;;) {
        char *d;
        if (hipMalloc((void **)&d, 128) != hipSuccess)
            continue;
        hipMemcpyHtoD(d, host, sizeof host);
        hipMemcpyDtoH(host, d, sizeof host);
        hipFree(d);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    MUST(hipMalloc((void **)&dev, 128));
    if (!strcmp(argv[1], "atexit")) {
        atexit(bad_copy_then_free);
    } else if (!strcmp(argv[1], "late")) {
        late_mode = 1;
    } else if (!strcmp(argv[1], "thread")) {
        pthread_t t;
        for (int i = 0; i < 2; i++)
            pthread_create(&t, NULL, copier, NULL);
        char host[128];
        for (int i = 0; i < 1000; i++) /* the copiers are running */
            MUST(hipMemcpyDtoH(host, dev, sizeof host));
    } else {
        return 2;
    }
    printf("exit_order %s: main done\n", argv[1]);
    fflush(stdout);
    return 0;
}
