/* Every kind of wrapped driver call (that the simulated libcuda has) with NULL pointers and
 * functions: each is the runtime's to refuse or accept, and hipshadow must neither crash nor
 * change its answer (run_driver_case.py --as-plain compares this output with the run without
 * hipshadow). */
#include <cuda.h>
#include <stdio.h>

#define SAY(call)                                                                                                      \
    do {                                                                                                               \
        CUresult e_ = (call);                                                                                          \
        printf("%s -> %d\n", #call, (int)e_);                                                                          \
        fflush(stdout);                                                                                                \
    } while (0)

int main(void)
{
    CUcontext ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
        return 99;
    SAY(cuMemAlloc(NULL, 64));
    SAY(cuMemAllocPitch(NULL, NULL, 64, 4, 4));
    SAY(cuMemAllocAsync(NULL, 64, 0));
    SAY(cuMemAllocManaged(NULL, 64, CU_MEM_ATTACH_GLOBAL));
    SAY(cuMemAllocHost(NULL, 64));
    SAY(cuMemHostAlloc(NULL, 64, 0));
    SAY(cuMemHostRegister(NULL, 64, 0));
    SAY(cuMemFreeHost(NULL));
    SAY(cuMemHostUnregister(NULL));
    SAY(cuMemFree(0));
    SAY(cuMemFreeAsync(0, 0));
    SAY(cuMemcpy(0, 0, 16));
    SAY(cuMemcpyHtoD(0, NULL, 16));
    SAY(cuMemcpyDtoH(NULL, 0, 16));
    SAY(cuMemcpy2D(NULL));
    SAY(cuMemsetD8(0, 0, 16));
    SAY(cuStreamCreate(NULL, 0));
    SAY(cuStreamWaitEvent(0, NULL, 0));
    SAY(cuEventRecord(NULL, 0));
    SAY(cuEventCreate(NULL, 0));
    SAY(cuEventSynchronize(NULL));
    SAY(cuEventQuery(NULL));
    SAY(cuEventDestroy(NULL));
    SAY(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, 0, NULL, NULL));
    SAY(cuLaunchHostFunc(0, NULL, NULL));
    SAY(cuStreamAddCallback(0, NULL, NULL, 0));
    SAY(cuCtxSynchronize()); /* runs whatever was queued: a host function must not be a NULL in a box */
    SAY(cuMemAddressReserve(NULL, 1 << 21, 0, 0, 0));
    SAY(cuMemCreate(NULL, 1 << 21, NULL, 0));
    SAY(cuMemMap(0, 1 << 21, 0, 0, 0));
    SAY(cuMemUnmap(0, 1 << 21));
    SAY(cuMemSetAccess(0, 1 << 21, NULL, 1));
    SAY(cuGetProcAddress("cuMemAlloc", NULL, 12000, 0, NULL));
    SAY(cuGetProcAddress(NULL, NULL, 12000, 0, NULL));
    printf("null arguments: done\n");
    return 0;
}
