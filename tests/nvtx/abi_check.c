/* src/nvtx/abi.h against the NVTX headers it mirrors: every struct the program hands hipshadow
 * has the same size and the same field offsets, and the ids and flags the same values.  A
 * difference stops the build here; the test itself only says so. */
#include <nvtx3/nvToolsExtMem.h>

#include "../../src/nvtx/abi.h"

#include <stddef.h>
#include <stdio.h>

#define SAME_SIZE(ours, theirs) _Static_assert(sizeof(ours) == sizeof(theirs), #ours " differs from " #theirs)
#define SAME_FIELD(ours, a, theirs, b)                                                                                 \
    _Static_assert(offsetof(ours, a) == offsetof(theirs, b), #ours "." #a " differs from " #theirs "." #b)
#define SAME_VALUE(ours, theirs) _Static_assert((long)(ours) == (long)(theirs), #ours " differs from " #theirs)

SAME_SIZE(hs_nvtx_ext_module, nvtxExtModuleInfo_t);
SAME_FIELD(hs_nvtx_ext_module, module_id, nvtxExtModuleInfo_t, moduleId);
SAME_FIELD(hs_nvtx_ext_module, compat_id, nvtxExtModuleInfo_t, compatId);
SAME_FIELD(hs_nvtx_ext_module, segments_count, nvtxExtModuleInfo_t, segmentsCount);
SAME_FIELD(hs_nvtx_ext_module, segments, nvtxExtModuleInfo_t, segments);
SAME_SIZE(hs_nvtx_ext_segment, nvtxExtModuleSegment_t);
SAME_FIELD(hs_nvtx_ext_segment, slot_count, nvtxExtModuleSegment_t, slotCount);
SAME_FIELD(hs_nvtx_ext_segment, function_slots, nvtxExtModuleSegment_t, functionSlots);
SAME_SIZE(hs_nvtx_callbacks, NvtxExportTableCallbacks);
SAME_FIELD(hs_nvtx_callbacks, get_module_function_table, NvtxExportTableCallbacks, GetModuleFunctionTable);
SAME_SIZE(hs_nvtx_version_info, NvtxExportTableVersionInfo);
SAME_FIELD(hs_nvtx_version_info, set_injection_nvtx_version, NvtxExportTableVersionInfo, SetInjectionNvtxVersion);
SAME_SIZE(hs_nvtx_message, nvtxMessageValue_t);

SAME_SIZE(hs_nvtx_range, nvtxMemVirtualRangeDesc_t);
SAME_FIELD(hs_nvtx_range, size, nvtxMemVirtualRangeDesc_t, size);
SAME_FIELD(hs_nvtx_range, ptr, nvtxMemVirtualRangeDesc_t, ptr);
SAME_SIZE(hs_nvtx_heap_desc, nvtxMemHeapDesc_t);
SAME_FIELD(hs_nvtx_heap_desc, usage, nvtxMemHeapDesc_t, usage);
SAME_FIELD(hs_nvtx_heap_desc, type, nvtxMemHeapDesc_t, type);
SAME_FIELD(hs_nvtx_heap_desc, type_desc_size, nvtxMemHeapDesc_t, typeSpecificDescSize);
SAME_FIELD(hs_nvtx_heap_desc, type_desc, nvtxMemHeapDesc_t, typeSpecificDesc);
SAME_FIELD(hs_nvtx_heap_desc, message_type, nvtxMemHeapDesc_t, messageType);
SAME_FIELD(hs_nvtx_heap_desc, message, nvtxMemHeapDesc_t, message);
SAME_SIZE(hs_nvtx_regions_register, nvtxMemRegionsRegisterBatch_t);
SAME_FIELD(hs_nvtx_regions_register, region_type, nvtxMemRegionsRegisterBatch_t, regionType);
SAME_FIELD(hs_nvtx_regions_register, heap, nvtxMemRegionsRegisterBatch_t, heap);
SAME_FIELD(hs_nvtx_regions_register, count, nvtxMemRegionsRegisterBatch_t, regionCount);
SAME_FIELD(hs_nvtx_regions_register, element_size, nvtxMemRegionsRegisterBatch_t, regionDescElementSize);
SAME_FIELD(hs_nvtx_regions_register, elements, nvtxMemRegionsRegisterBatch_t, regionDescElements);
SAME_FIELD(hs_nvtx_regions_register, handles_out, nvtxMemRegionsRegisterBatch_t, regionHandleElementsOut);
SAME_SIZE(hs_nvtx_regions_resize, nvtxMemRegionsResizeBatch_t);
SAME_FIELD(hs_nvtx_regions_resize, count, nvtxMemRegionsResizeBatch_t, regionDescCount);
SAME_FIELD(hs_nvtx_regions_resize, element_size, nvtxMemRegionsResizeBatch_t, regionDescElementSize);
SAME_FIELD(hs_nvtx_regions_resize, elements, nvtxMemRegionsResizeBatch_t, regionDescElements);
SAME_SIZE(hs_nvtx_region_ref, nvtxMemRegionRef_t);
SAME_SIZE(hs_nvtx_regions_unregister, nvtxMemRegionsUnregisterBatch_t);
SAME_FIELD(hs_nvtx_regions_unregister, ref_type, nvtxMemRegionsUnregisterBatch_t, refType);
SAME_FIELD(hs_nvtx_regions_unregister, count, nvtxMemRegionsUnregisterBatch_t, refCount);
SAME_FIELD(hs_nvtx_regions_unregister, element_size, nvtxMemRegionsUnregisterBatch_t, refElementSize);
SAME_FIELD(hs_nvtx_regions_unregister, elements, nvtxMemRegionsUnregisterBatch_t, refElements);
SAME_SIZE(hs_nvtx_region_name, nvtxMemRegionNameDesc_t);
SAME_FIELD(hs_nvtx_region_name, name_type, nvtxMemRegionNameDesc_t, nameType);
SAME_FIELD(hs_nvtx_region_name, region, nvtxMemRegionNameDesc_t, region);
SAME_FIELD(hs_nvtx_region_name, name, nvtxMemRegionNameDesc_t, name);
SAME_SIZE(hs_nvtx_regions_name, nvtxMemRegionsNameBatch_t);
SAME_FIELD(hs_nvtx_regions_name, count, nvtxMemRegionsNameBatch_t, regionCount);
SAME_FIELD(hs_nvtx_regions_name, element_size, nvtxMemRegionsNameBatch_t, regionElementSize);
SAME_FIELD(hs_nvtx_regions_name, elements, nvtxMemRegionsNameBatch_t, regionElements);
SAME_SIZE(hs_nvtx_permissions_region, nvtxMemPermissionsAssignRegionDesc_t);
SAME_FIELD(hs_nvtx_permissions_region, flags, nvtxMemPermissionsAssignRegionDesc_t, flags);
SAME_FIELD(hs_nvtx_permissions_region, region, nvtxMemPermissionsAssignRegionDesc_t, region);
SAME_SIZE(hs_nvtx_permissions_assign, nvtxMemPermissionsAssignBatch_t);
SAME_FIELD(hs_nvtx_permissions_assign, permissions, nvtxMemPermissionsAssignBatch_t, permissions);
SAME_FIELD(hs_nvtx_permissions_assign, count, nvtxMemPermissionsAssignBatch_t, regionCount);
SAME_FIELD(hs_nvtx_permissions_assign, element_size, nvtxMemPermissionsAssignBatch_t, regionElementSize);
SAME_FIELD(hs_nvtx_permissions_assign, elements, nvtxMemPermissionsAssignBatch_t, regionElements);

SAME_VALUE(HS_NVTX_MODULE_MEM, NVTX_EXT_MODULEID_MEM);
SAME_VALUE(HS_NVTX_COMPAT_MEM, NVTX_EXT_COMPATID_MEM);
SAME_VALUE(HS_NVTX_CB_MODULE_CORE2, NVTX_CB_MODULE_CORE2);
SAME_VALUE(HS_NVTX_CBID_CORE2_REGISTER_STRING_A, NVTX_CBID_CORE2_DomainRegisterStringA);
SAME_VALUE(HS_NVTX_CBID_CORE2_REGISTER_STRING_W, NVTX_CBID_CORE2_DomainRegisterStringW);
SAME_VALUE(HS_NVTX_ETID_CALLBACKS, NVTX_ETID_CALLBACKS);
SAME_VALUE(HS_NVTX_ETID_VERSIONINFO, NVTX_ETID_VERSIONINFO);
SAME_VALUE(HS_NVTX_MESSAGE_ASCII, NVTX_MESSAGE_TYPE_ASCII);
SAME_VALUE(HS_NVTX_MESSAGE_UNICODE, NVTX_MESSAGE_TYPE_UNICODE);
SAME_VALUE(HS_NVTX_MESSAGE_REGISTERED, NVTX_MESSAGE_TYPE_REGISTERED);
SAME_VALUE(HS_NVTX_MEM_HEAP_REGISTER, NVTX3EXT_CBID_nvtxMemHeapRegister);
SAME_VALUE(HS_NVTX_MEM_HEAP_UNREGISTER, NVTX3EXT_CBID_nvtxMemHeapUnregister);
SAME_VALUE(HS_NVTX_MEM_HEAP_RESET, NVTX3EXT_CBID_nvtxMemHeapReset);
SAME_VALUE(HS_NVTX_MEM_REGIONS_REGISTER, NVTX3EXT_CBID_nvtxMemRegionsRegister);
SAME_VALUE(HS_NVTX_MEM_REGIONS_RESIZE, NVTX3EXT_CBID_nvtxMemRegionsResize);
SAME_VALUE(HS_NVTX_MEM_REGIONS_UNREGISTER, NVTX3EXT_CBID_nvtxMemRegionsUnregister);
SAME_VALUE(HS_NVTX_MEM_REGIONS_NAME, NVTX3EXT_CBID_nvtxMemRegionsName);
SAME_VALUE(HS_NVTX_MEM_PERMISSIONS_ASSIGN, NVTX3EXT_CBID_nvtxMemPermissionsAssign);
SAME_VALUE(HS_NVTX_MEM_PERMISSIONS_CREATE, NVTX3EXT_CBID_nvtxMemPermissionsCreate);
SAME_VALUE(HS_NVTX_MEM_PERMISSIONS_DESTROY, NVTX3EXT_CBID_nvtxMemPermissionsDestroy);
SAME_VALUE(HS_NVTX_MEM_PERMISSIONS_RESET, NVTX3EXT_CBID_nvtxMemPermissionsReset);
SAME_VALUE(HS_NVTX_MEM_PERMISSIONS_BIND, NVTX3EXT_CBID_nvtxMemPermissionsBind);
SAME_VALUE(HS_NVTX_MEM_PERMISSIONS_UNBIND, NVTX3EXT_CBID_nvtxMemPermissionsUnbind);
SAME_VALUE(HS_NVTX_MEM_TYPE_VIRTUAL_ADDRESS, NVTX_MEM_TYPE_VIRTUAL_ADDRESS);
SAME_VALUE(HS_NVTX_HEAP_USAGE_SUB_ALLOCATOR, NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR);
SAME_VALUE(HS_NVTX_HEAP_USAGE_LAYOUT, NVTX_MEM_HEAP_USAGE_TYPE_LAYOUT);
SAME_VALUE(HS_NVTX_REF_POINTER, NVTX_MEM_REGION_REF_TYPE_POINTER);
SAME_VALUE(HS_NVTX_REF_HANDLE, NVTX_MEM_REGION_REF_TYPE_HANDLE);
SAME_VALUE(HS_NVTX_ACCESS_READ, NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ);
SAME_VALUE(HS_NVTX_ACCESS_WRITE, NVTX_MEM_PERMISSIONS_REGION_FLAGS_WRITE);
SAME_VALUE(HS_NVTX_ACCESS_ATOMIC, NVTX_MEM_PERMISSIONS_REGION_FLAGS_ATOMIC);
SAME_VALUE(HS_NVTX_ACCESS_RESET, NVTX_MEM_PERMISSIONS_REGION_FLAGS_RESET);
SAME_VALUE(HS_NVTX_EXCLUDE_GLOBAL_READ, NVTX_MEM_PERMISSIONS_CREATE_FLAGS_EXCLUDE_GLOBAL_READ);
SAME_VALUE(HS_NVTX_EXCLUDE_GLOBAL_WRITE, NVTX_MEM_PERMISSIONS_CREATE_FLAGS_EXCLUDE_GLOBAL_WRITE);
SAME_VALUE(HS_NVTX_BIND_STRICT_READ, NVTX_MEM_PERMISSIONS_BIND_FLAGS_STRICT_READ);
SAME_VALUE(HS_NVTX_BIND_STRICT_WRITE, NVTX_MEM_PERMISSIONS_BIND_FLAGS_STRICT_WRITE);
SAME_VALUE(HS_NVTX_BIND_SCOPE_CPU_THREAD, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CPU_THREAD);
SAME_VALUE(HS_NVTX_BIND_SCOPE_CUDA_STREAM, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CUDA_STREAM);

int main(void)
{
    puts("src/nvtx/abi.h matches the NVTX headers");
    return 0;
}
