/* The quarantine at its record cap (16384 freed allocations): the oldest leave in a batch of 32
 * (looked up together, shadow.c's evict_batch), never more than that at once, and never one that
 * came back to life. */
#include "shadow/shadow.h"
#include "unit.h"

enum { CAP = 16384, BATCH = 32, EXTRA = 100 };

static uintptr_t base_of(int i) { return 0x100000000 + (uintptr_t)i * 4096; }

int main(void)
{
    CHECK_EQ(hs_shadow_init(1ull << 40, 0), 0); /* bytes never the limit: the record cap is */
    static hs_span spans[CAP + EXTRA];
    for (int i = 0; i < CAP + EXTRA; i++) {
        spans[i] = (hs_span){.base = base_of(i), .size = 16, .kind = HS_MEM_DEVICE};
        CHECK_EQ(hs_shadow_add(&spans[i]), 0);
    }
    hs_span s;
    hs_span refused;
    for (int i = 0; i < CAP; i++)
        CHECK_EQ(hs_shadow_release(base_of(i), 1, 1, 1, i == 3 ? &refused : &s), HS_RELEASED);
    hs_shadow_restore(&refused);                                /* live again; its FIFO entry stays, stale */
    CHECK_EQ(hs_shadow_lookup(base_of(0), &s), HS_WHERE_FREED); /* full, nothing evicted yet */
    CHECK_EQ(hs_shadow_lookup(base_of(CAP - 1), &s), HS_WHERE_FREED);

    CHECK_EQ(hs_shadow_release(base_of(CAP), 1, 1, 1, &s), HS_RELEASED); /* evicts 0..31 */
    for (int i = 0; i < BATCH; i++)
        CHECK_EQ(hs_shadow_lookup(base_of(i) + 8, &s), i == 3 ? HS_WHERE_LIVE : HS_WHERE_NONE);
    CHECK_EQ(hs_shadow_lookup(base_of(BATCH), &s), HS_WHERE_FREED);
    CHECK_EQ(s.id, spans[BATCH].id);
    CHECK_EQ(hs_shadow_lookup(base_of(CAP), &s), HS_WHERE_FREED);

    /* the next 31 frees fit; the 32nd evicts the next batch */
    for (int i = CAP + 1; i < CAP + BATCH; i++)
        CHECK_EQ(hs_shadow_release(base_of(i), 1, 1, 1, &s), HS_RELEASED);
    CHECK_EQ(hs_shadow_lookup(base_of(BATCH), &s), HS_WHERE_FREED);
    CHECK_EQ(hs_shadow_release(base_of(CAP + BATCH), 1, 1, 1, &s), HS_RELEASED);
    CHECK_EQ(hs_shadow_lookup(base_of(2 * BATCH - 1), &s), HS_WHERE_NONE);
    CHECK_EQ(hs_shadow_lookup(base_of(2 * BATCH), &s), HS_WHERE_FREED);

    /* live allocations are untouched by evictions */
    for (int i = CAP + BATCH + 1; i < CAP + EXTRA; i++)
        CHECK_EQ(hs_shadow_lookup(base_of(i), &s), HS_WHERE_LIVE);
    CHECK_EQ(hs_shadow_live_count(), (size_t)(EXTRA - BATCH - 1 + 1)); /* and the one brought back */
    return UNIT_DONE();
}
