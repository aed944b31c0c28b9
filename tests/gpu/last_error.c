/* The thread's last error, row by row: every wrapped CUDA runtime entry point (src/cuda/api.inc)
 * called in a failing form, then in a succeeding form, each followed by its return code and
 * cudaPeekAtLastError, then cudaGetLastError (last_error.h says why).  The per-thread forms come
 * from last_error_ptds.c, the same kind of rows built with CUDA_API_PER_THREAD_DEFAULT_STREAM.
 * The last rows fault the GPU: the sticky error.  Exit 77 without a device, 1 when the runtime
 * broke its rule. */
#include "last_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static cudaError_t pending; /* what cudaPeekAtLastError must say, by the rule */
static int broken;          /* answers against the rule, and failing forms that did not fail */

static int failure(cudaError_t e) { return e != cudaSuccess && e != cudaErrorNotReady; }

dim3 le_dim(unsigned x, unsigned y)
{
    dim3 d;
    d.x = x;
    d.y = y;
    d.z = 1;
    return d;
}

void le_row(const char *name)
{
    cudaGetLastError();
    pending = cudaSuccess;
    printf("%-38s", name);
}

static void check(const char *what, cudaError_t got)
{
    if (got != pending) {
        printf(" (rule: %s %s)", what, cudaGetErrorName(pending));
        broken++;
    }
}

cudaError_t le_form(const char *what, cudaError_t rc)
{
    cudaError_t peek = cudaPeekAtLastError();
    if (failure(rc))
        pending = rc;
    printf(" %s %s peek %s", what, cudaGetErrorName(rc), cudaGetErrorName(peek));
    check("peek", peek);
    if (!strcmp(what, "fail") && !failure(rc)) {
        printf(" (did not fail)");
        broken++;
    }
    printf(";");
    return rc;
}

void le_end(void)
{
    cudaError_t got = cudaGetLastError();
    printf(" get %s", cudaGetErrorName(got));
    check("get", got);
    pending = cudaSuccess;
    printf("\n");
    fflush(stdout);
}

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

static void memory_rows(const le_res *r)
{
    void *p = NULL;
    size_t pitch = 0;
    const size_t huge = 1ull << 50; /* more than any device has */

    le_row("cudaMalloc");
    FAIL(cudaMalloc(&p, huge));
    OK(cudaMalloc(&p, 4096));
    le_end();

    le_row("cudaFree"); /* not an allocation's base */
    FAIL(cudaFree((char *)p + 64));
    OK(cudaFree(p));
    le_end();

    le_row("cudaMallocManaged"); /* flags: cudaMemAttachGlobal or cudaMemAttachHost */
    FAIL(cudaMallocManaged(&p, 4096, 0));
    OK(cudaMallocManaged(&p, 4096, cudaMemAttachGlobal));
    le_end();
    MUST(cudaFree(p));

    le_row("cudaMallocPitch");
    FAIL(cudaMallocPitch(&p, &pitch, 1 << 20, 1 << 30));
    OK(cudaMallocPitch(&p, &pitch, 64, 4));
    le_end();
    MUST(cudaFree(p));

    le_row("cudaMallocAsync");
    FAIL(cudaMallocAsync(&p, huge, r->stream));
    OK(cudaMallocAsync(&p, 4096, r->stream));
    le_end();

    le_row("cudaFreeAsync");
    FAIL(cudaFreeAsync((char *)p + 64, r->stream));
    OK(cudaFreeAsync(p, r->stream));
    le_end();
    MUST(cudaStreamSynchronize(r->stream));

    cudaMemPool_t pool = NULL;
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    le_row("cudaMemPoolCreate");
    FAIL(cudaMemPoolCreate(&pool, NULL));
    OK(cudaMemPoolCreate(&pool, &props));
    le_end();

    le_row("cudaMallocFromPoolAsync");
    FAIL(cudaMallocFromPoolAsync(&p, 4096, NULL, r->stream));
    OK(cudaMallocFromPoolAsync(&p, 4096, pool, r->stream));
    le_end();
    MUST(cudaFreeAsync(p, r->stream));
    MUST(cudaStreamSynchronize(r->stream));

    le_row("cudaMemPoolTrimTo");
    FAIL(cudaMemPoolTrimTo(NULL, 0));
    OK(cudaMemPoolTrimTo(pool, 0));
    le_end();

    le_row("cudaMemPoolDestroy");
    FAIL(cudaMemPoolDestroy(NULL));
    OK(cudaMemPoolDestroy(pool));
    le_end();

    le_row("cudaMallocHost");
    FAIL(cudaMallocHost(&p, huge));
    OK(cudaMallocHost(&p, 4096));
    le_end();

    le_row("cudaFreeHost"); /* pageable memory */
    FAIL(cudaFreeHost(r->host));
    OK(cudaFreeHost(p));
    le_end();

    le_row("cudaHostAlloc");
    FAIL(cudaHostAlloc(&p, 4096, 0x80));
    OK(cudaHostAlloc(&p, 4096, cudaHostAllocDefault));
    le_end();
    MUST(cudaFreeHost(p));

    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    le_row("cudaHostRegister");
    FAIL(cudaHostRegister(page, 0, cudaHostRegisterDefault));
    OK(cudaHostRegister(page, 4096, cudaHostRegisterDefault));
    le_end();

    le_row("cudaHostUnregister");
    FAIL(cudaHostUnregister(r->host));
    OK(cudaHostUnregister(page));
    le_end();
    munmap(page, 4096);
}

