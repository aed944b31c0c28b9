/* A double-buffered copy pipeline: the copy stream fills one pinned buffer while the compute
 * stream consumes the other; events order every reuse.  Zero findings, right data. */
#include "common.h"

#include <string.h>

int main(void)
{
    enum { CHUNK = 1 << 16, STEPS = 200 };
    float *dev_in, *dev_out, *pinned[2];
    hipStream_t copy, compute;
    hipEvent_t filled[2], consumed[2];
    MUST(hipMalloc((void **)&dev_in, 2 * CHUNK));
    MUST(hipMalloc((void **)&dev_out, 2 * CHUNK));
    MUST(hipStreamCreateWithFlags(&copy, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&compute, hipStreamNonBlocking));
    for (int i = 0; i < 2; i++) {
        MUST(hipHostMalloc((void **)&pinned[i], CHUNK, 0));
        MUST(hipEventCreate(&filled[i]));
        MUST(hipEventCreate(&consumed[i]));
        MUST(hipEventRecord(consumed[i], compute));
    }
    for (int step = 0; step < STEPS; step++) {
        int k = step % 2;
        MUST(hipEventSynchronize(consumed[k])); /* the host may refill buffer k */
        for (int i = 0; i < CHUNK / 4; i += 1024)
            pinned[k][i] = (float)step;
        MUST(hipStreamWaitEvent(copy, consumed[k], 0));
        MUST(hipMemcpyAsync((char *)dev_in + k * CHUNK, pinned[k], CHUNK, hipMemcpyHostToDevice, copy));
        MUST(hipEventRecord(filled[k], copy));
        MUST(hipStreamWaitEvent(compute, filled[k], 0));
        MUST(hipMemcpyDtoDAsync((char *)dev_out + k * CHUNK, (char *)dev_in + k * CHUNK, CHUNK, compute));
        MUST(hipEventRecord(consumed[k], compute));
    }
    MUST(hipStreamSynchronize(compute));
    float last[1];
    MUST(hipMemcpy(last, (char *)dev_out + ((STEPS - 1) % 2) * CHUNK, sizeof last, hipMemcpyDeviceToHost));
    printf("double buffer: last value %.0f\n", last[0]);
    for (int i = 0; i < 2; i++) {
        MUST(hipEventDestroy(filled[i]));
        MUST(hipEventDestroy(consumed[i]));
        MUST(hipHostFree(pinned[i]));
    }
    MUST(hipStreamDestroy(copy));
    MUST(hipStreamDestroy(compute));
    MUST(hipFree(dev_in));
    MUST(hipFree(dev_out));
    return last[0] != STEPS - 1;
}
