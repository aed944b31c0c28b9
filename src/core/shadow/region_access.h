/* Who may read or write a region: its process-wide access (regions.h, the span's kind) and, for
 * a thread that bound one, a permissions object of its own (NVTX's nvtxMemPermissionsCreate,
 * Assign, Bind with the CPU-thread scope).  Objects are numbered 1..HS_ACCESS_SETS, never freed
 * (a destroyed one is reused under a new generation), and read without a lock. */
#ifndef HS_REGION_ACCESS_H
#define HS_REGION_ACCESS_H

#include "shadow/span.h"

#include <stdbool.h>
#include <stdint.h>

enum { HS_ACCESS_SETS = 256 };

/* A new object whose unassigned regions lose the process-wide access in exclude (READ, WRITE
 * bits of regions.h) while it is bound; 0 when none is left. */
unsigned hs_access_set_create(uint32_t exclude);
bool hs_access_set_destroy(unsigned set);
bool hs_access_set_reset(unsigned set);
/* The object's access to a live region: READ|WRITE bits, or reset to forget it. */
bool hs_access_set_assign(unsigned set, const hs_span *region, uint32_t access, bool reset);

/* The calling thread's bound object (0: none); strict removes more of the process-wide access
 * of the regions the object does not name. */
bool hs_access_bind(unsigned set, uint32_t strict);
void hs_access_unbind(void);

/* Lock-free: the READ|WRITE access the calling thread has to a live region. */
uint32_t hs_region_access(const hs_span *region);

void hs_region_access_after_fork(void);

#endif
