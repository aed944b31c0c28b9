/* Is a host range mapped, and readable or writable?  The hot path makes no system call: it
 * walks a snapshot of /proc/self/maps (lock-free), trusted while nothing has changed the
 * mappings through munmap, mprotect or mremap (mapwatch.c counts those), and a thread's last
 * checked mapping while the changes since (the last 64 are kept by range) were elsewhere.  When
 * the snapshot does not say yes, or may be stale, the kernel answers (msync walks the VMAs) and
 * the snapshot is read again before anything is reported.
 * Not seen: mappings the C library changes through its own internal calls (free() returning a
 * large chunk to the system) until the next counted change or miss refreshes the snapshot. */
#ifndef HS_HOSTMEM_H
#define HS_HOSTMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hs_host_status {
    HS_HOST_OK = 0,
    HS_HOST_UNMAPPED,  /* part of the range is not mapped at all */
    HS_HOST_NO_ACCESS, /* mapped, but not readable (H2D source) or not writable (D2H destination) */
} hs_host_status;

typedef struct hs_host_fact {
    hs_host_status status;
    uintptr_t bad_at; /* first byte of the range that is unmapped or lacks the permission */
    char perms[5];    /* of the mapping at bad_at, as in /proc/self/maps ("r--p") */
    char mapping[96]; /* its name in /proc/self/maps, e.g. "[stack]" or a file */
} hs_host_fact;

int hs_hostmem_init(void);
hs_host_status hs_host_check(uintptr_t p, size_t len, bool need_write, hs_host_fact *fact);
void hs_hostmem_after_fork(void);
/* Which snapshot of the mappings is in force: 0 while it is stale.  A cache of facts about host
 * memory stays valid while this stays the same (and not 0). */
uint64_t hs_host_snapshot_serial(void);
/* The private (not MAP_SHARED) mapping holding p in a fresh snapshot: its bounds and the serial
 * they belong to.  False when p is in none, in a shared one, or the snapshot is stale. */
bool hs_host_private_mapping(uintptr_t p, uintptr_t *lo, uintptr_t *hi, uint64_t *serial);
/* The process's mappings changed (munmap, mprotect, mremap) in [lo, lo+len) and [lo2, lo2+len2)
 * (len2 0: one range): the snapshot may be stale; a thread's last checked mapping elsewhere stays
 * good. */
void hs_hostmem_maps_changed(uintptr_t lo, size_t len, uintptr_t lo2, size_t len2);
/* How many times a check asked the kernel (msync) because the snapshot could not answer: the
 * slow path's count, for tests. */
uint64_t hs_host_kernel_probes(void);

#endif
