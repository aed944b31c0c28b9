/* munmap, mprotect and mremap, wrapped: each change of the process's mappings made through them
 * marks the host-mapping snapshot stale (hostmem.h), so the hot path can trust it otherwise.
 * They go straight to the system call (no lookup of the real function, nothing that allocates:
 * they may run in a signal handler or before hipshadow is initialised). */
#define _GNU_SOURCE
#include "shadow/hostmem.h"
#include "process/util.h"

#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

HS_EXPORT int munmap(void *addr, size_t len)
{
    int r = (int)syscall(SYS_munmap, addr, len);
    hs_hostmem_maps_changed((uintptr_t)addr, len, 0, 0);
    return r;
}

HS_EXPORT int mprotect(void *addr, size_t len, int prot)
{
    int r = (int)syscall(SYS_mprotect, addr, len, prot);
    hs_hostmem_maps_changed((uintptr_t)addr, len, 0, 0);
    return r;
}

HS_EXPORT void *mremap(void *old_address, size_t old_size, size_t new_size, int flags, ...)
{
    void *new_address = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_address = va_arg(ap, void *);
        va_end(ap);
    }
    void *r = (void *)syscall(SYS_mremap, old_address, old_size, new_size, flags, new_address);
    /* the old range, and the new one (a fixed one may have replaced what was there) */
    hs_hostmem_maps_changed((uintptr_t)old_address, old_size, r == MAP_FAILED ? 0 : (uintptr_t)r,
                            r == MAP_FAILED ? 0 : new_size);
    return r;
}
