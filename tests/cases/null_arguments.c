/* Every kind of wrapped call with NULL where the runtime expects a pointer or a function: each
 * is the runtime's to refuse or accept, and hipshadow must neither crash nor change its answer
 * (run_case.py compares this output with the same program run without the preload).  Garbage
 * handles are left out: the runtimes themselves dereference those. */
#include "common.h"

#include <dlfcn.h>

#define SAY(call)                                                                                                      \
    do {                                                                                                               \
        hipError_t e_ = (call);                                                                                        \
        printf("%s -> %d\n", #call, (int)e_);                                                                          \
        fflush(stdout);                                                                                                \
    } while (0)

int main(void)
{
    void *p = NULL;
    SAY(hipMalloc(NULL, 64));
    SAY(hipExtMallocWithFlags(NULL, 64, 0));
    SAY(hipMallocManaged(NULL, 64, hipMemAttachGlobal));
    SAY(hipMallocPitch(NULL, NULL, 64, 4));
    SAY(hipMallocPitch(&p, NULL, 64, 4));
    SAY(hipMallocAsync(NULL, 64, 0));
    SAY(hipHostMalloc(NULL, 64, 0));
    SAY(hipHostRegister(NULL, 64, 0));
    SAY(hipHostFree(NULL));
    SAY(hipHostUnregister(NULL));
    SAY(hipFree(NULL));
    SAY(hipFreeAsync(NULL, 0));
    SAY(hipMemcpy2D(NULL, 0, NULL, 0, 16, 4, hipMemcpyDeviceToHost));
    SAY(hipMemset(NULL, 0, 16));
    SAY(hipMemsetD32(0, 0, 16));
    SAY(hipMemcpyPeer(NULL, 0, NULL, 1, 16));
    SAY(hipStreamCreate(NULL));
    SAY(hipStreamCreateWithFlags(NULL, 0));
    SAY(hipStreamCreateWithPriority(NULL, 0, 0));
    SAY(hipEventCreate(NULL));
    SAY(hipEventCreateWithFlags(NULL, 0));
    SAY(hipEventRecord(NULL, 0));
    SAY(hipStreamWaitEvent(0, NULL, 0));
    SAY(hipEventSynchronize(NULL));
    SAY(hipEventQuery(NULL));
    SAY(hipEventDestroy(NULL));
    SAY(hipStreamEndCapture(0, NULL));
    SAY(hipStreamIsCapturing(0, NULL));
    SAY(hipMemPoolCreate(NULL, NULL));
    SAY(hipMemPoolDestroy(NULL));
    SAY(hipMallocFromPoolAsync(NULL, 64, NULL, 0));
    SAY(hipMemAddressReserve(NULL, 1 << 21, 0, 0, 0));
    SAY(hipMemCreate(NULL, 1 << 21, NULL, 0));
    SAY(hipMemMap(0, 1 << 21, 0, 0, 0));
    SAY(hipMemUnmap(0, 1 << 21));
    SAY(hipMemSetAccess(0, 1 << 21, NULL, 1));
    SAY(hipLaunchKernel(NULL, (dim3){1, 1, 1}, (dim3){1, 1, 1}, NULL, 0, 0));
    SAY(hipModuleLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, 0, NULL, NULL));
    SAY(hipStreamAddCallback(0, NULL, NULL, 0));
    SAY(hipModuleLoadData(NULL, NULL));
    SAY(hipModuleGetFunction(NULL, NULL, NULL));
    /* not exported by Debian's libamdhip64 5.2: found at run time */
    hipError_t (*launch_host_func)(hipStream_t, void (*)(void *), void *) =
        (hipError_t(*)(hipStream_t, void (*)(void *), void *))dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
    if (launch_host_func)
        SAY(launch_host_func(0, NULL, NULL));
    printf("null arguments: done\n");
    return 0;
}
