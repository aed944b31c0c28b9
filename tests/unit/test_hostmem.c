/* The host-range check (hostmem.c): a range that passed is trusted until the mappings change;
 * after a change the snapshot is read again (once a millisecond at most) and the range is
 * trusted again, not probed with a system call at every copy (a 16-thread program's thread
 * starts once made every later check pay an msync); a page made read-only or unmapped is caught.
 * The sleeps let the once-a-millisecond limit (a coarse clock: up to a few ms) pass. */
#include "shadow/hostmem.h"
#include "unit.h"

#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    CHECK_EQ(hs_hostmem_init(), 0);
    hs_host_fact fact;
    char buffer[256];
    uintptr_t b = (uintptr_t)buffer;
    CHECK_EQ(hs_host_check(b, sizeof buffer, true, &fact), HS_HOST_OK);
    CHECK_EQ(hs_host_check(b, sizeof buffer, true, &fact), HS_HOST_OK);

    /* a change anywhere: the snapshot is read again, then no probe for the same range */
    usleep(10000);
    hs_hostmem_maps_changed();
    uint64_t probes = hs_host_kernel_probes();
    CHECK_EQ(hs_host_check(b, sizeof buffer, true, &fact), HS_HOST_OK);
    uint64_t after_one = hs_host_kernel_probes();
    CHECK_EQ(after_one, probes);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(hs_host_check(b, sizeof buffer, true, &fact), HS_HOST_OK);
    CHECK_EQ(hs_host_kernel_probes(), after_one);

    /* a page made read-only (the wrapped mprotect says so; here, by hand): a write is refused */
    long page = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, true, &fact), HS_HOST_OK);
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, true, &fact), HS_HOST_OK);
    CHECK_EQ(mprotect(p, (size_t)page, PROT_READ), 0);
    usleep(10000);
    hs_hostmem_maps_changed();
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, true, &fact), HS_HOST_NO_ACCESS);
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, false, &fact), HS_HOST_OK); /* reading it is fine */

    /* unmapped: caught, though the range passed before */
    CHECK_EQ(munmap(p, (size_t)page), 0);
    usleep(10000);
    hs_hostmem_maps_changed();
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, false, &fact), HS_HOST_UNMAPPED);
    return UNIT_DONE();
}
