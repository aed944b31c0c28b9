/* Planted stream races and uninitialised reads on the simulated runtime (kernels: scale from
 * sim_kernels.h, whose code object says out is written and in is read).
 * A second argument "restrict" launches scale_r instead, whose code object says out is
 * write_only and in read_only (a race with it is an error, not a warning).
 *   kernel-then-copy   scale on stream A writes out; an async D2H of out on stream B, no event
 *   copy-then-kernel   an async D2H of buf on B is in flight; scale on A overwrites buf
 *   write-under-read   (restrict) scale_r on A reads in; an async H2D into in on B (both known: an error)
 *   event              kernel-then-copy with an event recorded on A and waited on by B (clean)
 *   sync               kernel-then-copy with hipStreamSynchronize(A) between (clean)
 *   device-sync        the same with hipDeviceSynchronize (clean)
 *   uninit-d2h         (initcheck=1) a D2H of a buffer nothing wrote
 *   uninit-short       (initcheck=1) a memset one float short of the buffer, then scale reads it
 *   uninit-clean       (initcheck=1) the buffer fully written, scale, D2H (clean)
 *   pool-disjoint      one pool allocation: scale on A and scale on B, each given its own interior
 *                      sub-buffers (clean: an interior pointer's extent is not known)
 *   pool-disjoint-again  pool-disjoint, A's launch made twice: the second takes its argument facts
 *                      from the memo of recent launches, interior offsets included
 *   pool-copy-kernel   an async H2D into a sub-buffer of the pool on A; scale on B reads that
 *                      sub-buffer, nothing orders them (the race is still found)
 *   pool-copy-known-kernel  the same scale on B made once before, clean and synchronised: the
 *                      memo of recent launches answers its words, and the race is still found
 *   kernel-then-kernel scale on A writes out; scale on B writes out too, no event
 *   kernel-sync-kernel the same with hipStreamSynchronize(A) between (clean)
 *   kernels-then-copy  scale on A writes out, then 8 more scales on A write another buffer; an
 *                      async D2H of out on B (with ledger_size=4 the first launch's record is
 *                      overwritten before B's copy: the race is still found)
 *   twice-asked        kernel-then-copy, then scale on A writes another buffer and an async D2H
 *                      of it on B: B asks for A's launches twice, and the second race is found too
 *   copies-then-kernel an async D2H of out on B, then 300 async D2H of another buffer on B (more
 *                      than a stream's waiting copies hold); scale on A overwrites out
 *   d2d-then-kernel    an async D2D of in into out on A (the fast path's: nothing else is in
 *                      flight); scale on B overwrites out, no event
 *   d2d-sync-kernel    the same with hipStreamSynchronize(A) between (clean)
 *   kernel-then-d2d    scale on A reads in (and may write it); an async D2D of out into in on B,
 *                      no event */
#include "common.h"
#include "sim_kernels.h"

#include <string.h>

static sim_kernels kern;

/* restrict: scale_r, whose metadata says what it reads and writes; else scale, whose does not */
static int restrict_args;

static hipError_t launch_scale(float *out, const float *in, int n, hipStream_t s)
{
    float k = 2.0f;
    void *params[] = {&out, &in, &n, &k};
    return hipModuleLaunchKernel(restrict_args ? kern.scale_r : kern.scale, (unsigned)(n + 63) / 64, 1, 1, 64, 1, 1, 0,
                                 s, params, NULL);
}

