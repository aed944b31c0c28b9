/* What changed between ROCm releases in what hipshadow reads from the runtime, interpreted by
 * the version the runtime reports (hipRuntimeGetVersion), whichever headers hipshadow was built
 * against: one build serves ROCm 5, 6 and 7.  One entry per difference in rocm_versions.c. */
#ifndef HS_HIP_ROCM_VERSIONS_H
#define HS_HIP_ROCM_VERSIONS_H

#include <stdbool.h>

/* hipPointerAttribute_t's memory type, in ROCm-independent terms. */
typedef enum hs_rocm_memory { HS_ROCM_MEM_UNKNOWN = 0, HS_ROCM_MEM_HOST, HS_ROCM_MEM_DEVICE, HS_ROCM_MEM_MANAGED,
                              HS_ROCM_MEM_ARRAY, HS_ROCM_MEM_UNIFIED } hs_rocm_memory;

/* The runtime's version (HIP_VERSION encoding: major * 10000000 + minor * 100000 + patch), asked
 * once through `get_version` (hipRuntimeGetVersion); 0 when it cannot say. */
int hs_rocm_version(int (*get_version)(int *));
/* The first field of hipPointerAttribute_t (memoryType before ROCm 6.0, type since), read as a
 * raw int, in the given runtime's numbering. */
hs_rocm_memory hs_rocm_memory_type(int version, int raw);

#endif