static void copy_rows(const le_res *r)
{
    const enum cudaMemcpyKind bad_kind = (enum cudaMemcpyKind)7;

    le_row("cudaMemcpy");
    FAIL(cudaMemcpy(r->dev, r->host, 64, bad_kind));
    OK(cudaMemcpy(r->dev, r->host, 64, cudaMemcpyHostToDevice));
    le_end();

    le_row("cudaMemcpyAsync");
    FAIL(cudaMemcpyAsync(r->dev, r->pinned, 64, bad_kind, r->stream));
    OK(cudaMemcpyAsync(r->dev, r->pinned, 64, cudaMemcpyHostToDevice, r->stream));
    le_end();

    le_row("cudaMemcpy2D"); /* a row wider than its pitch */
    FAIL(cudaMemcpy2D(r->dev, 32, r->host, 64, 64, 4, cudaMemcpyHostToDevice));
    OK(cudaMemcpy2D(r->dev, 64, r->host, 64, 64, 4, cudaMemcpyHostToDevice));
    le_end();

    le_row("cudaMemcpy2DAsync");
    FAIL(cudaMemcpy2DAsync(r->dev, 32, r->pinned, 64, 64, 4, cudaMemcpyHostToDevice, r->stream));
    OK(cudaMemcpy2DAsync(r->dev, 64, r->pinned, 64, 64, 4, cudaMemcpyHostToDevice, r->stream));
    le_end();

    le_row("cudaMemcpyPeer"); /* a device that does not exist */
    FAIL(cudaMemcpyPeer(r->dev2, 99, r->dev, 0, 64));
    OK(cudaMemcpyPeer(r->dev2, 0, r->dev, 0, 64));
    le_end();

    le_row("cudaMemcpyPeerAsync");
    FAIL(cudaMemcpyPeerAsync(r->dev2, 99, r->dev, 0, 64, r->stream));
    OK(cudaMemcpyPeerAsync(r->dev2, 0, r->dev, 0, 64, r->stream));
    le_end();

    /* A memset fails on pageable host memory, which the device cannot reach. */
    le_row("cudaMemset");
    FAIL(cudaMemset(r->host, 0, 64));
    OK(cudaMemset(r->dev, 0, 64));
    le_end();

    le_row("cudaMemsetAsync");
    FAIL(cudaMemsetAsync(r->host, 0, 64, r->stream));
    OK(cudaMemsetAsync(r->dev, 0, 64, r->stream));
    le_end();
    MUST(cudaStreamSynchronize(r->stream));
}

static void stream_rows(const le_res *r)
{
    cudaStream_t s = NULL, cap = NULL;
    cudaGraph_t graph = NULL;
    le_row("cudaStreamCreate");
    FAIL(cudaStreamCreate(NULL));
    OK(cudaStreamCreate(&s));
    le_end();
    MUST(cudaStreamDestroy(s));

    le_row("cudaStreamCreateWithFlags");
    FAIL(cudaStreamCreateWithFlags(&s, 0x10));
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    le_end();
    MUST(cudaStreamDestroy(s));

    le_row("cudaStreamCreateWithPriority");
    FAIL(cudaStreamCreateWithPriority(&s, 0x10, 0));
    OK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0));
    le_end();

    le_row("cudaStreamDestroy"); /* the legacy stream is not one's to destroy */
    FAIL(cudaStreamDestroy(0));
    OK(cudaStreamDestroy(s));
    le_end();

    /* Nothing may wait for a stream that is being captured: the capture is invalidated. */
    MUST(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
    MUST(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed));
    le_row("cudaStreamSynchronize");
    FAIL(cudaStreamSynchronize(cap));
    OK(cudaStreamSynchronize(r->stream));
    le_end();
    cudaStreamEndCapture(cap, &graph);

    MUST(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed));
    le_row("cudaStreamQuery");
    FAIL(cudaStreamQuery(cap));
    OK(cudaStreamQuery(r->stream));
    le_end();
    cudaStreamEndCapture(cap, &graph);

    MUST(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal));
    le_row("cudaDeviceSynchronize");
    FAIL(cudaDeviceSynchronize());
    le_form("end", cudaStreamEndCapture(cap, &graph));
    OK(cudaDeviceSynchronize());
    le_end();
    if (graph)
        MUST(cudaGraphDestroy(graph));
    MUST(cudaStreamDestroy(cap));
}

