/* A program for tools/sampler's check: it spins in outside_window, then in spin_here, then in
 * outside_window again; with the argument "window" it raises SIGUSR2 itself around spin_here (the
 * sampler's window).  Run that only with the sampler preloaded: SIGUSR2 is the sampler's. */
#include <signal.h>
#include <string.h>
#include <time.h>

static double seconds_since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) * 1e-9;
}

static volatile double sink;

/* Each its own loop: a sample names the function it lands in, not its callers. */
#define SPIN(seconds)                                                                                                  \
    do {                                                                                                               \
        struct timespec a;                                                                                             \
        clock_gettime(CLOCK_MONOTONIC, &a);                                                                            \
        do                                                                                                             \
            for (int i = 0; i < 10000; i++)                                                                            \
                sink += i * 0.5;                                                                                       \
        while (seconds_since(&a) < (seconds));                                                                         \
    } while (0)

__attribute__((noinline)) void outside_window(void) { SPIN(0.15); }
__attribute__((noinline)) void spin_here(void) { SPIN(0.3); }

int main(int argc, char **argv)
{
    int window = argc > 1 && !strcmp(argv[1], "window");
    outside_window();
    if (window)
        raise(SIGUSR2);
    spin_here();
    if (window)
        raise(SIGUSR2);
    outside_window();
    return 0;
}
