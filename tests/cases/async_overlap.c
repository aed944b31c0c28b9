/* Seed 001's suspect, made real: async copies on two streams with no synchronisation between
 * them.  Phase 1: two pending D2H write the same pinned buffer.  Phase 2: a pending D2H writes
 * a buffer that a pending H2D on another stream reads. */
#include "common.h"

int main(void)
{
    float *a, *b, *host, *staging;
    hipStream_t s1, s2;
    MUST(hipMalloc((void **)&a, 1 << 20));
    MUST(hipMalloc((void **)&b, 1 << 20));
    MUST(hipHostMalloc((void **)&host, 1 << 20, 0));
    MUST(hipHostMalloc((void **)&staging, 1 << 20, 0));
    MUST(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));

    MUST(hipMemcpyAsync(host, a, 4096, hipMemcpyDeviceToHost, s1));
    MUST(hipMemcpyAsync(host + 512, b, 4096, hipMemcpyDeviceToHost, s2)); /* bytes 2048..4095 written twice */
    MUST(hipDeviceSynchronize());

    MUST(hipMemcpyAsync(staging, a, 8192, hipMemcpyDeviceToHost, s1));
    MUST(hipMemcpyAsync(b, staging, 8192, hipMemcpyHostToDevice, s2)); /* reads what s1 is still writing */
    MUST(hipDeviceSynchronize());

    MUST(hipStreamDestroy(s1));
    MUST(hipStreamDestroy(s2));
    MUST(hipHostFree(staging));
    MUST(hipHostFree(host));
    MUST(hipFree(b));
    MUST(hipFree(a));
    return 0;
}
