/* An inference-like loop that uses every kind of call correctly: streams, pinned buffers,
 * async copies, memsets of every width, pitched 2-D copies, hipMemcpyDefault, the per-thread
 * stream, registered host memory, peer copies, stream-ordered allocation.  Zero findings. */
#include "common.h"

#include <stdint.h>
#include <string.h>

int main(void)
{
    const size_t hidden = 4096 * sizeof(float);
    uint8_t *weights, *act, *out, *managed, *pitched;
    size_t pitch;
    MUST(hipMalloc((void **)&weights, 64 * MiB));
    MUST(hipExtMallocWithFlags((void **)&act, hidden * 4, 0));
    MUST(hipMalloc((void **)&out, hidden));
    MUST(hipMallocManaged((void **)&managed, hidden, hipMemAttachGlobal));
    MUST(hipMallocPitch((void **)&pitched, &pitch, 1000, 64));

    hipStream_t compute, copy;
    MUST(hipStreamCreateWithFlags(&compute, hipStreamNonBlocking));
    MUST(hipStreamCreateWithPriority(&copy, 0, 0));
    float *pinned, *staging;
    MUST(hipHostMalloc((void **)&pinned, hidden, 0));
    MUST(hipMallocHost((void **)&staging, hidden));
    static float registered[4096];
    MUST(hipHostRegister(registered, sizeof registered, 0));

    for (int step = 0; step < 50; step++) {
        uint8_t *layer = weights + (size_t)(step % 16) * 4 * MiB + 4096; /* interior pointers */
        MUST(hipMemsetAsync(act, 0, hidden, compute));
        MUST(hipMemsetD8Async(act + hidden, 1, hidden, compute));
        MUST(hipMemsetD16Async(act + 2 * hidden, 2, hidden / 2, compute));
        MUST(hipMemsetD32Async(act + 3 * hidden, 3, hidden / 4, compute));
        MUST(hipMemcpyDtoDAsync(out, layer, hidden, compute));
        MUST(hipMemcpyAsync(pinned, out, hidden, hipMemcpyDeviceToHost, compute));
        MUST(hipStreamSynchronize(compute));
        MUST(hipMemcpyHtoDAsync(act, pinned, hidden, copy));
        MUST(hipMemcpyWithStream(staging, act, hidden, hipMemcpyDefault, copy));
        MUST(hipStreamSynchronize(copy));
    }
    MUST(hipMemcpy2D(pitched, pitch, weights, 1000, 1000, 64, hipMemcpyDeviceToDevice));
    static uint8_t rows[64 * 1000];
    MUST(hipMemcpy2D(rows, 1000, pitched, pitch, 1000, 64, hipMemcpyDeviceToHost));
    MUST(hipMemcpy2DAsync(pitched, pitch, rows, 1000, 1000, 64, hipMemcpyHostToDevice, copy));
    MUST(hipMemcpyDtoD(managed, out, hidden));
    MUST(hipMemcpy(registered, managed, hidden, hipMemcpyDeviceToHost));
    MUST(hipMemcpyPeer(out, 0, act, 0, hidden));
    MUST(hipMemcpyPeerAsync(out, 0, act, 0, hidden, copy));
    MUST(hipMemcpyDtoHAsync(pinned, out, hidden, copy));
    MUST(hipStreamSynchronize(
        copy)); /* the peer copy on `copy` wrote out: ordered before the per-thread stream reads it */
    MUST(hipMemcpy_spt(staging, out, hidden, hipMemcpyDeviceToHost));
    MUST(hipMemcpyAsync_spt(staging, out, hidden, hipMemcpyDeviceToHost, hipStreamPerThread));
    MUST(hipStreamSynchronize_spt(hipStreamPerThread));
    MUST(hipMemset(out, 0, hidden));
    MUST(hipMemsetD32(out, 0, hidden / 4));
    MUST(hipMemset_spt(out, 0, hidden));
    void *ordered;
    MUST(hipMallocAsync(&ordered, hidden, copy));
    MUST(hipMemcpyAsync(ordered, out, hidden, hipMemcpyDeviceToDevice, copy));
    MUST(hipFreeAsync(ordered, copy));
    MUST(hipDeviceSynchronize());
    hipError_t q = hipStreamQuery(copy);
    if (q != hipSuccess && q != hipErrorNotReady)
        return 1;
    MUST(hipMemcpy(out, out, 0, hipMemcpyDeviceToHost)); /* zero bytes: nothing to check */

    MUST(hipHostUnregister(registered));
    MUST(hipFreeHost(staging));
    MUST(hipHostFree(pinned));
    MUST(hipStreamDestroy(copy));
    MUST(hipStreamDestroy(compute));
    MUST(hipFree(pitched));
    MUST(hipFree(managed));
    MUST(hipFree(out));
    MUST(hipFree(act));
    MUST(hipFree(weights));
    MUST(hipFree(NULL));
    puts("clean loop done");
    return 0;
}
