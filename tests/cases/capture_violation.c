/* While a stream is being captured into a graph, a synchronous copy on it and a
 * synchronisation of it are not allowed. */
#include "common.h"

int main(void)
{
    float *dev, *pinned;
    hipStream_t s;
    hipGraph_t graph = NULL;
    MUST(hipMalloc((void **)&dev, 4096));
    MUST(hipHostMalloc((void **)&pinned, 4096, 0));
    MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    MUST(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    MUST(hipMemcpyAsync(pinned, dev, 4096, hipMemcpyDeviceToHost, s));     /* captured: fine */
    TRY(hipMemcpyWithStream(pinned, dev, 4096, hipMemcpyDeviceToHost, s)); /* synchronous during capture */
    TRY(hipStreamSynchronize(s));                                          /* synchronisation during capture */
    MUST(hipStreamEndCapture(s, &graph));
    MUST(hipGraphDestroy(graph));
    MUST(hipStreamSynchronize(s)); /* after capture: fine */
    MUST(hipStreamDestroy(s));
    MUST(hipHostFree(pinned));
    MUST(hipFree(dev));
    return 0;
}