enum { N = 64 };

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    restrict_args = argc > 2 && !strcmp(argv[2], "restrict");
    sim_kernels_load(&kern);
    float host[N], *in, *out;
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    MUST(hipMalloc((void **)&in, sizeof host));
    MUST(hipMalloc((void **)&out, sizeof host));
    hipStream_t a, b;
    MUST(hipStreamCreate(&a));
    MUST(hipStreamCreate(&b));
    if (!strncmp(mode, "pool-", 5)) {
        float *pool, *pinned;
        MUST(hipMalloc((void **)&pool, 5 * sizeof host));
        MUST(hipMemset(pool, 0, 5 * sizeof host));
        MUST(hipHostMalloc((void **)&pinned, sizeof host, 0));
        if (!strcmp(mode, "pool-disjoint") || !strcmp(mode, "pool-disjoint-again")) {
            MUST(launch_scale(pool + N, pool + 2 * N, N, a));
            if (!strcmp(mode, "pool-disjoint-again")) /* the same kernel and words: its facts remembered */
                MUST(launch_scale(pool + N, pool + 2 * N, N, a));
            MUST(launch_scale(pool + 3 * N, pool + 4 * N, N, b));
        } else {
            if (!strcmp(mode, "pool-copy-known-kernel")) { /* its facts remembered, nothing racing yet */
                MUST(launch_scale(pool + 3 * N, pool + 2 * N, N, b));
                MUST(hipDeviceSynchronize());
            }
            MUST(hipMemcpyAsync(pool + 2 * N, pinned, sizeof host, hipMemcpyHostToDevice, a));
            MUST(launch_scale(pool + 3 * N, pool + 2 * N, N, b));
        }
        MUST(hipDeviceSynchronize());
        MUST(hipHostFree(pinned));
        MUST(hipFree(pool));
    } else if (!strcmp(mode, "kernel-then-kernel") || !strcmp(mode, "kernel-sync-kernel")) {
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        MUST(launch_scale(out, in, N, a));
        if (!strcmp(mode, "kernel-sync-kernel"))
            MUST(hipStreamSynchronize(a));
        MUST(launch_scale(out, in, N, b));
        MUST(hipDeviceSynchronize());
    } else if (!strcmp(mode, "kernels-then-copy")) {
        float *other, *pinned;
        MUST(hipMalloc((void **)&other, sizeof host));
        MUST(hipHostMalloc((void **)&pinned, sizeof host, 0));
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        MUST(launch_scale(out, in, N, a));
        for (int i = 0; i < 8; i++)
            MUST(launch_scale(other, in, N, a));
        MUST(hipMemcpyAsync(pinned, out, sizeof host, hipMemcpyDeviceToHost, b));
        MUST(hipDeviceSynchronize());
        MUST(hipHostFree(pinned));
        MUST(hipFree(other));
    } else if (!strcmp(mode, "twice-asked")) {
        float *other, *pinned;
        MUST(hipMalloc((void **)&other, sizeof host));
        MUST(hipHostMalloc((void **)&pinned, sizeof host, 0));
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        MUST(launch_scale(out, in, N, a));
        MUST(hipMemcpyAsync(pinned, out, sizeof host, hipMemcpyDeviceToHost, b));
        MUST(launch_scale(other, in, N, a));
        MUST(hipMemcpyAsync(pinned, other, sizeof host, hipMemcpyDeviceToHost, b));
        MUST(hipDeviceSynchronize());
        MUST(hipHostFree(pinned));
        MUST(hipFree(other));
    } else if (!strcmp(mode, "copies-then-kernel")) {
        float *other, *pinned;
        MUST(hipMalloc((void **)&other, sizeof host));
        MUST(hipHostMalloc((void **)&pinned, sizeof host, 0));
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        MUST(hipMemcpy(out, host, sizeof host, hipMemcpyHostToDevice));
        MUST(hipMemcpy(other, host, sizeof host, hipMemcpyHostToDevice));
        MUST(hipMemcpyAsync(pinned, out, sizeof host, hipMemcpyDeviceToHost, b));
        for (int i = 0; i < 300; i++)
            MUST(hipMemcpyAsync(pinned, other, sizeof host, hipMemcpyDeviceToHost, b));
        MUST(launch_scale(out, in, N, a));
        MUST(hipDeviceSynchronize());
        MUST(hipHostFree(pinned));
        MUST(hipFree(other));
    } else if (!strcmp(mode, "d2d-then-kernel") || !strcmp(mode, "d2d-sync-kernel")) {
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        MUST(hipMemcpyAsync(out, in, sizeof host, hipMemcpyDeviceToDevice, a));
        if (!strcmp(mode, "d2d-sync-kernel"))
            MUST(hipStreamSynchronize(a));
        MUST(launch_scale(out, in, N, b));
        MUST(hipDeviceSynchronize());
    } else if (!strcmp(mode, "kernel-then-d2d")) {
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        MUST(launch_scale(out, in, N, a));
        MUST(hipMemcpyAsync(in, out, sizeof host, hipMemcpyDeviceToDevice, b));
        MUST(hipDeviceSynchronize());
    } else if (!strcmp(mode, "uninit-d2h")) {
        MUST(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    } else if (!strcmp(mode, "uninit-short")) {
        MUST(hipMemset(in, 0, sizeof host - sizeof(float)));
        MUST(launch_scale(out, in, N, a));
        MUST(hipStreamSynchronize(a));
    } else if (!strcmp(mode, "uninit-clean")) {
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        MUST(launch_scale(out, in, N, a));
        MUST(hipStreamSynchronize(a));
        MUST(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    } else if (!strcmp(mode, "write-under-read")) {
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        float *pinned;
        MUST(hipHostMalloc((void **)&pinned, sizeof host, 0));
        MUST(launch_scale(out, in, N, a));
        MUST(hipMemcpyAsync(in, pinned, sizeof host, hipMemcpyHostToDevice, b));
        MUST(hipDeviceSynchronize());
        MUST(hipHostFree(pinned));
    } else if (!strcmp(mode, "copy-then-kernel")) {
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        MUST(hipMemcpy(out, host, sizeof host, hipMemcpyHostToDevice));
        float *pinned;
        MUST(hipHostMalloc((void **)&pinned, sizeof host, 0));
        MUST(hipMemcpyAsync(pinned, out, sizeof host, hipMemcpyDeviceToHost, b));
        MUST(launch_scale(out, in, N, a));
        MUST(hipDeviceSynchronize());
        MUST(hipHostFree(pinned));
    } else {
        MUST(hipMemcpy(in, host, sizeof host, hipMemcpyHostToDevice));
        float *pinned;
        MUST(hipHostMalloc((void **)&pinned, sizeof host, 0));
        MUST(launch_scale(out, in, N, a));
        if (!strcmp(mode, "event")) {
            hipEvent_t ev;
            MUST(hipEventCreate(&ev));
            MUST(hipEventRecord(ev, a));
            MUST(hipStreamWaitEvent(b, ev, 0));
        } else if (!strcmp(mode, "sync")) {
            MUST(hipStreamSynchronize(a));
        } else if (!strcmp(mode, "device-sync")) {
            MUST(hipDeviceSynchronize());
        }
        MUST(hipMemcpyAsync(pinned, out, sizeof host, hipMemcpyDeviceToHost, b));
        MUST(hipStreamSynchronize(b));
        MUST(hipStreamSynchronize(a));
        MUST(hipHostFree(pinned));
    }
    MUST(hipStreamDestroy(a));
    MUST(hipStreamDestroy(b));
    MUST(hipFree(in));
    MUST(hipFree(out));
    printf("stream_race %s: done\n", mode);
    return 0;
}
