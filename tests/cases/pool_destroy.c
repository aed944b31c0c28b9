/* A stream-ordered pool is destroyed while a tensor from it is still in use: the later read is
 * a use-after-free, with the pool's destruction as the free site. */
#include "common.h"

int main(void)
{
    hipMemPool_t pool;
    hipMemPoolProps props = {0};
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = 0;
    MUST(hipMemPoolCreate(&pool, &props));
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    float *t, host[256];
    MUST(hipMallocFromPoolAsync((void **)&t, sizeof host, pool, s));
    MUST(hipMemPoolTrimTo(pool, 0));
    MUST(hipStreamSynchronize(s));
    MUST(hipMemPoolDestroy(pool));
    TRY(hipMemcpy(host, t, sizeof host, hipMemcpyDeviceToHost));
    return 0;
}
