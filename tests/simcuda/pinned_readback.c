/* A program that reads its pinned buffers back through the driver, as JAX's XLA does:
 * cuMemcpyDtoH(Async) whose source is cuMemHostAlloc memory.  The driver's calls take device
 * memory by address, and pinned memory is mapped at the same address, so this is correct and
 * hipshadow must say nothing (it gave a direction-mismatch warning per copy before).  Then a
 * real mistake at the same layer, a D2H whose destination is device memory, which it must
 * still report.  Linked with the (simulated) libcuda only: the driver layer sees the calls. */
#include <cuda.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr dev;
    float *pinned, back[16];
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuStreamCreate(&stream, 0) ||
        cuMemAlloc(&dev, sizeof back) || cuMemHostAlloc((void **)&pinned, sizeof back, 0))
        return 99;
    for (int i = 0; i < 16; i++)
        pinned[i] = (float)i;
    memset(back, 0, sizeof back);
    if (cuMemcpyDtoH(back, (CUdeviceptr)pinned, sizeof back) ||
        cuMemcpyDtoHAsync(back, (CUdeviceptr)pinned, sizeof back, stream) || cuStreamSynchronize(stream) ||
        back[15] != 15.0f)
        return 1;
    printf("pinned read back\n");
    cuMemcpyDtoH((void *)dev, dev, sizeof back); /* the destination is device memory: reported */
    cuMemFreeHost(pinned);
    cuMemFree(dev);
    return 0;
}
