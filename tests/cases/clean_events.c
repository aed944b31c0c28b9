/* Streams ordered correctly: events between streams, event synchronisation, stream queries and
 * the legacy null stream's ordering.  Zero findings. */
#include "common.h"

int main(void)
{
    float *a, *b, *buf, *buf2, *buf3;
    hipStream_t s1, s2, blocking;
    hipEvent_t e, e2;
    MUST(hipMalloc((void **)&a, 1 << 20));
    MUST(hipMalloc((void **)&b, 1 << 20));
    MUST(hipHostMalloc((void **)&buf, 1 << 16, 0));
    MUST(hipHostMalloc((void **)&buf2, 1 << 16, 0));
    MUST(hipHostMalloc((void **)&buf3, 1 << 16, 0));
    MUST(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    MUST(hipStreamCreate(&blocking));
    MUST(hipEventCreate(&e));
    MUST(hipEventCreateWithFlags(&e2, hipEventDisableTiming));

    /* s2 reads what s1 wrote, after waiting for s1's event */
    MUST(hipMemcpyAsync(buf, a, 1 << 16, hipMemcpyDeviceToHost, s1));
    MUST(hipEventRecord(e, s1));
    MUST(hipStreamWaitEvent(s2, e, 0));
    MUST(hipMemcpyAsync(b, buf, 1 << 16, hipMemcpyHostToDevice, s2));

    /* the host waits for s1's event, then s2 overwrites the buffer */
    MUST(hipMemcpyAsync(buf2, a, 1 << 16, hipMemcpyDeviceToHost, s1));
    MUST(hipEventRecord(e2, s1));
    MUST(hipEventSynchronize(e2));
    MUST(hipMemcpyAsync(buf2, b, 1 << 16, hipMemcpyDeviceToHost, s2));

    /* a blocking stream and the legacy null stream are ordered with each other */
    MUST(hipStreamSynchronize(
        s2)); /* s2 wrote b (line 25): the null stream below reads it, and does not wait for a non-blocking stream */
    MUST(hipMemcpyAsync(buf3, a, 1 << 16, hipMemcpyDeviceToHost, blocking));
    MUST(hipMemcpyAsync(buf3, b, 1 << 16, hipMemcpyDeviceToHost, NULL));
    MUST(hipStreamSynchronize(NULL)); /* s2 below is non-blocking: the host orders it */

    /* polling until the stream is idle completes its work too (s2 finished reading buf first:
     * the event above orders s2 after s1, not s1 after s2) */
    MUST(hipStreamSynchronize(s2));
    MUST(hipMemcpyAsync(buf, a, 1 << 16, hipMemcpyDeviceToHost, s1));
    while (hipStreamQuery(s1) == hipErrorNotReady)
        ;
    MUST(hipStreamSynchronize(s2));
    MUST(hipMemcpyAsync(buf, b, 1 << 16, hipMemcpyDeviceToHost, s2));

    /* hipFreeAsync on the stream that used the memory is ordered after that use */
    float *scratch;
    MUST(hipMallocAsync((void **)&scratch, 4096, s2));
    MUST(hipMemcpyAsync(buf3, scratch, 4096, hipMemcpyDeviceToHost, s2));
    MUST(hipFreeAsync(scratch, s2));
    MUST(hipDeviceSynchronize());

    MUST(hipEventDestroy(e));
    MUST(hipEventDestroy(e2));
    MUST(hipStreamDestroy(s1));
    MUST(hipStreamDestroy(s2));
    MUST(hipStreamDestroy(blocking));
    MUST(hipHostFree(buf));
    MUST(hipHostFree(buf2));
    MUST(hipHostFree(buf3));
    MUST(hipFree(a));
    MUST(hipFree(b));
    puts("events clean");
    return 0;
}
