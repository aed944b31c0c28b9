/* The host-range check (hostmem.c): a range that passed is trusted until the mappings change
 * where it lies; a change elsewhere (an interpreter's arenas mapped and unmapped between a
 * program's copies) leaves it trusted without reading the maps again, unless more changes came
 * than are kept by range.  After a change on it the snapshot is read again (once a millisecond
 * at most) and the range is trusted again, not probed with a system call at every copy (a
 * 16-thread program's thread starts once made every later check pay an msync); a page made
 * read-only or unmapped is caught.  The sleeps let the once-a-millisecond limit (a coarse clock:
 * up to a few ms) pass. */
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

    /* changes elsewhere: still trusted, with the snapshot left stale (not read again), no probe */
    long page = sysconf(_SC_PAGESIZE);
    char *elsewhere = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(elsewhere != MAP_FAILED);
    usleep(10000);
    uint64_t probes = hs_host_kernel_probes();
    for (int i = 0; i < 10; i++)
        hs_hostmem_maps_changed((uintptr_t)elsewhere, (size_t)page, 0, 0);
    CHECK_EQ(hs_host_snapshot_serial(), 0u);
    CHECK_EQ(hs_host_check(b, sizeof buffer, true, &fact), HS_HOST_OK);
    CHECK_EQ(hs_host_snapshot_serial(), 0u);
    CHECK_EQ(hs_host_kernel_probes(), probes);

    /* more changes than are kept: the snapshot is read again */
    for (int i = 0; i < 100; i++)
        hs_hostmem_maps_changed((uintptr_t)elsewhere, (size_t)page, 0, 0);
    CHECK_EQ(hs_host_check(b, sizeof buffer, true, &fact), HS_HOST_OK);
    CHECK(hs_host_snapshot_serial() != 0);

    /* a change on it (here the second range of two): the snapshot is read again, then no probe
     * for the same range */
    usleep(10000);
    hs_hostmem_maps_changed((uintptr_t)elsewhere, (size_t)page, b + 8, 1);
    probes = hs_host_kernel_probes();
    CHECK_EQ(hs_host_check(b, sizeof buffer, true, &fact), HS_HOST_OK);
    CHECK(hs_host_snapshot_serial() != 0);
    uint64_t after_one = hs_host_kernel_probes();
    CHECK_EQ(after_one, probes);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(hs_host_check(b, sizeof buffer, true, &fact), HS_HOST_OK);
    CHECK_EQ(hs_host_kernel_probes(), after_one);

    /* a page made read-only (the wrapped mprotect says so; here, by hand): a write is refused */
    char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, true, &fact), HS_HOST_OK);
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, true, &fact), HS_HOST_OK);
    CHECK_EQ(mprotect(p, (size_t)page, PROT_READ), 0);
    usleep(10000);
    hs_hostmem_maps_changed((uintptr_t)p, (size_t)page, 0, 0);
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, true, &fact), HS_HOST_NO_ACCESS);
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, false, &fact), HS_HOST_OK); /* reading it is fine */

    /* unmapped: caught, though the range passed before */
    CHECK_EQ(munmap(p, (size_t)page), 0);
    usleep(10000);
    hs_hostmem_maps_changed((uintptr_t)p, (size_t)page, 0, 0);
    CHECK_EQ(hs_host_check((uintptr_t)p, 64, false, &fact), HS_HOST_UNMAPPED);
    return UNIT_DONE();
}
