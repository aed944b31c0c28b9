/* What stream-race and initcheck tracking cost a program that works on several streams, on the
 * simulated runtime (tools/bench.sh streams runs it plain and under hipshadow with races=0,
 * races=1 and initcheck=1, interleaved).
 *   bench_streams STREAMS ROUNDS [blocking]
 * Each round, on each of STREAMS non-blocking streams (an engine's compute and copy streams are
 * non-blocking, which is what turns race tracking on; "blocking": blocking streams, with which
 * one stream leaves it off, nothing being unordered): an async H2D into that stream's input,
 * `scale` from its input into its output, an async D2H of the output, then an event recorded
 * on it.  Every stream but the first waits on the first one's event (a shared input, as weights
 * or a KV cache are), and every 64 rounds the device is synchronised.  Prints one line:
 * "streams N round NS op NS" (mean ns per round and per operation: 4 per stream per round).
 * Exits 77 without the simulator or its kernels. */
#include "bench_kernel.h"

#include <hip/hip_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_STREAMS = 16, FLOATS = 256 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int streams = argc > 1 ? atoi(argv[1]) : 4, rounds = argc > 2 ? atoi(argv[2]) : 20000;
    unsigned flags = argc > 3 && !strcmp(argv[3], "blocking") ? hipStreamDefault : hipStreamNonBlocking;
    if (streams < 1 || streams > MAX_STREAMS || rounds < 1) {
        fprintf(stderr, "usage: bench_streams STREAMS(1..%d) ROUNDS [blocking]\n", MAX_STREAMS);
        return 2;
    }
    hipFunction_t scale;
    int loaded = bench_load_scale(&scale);
    if (loaded)
        return loaded;
    hipStream_t s[MAX_STREAMS];
    hipEvent_t ev[MAX_STREAMS];
    float *in[MAX_STREAMS], *out[MAX_STREAMS], *host_in, *host_out[MAX_STREAMS];
    if (hipHostMalloc((void **)&host_in, FLOATS * sizeof(float), 0) != hipSuccess)
        return 1;
    for (int i = 0; i < FLOATS; i++)
        host_in[i] = 1;
    for (int i = 0; i < streams; i++) /* each stream its own read-back buffer: the program is race-free */
        if (hipHostMalloc((void **)&host_out[i], FLOATS * sizeof(float), 0) != hipSuccess ||
            hipStreamCreateWithFlags(&s[i], flags) != hipSuccess ||
            hipEventCreateWithFlags(&ev[i], hipEventDisableTiming) != hipSuccess ||
            hipMalloc((void **)&in[i], FLOATS * sizeof(float)) != hipSuccess ||
            hipMalloc((void **)&out[i], FLOATS * sizeof(float)) != hipSuccess)
            return 1;
    int n = FLOATS;
    float k = 2;
    double t0 = 0;
    for (int r = -100; r < rounds; r++) { /* 100 rounds of warm-up: the kernel is looked up once */
        if (r == 0)
            t0 = now_ns();
        for (int i = 0; i < streams; i++) {
            if (i > 0)
                hipStreamWaitEvent(s[i], ev[0], 0);
            hipMemcpyAsync(in[i], host_in, FLOATS * sizeof(float), hipMemcpyHostToDevice, s[i]);
            void *params[] = {&out[i], &in[i], &n, &k};
            hipModuleLaunchKernel(scale, 1, 1, 1, 64, 1, 1, 0, s[i], params, NULL);
            hipMemcpyAsync(host_out[i], out[i], FLOATS * sizeof(float), hipMemcpyDeviceToHost, s[i]);
            hipEventRecord(ev[i], s[i]);
        }
        if ((r & 63) == 63)
            hipDeviceSynchronize();
    }
    hipDeviceSynchronize();
    double round = (now_ns() - t0) / rounds;
    printf("streams %d%s round %.1f op %.1f\n", streams, flags == hipStreamDefault ? " blocking" : "", round,
           round / (4.0 * streams));
    return 0;
}
