/* A stream callback through the driver layer (cuStreamAddCallback, as the static runtime's
 * cudaStreamAddCallback reaches it): hipshadow passes its trampoline and box, and the program's
 * callback must still get its own stream, status and data, once.  A NULL callback is the
 * runtime's to refuse.  Run under hipshadow --cuda with exitcode=9: any finding fails it. */
#include <cuda.h>

#include <stdio.h>

typedef struct seen {
    CUstream stream;
    CUresult status;
    int calls;
} seen;

static void note(CUstream stream, CUresult status, void *data)
{
    seen *s = data;
    s->stream = stream;
    s->status = status;
    s->calls++;
}

int main(void)
{
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr dev;
    float *pinned;
    seen got = {0};
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuStreamCreate(&stream, 0) ||
        cuMemAlloc(&dev, 4096) || cuMemHostAlloc((void **)&pinned, 4096, 0))
        return 99;
    if (cuMemcpyDtoHAsync(pinned, dev, 4096, stream) || cuStreamAddCallback(stream, note, &got, 0) ||
        cuStreamSynchronize(stream))
        return 1;
    CUresult refused = cuStreamAddCallback(stream, NULL, NULL, 0);
    printf("callback: %d call, own stream %s, status %d; no callback: %d\n", got.calls,
           got.stream == stream ? "yes" : "no", (int)got.status, (int)refused);
    cuMemFreeHost(pinned);
    cuMemFree(dev);
    return got.calls == 1 && got.stream == stream && got.status == CUDA_SUCCESS && refused == CUDA_ERROR_INVALID_VALUE
               ? 0
               : 1;
}