static void event_rows(const le_res *r)
{
    cudaEvent_t e = NULL;
    le_row("cudaEventCreate");
    FAIL(cudaEventCreate(NULL));
    OK(cudaEventCreate(&e));
    le_end();
    MUST(cudaEventDestroy(e));

    le_row("cudaEventCreateWithFlags");
    FAIL(cudaEventCreateWithFlags(&e, 0x100));
    OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    le_end();

    le_row("cudaEventRecord");
    FAIL(cudaEventRecord(NULL, r->stream));
    OK(cudaEventRecord(e, r->stream));
    le_end();

    le_row("cudaEventRecordWithFlags");
    FAIL(cudaEventRecordWithFlags(NULL, r->stream, 0));
    OK(cudaEventRecordWithFlags(e, r->stream, 0));
    le_end();

    le_row("cudaStreamWaitEvent");
    FAIL(cudaStreamWaitEvent(r->stream, NULL, 0));
    OK(cudaStreamWaitEvent(r->stream, e, 0));
    le_end();

    le_row("cudaEventSynchronize");
    FAIL(cudaEventSynchronize(NULL));
    OK(cudaEventSynchronize(e));
    le_end();

    le_row("cudaEventQuery");
    FAIL(cudaEventQuery(NULL));
    OK(cudaEventQuery(e));
    le_end();

    le_row("cudaEventDestroy");
    FAIL(cudaEventDestroy(NULL));
    OK(cudaEventDestroy(e));
    le_end();
}

static cudaGraph_t capture_rows(const le_res *r)
{
    cudaStream_t cap = NULL;
    enum cudaStreamCaptureStatus status;
    cudaGraph_t graph = NULL;
    MUST(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));

    le_row("cudaStreamBeginCapture"); /* the legacy stream cannot be captured */
    FAIL(cudaStreamBeginCapture(0, cudaStreamCaptureModeRelaxed));
    OK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed));
    le_end();

    le_row("cudaStreamIsCapturing");
    FAIL(cudaStreamIsCapturing(cap, NULL));
    OK(cudaStreamIsCapturing(cap, &status));
    le_end();

    MUST(cudaMemsetAsync(r->dev, 0, 64, cap));
    le_row("cudaStreamEndCapture"); /* a stream that is not capturing */
    FAIL(cudaStreamEndCapture(r->stream, &graph));
    OK(cudaStreamEndCapture(cap, &graph));
    le_end();
    MUST(cudaStreamDestroy(cap));
    return graph;
}

static void lookup_rows(void)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult status;
    le_row("cudaGetDriverEntryPoint"); /* flags that mean nothing */
    FAIL(cudaGetDriverEntryPoint("cuMemAlloc", &fn, 0x100, &status));
    OK(cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &status));
    le_end();

    le_row("cudaGetDriverEntryPointByVersion");
    FAIL(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, 0x100, &status));
    OK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &status));
    le_end();
}

static void not_a_kernel(void) {}
const void *const le_not_a_kernel = (const void *)not_a_kernel;

/* The failing launches launch a host function, which is no kernel (a bad geometry would say
 * cudaErrorInvalidValue, the very code a leaked cudaFuncGetParamInfo leaves); the succeeding ones
 * are each a kernel's first launch. */
