/* The shadow map: every live device, managed, pinned and registered host allocation, plus a
 * bounded quarantine of freed ones.  Lookups are lock-free and O(1) (page_map); changes lock. */
#ifndef HS_SHADOW_H
#define HS_SHADOW_H

#include "shadow/span.h"

#include <stdatomic.h>
#include <stdbool.h>

typedef enum hs_mem_kind {
    HS_MEM_DEVICE = 1,
    HS_MEM_MANAGED,
    HS_MEM_PINNED_HOST,     /* hipHostMalloc / hipMallocHost */
    HS_MEM_REGISTERED_HOST, /* hipHostRegister */
    HS_MEM_EXTERNAL_DEVICE, /* known to the runtime only (allocated through an unwrapped path) */
    HS_MEM_MAPPED,          /* device memory mapped into a reserved range (cuMemMap, hipMemMap) */
} hs_mem_kind;

typedef enum hs_where {
    HS_WHERE_NONE = 0, /* in no live allocation and not in quarantine */
    HS_WHERE_LIVE,
    HS_WHERE_FREED,
} hs_where;

typedef enum hs_release_result {
    HS_RELEASED,         /* removed from the live set, now in quarantine */
    HS_RELEASE_UNKNOWN,  /* no allocation at all holds the pointer */
    HS_RELEASE_TWICE,    /* already freed: *span is the quarantined allocation */
    HS_RELEASE_INTERIOR, /* the pointer is inside a live allocation, not its base: *span is it */
} hs_release_result;

/* max_live: allocations tracked at most (0: no limit); past it one warning, then untracked. */
int hs_shadow_init(uint64_t quarantine_bytes, size_t max_live);
size_t hs_shadow_live_count(void);
/* Changed by every change to the map of allocations (both its maps: the low 32 bits and the
 * high); odd in either half while a change is being made.  What a lookup answered stays true
 * while it is the same. */
uint64_t hs_shadow_version(void);

/* Registers a new allocation; fills s->id with the next sequential id.  -1 on out-of-memory. */
int hs_shadow_add(hs_span *s);
/* Moves the allocation based at `base` to quarantine, stamping the free site. */
hs_release_result hs_shadow_release(uintptr_t base, uint32_t free_stack, uint32_t thread, uint64_t now_ns,
                                    hs_span *span);
/* A memory pool was destroyed: every allocation it still holds goes to quarantine. */
void hs_shadow_release_owned(uint64_t owner, uint32_t free_stack, uint32_t thread, uint64_t now_ns);
/* Puts back an allocation whose free the runtime refused. */
void hs_shadow_restore(const hs_span *s);

/* Lock-free: where addr lies. *span is filled for LIVE and FREED. */
hs_where hs_shadow_lookup(uintptr_t addr, hs_span *span);

/* The lowest base an allocation ever had, and the highest end (its redzone included): an address
 * below the one or at or above the other is in none, live or freed.  A launch's parameter words
 * are mostly sizes and strides (below), or -1, floats and other bit patterns (above), and these
 * answer them with two loads. */
extern atomic_uintptr_t hs_shadow_floor, hs_shadow_ceiling;
static inline bool hs_shadow_outside_all(uintptr_t addr)
{
    return addr < atomic_load_explicit(&hs_shadow_floor, memory_order_relaxed) ||
           addr >= atomic_load_explicit(&hs_shadow_ceiling, memory_order_relaxed);
}

/* Lock-free and cheaper, from the map's briefs (no record is read): LIVE with the allocation's
 * kind when one live allocation holds all of [addr, addr + extent); NONE when no allocation,
 * live or freed, holds addr.  false: only hs_shadow_lookup can tell (freed memory, an overrun,
 * a range leaving its 64 KiB chunk inside an allocation of 16 MiB or more). */
bool hs_shadow_brief(uintptr_t addr, size_t extent, hs_where *where, uint32_t *kind);

/* Lock-free: the live allocations nearest below and above addr (for addresses in none). */
void hs_shadow_nearest(uintptr_t addr, hs_span *below, bool *has_below, hs_span *above, bool *has_above);

/* Exit-time visit of every live allocation. */
/* Calls fn for each live allocation, under the map's locks; false (and no call) when they could
 * not be had within wait_s seconds (< 0: waits for them). */
bool hs_shadow_foreach_live(void (*fn)(const hs_span *, void *), void *arg, int wait_s);
uint64_t hs_shadow_live_bytes(void);

const char *hs_mem_kind_name(uint32_t kind);
bool hs_mem_kind_is_device(uint32_t kind);
bool hs_mem_kind_is_host(uint32_t kind);

void hs_shadow_after_fork(void);

#endif
