/* stream-race and uninitialized-read on the simulated libcuda (the driver layer sees the calls).
 * CUDA says nothing of what a kernel reads or writes: a kernel's pointer argument is a possible
 * write, and a race with it a warning.  Kernels are host functions (simcuda_function_from_host).
 *   kernel-then-copy   fill writes buf on stream A; an async D2H of buf on stream B, nothing orders them
 *   event              the same with an event recorded on A and waited on by B (clean)
 *   uninit-d2h         (initcheck=1) a D2H of a buffer nothing wrote */
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
