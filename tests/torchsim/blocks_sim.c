/* PyTorch-like programs on the simulated CUDA runtime with tests/torchsim's fake caching
 * allocator (libc10_cuda.so), run under hipshadow --cuda with the plugin built against the fake
 * headers: the planted bugs on "tensors" and the clean uses.  Usage: blocks_sim CASE [N]
 * (churn N: N tokens of allocator traffic, timed; generate N [cold|apart]: N tokens of PyTorch's
 * ops, each a tensor made, a kernel launched on it and the op before's tensor let go, timed) */
#include "../bench/cache_churn.h"
#include "simcuda.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void *fake_torch_alloc(size_t n);
void fake_torch_free(void *p);
void fake_torch_empty_cache(void);

static char host[1 << 16];

static void poke(void **params)
{
    int *p = *(int **)params[0];
    if (simcuda_device_range_ok(p, sizeof *p, 1))
        *p = 7;
}

static int launch_on(void *ptr)
{
    CUfunction f = simcuda_function_from_host(poke);
    size_t sizes[] = {sizeof(CUdeviceptr)};
    simcuda_function_set_param_sizes(f, 1, sizes);
    void *params[] = {&ptr};
    int rc = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
    cuCtxSynchronize();
    return rc;
}

/* An elementwise op as PyTorch launches it: its tensors' pointers in a struct passed by value. */
typedef struct op_args {
    void *data[3];
    long n;
} op_args;

static void op(void **params)
{
    const op_args *a = params[0];
    if (simcuda_device_range_ok(a->data[2], 1, 1))
        *(char *)a->data[2] = 1;
}

/* A token's ops take turns among a few kernels, as a model's layers do (a GPT-2 token launches
 * some twenty): a launch's kernel is then rarely the one before it. */
#define OP_KERNEL(n)                                                                                                   \
    static void op##n(void **params) { op(params); }
OP_KERNEL(1)
OP_KERNEL(2)
OP_KERNEL(3)
OP_KERNEL(4)
OP_KERNEL(5)
OP_KERNEL(6)
OP_KERNEL(7)
static void (*const op_kernels[])(void **) = {op, op1, op2, op3, op4, op5, op6, op7};
enum { OP_KERNELS = sizeof op_kernels / sizeof op_kernels[0] };

