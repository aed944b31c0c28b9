/* The shadow map: sequential ids, interior lookups, release into quarantine, double and
 * interior frees, bounded quarantine eviction, restore after a refused free, freed memory that a
 * newer allocation covers in part, the floor and ceiling of every allocation. */
#include "shadow/shadow.h"
#include "unit.h"

static hs_span add(uintptr_t base, size_t size)
{
    hs_span s = {.base = base, .size = size, .kind = HS_MEM_DEVICE};
    CHECK_EQ(hs_shadow_add(&s), 0);
    return s;
}

int main(void)
{
    CHECK_EQ(hs_shadow_init(1000, 0), 0); /* quarantine: 1000 bytes of freed allocations */
    hs_span a = add(0x10000, 400), b = add(0x20000, 400), c = add(0x30000, 400);
    CHECK_EQ(a.id, 1);
    CHECK_EQ(b.id, 2);
    CHECK_EQ(c.id, 3);
    CHECK_EQ(hs_shadow_live_bytes(), 1200);

    /* the floor and ceiling pass over a launch's words in no allocation, and only those */
    CHECK(hs_shadow_outside_all(0x10000 - 1));
    CHECK(!hs_shadow_outside_all(0x10000));
    CHECK(!hs_shadow_outside_all(0x30000 + 399));
    CHECK(hs_shadow_outside_all(0x30000 + 400));
    CHECK(hs_shadow_outside_all(UINTPTR_MAX)); /* -1, as a parameter word */
    hs_span z = {.base = 0x40000, .size = 0, .kind = HS_MEM_DEVICE}, r = {.base = 0x50000, .size = 64, .redzone = 256};
    CHECK_EQ(hs_shadow_add(&z), 0);
    CHECK(!hs_shadow_outside_all(0x40000)); /* a size-0 allocation holds its base */
    CHECK_EQ(hs_shadow_add(&r), 0);
    CHECK(!hs_shadow_outside_all(0x50000 + 64 + 255)); /* its redzone: an overrun's address */
    CHECK(hs_shadow_outside_all(0x50000 + 64 + 256));
    CHECK_EQ(hs_shadow_release(z.base, 1, 1, 1, &z), HS_RELEASED);
    CHECK_EQ(hs_shadow_release(r.base, 1, 1, 1, &r), HS_RELEASED);
    CHECK(!hs_shadow_outside_all(0x50000)); /* freed, and still in the map: a use after free */

    hs_span s;
    CHECK_EQ(hs_shadow_lookup(0x10000 + 399, &s), HS_WHERE_LIVE);
    CHECK_EQ(s.base, 0x10000);
    CHECK_EQ(hs_shadow_lookup(0x10000 + 400, &s), HS_WHERE_NONE);

    /* interior free is refused and names the allocation */
    CHECK_EQ(hs_shadow_release(0x10010, 5, 1, 100, &s), HS_RELEASE_INTERIOR);
    CHECK_EQ(s.id, 1);
    CHECK_EQ(hs_shadow_release(0x99999, 5, 1, 100, &s), HS_RELEASE_UNKNOWN);

    CHECK_EQ(hs_shadow_release(0x10000, 42, 7, 100, &s), HS_RELEASED);
    CHECK_EQ(s.end_stack, 42);
    CHECK_EQ(hs_shadow_lookup(0x10008, &s), HS_WHERE_FREED);
    CHECK_EQ(s.end_thread, 7);
    CHECK_EQ(hs_shadow_release(0x10000, 43, 7, 101, &s), HS_RELEASE_TWICE);

    /* 400 + 400 fit in 1000; the third free evicts the oldest */
    CHECK_EQ(hs_shadow_release(0x20000, 44, 7, 102, &s), HS_RELEASED);
    CHECK_EQ(hs_shadow_lookup(0x10000, &s), HS_WHERE_FREED);
    CHECK_EQ(hs_shadow_release(0x30000, 45, 7, 103, &s), HS_RELEASED);
    CHECK_EQ(hs_shadow_lookup(0x10000, &s), HS_WHERE_NONE);
    CHECK_EQ(hs_shadow_lookup(0x20000, &s), HS_WHERE_FREED);
    CHECK_EQ(hs_shadow_lookup(0x30000, &s), HS_WHERE_FREED);
    CHECK_EQ(hs_shadow_live_bytes(), 0);

    /* a refused free puts the allocation back */
    hs_span d = add(0x40000, 100);
    CHECK_EQ(hs_shadow_release(0x40000, 46, 7, 104, &s), HS_RELEASED);
    hs_shadow_restore(&s);
    CHECK_EQ(hs_shadow_lookup(0x40010, &s), HS_WHERE_LIVE);
    CHECK_EQ(s.id, d.id);

    /* a new allocation at a freed address is live again, and the freed record stays behind it */
    hs_span e = add(0x30000, 200);
    CHECK_EQ(hs_shadow_lookup(0x30010, &s), HS_WHERE_LIVE);
    CHECK_EQ(s.id, e.id);
    CHECK_EQ(hs_shadow_lookup(0x30000 + 300, &s), HS_WHERE_FREED);
    CHECK_EQ(s.id, c.id);

    /* freeing the old base again, under a newer allocation inside it, is still a double free */
    hs_span g = add(0x60000, 100);
    CHECK_EQ(hs_shadow_release(0x60000, 47, 7, 105, &s), HS_RELEASED);
    hs_span h = add(0x60020, 16);
    CHECK_EQ(hs_shadow_lookup(0x60024, &s), HS_WHERE_LIVE);
    CHECK_EQ(s.id, h.id);
    CHECK_EQ(hs_shadow_release(0x60000, 48, 7, 106, &s), HS_RELEASE_TWICE);
    CHECK_EQ(s.id, g.id);

    /* eviction passes over the restored allocation's stale FIFO entry: it stays live */
    hs_span big = add(0x70000, 990);
    CHECK_EQ(hs_shadow_release(0x70000, 49, 7, 107, &s), HS_RELEASED); /* evicts all older frees */
    CHECK_EQ(hs_shadow_lookup(0x40010, &s), HS_WHERE_LIVE);
    CHECK_EQ(s.id, d.id);
    CHECK_EQ(hs_shadow_lookup(0x60010, &s), HS_WHERE_NONE); /* the superseded span was evicted too */
    CHECK_EQ(hs_shadow_lookup(0x70010, &s), HS_WHERE_FREED);
    CHECK_EQ(s.id, big.id);
    CHECK_EQ(hs_shadow_live_count(), 3); /* d, e, h */
    return UNIT_DONE();
}
