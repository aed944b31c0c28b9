/* Every wrapped driver call (src/cuda/driver.inc) that the simulated libcuda has, in a failing form
 * and then a succeeding one.  The driver keeps no last error: what hipshadow could change is the
 * answer and the current context, so each row prints both codes and whether the program's context
 * is still current (run_driver_case.py --as-plain compares this output with the run without
 * hipshadow).  The rows are built twice: this file as it is, and again with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM (ROWS_PER_THREAD), where cuda.h turns the calls into their
 * _ptds/_ptsz twins; each launch row launches a kernel for the first time.  Not here: the 3-D
 * copies, which the simulated driver lacks. */
#include "simcuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_(f) #f
#define NAME(f) NAME_(f) /* the name a call compiles to */

void rows_legacy(CUcontext ctx);
void rows_per_thread(CUcontext ctx);
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define ROWS rows_per_thread
#else
#define ROWS rows_legacy
#endif

static CUcontext own;

static const char *code(CUresult r)
{
    const char *name = NULL;
    return cuGetErrorName(r, &name) == CUDA_SUCCESS && name ? name : "?";
}

static void row(const char *name, CUresult fail, CUresult ok)
{
    CUcontext now = NULL;
    cuCtxGetCurrent(&now);
    printf("%-34s fail %s; ok %s; context %s\n", name, code(fail), code(ok), now == own ? "kept" : "changed");
    fflush(stdout);
}
#define ROW(f, fail_args, ok_args) row(NAME(f), f fail_args, f ok_args)

static void poke(void **params)
{
    int *p = *(int **)params[0];
    long long offset = *(long long *)params[1];
    if (simcuda_device_range_ok(p + offset, sizeof(int), 1))
        p[offset] = *(int *)params[2];
}

/* A kernel never launched before: hipshadow asks for its parameters at its first launch. */
static CUfunction fresh_kernel(void)
{
    static const size_t sizes[] = {sizeof(int *), sizeof(long long), sizeof(int)};
    CUfunction f = simcuda_function_from_host(poke);
    if (!f || simcuda_function_set_param_sizes(f, 3, sizes) != CUDA_SUCCESS)
        exit(99);
    return f;
}

static int host_fn_calls;
static void CUDA_CB host_fn(void *data)
{
    (void)data;
    host_fn_calls++;
}
static void CUDA_CB callback(CUstream s, CUresult status, void *data)
{
    (void)s;
    (void)status;
    (void)data;
    host_fn_calls++;
}