/* poke launched on stream s, not waited for. */
static int launch_async(void *ptr, cudaStream_t s)
{
    CUfunction f = simcuda_function_from_host(poke);
    size_t sizes[] = {sizeof(CUdeviceptr)};
    simcuda_function_set_param_sizes(f, 1, sizes);
    void *params[] = {&ptr};
    return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, params, NULL);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    void *t = fake_torch_alloc(4000); /* a 4000-byte tensor in a 2 MiB segment */
    int rc = 0;
    if (!strcmp(c, "overrun")) {
        rc = cudaMemcpy(host, t, 4000 + 4096, cudaMemcpyDeviceToHost); /* past the tensor, inside the segment */
    } else if (!strcmp(c, "uaf")) {
        fake_torch_free(t);
        rc = cudaMemcpy(host, t, 4000, cudaMemcpyDeviceToHost);
    } else if (!strcmp(c, "reuse")) {
        fake_torch_free(t);
        void *u = fake_torch_alloc(3900); /* the same rounded size: the same block again */
        if (u != t)
            return fprintf(stderr, "the block was not reused\n"), 2;
        rc = cudaMemcpy(host, t, 3900, cudaMemcpyDeviceToHost);
    } else if (!strncmp(c, "reuse-", 6)) {
        /* written and read back, freed, handed out again: "reuse-unwritten" reads it back at once
         * (initcheck=1: its bytes are the old tensor's, never written by the new owner),
         * "reuse-written" writes it first (clean) */
        rc = cudaMemcpy(t, host, 4000, cudaMemcpyHostToDevice);
        rc |= cudaMemcpy(host, t, 4000, cudaMemcpyDeviceToHost);
        fake_torch_free(t);
        void *u = fake_torch_alloc(3900);
        if (u != t)
            return fprintf(stderr, "the block was not reused\n"), 2;
        if (!strcmp(c, "reuse-written"))
            rc |= cudaMemcpy(u, host, 3900, cudaMemcpyHostToDevice);
        rc |= cudaMemcpy(host, u, 3900, cudaMemcpyDeviceToHost);
    } else if (!strcmp(c, "kernel")) {
        fake_torch_free(t);
        rc = launch_on(t);
    } else if (!strcmp(c, "kernel-known")) {
        /* one kernel launched on the live tensor first: the second launch, on the freed block,
         * is one of a kernel seen before (the fast path's) */
        CUfunction f = simcuda_function_from_host(poke);
        size_t sizes[] = {sizeof(CUdeviceptr)};
        simcuda_function_set_param_sizes(f, 1, sizes);
        void *params[] = {&t};
        rc = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
        fake_torch_free(t);
        rc |= cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
        rc |= cuCtxSynchronize();
    } else if (!strncmp(c, "neighbour-", 10)) {
        /* A kernel on one tensor (stream a) and a copy on another stream (b), nothing ordering
         * them: "neighbour-other" copies the tensor next to it in the segment (clean: the kernel's
         * access ends at its own block, not at the segment's end), "neighbour-same" the same
         * tensor (a race). */
        void *u = fake_torch_alloc(4000);
        if ((char *)u < (char *)t || (char *)u - (char *)t > 8192)
            return fprintf(stderr, "the second tensor is not next to the first\n"), 2;
        cudaStream_t a, b;
        if (cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking) ||
            cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking))
            return 2;
        rc = launch_async(t, a);
        rc |= cudaMemcpyAsync(host, !strcmp(c, "neighbour-same") ? t : u, 4000, cudaMemcpyDeviceToHost, b);
        rc |= cudaStreamSynchronize(a) | cudaStreamSynchronize(b);
    } else if (!strcmp(c, "segment-freed")) {
        fake_torch_free(t);
        fake_torch_empty_cache(); /* the segment goes back to the driver: its blocks are forgotten */
        rc = cudaMemcpy(host, t, 4000, cudaMemcpyDeviceToHost); /* the segment's own use-after-free */
    } else if (!strcmp(c, "clean")) {
        void *v[64];
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 64; i++)
                v[i] = fake_torch_alloc(256 + 512 * (size_t)(i % 7));
            for (int i = 0; i < 64; i++)
                rc |= cudaMemcpy(host, v[i], 256 + 512 * (size_t)(i % 7), cudaMemcpyDeviceToHost);
            rc |= launch_on(v[round]);
            for (int i = 0; i < 64; i++)
                fake_torch_free(v[i]);
        }
        rc |= cudaMemcpy(host, t, 4000, cudaMemcpyDeviceToHost);
    } else if (!strcmp(c, "churn")) {
        /* a generate loop's allocator traffic: 328 tensors of a few sizes made and let go per
         * "token" (GPT-2's count); prints the mean ns per block event (alloc, free requested, free
         * completed), for tools/bench.sh blocks to compare plain and under hipshadow */
        int tokens = argc > 2 ? atoi(argv[2]) : 200;
        enum { PER_TOKEN = 328 };
        static void *v[PER_TOKEN];
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int k = 0; k < tokens; k++) {
            for (int i = 0; i < PER_TOKEN; i++)
                v[i] = fake_torch_alloc(512u << (i % 6));
            for (int i = 0; i < PER_TOKEN; i++)
                fake_torch_free(v[i]);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
        printf("block event %.1f ns\n", ns / ((double)tokens * PER_TOKEN * 3));
    } else if (!strcmp(c, "generate")) {
        /* GPT-2's ops a token (271 launches, 328 tensors): each op makes a tensor, launches a
         * kernel (the next of op_kernels) on it, the tensor before it and a weight, and lets the
         * tensor before go; every fifth op makes and lets go a temporary too.  Prints the mean ns
         * per op.  cold: a program's worth of code and data run before each op; apart: also
         * between its allocations, its launch and its frees, as the interpreter and the
         * dispatcher run between them in PyTorch itself. */
        int tokens = argc > 2 ? atoi(argv[2]) : 200;
        int apart = argc > 3 && !strcmp(argv[3], "apart");
        int cold = apart || (argc > 3 && !strcmp(argv[3], "cold"));
        enum { OPS = 271 };
        CUfunction fs[OP_KERNELS];
        size_t sizes[] = {sizeof(op_args)};
        for (int i = 0; i < OP_KERNELS; i++) {
            fs[i] = simcuda_function_from_host(op_kernels[i]);
            simcuda_function_set_param_sizes(fs[i], 1, sizes);
        }
        void *weight = fake_torch_alloc(1 << 20), *prev = fake_torch_alloc(4096);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int k = 0; k < tokens; k++)
            for (int i = 0; i < OPS; i++) {
                if (cold)
                    cache_churn();
                void *out = fake_torch_alloc(512u << (i % 5)), *tmp = i % 5 ? NULL : fake_torch_alloc(2048);
                op_args a = {{prev, weight, out}, 64};
                void *params[] = {&a};
                if (apart)
                    cache_churn();
                rc |= cuLaunchKernel(fs[i % OP_KERNELS], 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
                if (apart)
                    cache_churn();
                if (tmp)
                    fake_torch_free(tmp);
                fake_torch_free(prev);
                prev = out;
            }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        rc |= cuCtxSynchronize();
        double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
        printf("op %.1f ns\n", ns / ((double)tokens * OPS));
    } else {
        return 2;
    }
    printf("case %s: result %d\n", c, rc);
    return 0;
}
