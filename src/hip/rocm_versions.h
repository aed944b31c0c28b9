/* What changed between ROCm releases in what hipshadow reads from the runtime, interpreted by
 * the version the runtime reports (hipRuntimeGetVersion), whichever headers hipshadow was built
 * against: one build serves ROCm 5, 6 and 7.  One entry per difference in rocm_versions.c. */
#ifndef HS_HIP_ROCM_VERSIONS_H
#define HS_HIP_ROCM_VERSIONS_H

#include <stdbool.h>

/* hipPointerAttribute_t's memory type, in ROCm-independent terms. */
typedef enum hs_rocm_memory {
    HS_ROCM_MEM_UNKNOWN = 0,
    HS_ROCM_MEM_HOST,
    HS_ROCM_MEM_DEVICE,
    HS_ROCM_MEM_MANAGED,
    HS_ROCM_MEM_ARRAY,
    HS_ROCM_MEM_UNIFIED
} hs_rocm_memory;

/* The runtime's version (HIP_VERSION encoding: major * 10000000 + minor * 100000 + patch), asked
 * once through `get_version` (hipRuntimeGetVersion); 0 when it cannot say. */
int hs_rocm_version(int (*get_version)(int *));
/* The first field of hipPointerAttribute_t (memoryType before ROCm 6.0, type since), read as a
 * raw int, in the given runtime's numbering. */
hs_rocm_memory hs_rocm_memory_type(int version, int raw);

/* hipMemcpyKind as the copy's stated direction (hs_dir numbering).  ROCm 6 added
 * hipMemcpyDeviceToDeviceNoCU (1024): a device-to-device copy that must not use compute units.
 * Every other value is passed on as it is (the checks call an unknown one invalid). */
static inline int hs_rocm_copy_kind(int kind) { return kind == 1024 ? 3 /* HS_DIR_D2D */ : kind; }

/* The other differences, which need no code here:
 *  - hipGetProcAddress (ROCm 6.1): wrapped in every build; wrappers.c declares it when the
 *    headers are older, and the runtime's answer is replaced by the wrapper (lookup.c).
 *  - hipGetDevicePropertiesR0600 / hipDeviceProp_tR0600 (ROCm 6.0: the properties struct changed
 *    and the entry points were versioned): hipshadow neither wraps nor calls them.
 *  - HIP_SKIP_ABORT_ON_GPU_ERROR (CLR, on by default in recent releases): a GPU fault becomes the
 *    sticky hipErrorIllegalAddress instead of an abort; hipshadow reports the fault from ROCr's
 *    event either way (hsa_events.c), and a sticky error as device-fault.
 *  - libamdhip64.so.5 / .6 / .7: the resolver (wrappers.c, kernels.c) and the launcher look for
 *    each soname, newest first. */

#endif