static void launch_rows(const le_res *r, cudaGraph_t graph)
{
    int *p = (int *)r->dev, value = 7;
    long long offset = 1;
    void *args[] = {&p, &offset, &value};
    const dim3 one = le_dim(1, 1);

    le_row("cudaLaunchKernel");
    FAIL(cudaLaunchKernel(le_not_a_kernel, one, one, args, 0, r->stream));
    OK(cudaLaunchKernel(le_fresh[0], one, one, args, 0, r->stream));
    le_end();

    cudaLaunchConfig_t config;
    memset(&config, 0, sizeof config);
    config.gridDim = one;
    config.blockDim = one;
    config.stream = r->stream;
    le_row("cudaLaunchKernelExC");
    FAIL(cudaLaunchKernelExC(&config, le_not_a_kernel, args));
    OK(cudaLaunchKernelExC(&config, le_fresh[2], args));
    le_end();

    le_row("cudaLaunchCooperativeKernel");
    FAIL(cudaLaunchCooperativeKernel(le_not_a_kernel, one, one, args, 0, r->stream));
    OK(cudaLaunchCooperativeKernel(le_fresh[4], one, one, args, 0, r->stream));
    le_end();

    cudaGraphExec_t exec = NULL;
    MUST(cudaGraphInstantiate(&exec, graph, 0));
    le_row("cudaGraphLaunch");
    FAIL(cudaGraphLaunch(NULL, r->stream));
    OK(cudaGraphLaunch(exec, r->stream));
    le_end();
    MUST(cudaStreamSynchronize(r->stream));
    MUST(cudaGraphExecDestroy(exec));
    MUST(cudaGraphDestroy(graph));

    le_row("cudaLaunchHostFunc");
    FAIL(cudaLaunchHostFunc(r->stream, NULL, NULL));
    OK(cudaLaunchHostFunc(r->stream, host_fn, NULL));
    le_end();

    le_row("cudaStreamAddCallback"); /* flags must be 0 */
    FAIL(cudaStreamAddCallback(r->stream, callback, NULL, 1));
    OK(cudaStreamAddCallback(r->stream, callback, NULL, 0));
    le_end();
    MUST(cudaStreamSynchronize(r->stream));
    printf("host functions and callbacks: %d calls\n", host_fn_calls);
}

/* poke writes to freed memory: the context is lost, every call that uses it says so again (and
 * sets the last error again), a call that does not use it succeeds.  (When the launch's own last
 * error shows the fault is a race on a GPU: it is not printed.) */
static void sticky_rows(const le_res *r)
{
    int *p = NULL, value = 7, device = 0;
    long long offset = 0;
    void *args[] = {&p, &offset, &value}, *q = NULL;
    MUST(cudaMalloc((void **)&p, 64 << 20)); /* a range of its own, unmapped once freed */
    MUST(cudaFree(p));
    le_row("sticky fault");
    cudaError_t launched = cudaLaunchKernel(le_poke, le_dim(1, 1), le_dim(1, 1), args, 0, r->stream);
    printf(" launch %s;", cudaGetErrorName(launched));
    if (failure(launched))
        pending = launched;
    le_form("sync", cudaDeviceSynchronize());
    le_form("call", cudaMalloc(&q, 4096));
    le_end();
    le_row("sticky fault, later");
    le_form("call", cudaGetDevice(&device));
    le_form("work", cudaMalloc(&q, 4096));
    le_end();
}

int main(void)
{
    int devices = 0, version = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        return 77;
    MUST(cudaRuntimeGetVersion(&version));
    printf("CUDA runtime %d: failures set the last error\n", version);

    le_res r;
    memset(&r, 0, sizeof r);
    MUST(cudaMalloc((void **)&r.dev, 4096));
    MUST(cudaMalloc((void **)&r.dev2, 4096));
    MUST(cudaMallocHost((void **)&r.pinned, 4096));
    r.host = (char *)calloc(1, 8192);
    MUST(cudaStreamCreate(&r.stream));
    MUST(cudaEventCreate(&r.event));
    MUST(cudaEventRecord(r.event, r.stream));
    /* poke's first launch, out of the rows: the sticky fault's launch is not its first. */
    int *p = (int *)r.dev, value = 7;
    long long offset = 0;
    void *args[] = {&p, &offset, &value};
    MUST(cudaLaunchKernel(le_poke, le_dim(1, 1), le_dim(1, 1), args, 0, r.stream));
    MUST(cudaStreamSynchronize(r.stream));

    memory_rows(&r);
    copy_rows(&r);
    stream_rows(&r);
    event_rows(&r);
    cudaGraph_t graph = capture_rows(&r);
    lookup_rows();
    launch_rows(&r, graph);
    le_rows_per_thread(&r);
    sticky_rows(&r);
    printf("last error: %d answers against the rule\n", broken);
    return broken ? 1 : 0;
}
