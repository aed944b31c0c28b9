/* The NVTX v3 ABI as a tool sees it: the injection entry points, the export table of the core
 * API, the extension module protocol, and the memory extension's batches (NVTX_EXT_COMPATID_MEM
 * 0x0102).  Written out here, layout for layout, so both preload libraries build without the NVTX
 * headers: a program compiled against nvtx3/nvToolsExtMem.h hands hipshadow exactly these. */
#ifndef HS_NVTX_ABI_H
#define HS_NVTX_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* ---- core: InitializeInjectionNvtx2(getExportTable) ---- */

typedef const void *(*hs_nvtx_get_export_table)(uint32_t export_table_id);
enum { HS_NVTX_ETID_CALLBACKS = 1, HS_NVTX_ETID_VERSIONINFO = 3 };

typedef void (*hs_nvtx_fn)(void);
typedef struct hs_nvtx_callbacks {
    size_t struct_size;
    /* an array of pointers to the instance's function pointers, one per callback id */
    int (*get_module_function_table)(int module, hs_nvtx_fn ***out_table, unsigned *out_size);
} hs_nvtx_callbacks;

typedef struct hs_nvtx_version_info {
    size_t struct_size;
    uint32_t version;
    uint32_t reserved0;
    void (*set_injection_nvtx_version)(uint32_t version);
} hs_nvtx_version_info;

enum { HS_NVTX_CB_MODULE_CORE2 = 5 };
enum { HS_NVTX_CBID_CORE2_REGISTER_STRING_A = 10, HS_NVTX_CBID_CORE2_REGISTER_STRING_W = 11 };

/* nvtxMessageType_t and nvtxMessageValue_t */
enum { HS_NVTX_MESSAGE_ASCII = 1, HS_NVTX_MESSAGE_UNICODE = 2, HS_NVTX_MESSAGE_REGISTERED = 3 };
typedef union hs_nvtx_message {
    const char *ascii;
    const wchar_t *unicode;
    const void *registered; /* an nvtxStringHandle_t this tool returned */
} hs_nvtx_message;

/* ---- extensions: InitializeInjectionNvtxExtension(moduleInfo) (nvtxExtTypes.h) ---- */

typedef struct hs_nvtx_ext_segment {
    size_t segment_id;
    size_t slot_count;
    intptr_t *function_slots; /* the tool writes a function's address into each slot it serves */
} hs_nvtx_ext_segment;

typedef struct hs_nvtx_ext_module {
    uint16_t nvtx_version;
    uint16_t struct_size;
    uint16_t module_id;
    uint16_t compat_id;
    size_t segments_count;
    hs_nvtx_ext_segment *segments;
    intptr_t (*get_export_function)(uint32_t id);
    const void *ext_info;
} hs_nvtx_ext_module;

/* ---- the memory extension (nvToolsExtMem.h) ---- */

enum { HS_NVTX_MODULE_MEM = 1, HS_NVTX_COMPAT_MEM = 0x0102 };

/* Its function slots (NVTX3EXT_CBID_*); 13..16 are the CUDA runtime's (nvToolsExtMemCudaRt.h). */
enum {
    HS_NVTX_MEM_HEAP_REGISTER = 0,
    HS_NVTX_MEM_HEAP_UNREGISTER = 1,
    HS_NVTX_MEM_HEAP_RESET = 2,
    HS_NVTX_MEM_REGIONS_REGISTER = 3,
    HS_NVTX_MEM_REGIONS_RESIZE = 4,
    HS_NVTX_MEM_REGIONS_UNREGISTER = 5,
    HS_NVTX_MEM_REGIONS_NAME = 6,
    HS_NVTX_MEM_PERMISSIONS_ASSIGN = 7,
    HS_NVTX_MEM_PERMISSIONS_CREATE = 8,
    HS_NVTX_MEM_PERMISSIONS_DESTROY = 9,
    HS_NVTX_MEM_PERMISSIONS_RESET = 10,
    HS_NVTX_MEM_PERMISSIONS_BIND = 11,
    HS_NVTX_MEM_PERMISSIONS_UNBIND = 12,
    HS_NVTX_MEM_SERVED = 13,
};

