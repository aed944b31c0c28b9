/* Calls the simulated runtime refuses though hipshadow's checks find nothing wrong in their
 * ranges: each runtime-error names the rule its arguments break (src/core/rules/runtime_rules.inc).
 * One call per rule, in the table's order; a kernel poke from test_kernels.hip for the launches. */
#include "common.h"
#include "sim_kernels.h"

#include <string.h>

int main(void)
{
    sim_kernels k;
    sim_kernels_load(&k);
    hipFunction_t poke = k.poke;

    char *d;
    static char host[8192], other[8192];
    MUST(hipMalloc((void **)&d, 8192));
    /* copy-pitch: rows of 1024 bytes, 512 apart (the ranges fit: 8 * 512 + 1024 bytes) */
    TRY(hipMemcpy2D(d, 512, host, 1024, 1024, 8, hipMemcpyHostToDevice));
    /* copy-kind: 7 is no hipMemcpyKind */
    TRY(hipMemcpy(other, host, 64, (hipMemcpyKind)7));
    /* peer-device: device 5 of 2 */
    TRY(hipMemcpyPeer(d, 5, d + 4096, 0, 64));

    int *p = (int *)d;
    long long offset = 0;
    int value = 1;
    void *params[] = {&p, &offset, &value};
    /* launch-empty */
    TRY(hipModuleLaunchKernel(poke, 0, 1, 1, 64, 1, 1, 0, 0, params, NULL));
    /* launch-block-dim: block.z 2048 */
    TRY(hipModuleLaunchKernel(poke, 1, 1, 1, 1, 1, 2048, 0, 0, params, NULL));
    /* launch-block-threads: 32 * 32 * 2 */
    TRY(hipModuleLaunchKernel(poke, 1, 1, 1, 32, 32, 2, 0, 0, params, NULL));
    /* launch-grid-dim: grid.y 70000 */
    TRY(hipModuleLaunchKernel(poke, 1, 70000, 1, 64, 1, 1, 0, 0, params, NULL));
    /* launch-shared-memory: 64 KiB + 1 */
    TRY(hipModuleLaunchKernel(poke, 1, 1, 1, 64, 1, 1, 65537, 0, params, NULL));
    /* launch-grid-size: 4194304 * 1024 = 2^32 work-items in x */
    TRY(hipModuleLaunchKernel(poke, 4194304, 1, 1, 1024, 1, 1, 0, 0, params, NULL));
    /* event-device: an event of device 1 recorded on device 0's null stream */
    hipEvent_t e1;
    MUST(hipSetDevice(1));
    MUST(hipEventCreate(&e1));
    MUST(hipSetDevice(0));
    TRY(hipEventRecord(e1, 0));
    /* alloc-size: a negative size converted to size_t */
    void *huge;
    TRY(hipMalloc(&huge, (size_t)-4096));
    /* vmm-size-zero */
    hipMemGenericAllocationHandle_t h;
    hipMemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    TRY(hipMemCreate(&h, 0, &prop, 0));
    MUST(hipFree(d));
    return 0;
}
