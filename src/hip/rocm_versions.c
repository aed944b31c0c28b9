/* The differences between ROCm releases that matter to hipshadow (see rocm_versions.h). */
#include "rocm_versions.h"

#include <stdatomic.h>

int hs_rocm_version(int (*get_version)(int *))
{
    static atomic_int known = -1;
    int v = atomic_load(&known);
    if (v < 0) {
        v = 0;
        if (!get_version || get_version(&v) != 0)
            v = 0;
        atomic_store(&known, v);
    }
    return v;
}

hs_rocm_memory hs_rocm_memory_type(int version, int raw)
{
    /* ROCm 6.0 renamed hipPointerAttribute_t.memoryType to .type (same place, same size) and
     * gave hipMemoryType CUDA's values: Unregistered 0, Host 1, Device 2, Managed 3, Array 10,
     * Unified 11.  Before: Host 0, Device 1, Array 2, Unified 3 (ROCm 5.x, hip_runtime_api.h). */
    if (version >= 60000000) {
        switch (raw) {
        case 1: return HS_ROCM_MEM_HOST;
        case 2: return HS_ROCM_MEM_DEVICE;
        case 3: return HS_ROCM_MEM_MANAGED;
        case 10: return HS_ROCM_MEM_ARRAY;
        case 11: return HS_ROCM_MEM_UNIFIED;
        default: return HS_ROCM_MEM_UNKNOWN;
        }
    }
    switch (raw) {
    case 0: return HS_ROCM_MEM_HOST;
    case 1: return HS_ROCM_MEM_DEVICE;
    case 2: return HS_ROCM_MEM_ARRAY;
    case 3: return HS_ROCM_MEM_UNIFIED;
    default: return HS_ROCM_MEM_UNKNOWN;
    }
}
