/* Annotated sub-buffers (regions) of pools, and names of allocations, from the public API and
 * from NVTX (src/nvtx).  Region lookups are lock-free; names are read on the cold path only.
 *
 * A region's span: base, size, id (names it for hs_region_name), time_ns (registered),
 * owner (the NVTX heap's handle; 0: hipshadow_region_register), kind (its process-wide access,
 * HS_REGION_ACCESS_SET | HS_REGION_READ/WRITE, once one was assigned; 0: read and write).  A
 * region freed through NVTX is quarantined (FIFO) so a later use is a use after free: its span
 * then has end_time_ns, end_stack, end_thread, and api = the hs_region_end that freed it. */
#ifndef HS_REGIONS_H
#define HS_REGIONS_H

#include "shadow/span.h"

#include <stdbool.h>

typedef enum hs_region_state { HS_REGION_NONE = 0, HS_REGION_LIVE, HS_REGION_FREED } hs_region_state;

enum { HS_REGION_READ = 1u, HS_REGION_WRITE = 2u, HS_REGION_RW = 3u, HS_REGION_ACCESS_SET = 0x100u };
/* The owner of regions in NVTX's process-wide heap (NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE). */
enum { HS_REGION_OWNER_NVTX_PROCESS = 1 };

/* What freed a quarantined region (its span's api). */
typedef enum hs_region_end {
    HS_REGION_END_UNREGISTER = 1,  /* nvtxMemRegionsUnregister */
    HS_REGION_END_HEAP_RESET,      /* nvtxMemHeapReset */
    HS_REGION_END_HEAP_UNREGISTER, /* nvtxMemHeapUnregister */
} hs_region_end;

int hs_regions_init(void);
/* 0 on success; -1 when the range is empty or memory runs out. */
int hs_region_register(uintptr_t base, size_t size, const char *name);
bool hs_region_unregister(uintptr_t base);
/* Lock-free: the live region holding addr, else the quarantined one (out->id names it for
 * hs_region_name).  Only regions registered at or after born_ns count: an older one belonged to
 * memory freed and handed out again. */
hs_region_state hs_region_lookup(uintptr_t addr, uint64_t born_ns, hs_span *out);
bool hs_regions_any(void);
/* Cold: the region's name into buf ("" when it has none; "?" when it is forgotten). */
const char *hs_region_name(uint64_t id, char *buf, size_t len);

/* ---- NVTX's regions (src/nvtx/mem.c) ---- */

/* Registers [base, base+size) in heap owner (replacing the regions it overlaps, forgetting the
 * quarantined ones); returns its id, 0 when empty or out of memory. */
uint64_t hs_region_add(uintptr_t base, size_t size, uint64_t owner, const char *name);
/* The live region starting at base, if any. */
bool hs_region_at(uintptr_t base, hs_span *out);
/* Moves the end of the live region at base; false if there is none or the new end would run
 * into the next region. */
bool hs_region_resize(uintptr_t base, size_t size);
bool hs_region_rename(uintptr_t base, const char *name);
/* access: HS_REGION_READ|WRITE, or 0 with reset to forget the assignment. */
bool hs_region_set_access(uintptr_t base, uint32_t access, bool reset);
void hs_region_reset_access(void);
/* Frees the live region at base, into the quarantine when quarantine is set (stack and thread:
 * who freed it). */
bool hs_region_free(uintptr_t base, hs_region_end why, bool quarantine, uint32_t stack, uint32_t thread);
/* Frees every live region of heap owner inside [lo, hi); returns how many. */
size_t hs_region_free_heap(uint64_t owner, uintptr_t lo, uintptr_t hi, hs_region_end why, bool quarantine,
                           uint32_t stack, uint32_t thread);

/* Allocation names (hipshadow_name_allocation), keyed by allocation id. */
void hs_alloc_set_name(uint64_t alloc_id, const char *name);
const char *hs_alloc_name(uint64_t alloc_id, char *buf, size_t len); /* NULL if unnamed */

void hs_regions_after_fork(void);

#endif
