/* Kernels on the simulated runtime (sim_kernels.h).
 *   far-write    poke writes 1 GiB past its buffer; a later, valid D2H returns the fault
 *   freed-arg    poke is launched on a buffer freed just before
 *   known-kernel poke is launched clean first (later launches of it take the fast path), then
 *                on a stream destroyed just before and on a buffer freed just before
 *   same-words-freed  poke launched clean twice on one buffer, then, the buffer freed, a third
 *                time with the very same arguments: only the free tells the launches apart
 *   known-refused  poke launched clean, then once with a zero grid (refused), then far-write: the
 *                refused launch, which never ran, is no suspect of the fault
 *   serialize    three launches on two streams, the middle one faulting, then a D2H
 *   overflow     poke writes 40 bytes past the end of a 4000-byte buffer (caught by redzones=N)
 *   stub-freed-arg  freed-arg, launched the way hipcc-built programs launch: the fat binary and
 *                the kernel's host stub registered as hipcc's constructors do, then hipLaunchKernel
 *   overflow-at-exit  overflow, with no synchronisation before exit (redzones checked at exit)
 *   overflow-async    overflow on a hipMallocAsync allocation
 *   host-fn-retires   a host function after a launch, then another stream's launch faults
 *   overflow-two-devices  overflow on device 1 while device 0 also has an allocation
 *   fault-near-older-launch  the newest launch faults 40 bytes past an older launch's allocation
 *   clean        a two-stream pipeline of kernels, events and copies (no finding) */
#include "common.h"
#include "sim_kernels.h"

#include <dlfcn.h>
#include <string.h>

static sim_kernels kern;

