/* Virtual memory (cuMemAddressReserve/cuMemCreate/cuMemMap, hipMem* alike), the way PyTorch's
 * expandable segments use it: a reservation is address space; a physical handle has a size and
 * a device; each map of a handle into a reservation is an allocation of the shadow map (kind
 * HS_MEM_MAPPED, owner = its reservation's base), so maps are checked like any allocation, and
 * a copy may run on from one map into the adjacent map of the same reservation. */
#ifndef HS_VMM_H
#define HS_VMM_H

#include "shadow/span.h"

#include <stdbool.h>

int hs_vmm_init(void);
void hs_vmm_after_fork(void);

void hs_vmm_reserved(uintptr_t base, size_t size, uint32_t stack, uint32_t thread, uint64_t now_ns);
void hs_vmm_reservation_freed(uintptr_t base);
/* Lock-free: the reservation holding addr. */
bool hs_vmm_reservation_of(uintptr_t addr, hs_span *reservation);

void hs_vmm_handle_created(uint64_t handle, size_t size, int device);
void hs_vmm_handle_released(uint64_t handle);
/* The size and device of a physical handle (false when it was not made through a wrapped call). */
bool hs_vmm_handle_info(uint64_t handle, size_t *size, int *device);

#endif
