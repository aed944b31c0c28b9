/* stream-race and uninitialized-read on the simulated libcuda (the driver layer sees the calls).
 * CUDA says nothing of what a kernel reads or writes: a kernel's pointer argument is a possible
 * write, and a race with it a warning.  Kernels are host functions (simcuda_function_from_host).
 *   kernel-then-copy   fill writes buf on stream A; an async D2H of buf on stream B, nothing orders them
 *   event              the same with an event recorded on A and waited on by B (clean)
 *   uninit-d2h         (initcheck=1) a D2H of a buffer nothing wrote
 *   struct-freed       a kernel whose one parameter is a struct passed by value (a count, -1, two
 *                      floats, a pointer: PyTorch's by-value arguments) whose pointer is freed memory:
 *                      the scan of its words finds it (a scanned word: a warning), and the
 *                      kernel's fault at the next synchronisation is traced to the launch
 *   struct-clean       the same with a live pointer (clean) */
#include "simcuda.h"

#include <cuda.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 64 };

static void fill(void **params)
{
    int *p = *(int **)params[0];
    int n = *(int *)params[1];
    if (simcuda_device_range_ok(p, n * sizeof(int), 1))
        for (int i = 0; i < n; i++)
            p[i] = i;
}

/* A by-value parameter: words below, above and inside the allocations' addresses. */
typedef struct by_value {
    long long n;
    long long none; /* -1 */
    float scale[2];
    int *p;
} by_value;

static void fill_by_value(void **params)
{
    const by_value *v = params[0];
    if (simcuda_device_range_ok(v->p, (size_t)v->n * sizeof(int), 1))
        for (long long i = 0; i < v->n; i++)
            v->p[i] = (int)i;
}

#define MUST(x)                                                                                                        \
    do {                                                                                                               \
        if ((x) != CUDA_SUCCESS) {                                                                                     \
            fprintf(stderr, "%s failed\n", #x);                                                                        \
            return 99;                                                                                                 \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    CUcontext ctx;
    CUdeviceptr buf;
    CUstream a, b;
    int *pinned;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuMemAlloc(&buf, N * sizeof(int)));
    MUST(cuMemAllocHost((void **)&pinned, N * sizeof(int)));
    MUST(cuStreamCreate(&a, 0));
    MUST(cuStreamCreate(&b, 0));
    if (!strcmp(mode, "uninit-d2h")) {
        MUST(cuMemcpyDtoH(pinned, buf, N * sizeof(int)));
    } else if (!strncmp(mode, "struct-", 7)) {
        static const size_t sizes[] = {sizeof(by_value)};
        CUfunction f = simcuda_function_from_host(fill_by_value);
        if (!f || simcuda_function_set_param_sizes(f, 1, sizes) != CUDA_SUCCESS)
            return 99;
        CUdeviceptr other;
        MUST(cuMemAlloc(&other, N * sizeof(int)));
        if (!strcmp(mode, "struct-freed"))
            MUST(cuMemFree(other));
        by_value v = {.n = N, .none = -1, .scale = {0.5f, 2.0f}, .p = (int *)other};
        void *params[] = {&v};
        MUST(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, a, params, NULL));
        if (strcmp(mode, "struct-freed")) {
            MUST(cuStreamSynchronize(a));
            MUST(cuMemFree(other));
        } else if (cuStreamSynchronize(a) != CUDA_ERROR_ILLEGAL_ADDRESS) { /* the kernel faulted on it */
            fprintf(stderr, "the kernel's write into freed memory did not fault\n");
            return 99;
        } else {
            printf("cuda stream_race %s: done\n", mode); /* the context is lost: nothing more to do */
            return 0;
        }
    } else {
        static const size_t sizes[] = {sizeof(int *), sizeof(int)};
        CUfunction f = simcuda_function_from_host(fill);
        if (!f || simcuda_function_set_param_sizes(f, 2, sizes) != CUDA_SUCCESS)
            return 99;
        int n = N;
        void *params[] = {&buf, &n};
        MUST(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, a, params, NULL));
        if (!strcmp(mode, "event")) {
            CUevent ev;
            MUST(cuEventCreate(&ev, 0));
            MUST(cuEventRecord(ev, a));
            MUST(cuStreamWaitEvent(b, ev, 0));
        }
        MUST(cuMemcpyDtoHAsync(pinned, buf, N * sizeof(int), b));
        MUST(cuStreamSynchronize(b));
        MUST(cuStreamSynchronize(a));
    }
    MUST(cuStreamDestroy(a));
    MUST(cuStreamDestroy(b));
    MUST(cuMemFreeHost(pinned));
    MUST(cuMemFree(buf));
    printf("cuda stream_race %s: done\n", mode);
    return 0;
}