enum { HS_NVTX_MEM_TYPE_VIRTUAL_ADDRESS = 1 };
enum { HS_NVTX_HEAP_USAGE_SUB_ALLOCATOR = 1, HS_NVTX_HEAP_USAGE_LAYOUT = 2 };
enum { HS_NVTX_REF_POINTER = 1, HS_NVTX_REF_HANDLE = 2 };
enum { HS_NVTX_ACCESS_READ = 1, HS_NVTX_ACCESS_WRITE = 2, HS_NVTX_ACCESS_ATOMIC = 4, HS_NVTX_ACCESS_RESET = 8 };
enum { HS_NVTX_EXCLUDE_GLOBAL_READ = 1, HS_NVTX_EXCLUDE_GLOBAL_WRITE = 2 };
enum { HS_NVTX_BIND_STRICT_READ = 1, HS_NVTX_BIND_STRICT_WRITE = 2 };
enum { HS_NVTX_BIND_SCOPE_CPU_THREAD = 1, HS_NVTX_BIND_SCOPE_CUDA_STREAM = 2 };

typedef struct hs_nvtx_range {
    size_t size;
    const void *ptr;
} hs_nvtx_range;

typedef struct hs_nvtx_heap_desc {
    uint16_t compat_id;
    uint16_t struct_size;
    uint32_t reserved0;
    uint32_t usage;
    uint32_t type;
    size_t type_desc_size;
    const void *type_desc; /* an hs_nvtx_range for HS_NVTX_MEM_TYPE_VIRTUAL_ADDRESS */
    uint32_t category;
    uint32_t message_type;
    hs_nvtx_message message;
} hs_nvtx_heap_desc;

typedef struct hs_nvtx_regions_register {
    uint16_t compat_id;
    uint16_t struct_size;
    uint32_t region_type;
    const void *heap;
    size_t count;
    size_t element_size;
    const void *elements;     /* hs_nvtx_range, element_size apart */
    const void **handles_out; /* may be NULL */
} hs_nvtx_regions_register;

typedef struct hs_nvtx_regions_resize {
    uint16_t compat_id;
    uint16_t struct_size;
    uint32_t region_type;
    size_t count;
    size_t element_size;
    const void *elements;
} hs_nvtx_regions_resize;

/* nvtxMemRegionRef_t: a pointer or a handle (for this tool, the region's base either way) */
typedef union hs_nvtx_region_ref {
    const void *pointer;
    const void *handle;
} hs_nvtx_region_ref;

typedef struct hs_nvtx_regions_unregister {
    uint16_t compat_id;
    uint16_t struct_size;
    uint32_t ref_type;
    size_t count;
    size_t element_size;
    const hs_nvtx_region_ref *elements;
} hs_nvtx_regions_unregister;

typedef struct hs_nvtx_region_name {
    uint32_t ref_type;
    uint32_t name_type;
    hs_nvtx_region_ref region;
    hs_nvtx_message name;
    uint32_t category;
    uint32_t reserved0;
} hs_nvtx_region_name;

typedef struct hs_nvtx_regions_name {
    uint16_t compat_id;
    uint16_t struct_size;
    uint32_t reserved0;
    size_t count;
    size_t element_size;
    const hs_nvtx_region_name *elements;
    size_t reserved1;
} hs_nvtx_regions_name;

typedef struct hs_nvtx_permissions_region {
    uint32_t flags;
    uint32_t ref_type;
    hs_nvtx_region_ref region;
} hs_nvtx_permissions_region;

typedef struct hs_nvtx_permissions_assign {
    uint16_t compat_id;
    uint16_t struct_size;
    uint32_t reserved0;
    const void *permissions; /* NULL: the process-wide permissions */
    size_t count;
    size_t element_size;
    const hs_nvtx_permissions_region *elements;
    size_t reserved1;
} hs_nvtx_permissions_assign;

#endif
