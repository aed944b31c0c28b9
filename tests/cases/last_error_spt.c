/* last_error.c's rows for the per-thread-default-stream entry points: built with
 * HIP_API_PER_THREAD_DEFAULT_STREAM, so hip_runtime_api.h turns hipMemcpy into hipMemcpy_spt and
 * so on, and the stream 0 is the calling thread's own.  (It would turn hipEventRecord into
 * hipEventRecord_spt too, which Debian's libamdhip64 5.2 lacks: not called here.) */
#include "common.h"
#include "last_error.h"

#ifndef HIP_API_PER_THREAD_DEFAULT_STREAM
#error "build with -DHIP_API_PER_THREAD_DEFAULT_STREAM"
#endif

void le_rows_per_thread(const le_res *r)
{
    const hipMemcpyKind bad_kind = (hipMemcpyKind)7;
    const dim3 one = {1, 1, 1}, none = {1, 0, 1};
    int *p = (int *)r->dev, value = 7;
    long long offset = 2;
    void *args[] = {&p, &offset, &value};

    le_row("hipMemcpy_spt");
    FAIL(hipMemcpy(r->dev, r->host, 64, bad_kind));
    OK(hipMemcpy(r->dev, r->host, 64, hipMemcpyHostToDevice));
    le_end();

    le_row("hipMemcpyAsync_spt");
    FAIL(hipMemcpyAsync(r->dev, r->pinned, 64, bad_kind, 0));
    OK(hipMemcpyAsync(r->dev, r->pinned, 64, hipMemcpyHostToDevice, 0));
    le_end();

    le_row("hipMemcpy2D_spt");
    FAIL(hipMemcpy2D(r->dev, 32, r->host, 64, 64, 4, hipMemcpyHostToDevice));
    OK(hipMemcpy2D(r->dev, 64, r->host, 64, 64, 4, hipMemcpyHostToDevice));
    le_end();

    le_row("hipMemset_spt");
    FAIL(hipMemset(r->host, 0, 64));
    OK(hipMemset(r->dev, 0, 64));
    le_end();

    le_row("hipStreamSynchronize_spt");
    FAIL(hipStreamSynchronize(r->gone));
    OK(hipStreamSynchronize(0));
    le_end();

    le_row("hipStreamQuery_spt");
    FAIL(hipStreamQuery(r->gone));
    OK(hipStreamQuery(0));
    le_end();

    le_row("hipStreamWaitEvent_spt");
    FAIL(hipStreamWaitEvent(0, NULL, 0));
    OK(hipStreamWaitEvent(0, r->event, 0));
    le_end();

    le_row("hipLaunchKernel_spt");
    FAIL(hipLaunchKernel(r->stub, one, none, args, 0, 0));
    OK(hipLaunchKernel(r->stub, one, one, args, 0, 0));
    le_end();

    le_row("hipLaunchCooperativeKernel_spt");
    FAIL(hipLaunchCooperativeKernel(r->stub, one, none, args, 0, 0));
    OK(hipLaunchCooperativeKernel(r->stub, one, one, args, 0, 0));
    le_end();
    MUST(hipStreamSynchronize(0));
}
