/* NVTX's memory extension (nvToolsExtMem.h) served by hipshadow: heaps are pools, regions are
 * hipshadow regions (src/core/shadow/regions.h), permissions make regions read-only or no-access. */
#ifndef HS_NVTX_MEM_H
#define HS_NVTX_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Writes the address of each function hipshadow serves into the extension's slots (n of them). */
void hs_nvtx_mem_attach(intptr_t *slots, size_t n);

void hs_nvtx_mem_after_fork(void);

#endif