static hipError_t launch_poke(int *p, long long offset, int value, hipStream_t s)
{
    void *params[] = {&p, &offset, &value};
    return hipModuleLaunchKernel(kern.poke, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

static hipError_t launch_scale(float *out, const float *in, int n, float k, hipStream_t s)
{
    void *params[] = {&out, &in, &n, &k};
    return hipModuleLaunchKernel(kern.scale, (unsigned)(n + 63) / 64, 1, 1, 64, 1, 1, 0, s, params, NULL);
}

static int far_write(void)
{
    int *a, host[1024];
    MUST(hipMalloc((void **)&a, sizeof host));
    MUST(launch_poke(a, 1ll << 28, 7, 0));    /* the launch succeeds: the kernel faults on the device */
    TRY(hipMemcpyDtoH(host, a, sizeof host)); /* a valid copy: it returns the kernel's fault */
    return 0;
}

static int freed_arg(void)
{
    int *a, *b, host[1024];
    MUST(hipMalloc((void **)&a, sizeof host));
    MUST(hipMalloc((void **)&b, sizeof host));
    MUST(hipFree(a));
    TRY(launch_poke(a, 0, 7, 0));
    TRY(hipMemcpyDtoH(host, b, sizeof host));
    return 0;
}

static int known_kernel(void)
{
    int *a, *b, host[1024];
    hipStream_t s;
    MUST(hipMalloc((void **)&a, sizeof host));
    MUST(hipMalloc((void **)&b, sizeof host));
    MUST(launch_poke(b, 0, 7, 0));
    MUST(hipDeviceSynchronize());
    MUST(hipStreamCreate(&s));
    MUST(hipStreamDestroy(s));
    TRY(launch_poke(b, 0, 7, s)); /* invalid-stream */
    MUST(hipFree(a));
    TRY(launch_poke(a, 0, 7, 0)); /* kernel-use-after-free */
    TRY(hipMemcpyDtoH(host, b, sizeof host));
    return 0;
}

static int same_words_freed(void)
{
    int *a, *b, host[1024];
    MUST(hipMalloc((void **)&a, sizeof host));
    MUST(hipMalloc((void **)&b, sizeof host));
    MUST(launch_poke(a, 0, 7, 0));
    MUST(launch_poke(a, 0, 7, 0)); /* the same kernel and words as the launch before */
    MUST(hipDeviceSynchronize());
    MUST(hipFree(a));
    TRY(launch_poke(a, 0, 7, 0)); /* kernel-use-after-free */
    TRY(hipMemcpyDtoH(host, b, sizeof host));
    return 0;
}

static int known_refused(void)
{
    int *a, *b, host[1024], zero = 0;
    MUST(hipMalloc((void **)&a, sizeof host));
    MUST(hipMalloc((void **)&b, sizeof host));
    MUST(launch_poke(b, 0, 7, 0));
    MUST(hipDeviceSynchronize());
    long long offset = 0;
    int value = 1;
    void *params[] = {&b, &offset, &value};
    TRY(hipModuleLaunchKernel(kern.poke, (unsigned)zero, 1, 1, 1, 1, 1, 0, 0, params, NULL)); /* refused */
    MUST(launch_poke(a, 1ll << 28, 7, 0));                                                    /* faults on the device */
    TRY(hipMemcpyDtoH(host, b, sizeof host));
    return 0;
}

static int overflow(void)
{
    int *a, host[1000];
    MUST(hipMalloc((void **)&a, sizeof host)); /* 4000 bytes: 1000 ints */
    MUST(launch_poke(a, 1010, 7, 0));          /* bytes 4040..4043: 40 bytes past the end */
    MUST(hipMemcpyDtoH(host, a, sizeof host)); /* a synchronisation point: the redzone is read back */
    MUST(hipFree(a));
    hipError_t stale = hipGetLastError(); /* nothing hipshadow did may show here */
    if (stale != hipSuccess) {
        fprintf(stderr, "hipGetLastError: %d, left by a call the program did not make\n", (int)stale);
        return 98;
    }
    return 0;
}

/* What hipcc's generated constructor does for test_kernels.hip's poke. */
static void poke_stub(void) {}

static int stub_freed_arg(void)
{
    void **(*reg_fatbin)(const void *) = (void **(*)(const void *))dlsym(RTLD_DEFAULT, "__hipRegisterFatBinary");
    void (*reg_fn)(void **, const void *, char *, const char *, unsigned, void *, void *, void *, void *,
                   int *) = (void (*)(void **, const void *, char *, const char *, unsigned, void *, void *, void *,
                                      void *, int *))dlsym(RTLD_DEFAULT, "__hipRegisterFunction");
    static struct {
        unsigned magic, version;
        const void *binary;
        void *unused;
    } wrapper = {0x48495046, 1, NULL, NULL};
    wrapper.binary = hs_test_kernels;
    if (!reg_fatbin || !reg_fn)
        return 77;
    void **modules = reg_fatbin(&wrapper);
    reg_fn(modules, (const void *)poke_stub, (char *)"poke", "poke", 0, NULL, NULL, NULL, NULL, NULL);
    int *a, *b, host[1024];
    long long offset = 0;
    int value = 7;
    MUST(hipMalloc((void **)&a, sizeof host));
    MUST(hipMalloc((void **)&b, sizeof host));
    MUST(hipFree(a));
    void *params[] = {&a, &offset, &value};
    dim3 one = {1, 1, 1};
    TRY(hipLaunchKernel((const void *)poke_stub, one, one, params, 0, 0));
    TRY(hipMemcpyDtoH(host, b, sizeof host));
    return 0;
}

static int serialize(void)
{
    int *a, *b, host[1024];
    hipStream_t s1, s2;
    MUST(hipStreamCreate(&s1));
    MUST(hipStreamCreate(&s2));
    MUST(hipMalloc((void **)&a, sizeof host));
    MUST(hipMalloc((void **)&b, sizeof host));
    MUST(launch_poke(a, 0, 1, s1));
    MUST(launch_poke(b, 1ll << 28, 2, s2)); /* the one that faults */
    MUST(launch_poke(a, 1, 3, s1));
    TRY(hipMemcpyDtoH(host, a, sizeof host));
    return 0;
}

/* A fault next to allocation a, made through a pointer into b by the newest launch: the older
 * launch on a is named first, as the one whose allocation the address belongs to. */
static int fault_near_older_launch(void)
{
    int *a, *b;
    hipStream_t s1, s2;
    MUST(hipStreamCreate(&s1));
    MUST(hipStreamCreate(&s2));
    MUST(hipMalloc((void **)&a, 4000));
    MUST(hipMalloc((void **)&b, 4000));
    long long back = ((char *)a + 4040 - (char *)b) / (long long)sizeof(int); /* 40 bytes past a's end */
    MUST(launch_poke(a, 0, 1, s1));
    MUST(launch_poke(b, back, 2, s2)); /* faults */
    TRY(hipStreamSynchronize(s2));
    return 0;
}

/* Redzones on two devices: hipshadow's kernel, which reads from one device, is not used. */
static int overflow_two_devices(void)
{
    int *a, *b, host[1000];
    MUST(hipMalloc((void **)&a, sizeof host)); /* device 0 */
    MUST(hipSetDevice(1));
    MUST(hipMalloc((void **)&b, sizeof host)); /* device 1 */
    MUST(launch_poke(b, 1010, 7, 0));
    MUST(hipMemcpyDtoH(host, b, sizeof host));
    MUST(hipSetDevice(0));
    MUST(hipFree(a));
    MUST(hipFree(b));
    return 0;
}

/* Redzones at exit: the program never synchronises after its last launch. */
static int overflow_at_exit(void)
{
    int *a;
    MUST(hipMalloc((void **)&a, 4000));
    MUST(launch_poke(a, 1010, 7, 0)); /* 40 bytes past the end, and then exit */
    return 0;
}

/* Redzones on a stream-ordered allocation. */
static int overflow_async(void)
{
    int *a, host[1000];
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    MUST(hipMallocAsync((void **)&a, sizeof host, s));
    MUST(launch_poke(a, 1010, 7, s));
    MUST(hipStreamSynchronize(s)); /* a synchronisation point: the redzone is checked */
    MUST(hipMemcpyDtoH(host, a, sizeof host));
    MUST(hipFreeAsync(a, s));
    MUST(hipStreamSynchronize(s));
    return 0;
}

static void host_note(void *flag) { *(int *)flag = 1; }

/* A host function retires the work before it on its stream: once it ran, the launch before it is
 * no suspect of a later fault. */
static int host_fn_retires(void)
{
    int *a, *b, host[1024], ran = 0;
    hipStream_t s1, s2;
    MUST(hipStreamCreate(&s1));
    MUST(hipStreamCreate(&s2));
    MUST(hipMalloc((void **)&a, sizeof host));
    MUST(hipMalloc((void **)&b, sizeof host));
    /* Debian's libamdhip64 5.2 does not export it: found at run time (hipshadow's wrapper). */
    hipError_t (*launch_host_func)(hipStream_t, void (*)(void *), void *) =
        (hipError_t(*)(hipStream_t, void (*)(void *), void *))dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
    if (!launch_host_func)
        return 77;
    MUST(launch_poke(a, 0, 1, s1));
    MUST(launch_host_func(s1, host_note, &ran));
    while (!__atomic_load_n(&ran, __ATOMIC_ACQUIRE))
        ;                                   /* the host function has run: poke(a) is done */
    MUST(launch_poke(b, 1ll << 28, 2, s2)); /* faults */
    TRY(hipMemcpyDtoH(host, a, sizeof host));
    return 0;
}

static int clean(void)
{
    enum { N = 4096 };
    float *in, *mid, *out, host[N], back[N];
    hipStream_t s1, s2;
    hipEvent_t done;
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    MUST(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    MUST(hipEventCreate(&done));
    MUST(hipMalloc((void **)&in, sizeof host));
    MUST(hipMalloc((void **)&mid, sizeof host));
    MUST(hipMalloc((void **)&out, sizeof host));
    for (int round = 0; round < 4; round++) {
        MUST(hipMemcpyAsync(in, host, sizeof host, hipMemcpyHostToDevice, s1));
        MUST(launch_scale(mid, in, N, 2.0f, s1));
        MUST(hipEventRecord(done, s1));
        MUST(hipStreamWaitEvent(s2, done, 0));
        MUST(launch_scale(out, mid, N, 0.5f, s2));
        MUST(hipMemcpyAsync(back, out, sizeof back, hipMemcpyDeviceToHost, s2));
        MUST(hipStreamSynchronize(s2));
    }
    int bad = memcmp(host, back, sizeof host) != 0;
    MUST(hipFree(in));
    MUST(hipFree(mid));
    MUST(hipFree(out));
    printf("kernels clean: data %s\n", bad ? "WRONG" : "round-trips");
    return bad;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(void);
    } cases[] = {
        {"far-write", far_write},
        {"freed-arg", freed_arg},
        {"known-kernel", known_kernel},
        {"same-words-freed", same_words_freed},
        {"known-refused", known_refused},
        {"serialize", serialize},
        {"clean", clean},
        {"overflow", overflow},
        {"stub-freed-arg", stub_freed_arg},
        {"overflow-at-exit", overflow_at_exit},
        {"overflow-async", overflow_async},
        {"host-fn-retires", host_fn_retires},
        {"overflow-two-devices", overflow_two_devices},
        {"fault-near-older-launch", fault_near_older_launch},
    };
    sim_kernels_load(&kern);
    for (size_t i = 0; argc > 1 && i < sizeof cases / sizeof *cases; i++)
        if (!strcmp(argv[1], cases[i].name))
            return cases[i].fn();
    fprintf(stderr,
            "usage: kernel_cases "
            "far-write|freed-arg|known-kernel|known-refused|serialize|clean|overflow|stub-freed-arg|overflow-at-exit|"
            "overflow-async|host-fn-retires\n");
    return 2;
}
