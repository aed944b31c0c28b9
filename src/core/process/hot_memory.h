/* Memory for the structures a launch or a block event reads, side by side in one region that is
 * offered to transparent huge pages.
 *
 * Between two of an engine's calls its own work evicts the address translations of whatever
 * hipshadow touches.  Mapped one by one, the block index's directory, keys, hints and spans,
 * the block records, the quarantine ring, a stream's record and ledger ring and the kernel
 * records each sit on pages of their own: a page walk each, at every op (a VM walks two page
 * tables).  Carved out of one 2 MiB-aligned region, they share a few huge pages where the kernel
 * grants them (THP "madvise" or "always"), and pack into fewer small pages where it does not.
 *
 * What is carved is zeroed, 64-byte aligned and never given back: it is for structures that
 * live as long as the process.  When the region is spent the caller maps its own, as before. */
#ifndef HS_HOT_MEMORY_H
#define HS_HOT_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

/* bytes from the region (64-byte aligned; from 2 MiB on, on a 2 MiB boundary), or NULL when it has
 * too few left (or could not be reserved). */
void *hs_hot_memory(size_t bytes);
/* A mapping of its own on a 2 MiB boundary, bytes rounded up to 2 MiB, offered to transparent
 * huge pages (MAP_NORESERVE: resident as touched); NULL when it could not be mapped. */
void *hs_map_huge(size_t bytes);
/* Whether p came from the region (such memory is never freed nor unmapped). */
bool hs_hot_memory_holds(const void *p);

#endif
