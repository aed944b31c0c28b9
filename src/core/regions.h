/* Annotated sub-buffers (regions) of pools, and names of allocations, from the public API.
 * Region lookups are lock-free; names are read on the cold path only. */
#ifndef HS_REGIONS_H
#define HS_REGIONS_H

#include "span_index.h"

int hs_regions_init(void);
/* 0 on success; -1 when the range is empty or memory runs out. */
int hs_region_register(uintptr_t base, size_t size, const char *name);
bool hs_region_unregister(uintptr_t base);
/* Lock-free; out->id names the region for hs_region_name. */
bool hs_region_find(uintptr_t addr, hs_span *out);
bool hs_regions_any(void);
/* Cold: the region's name into buf. */
const char *hs_region_name(uint64_t id, char *buf, size_t len);

/* Allocation names (hipshadow_name_allocation), keyed by allocation id. */
void hs_alloc_set_name(uint64_t alloc_id, const char *name);
const char *hs_alloc_name(uint64_t alloc_id, char *buf, size_t len); /* NULL if unnamed */

void hs_regions_after_fork(void);

#endif
