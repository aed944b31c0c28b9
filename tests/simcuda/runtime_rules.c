/* Driver calls the simulated libcuda refuses though hipshadow's checks find nothing wrong in their
 * ranges: each runtime-error names the rule its arguments break (src/core/rules/runtime_rules.inc).
 * Linked with the (simulated) libcuda only: the driver layer sees the calls. */
#include "simcuda.h"

#include <cuda.h>

#include <stdio.h>
#include <string.h>

static void noop(void **params) { (void)params; }

int main(void)
{
    CUcontext ctx;
    CUdeviceptr dev;
    static char host[4096];
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuMemAlloc(&dev, sizeof host))
        return 99;
    /* memset-pitch: 4 rows of 512 bytes, 256 apart (the range fits: 3 * 256 + 512 bytes) */
    CUresult m = cuMemsetD2D8(dev, 256, 0, 512, 4);
    /* copy-pitch: rows of 512 bytes, the source's 256 apart */
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = host, c.srcPitch = 256;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = dev, c.dstPitch = 512;
    c.WidthInBytes = 512, c.Height = 4;
    CUresult p = cuMemcpy2D(&c);

    /* A stream and an event of device 1, then device 0 current again. */
    CUcontext ctx1;
    CUstream s1;
    CUevent e1;
    if (cuDevicePrimaryCtxRetain(&ctx1, 1) || cuCtxSetCurrent(ctx1) || cuStreamCreate(&s1, 0) ||
        cuEventCreate(&e1, 0) || cuCtxSetCurrent(ctx))
        return 99;
    /* event-device: device 1's event on the current (device 0) context's null stream */
    CUresult e = cuEventRecord(e1, NULL);
    /* launch-stream-device: a kernel on device 1's stream while device 0 is current */
    CUfunction f = simcuda_function_from_host(noop);
    CUresult l = f ? cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL) : CUDA_ERROR_UNKNOWN;
    /* alloc-size: a negative size converted to size_t; vmm-size-zero: a reservation of 0 bytes */
    CUdeviceptr huge, va;
    CUresult a = cuMemAlloc(&huge, (size_t)-4096);
    CUresult r = cuMemAddressReserve(&va, 0, 0, 0, 0);
    printf("cuda rules: memset %d, copy %d, event %d, launch %d, alloc %d, reserve %d\n", (int)m, (int)p, (int)e,
           (int)l, (int)a, (int)r);
    cuMemFree(dev);
    return 0;
}
