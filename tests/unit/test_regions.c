/* Regions as NVTX drives them (regions.c, region_access.c) and the rules on their facts: resize,
 * the quarantine of freed regions and its end, a heap's regions freed together, lookups that
 * ignore regions older than the allocation, process-wide and thread-bound access, and the
 * region-permission and use-after-free findings they lead to. */
#include "rules/check.h"
#include "shadow/region_access.h"
#include "shadow/regions.h"
#include "unit.h"

#include <pthread.h>
#include <string.h>

enum { HEAP = 0x100000, OTHER_HEAP = 0x200000 };

static void test_resize_and_quarantine(void)
{
    hs_span r;
    uint64_t a = hs_region_add(HEAP, 4096, HEAP, "a");
    uint64_t b = hs_region_add(HEAP + 8192, 4096, HEAP, "");
    CHECK(a && b && a != b);
    CHECK_EQ(hs_region_lookup(HEAP + 16, 0, &r), HS_REGION_LIVE);
    CHECK_EQ(r.id, a);
    CHECK_EQ(hs_region_lookup(HEAP + 16, UINT64_MAX, &r), HS_REGION_NONE); /* older than the allocation */
    CHECK(hs_region_resize(HEAP, 2048));
    CHECK_EQ(hs_region_lookup(HEAP + 3000, 0, &r), HS_REGION_NONE);
    CHECK(!hs_region_resize(HEAP, 8192 + 1)); /* into b */
    CHECK(hs_region_resize(HEAP, 8192));
    CHECK(!hs_region_resize(HEAP + 1, 64)); /* no region starts there */

    CHECK(hs_region_free(HEAP, HS_REGION_END_UNREGISTER, true, 77, 5));
    CHECK_EQ(hs_region_lookup(HEAP + 100, 0, &r), HS_REGION_FREED);
    CHECK_EQ(r.id, a);
    CHECK_EQ(r.end_stack, 77);
    CHECK_EQ(r.end_thread, 5);
    CHECK_EQ(r.api, HS_REGION_END_UNREGISTER);
    char name[32];
    CHECK(!strcmp(hs_region_name(a, name, sizeof name), "a")); /* kept for the report */
    CHECK(!hs_region_at(HEAP, &r));
    CHECK(!hs_region_free(HEAP, HS_REGION_END_UNREGISTER, true, 0, 0)); /* not twice */

    /* A region registered over it: the old pointer is live memory again. */
    uint64_t c = hs_region_add(HEAP + 4096, 1024, HEAP, "c");
    CHECK_EQ(hs_region_lookup(HEAP + 100, 0, &r), HS_REGION_NONE); /* a is forgotten whole, as blocks are */
    CHECK_EQ(hs_region_lookup(HEAP + 4100, 0, &r), HS_REGION_LIVE);
    CHECK_EQ(r.id, c);
    hs_region_add(HEAP, 8192, HEAP, "");
    CHECK_EQ(hs_region_lookup(HEAP + 100, 0, &r), HS_REGION_LIVE);

    /* Without the quarantine (a LAYOUT heap) a freed region is simply gone. */
    CHECK(hs_region_free(HEAP + 8192, HS_REGION_END_UNREGISTER, false, 0, 0));
    CHECK_EQ(hs_region_lookup(HEAP + 8192, 0, &r), HS_REGION_NONE);
    CHECK(hs_region_free(HEAP, HS_REGION_END_UNREGISTER, false, 0, 0));
}

static void test_heap_free(void)
{
    hs_span r;
    for (int i = 0; i < 3; i++)
        hs_region_add(HEAP + i * 4096, 4096, HEAP, "");
    hs_region_add(OTHER_HEAP, 4096, OTHER_HEAP, "");
    CHECK_EQ(hs_region_free_heap(HEAP, HEAP, HEAP + 65536, HS_REGION_END_HEAP_RESET, true, 9, 1), 3);
    CHECK_EQ(hs_region_lookup(HEAP + 4096 * 2 + 1, 0, &r), HS_REGION_FREED);
    CHECK_EQ(r.api, HS_REGION_END_HEAP_RESET);
    CHECK_EQ(hs_region_lookup(OTHER_HEAP, 0, &r), HS_REGION_LIVE);
    CHECK_EQ(hs_region_free_heap(OTHER_HEAP, 0, UINTPTR_MAX, HS_REGION_END_HEAP_UNREGISTER, true, 0, 0), 1);
    CHECK_EQ(hs_region_lookup(OTHER_HEAP, 0, &r), HS_REGION_FREED);
    CHECK_EQ(r.api, HS_REGION_END_HEAP_UNREGISTER);
}

static hs_span region_at(uintptr_t base)
{
    hs_span r = {0};
    hs_region_at(base, &r);
    return r;
}

static uint32_t other_thread_access;

static void *from_other_thread(void *arg)
{
    other_thread_access = hs_region_access(arg);
    return NULL;
}

