/* last_error.c's rows for the per-thread-default-stream entry points: built with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, so cuda_runtime_api.h turns cudaMemcpy into cudaMemcpy_ptds,
 * cudaMemcpyAsync into cudaMemcpyAsync_ptsz and so on, and the stream 0 is the calling thread's
 * own. */
#include "last_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "build with -DCUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

#define MUST(call)                                                                                                     \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_));                                           \
            exit(99);                                                                                                  \
        }                                                                                                              \
    } while (0)

static int host_fn_calls;
static void CUDART_CB host_fn(void *data)
{
    (void)data;
    host_fn_calls++;
}
static void CUDART_CB callback(cudaStream_t s, cudaError_t status, void *data)
{
    (void)s;
    (void)status;
    (void)data;
    host_fn_calls++;
}

static void copy_rows(const le_res *r)
{
    const enum cudaMemcpyKind bad_kind = (enum cudaMemcpyKind)7;
    void *p = NULL;

    le_row("cudaMemcpy_ptds");
    FAIL(cudaMemcpy(r->dev, r->host, 64, bad_kind));
    OK(cudaMemcpy(r->dev, r->host, 64, cudaMemcpyHostToDevice));
    le_end();

    le_row("cudaMemcpyAsync_ptsz");
    FAIL(cudaMemcpyAsync(r->dev, r->pinned, 64, bad_kind, 0));
    OK(cudaMemcpyAsync(r->dev, r->pinned, 64, cudaMemcpyHostToDevice, 0));
    le_end();

    le_row("cudaMemcpy2D_ptds");
    FAIL(cudaMemcpy2D(r->dev, 32, r->host, 64, 64, 4, cudaMemcpyHostToDevice));
    OK(cudaMemcpy2D(r->dev, 64, r->host, 64, 64, 4, cudaMemcpyHostToDevice));
    le_end();

    le_row("cudaMemcpy2DAsync_ptsz");
    FAIL(cudaMemcpy2DAsync(r->dev, 32, r->pinned, 64, 64, 4, cudaMemcpyHostToDevice, 0));
    OK(cudaMemcpy2DAsync(r->dev, 64, r->pinned, 64, 64, 4, cudaMemcpyHostToDevice, 0));
    le_end();

    le_row("cudaMemset_ptds");
    FAIL(cudaMemset(r->host, 0, 64));
    OK(cudaMemset(r->dev, 0, 64));
    le_end();

    le_row("cudaMemsetAsync_ptsz");
    FAIL(cudaMemsetAsync(r->host, 0, 64, 0));
    OK(cudaMemsetAsync(r->dev, 0, 64, 0));
    le_end();

    le_row("cudaMallocAsync_ptsz");
    FAIL(cudaMallocAsync(&p, 1ull << 50, 0));
    OK(cudaMallocAsync(&p, 4096, 0));
    le_end();

    le_row("cudaFreeAsync_ptsz");
    FAIL(cudaFreeAsync((char *)p + 64, 0));
    OK(cudaFreeAsync(p, 0));
    le_end();

    cudaMemPool_t pool = NULL;
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    MUST(cudaMemPoolCreate(&pool, &props));
    le_row("cudaMallocFromPoolAsync_ptsz");
    FAIL(cudaMallocFromPoolAsync(&p, 4096, NULL, 0));
    OK(cudaMallocFromPoolAsync(&p, 4096, pool, 0));
    le_end();
    MUST(cudaFreeAsync(p, 0));
    MUST(cudaStreamSynchronize(0));
    MUST(cudaMemPoolDestroy(pool));
}