void ROWS(CUcontext ctx)
{
    own = ctx;
    CUdeviceptr d, d2, p = 0;
    void *pinned = NULL, *h = NULL;
    char *host = calloc(1, 8192);
    size_t pitch = 0;
    CUstream s, cap, made = NULL;
    CUevent ev = NULL;
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    CUmemoryPool pool = NULL;
    if (cuMemAlloc(&d, 4096) || cuMemAlloc(&d2, 4096) || cuMemAllocHost(&pinned, 4096) || cuStreamCreate(&s, 0) ||
        cuStreamCreate(&cap, CU_STREAM_NON_BLOCKING))
        exit(99);

    /* allocation */
    ROW(cuMemAlloc, (&p, 0), (&p, 4096));
    ROW(cuMemFree, (p + 64), (p));
    ROW(cuMemAllocPitch, (&p, &pitch, 64, 4, 3), (&p, &pitch, 64, 4, 4));
    cuMemFree(p);
    ROW(cuMemAllocManaged, (&p, 4096, 0), (&p, 4096, CU_MEM_ATTACH_GLOBAL));
    cuMemFree(p);
    ROW(cuMemAllocAsync, (&p, 0, s), (&p, 4096, s));
    ROW(cuMemFreeAsync, (p + 64, s), (p, s));
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ROW(cuMemPoolCreate, (&pool, NULL), (&pool, &props));
    ROW(cuMemAllocFromPoolAsync, (&p, 4096, NULL, s), (&p, 4096, pool, s));
    cuMemFreeAsync(p, s);
    cuStreamSynchronize(s);
    ROW(cuMemPoolDestroy, (NULL), (pool));
    ROW(cuMemAllocHost, (&h, 0), (&h, 4096));
    ROW(cuMemFreeHost, (host), (h));
    ROW(cuMemHostAlloc, (&h, 4096, 0x80), (&h, 4096, 0));
    cuMemFreeHost(h);
    ROW(cuMemHostRegister, (host, 0, 0), (host, 4096, 0));
    ROW(cuMemHostUnregister, (host + 4096), (host));

    /* copies: the failing ones run past the end of a device allocation */
    ROW(cuMemcpy, (d2, d, 8192), (d2, d, 64));
    ROW(cuMemcpyAsync, (d2, d, 8192, s), (d2, d, 64, s));
    ROW(cuMemcpyPeer, (d2, NULL, d, ctx, 64), (d2, ctx, d, ctx, 64));
    ROW(cuMemcpyPeerAsync, (d2, NULL, d, ctx, 64, s), (d2, ctx, d, ctx, 64, s));
    ROW(cuMemcpyHtoD, (d, host, 8192), (d, host, 64));
    ROW(cuMemcpyHtoDAsync, (d, pinned, 8192, s), (d, pinned, 64, s));
    ROW(cuMemcpyDtoH, (host, d, 8192), (host, d, 64));
    ROW(cuMemcpyDtoHAsync, (pinned, d, 8192, s), (pinned, d, 64, s));
    ROW(cuMemcpyDtoD, (d2, d, 8192), (d2, d, 64));
    ROW(cuMemcpyDtoDAsync, (d2, d, 8192, s), (d2, d, 64, s));
    CUDA_MEMCPY2D bad, good; /* bad: a row wider than its pitch */
    memset(&good, 0, sizeof good);
    good.srcMemoryType = CU_MEMORYTYPE_HOST;
    good.srcHost = host;
    good.srcPitch = 64;
    good.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    good.dstDevice = d;
    good.dstPitch = 64;
    good.WidthInBytes = 64;
    good.Height = 4;
    bad = good;
    bad.dstPitch = 32;
    ROW(cuMemcpy2D, (&bad), (&good));
    ROW(cuMemcpy2DUnaligned, (&bad), (&good));
    ROW(cuMemcpy2DAsync, (&bad, s), (&good, s));

    /* memsets: the failing ones on pageable memory (1-D) or a pitch narrower than a row (2-D) */
    ROW(cuMemsetD8, ((CUdeviceptr)host, 0, 64), (d, 0, 64));
    ROW(cuMemsetD8Async, ((CUdeviceptr)host, 0, 64, s), (d, 0, 64, s));
    ROW(cuMemsetD16, ((CUdeviceptr)host, 0, 32), (d, 0, 32));
    ROW(cuMemsetD16Async, ((CUdeviceptr)host, 0, 32, s), (d, 0, 32, s));
    ROW(cuMemsetD32, ((CUdeviceptr)host, 0, 16), (d, 0, 16));
    ROW(cuMemsetD32Async, ((CUdeviceptr)host, 0, 16, s), (d, 0, 16, s));
    ROW(cuMemsetD2D8, (d, 16, 0, 32, 2), (d, 64, 0, 32, 2));
    ROW(cuMemsetD2D8Async, (d, 16, 0, 32, 2, s), (d, 64, 0, 32, 2, s));
    ROW(cuMemsetD2D16, (d, 16, 0, 16, 2), (d, 64, 0, 16, 2));
    ROW(cuMemsetD2D16Async, (d, 16, 0, 16, 2, s), (d, 64, 0, 16, 2, s));
    ROW(cuMemsetD2D32, (d, 16, 0, 8, 2), (d, 64, 0, 8, 2));
    ROW(cuMemsetD2D32Async, (d, 16, 0, 8, 2, s), (d, 64, 0, 8, 2, s));
    cuStreamSynchronize(s);

    /* streams: nothing may wait for a stream being captured */
    ROW(cuStreamCreate, (&made, 0x10), (&made, CU_STREAM_NON_BLOCKING));
    cuStreamDestroy(made);
    ROW(cuStreamCreateWithPriority, (&made, 0x10, 0), (&made, 0, 0));
    ROW(cuStreamDestroy, (NULL), (made));
    cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_RELAXED);
    ROW(cuStreamSynchronize, (cap), (s));
    cuStreamEndCapture(cap, &graph);
    cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_RELAXED);
    ROW(cuStreamQuery, (cap), (s));
    cuStreamEndCapture(cap, &graph);
    cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_GLOBAL);
    CUresult fail = cuCtxSynchronize();
    cuStreamEndCapture(cap, &graph);
    row(NAME(cuCtxSynchronize), fail, cuCtxSynchronize());
    cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_GLOBAL);
    fail = cuCtxSynchronize_v2(NULL);
    cuStreamEndCapture(cap, &graph);
    row(NAME(cuCtxSynchronize_v2), fail, cuCtxSynchronize_v2(NULL));

    /* events */
    ROW(cuEventCreate, (NULL, 0), (&ev, 0));
    ROW(cuEventRecord, (NULL, s), (ev, s));
    ROW(cuEventRecordWithFlags, (ev, s, 0x80), (ev, s, 0));
    ROW(cuStreamWaitEvent, (s, NULL, 0), (s, ev, 0));
    ROW(cuEventSynchronize, (NULL), (ev));
    ROW(cuEventQuery, (NULL), (ev));
    ROW(cuEventDestroy, (NULL), (ev));

    /* capture */
    CUstreamCaptureStatus status;
    ROW(cuStreamBeginCapture, (CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_RELAXED),
        (cap, CU_STREAM_CAPTURE_MODE_RELAXED));
    ROW(cuStreamIsCapturing, (cap, NULL), (cap, &status));
    ROW(cuStreamEndCapture, (s, &graph), (cap, &graph));

    /* launches: the failing ones have a grid of no blocks */
    int *poked = (int *)d, value = 7;
    long long offset = 1;
    void *params[] = {&poked, &offset, &value};
    CUfunction first = fresh_kernel(), again = fresh_kernel();
    ROW(cuLaunchKernel, (first, 0, 1, 1, 1, 1, 1, 0, s, params, NULL), (again, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
    CUlaunchConfig bad_config, config;
    memset(&config, 0, sizeof config);
    config.gridDimX = config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = config.blockDimY = config.blockDimZ = 1;
    config.hStream = s;
    bad_config = config;
    bad_config.gridDimX = 0;
    ROW(cuLaunchKernelEx, (&bad_config, first, params, NULL), (&config, fresh_kernel(), params, NULL));
    ROW(cuLaunchCooperativeKernel, (first, 0, 1, 1, 1, 1, 1, 0, s, params),
        (fresh_kernel(), 1, 1, 1, 1, 1, 1, 0, s, params));
    cuGraphInstantiate(&exec, graph, 0);
    ROW(cuGraphLaunch, (NULL, s), (exec, s));
    ROW(cuLaunchHostFunc, (s, NULL, NULL), (s, host_fn, NULL));
    ROW(cuStreamAddCallback, (s, callback, NULL, 1), (s, callback, NULL, 0));
    cuStreamSynchronize(s);
    printf("host functions and callbacks: %d calls\n", host_fn_calls);

    /* virtual memory: the failing ones on memory that is not a reservation or a mapping */
    const size_t size = 2u << 20;
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle handle = 0;
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    ROW(cuMemAddressReserve, (&va, 0, 0, 0, 0), (&va, size, 0, 0, 0));
    ROW(cuMemCreate, (&handle, 4096, &prop, 0), (&handle, size, &prop, 0));
    ROW(cuMemMap, (d, size, 0, handle, 0), (va, size, 0, handle, 0));
    ROW(cuMemSetAccess, (va, size, &access, 0), (va, size, &access, 1));
    ROW(cuMemUnmap, (d, size), (va, size));
    ROW(cuMemRelease, (0), (handle));
    ROW(cuMemAddressFree, (d, size), (va, size));

    /* lookup */
    void *fn = NULL;
    CUdriverProcAddressQueryResult found;
    ROW(cuGetProcAddress, ("cuNoSuchFunction", &fn, 12000, 0, &found), ("cuMemAlloc", &fn, 12000, 0, &found));
    CUresult (*get_proc_v1)(const char *, void **, int, cuuint64_t) =
        (CUresult(*)(const char *, void **, int, cuuint64_t))dlsym(RTLD_DEFAULT, "cuGetProcAddress");
    if (get_proc_v1)
        row("cuGetProcAddress (the first ABI)", get_proc_v1("cuNoSuchFunction", &fn, 12000, 0),
            get_proc_v1("cuMemAlloc", &fn, 12000, 0));

    cuGraphExecDestroy(exec);
    cuStreamDestroy(cap);
    cuStreamDestroy(s);
    cuMemFreeHost(pinned);
    cuMemFree(d);
    cuMemFree(d2);
    free(host);
}

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
int main(void)
{
    CUcontext ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
        return 99;
    rows_legacy(ctx);
    rows_per_thread(ctx);
    printf("driver rows: done\n");
    return 0;
}
#endif