static void test_access(void)
{
    hs_region_add(HEAP, 4096, HEAP, "");
    hs_region_add(HEAP + 4096, 4096, HEAP, "");
    hs_span a = region_at(HEAP), b = region_at(HEAP + 4096);
    CHECK_EQ(hs_region_access(&a), HS_REGION_RW);
    CHECK(hs_region_set_access(HEAP, HS_REGION_READ, false));
    a = region_at(HEAP);
    CHECK_EQ(hs_region_access(&a), HS_REGION_READ);
    hs_region_reset_access();
    a = region_at(HEAP);
    CHECK_EQ(hs_region_access(&a), HS_REGION_RW);

    /* A permissions object counts only for the thread that bound it. */
    unsigned set = hs_access_set_create(0);
    CHECK(set);
    CHECK(hs_access_set_assign(set, &a, 0, false));
    CHECK_EQ(hs_region_access(&a), HS_REGION_RW); /* not bound yet */
    CHECK(hs_access_bind(set, 0));
    CHECK_EQ(hs_region_access(&a), 0);
    CHECK_EQ(hs_region_access(&b), HS_REGION_RW); /* not in the object: the process-wide access */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, from_other_thread, &a) == 0);
    pthread_join(t, NULL);
    CHECK_EQ(other_thread_access, HS_REGION_RW);
    hs_access_unbind();
    CHECK_EQ(hs_region_access(&a), HS_REGION_RW);

    /* Strict writes: the regions it does not name lose their process-wide write. */
    CHECK(hs_access_bind(set, HS_REGION_WRITE));
    CHECK_EQ(hs_region_access(&b), HS_REGION_READ);
    /* Destroying a bound object unbinds it; its number comes back under a new generation. */
    CHECK(hs_access_set_destroy(set));
    CHECK_EQ(hs_region_access(&a), HS_REGION_RW);
    CHECK(!hs_access_set_assign(set, &a, 0, false));
    unsigned again = hs_access_set_create(HS_REGION_READ | HS_REGION_WRITE);
    CHECK_EQ(again, set);
    CHECK_EQ(hs_region_access(&a), HS_REGION_RW); /* the old binding does not carry over */
    CHECK(hs_access_bind(again, 0));
    CHECK_EQ(hs_region_access(&b), 0); /* created excluding the process-wide access */
    hs_access_unbind();
    hs_access_set_destroy(again);
    hs_region_free_heap(HEAP, 0, UINTPTR_MAX, HS_REGION_END_HEAP_RESET, false, 0, 0);
}

static void test_rules(void)
{
    hs_call c = {.op = HS_OP_COPY, .bytes = 128, .dir = HS_DIR_H2D};
    hs_side pool = {.ptr = HEAP + 64,
                    .extent = 128,
                    .where = HS_WHERE_LIVE,
                    .alloc = {.base = HEAP, .size = 1 << 20, .kind = HS_MEM_DEVICE, .id = 1},
                    .in_region = true,
                    .region = {.base = HEAP, .size = 4096, .id = 7}};
    hs_facts f = {.dir = HS_DIR_H2D, .dst = pool, .src = {.ptr = 0x1000, .extent = 128, .host_checked = true}};
    hs_finding out[4];
    CHECK_EQ(hs_check_memory_op(&c, &f, out, 4), 0);
    f.dst.region_denied = HS_REGION_WRITE; /* read-only */
    CHECK_EQ(hs_check_memory_op(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_REGION_PERMISSION);
    CHECK_EQ(out[0].side, HS_SIDE_DST);
    /* read-only, read: fine; no access, read: not */
    c.dir = f.dir = HS_DIR_D2H;
    f.src = f.dst;
    f.dst = (hs_side){.ptr = 0x1000, .extent = 128, .host_checked = true};
    CHECK_EQ(hs_check_memory_op(&c, &f, out, 4), 0);
    f.src.region_denied = HS_REGION_RW;
    CHECK_EQ(hs_check_memory_op(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].side, HS_SIDE_SRC);
    /* a memset writes */
    hs_call m = {.op = HS_OP_MEMSET, .bytes = 64};
    hs_facts fm = {.dst = pool};
    fm.dst.region_denied = HS_REGION_WRITE;
    CHECK_EQ(hs_check_memory_op(&m, &fm, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_REGION_PERMISSION);
    /* a freed region of a live pool */
    fm.dst.in_region = false;
    fm.dst.region_freed = true;
    CHECK_EQ(hs_check_memory_op(&m, &fm, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_USE_AFTER_FREE);
    /* a launch with a pointer parameter into one */
    hs_call l = {.op = HS_OP_LAUNCH};
    hs_facts fl = {.n_args = 1, .args = {{.value = HEAP + 64, .how = HS_ARG_EXACT, .region_freed = true}}};
    CHECK_EQ(hs_check_launch(&l, &fl, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_KERNEL_USE_AFTER_FREE);
    CHECK(!strcmp(hs_kind_name(HS_KIND_REGION_PERMISSION), "region-permission"));
}

int main(void)
{
    CHECK_EQ(hs_regions_init(), 0);
    test_resize_and_quarantine();
    test_heap_free();
    test_access();
    test_rules();
    return UNIT_DONE();
}