static void stream_rows(const le_res *r)
{
    cudaStream_t cap = NULL;
    cudaGraph_t graph = NULL;
    enum cudaStreamCaptureStatus status;
    MUST(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));

    MUST(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed));
    le_row("cudaStreamSynchronize_ptsz");
    FAIL(cudaStreamSynchronize(cap));
    OK(cudaStreamSynchronize(0));
    le_end();
    cudaStreamEndCapture(cap, &graph);

    MUST(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed));
    le_row("cudaStreamQuery_ptsz");
    FAIL(cudaStreamQuery(cap));
    OK(cudaStreamQuery(0));
    le_end();
    cudaStreamEndCapture(cap, &graph);

    le_row("cudaEventRecord_ptsz");
    FAIL(cudaEventRecord(NULL, 0));
    OK(cudaEventRecord(r->event, 0));
    le_end();

    le_row("cudaEventRecordWithFlags_ptsz");
    FAIL(cudaEventRecordWithFlags(NULL, 0, 0));
    OK(cudaEventRecordWithFlags(r->event, 0, 0));
    le_end();

    le_row("cudaStreamWaitEvent_ptsz");
    FAIL(cudaStreamWaitEvent(0, NULL, 0));
    OK(cudaStreamWaitEvent(0, r->event, 0));
    le_end();

    le_row("cudaStreamBeginCapture_ptsz"); /* the legacy stream cannot be captured */
    FAIL(cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeRelaxed));
    OK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed));
    le_end();

    le_row("cudaStreamIsCapturing_ptsz");
    FAIL(cudaStreamIsCapturing(cap, NULL));
    OK(cudaStreamIsCapturing(cap, &status));
    le_end();

    le_row("cudaStreamEndCapture_ptsz"); /* a stream that is not capturing */
    FAIL(cudaStreamEndCapture(r->stream, &graph));
    OK(cudaStreamEndCapture(cap, &graph));
    le_end();

    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult found;
    le_row("cudaGetDriverEntryPoint_ptsz");
    FAIL(cudaGetDriverEntryPoint("cuMemAlloc", &fn, 0x100, &found));
    OK(cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &found));
    le_end();

    le_row("cudaGetDriverEntryPointByVersion_ptsz");
    FAIL(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, 0x100, &found));
    OK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &found));
    le_end();

    cudaGraphExec_t exec = NULL;
    MUST(cudaGraphInstantiate(&exec, graph, 0));
    le_row("cudaGraphLaunch_ptsz");
    FAIL(cudaGraphLaunch(NULL, 0));
    OK(cudaGraphLaunch(exec, 0));
    le_end();
    MUST(cudaStreamSynchronize(0));
    MUST(cudaGraphExecDestroy(exec));
    MUST(cudaGraphDestroy(graph));
    MUST(cudaStreamDestroy(cap));
}

static void launch_rows(const le_res *r)
{
    int *p = (int *)r->dev, value = 7;
    long long offset = 2;
    void *args[] = {&p, &offset, &value};
    const dim3 one = le_dim(1, 1);

    le_row("cudaLaunchKernel_ptsz");
    FAIL(cudaLaunchKernel(le_not_a_kernel, one, one, args, 0, 0));
    OK(cudaLaunchKernel(le_fresh[1], one, one, args, 0, 0));
    le_end();

    cudaLaunchConfig_t config;
    memset(&config, 0, sizeof config);
    config.gridDim = one;
    config.blockDim = one;
    le_row("cudaLaunchKernelExC_ptsz");
    FAIL(cudaLaunchKernelExC(&config, le_not_a_kernel, args));
    OK(cudaLaunchKernelExC(&config, le_fresh[3], args));
    le_end();

    le_row("cudaLaunchCooperativeKernel_ptsz");
    FAIL(cudaLaunchCooperativeKernel(le_not_a_kernel, one, one, args, 0, 0));
    OK(cudaLaunchCooperativeKernel(le_fresh[5], one, one, args, 0, 0));
    le_end();

    le_row("cudaLaunchHostFunc_ptsz");
    FAIL(cudaLaunchHostFunc(0, NULL, NULL));
    OK(cudaLaunchHostFunc(0, host_fn, NULL));
    le_end();

    le_row("cudaStreamAddCallback_ptsz");
    FAIL(cudaStreamAddCallback(0, callback, NULL, 1));
    OK(cudaStreamAddCallback(0, callback, NULL, 0));
    le_end();
    MUST(cudaStreamSynchronize(0));
    printf("host functions and callbacks (per-thread stream): %d calls\n", host_fn_calls);
}

void le_rows_per_thread(const le_res *r)
{
    copy_rows(r);
    stream_rows(r);
    launch_rows(r);
}
