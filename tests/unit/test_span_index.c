/* The ordered index and the shadow's page map (built twice: -DTEST_PAGE_MAP): lookups by
 * containment, replacement of overlaps, growth, readers racing a writer never seeing a span that
 * does not hold the address they asked for, and random operations against a plain sorted array. */
#include "shadow/span_index.h"
#include "unit.h"

#ifdef TEST_PAGE_MAP /* the same API, other names */
#include "shadow/page_map.h"
#define hs_span_index hs_page_map
#define hs_span_index_init hs_pm_init
#define hs_span_find hs_pm_find
#define hs_span_find_exact hs_pm_find_exact
#define hs_span_neighbours(m, a, b, hb, ab, ha) hs_pm_neighbours(m, a, 0, b, hb, ab, ha)
#define hs_span_count hs_pm_count
#define hs_span_lock hs_pm_lock
#define hs_span_unlock hs_pm_unlock
static void add_replaced(const hs_span *old, void *arg) { *(uint64_t *)arg += old->size; }
static int pm_insert(hs_page_map *m, const hs_span *s, uint64_t *replaced_bytes)
{
    return hs_pm_insert_locked(m, s, replaced_bytes ? add_replaced : NULL, replaced_bytes);
}
#define hs_span_insert_locked pm_insert
#define hs_span_remove_locked hs_pm_remove_locked
#define hs_span_foreach_locked hs_pm_foreach_locked
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static hs_span_index ix;

static void insert(uintptr_t base, size_t size, uint64_t id)
{
    hs_span s = {.base = base, .size = size, .id = id};
    hs_span_lock(&ix);
    CHECK_EQ(hs_span_insert_locked(&ix, &s, NULL), 0);
    hs_span_unlock(&ix);
}

static void test_lookup_and_growth(void)
{
    /* 5000 spans of 0x100 bytes every 0x1000: well past the initial capacity, out of order */
    for (int i = 4999; i >= 0; i--)
        insert(0x100000 + (uintptr_t)i * 0x1000, 0x100, (uint64_t)i + 1);
    CHECK_EQ(hs_span_count(&ix), 5000);
    hs_span s;
    for (int i = 0; i < 5000; i += 7) {
        uintptr_t base = 0x100000 + (uintptr_t)i * 0x1000;
        CHECK(hs_span_find(&ix, base, &s) && s.id == (uint64_t)i + 1);
        CHECK(hs_span_find(&ix, base + 0xff, &s) && s.base == base);
        CHECK(!hs_span_find(&ix, base + 0x100, &s)); /* one past the end */
        CHECK(hs_span_find_exact(&ix, base, &s));
        CHECK(!hs_span_find_exact(&ix, base + 1, &s));
    }
    CHECK(!hs_span_find(&ix, 0xfffff, &s));
}

static void test_replace_and_remove(void)
{
    hs_span_index_init(&ix);
    insert(0x1000, 0x100, 1);
    insert(0x1200, 0x100, 2);
    insert(0x1400, 0x100, 3);
    /* A span covering the first two replaces both. */
    hs_span big = {.base = 0x1080, .size = 0x200, .id = 9};
    uint64_t replaced = 0;
    hs_span_lock(&ix);
    CHECK_EQ(hs_span_insert_locked(&ix, &big, &replaced), 0);
    hs_span_unlock(&ix);
    CHECK_EQ(replaced, 0x200);
    CHECK_EQ(hs_span_count(&ix), 2);
    hs_span s;
    CHECK(!hs_span_find(&ix, 0x1000, &s));
    CHECK(hs_span_find(&ix, 0x1250, &s) && s.id == 9);
    hs_span_lock(&ix);
    CHECK(!hs_span_remove_locked(&ix, 0x1400, 99, NULL)); /* wrong id: untouched */
    CHECK(hs_span_remove_locked(&ix, 0x1400, 3, &s) && s.id == 3);
    hs_span_unlock(&ix);
    CHECK(!hs_span_find(&ix, 0x1400, &s));
}

#ifndef TEST_PAGE_MAP
/* A span ended in place: its end fields set, the rest as it was; one already ended, or none at
 * the base, is left alone. */
static void test_end_in_place(void)
{
    hs_span_index_init(&ix);
    insert(0x1000, 0x100, 1);
    insert(0x1200, 0x100, 2);
    hs_span s;
    hs_span_lock(&ix);
    CHECK(!hs_span_end_locked(&ix, 0x1080, 50, 6, 7, &s)); /* not a base */
    CHECK(hs_span_end_locked(&ix, 0x1200, 50, 6, 7, &s));
    CHECK(s.base == 0x1200 && s.size == 0x100 && s.id == 2 && s.end_time_ns == 50 && s.end_stack == 6 &&
          s.end_thread == 7);
    CHECK(!hs_span_end_locked(&ix, 0x1200, 60, 8, 9, &s)); /* ended already */
    hs_span_unlock(&ix);
    CHECK(hs_span_find(&ix, 0x12ff, &s) && s.id == 2 && s.end_time_ns == 50 && s.end_stack == 6);
    CHECK(hs_span_find(&ix, 0x1000, &s) && s.id == 1 && s.end_time_ns == 0);
}
#endif

/* Readers look up addresses inside two fixed spans while a writer churns other spans around
 * them (forcing memmoves and growth).  A torn read would return a wrong span or none. */
static atomic_bool stop;
static atomic_long bad_reads, reads;

static void *reader(void *arg)
{
    (void)arg;
    hs_span s;
    while (!atomic_load(&stop)) {
        if (!hs_span_find(&ix, 0x50000010, &s) || s.base != 0x50000000 || s.id != 7777)
            atomic_fetch_add(&bad_reads, 1);
        if (!hs_span_find(&ix, 0x90000fff, &s) || s.base != 0x90000000 || s.id != 8888)
            atomic_fetch_add(&bad_reads, 1);
        atomic_fetch_add(&reads, 1);
    }
    return NULL;
}

static void test_readers_racing_writer(void)
{
    hs_span_index_init(&ix);
    insert(0x50000000, 0x1000, 7777);
    insert(0x90000000, 0x1000, 8888);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, reader, NULL);
    srand(42);
    /* at least 20000 rounds, and on until the readers have read while the writer ran (on a busy
     * machine they may start late) */
    for (int round = 0; round < 20000 || (atomic_load(&reads) < 1000 && round < 20000000); round++) {
        uintptr_t base = 0x60000000 + ((uintptr_t)(rand() % 4096) << 12);
        hs_span s = {.base = base, .size = 0x800, .id = (uint64_t)round + 1};
        hs_span_lock(&ix);
        hs_span_insert_locked(&ix, &s, NULL);
        if (round % 3 == 0)
            hs_span_remove_locked(&ix, 0x60000000 + ((uintptr_t)(rand() % 4096) << 12), 0, NULL);
        hs_span_unlock(&ix);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(atomic_load(&bad_reads), 0);
    CHECK(atomic_load(&reads) > 0);
}

/* Random inserts (overlapping ones replace), removes and replace-alls against a plain sorted
 * array: every lookup, neighbour pair, count and the visiting order agree.  Blocks split, empty
 * and are reused many times over. */
enum { REF_MAX = 4096 };
static hs_span ref[REF_MAX];
static size_t nref;

static void ref_insert(const hs_span *s)
{
    uintptr_t end = s->base + s->size;
    size_t w = 0;
    for (size_t r = 0; r < nref; r++) /* drop what it overlaps */
        if (!(ref[r].base < end && s->base < ref[r].base + ref[r].size))
            ref[w++] = ref[r];
    nref = w;
    size_t at = 0;
    while (at < nref && ref[at].base < s->base)
        at++;
    memmove(&ref[at + 1], &ref[at], (nref - at) * sizeof *ref);
    ref[at] = *s;
    nref++;
}

static size_t visited;
static void visit(const hs_span *s, void *arg)
{
    (void)arg;
    if (visited >= nref || ref[visited].base != s->base || ref[visited].id != s->id)
        atomic_fetch_add(&bad_reads, 1);
    visited++;
}

static uintptr_t probe_lo = 0x10000000, probe_range = 0x400000;

#ifdef TEST_PAGE_MAP
/* The briefs: a tag from the kind (rewritten by updates) and the id. */
static uint8_t tag_of(const hs_span *s) { return (uint8_t)(s->kind ^ s->id * 37); }

/* What hs_pm_brief_find must say for [a, a + extent), given the span that holds a (or none):
 * INSIDE with the span's tag whenever the span holds the range, is under 16 MiB (its brief size
 * is exact) and the range stays in a's 64 KiB chunk; ABSENT whenever no span holds a. */
static void check_brief(uintptr_t a, size_t extent, const hs_span *want)
{
    uint8_t tag = 0;
    hs_pm_brief b = hs_pm_brief_find(&ix, a, extent, &tag);
    bool inside = want && a + extent <= want->base + want->size;
    if (b == HS_PM_INSIDE)
        CHECK(inside && tag == tag_of(want));
    if (b == HS_PM_ABSENT)
        CHECK(!want);
    if (inside && want->size < (1u << 24) && (a & ~(uintptr_t)0xffff) == ((a + extent - 1) & ~(uintptr_t)0xffff))
        CHECK(b == HS_PM_INSIDE);
    if (!want)
        CHECK(b == HS_PM_ABSENT);
}
#endif

/* Addresses probed again at every check: their location hints were left by an earlier check, and
 * the spans have moved since (inserts, removes, blocks split and emptied), so each hint is tried
 * stale before a search replaces it. */
enum { KEPT_PROBES = 64 };
static uintptr_t kept_probes[KEPT_PROBES];

static void check_against_reference(void)
{
    CHECK_EQ(hs_span_count(&ix), nref);
    for (int k = 0; k < 200; k++) {
        uintptr_t a = probe_lo + (((uintptr_t)rand() << 16 ^ (uintptr_t)rand()) % probe_range);
        if (k < 2 * KEPT_PROBES)
            a = kept_probes[k / 2];
        hs_span got, below, above;
        bool has_below, has_above;
        bool found = hs_span_find(&ix, a, &got);
        const hs_span *want = NULL, *wb = NULL, *wa = NULL;
        for (size_t r = 0; r < nref; r++) {
            if (ref[r].base <= a) {
                wb = &ref[r];
                if (a - ref[r].base < ref[r].size)
                    want = &ref[r];
            } else if (!wa) {
                wa = &ref[r];
            }
        }
        CHECK(found == (want != NULL));
        if (found && want)
            CHECK(got.id == want->id);
#ifdef TEST_PAGE_MAP
        static const size_t extents[] = {1, 16, 700, 70000, 5000};
        check_brief(a, extents[k % 5], want);
#endif
        hs_span_neighbours(&ix, a, &below, &has_below, &above, &has_above);
        CHECK(has_below == (wb != NULL) && has_above == (wa != NULL));
        if (has_below && wb)
            CHECK(below.id == wb->id);
        if (has_above && wa)
            CHECK(above.id == wa->id);
    }
    visited = 0;
    hs_span_lock(&ix);
    hs_span_foreach_locked(&ix, visit, NULL);
    hs_span_unlock(&ix);
    CHECK_EQ(visited, nref);
}

/* PAGES: spans of 1 byte to 64 KiB on any byte in 1 MiB (the page map's page words: pages
 * shared, spans straddling pages and owning them or not); PACKED: small spans in 4 MiB (many per 64 KiB chunk); DENSE: spans of 16 or 32 bytes on
 * 16-byte bases in 64 KiB across a chunk boundary (a thousand per chunk, dozens per KiB: the page
 * map's hinted buckets, searched by halving within a KiB); WIDE: spans of 16 bytes to 2.5 GiB spread over 8 GiB (spans over many chunks,
 * whole GiBs covered). */
typedef enum { PACKED, DENSE, WIDE, PAGES } layout;
static const struct {
    uintptr_t lo, range;
} probed[] = {[PACKED] = {0x10000000, 0x400000},
              [DENSE] = {0x1fff8000, 0x10000},
              [WIDE] = {0x100000000, 0x200000000},
              [PAGES] = {0x30000000, 0x100000}};

static hs_span random_span(layout how, uint64_t id)
{
    if (how == PACKED)
        return (hs_span){.base = 0x10000000 + ((uintptr_t)(rand() % 0x4000) << 8),
                         .size = (size_t)(rand() % 4 + 1) << (rand() % 2 ? 4 : 9),
                         .id = id};
    if (how == PAGES) {
        static const size_t most[] = {64, 4096, 20000, 65536};
        return (hs_span){.base = 0x30000000 + (uintptr_t)(rand() % 0x100000),
                         .size = 1 + (size_t)rand() % most[rand() % 4],
                         .id = id};
    }
    if (how == DENSE)
        return (hs_span){
            .base = 0x1fff8000 + ((uintptr_t)(rand() % 0x1000) << 4), .size = (size_t)(rand() % 2 + 1) * 16, .id = id};
    static const int size_shift[] = {4, 8, 12, 16, 17, 20, 24, 28, 30, 31};
    size_t size = ((size_t)(rand() % 5 + 1) << size_shift[rand() % 10]) / 2;
    return (hs_span){.base = 0x100000000 + ((uintptr_t)(rand() % 0x20000) << 16) + (uintptr_t)(rand() % 4) * 4096,
                     .size = size,
                     .id = id};
}

static void run_against_reference(layout how)
{
    hs_span_index_init(&ix);
#ifdef TEST_PAGE_MAP
    hs_pm_set_tag(&ix, tag_of);
#endif
    nref = 0;
    atomic_store(&bad_reads, 0);
    probe_lo = probed[how].lo;
    probe_range = probed[how].range;
    srand(7);
    for (int k = 0; k < KEPT_PROBES; k++)
        kept_probes[k] = probe_lo + (((uintptr_t)rand() << 16 ^ (uintptr_t)rand()) % probe_range);
    uint64_t id = 1;
    for (int round = 0; round < 40000; round++) {
        int op = rand() % 10;
        hs_span_lock(&ix);
        if (op < 6 && nref < REF_MAX - 8) {
            hs_span s = random_span(how, id++);
            CHECK_EQ(hs_span_insert_locked(&ix, &s, NULL), 0);
            ref_insert(&s);
        } else if (op < 9 && nref) {
            size_t r = (size_t)rand() % nref;
            hs_span gone;
            CHECK(hs_span_remove_locked(&ix, ref[r].base, ref[r].id, &gone) && gone.id == ref[r].id);
            memmove(&ref[r], &ref[r + 1], (nref - r - 1) * sizeof *ref);
            nref--;
        }
#ifndef TEST_PAGE_MAP
        else if (round % 97 == 0) {
            CHECK_EQ(hs_span_replace_all_locked(&ix, ref, nref), 0);
        }
#else
        else if (nref) { /* a new kind: its tag is rewritten wherever the span is kept */
            size_t r = (size_t)rand() % nref;
            ref[r].kind = (uint32_t)rand();
            CHECK(hs_pm_update_locked(&ix, &ref[r]));
        }
#endif
        hs_span_unlock(&ix);
        if (round % 100 == 0)
            check_against_reference();
    }
    check_against_reference();
    CHECK_EQ(atomic_load(&bad_reads), 0);
}

static void test_against_reference(void)
{
    run_against_reference(PACKED);
    run_against_reference(DENSE);
    run_against_reference(WIDE);
    run_against_reference(PAGES);
}

#ifdef TEST_PAGE_MAP
/* What only the page map has: spans past 2^48, a cap, and its memory figure. */
static void test_page_map_edges(void)
{
    hs_span_index_init(&ix);
    hs_span high = {.base = (uintptr_t)1 << 52, .size = 4096, .id = 5};
    hs_span low = {.base = 0x7000, .size = 16, .id = 6};
    hs_span_lock(&ix);
    CHECK_EQ(hs_span_insert_locked(&ix, &high, NULL), 0);
    CHECK_EQ(hs_span_insert_locked(&ix, &low, NULL), 0);
    hs_span_unlock(&ix);
    hs_span s, b, a;
    bool hb, ha;
    CHECK(hs_span_find(&ix, high.base + 100, &s) && s.id == 5);
    CHECK(!hs_span_find(&ix, high.base + 4096, &s));
    hs_span_neighbours(&ix, 0x10000, &b, &hb, &a, &ha);
    CHECK(hb && b.id == 6 && ha && a.id == 5);
    /* skip bits: spans whose kind has them are passed over; update rewrites in place */
    hs_span marked = low;
    marked.kind = 0x80000000u;
    hs_span_lock(&ix);
    CHECK(hs_pm_update_locked(&ix, &marked));
    hs_span_unlock(&ix);
    hs_pm_neighbours(&ix, 0x10000, 0x80000000u, &b, &hb, &a, &ha);
    CHECK(!hb && ha && a.id == 5);
    CHECK(hs_span_find(&ix, 0x7008, &s) && s.kind == 0x80000000u);
    hs_pm_set_cap(&ix, 2);
    hs_span third = {.base = 0x9000, .size = 16, .id = 7};
    hs_span_lock(&ix);
    CHECK_EQ(hs_span_insert_locked(&ix, &third, NULL), -2);
    CHECK(hs_span_remove_locked(&ix, high.base, 5, NULL));
    CHECK_EQ(hs_span_insert_locked(&ix, &third, NULL), 0);
    hs_span_unlock(&ix);
    CHECK(!hs_span_find(&ix, high.base + 100, &s));
    CHECK(hs_span_find(&ix, 0x9008, &s) && s.id == 7);
    /* 100000 small spans: the map's own memory stays near a record and a bucket entry each */
    hs_pm_set_cap(&ix, 0);
    /* A span straddling a GiB (two leaves' page words) retagged: a range across the boundary
     * takes its bucket entry, whose tag is stale when the span owns its pages; the page word's
     * is the one to report. */
    hs_pm_set_tag(&ix, tag_of);
    hs_span straddle = {.base = (3ul << 30) - 4096, .size = 8192, .id = 8, .kind = 1};
    hs_span_lock(&ix);
    CHECK_EQ(hs_span_insert_locked(&ix, &straddle, NULL), 0);
    straddle.kind = 2;
    CHECK(hs_pm_update_locked(&ix, &straddle));
    hs_span_unlock(&ix);
    uint8_t tag = 0;
    CHECK(hs_pm_brief_find(&ix, straddle.base + 100, 5000, &tag) == HS_PM_INSIDE && tag == tag_of(&straddle));
    CHECK(hs_pm_brief_find(&ix, straddle.base + 100, 16, &tag) == HS_PM_INSIDE && tag == tag_of(&straddle));
    hs_pm_set_tag(&ix, NULL);
    hs_span_lock(&ix);
    for (int i = 0; i < 100000; i++) {
        hs_span t = {
            .base = 0x200000000 + (uintptr_t)i * 4096, .size = 64 + (size_t)(i % 193), .id = (uint64_t)i + 100};
        CHECK_EQ(hs_span_insert_locked(&ix, &t, NULL), 0);
    }
    hs_span_unlock(&ix);
    size_t per_span = hs_pm_bytes(&ix) / hs_span_count(&ix);
    printf("page map: %zu bytes per span at %zu spans\n", per_span, hs_span_count(&ix));
    CHECK(per_span <= 128);
}

/* Pages of [p, p + bytes) resident in memory. */
static size_t resident_pages(const void *p, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + page - 1) / page, count = 0;
    unsigned char vec[1024];
    CHECK(n <= sizeof vec && mincore((void *)p, bytes, vec) == 0);
    for (size_t i = 0; i < n && i < sizeof vec; i++)
        count += vec[i] & 1;
    return count;
}

/* A program that moves on through address space (an allocator that never reuses it) empties one
 * leaf (1 GiB of it) after another: all but the HS_PM_EMPTY_LEAVES most recent give their pages
 * back, the page holding the leaf's counters too, so the map's resident memory stays flat; a
 * leaf given back works as before when its GiB is used again. */
static void test_emptied_leaves_given_back(void)
{
    enum { GIBS = HS_PM_EMPTY_LEAVES + 4, LEAF_BYTES = (2048 + 128 + 4) << 10 }; /* page words, slots, counters */
    hs_span_index_init(&ix);
    for (uintptr_t g = 1; g <= GIBS; g++) {
        insert((g << 30) + 0x12340, 256, g);
        CHECK(resident_pages(ix.leaf_mem[g], LEAF_BYTES) >= 3); /* a page-word page, a slot page, the counters' */
        hs_span_lock(&ix);
        CHECK(hs_span_remove_locked(&ix, (g << 30) + 0x12340, g, NULL));
        hs_span_unlock(&ix);
    }
    for (uintptr_t g = 1; g <= GIBS; g++) {
        size_t pages = resident_pages(ix.leaf_mem[g], LEAF_BYTES);
        if (g <= GIBS - HS_PM_EMPTY_LEAVES)
            CHECK_EQ(pages, 0);
        else
            CHECK(pages >= 3); /* kept: the program may allocate there again */
    }
    hs_span s;
    insert((1ul << 30) + 0x20000, 64, 99);
    CHECK(hs_span_find(&ix, (1ul << 30) + 0x20010, &s) && s.id == 99);
    CHECK(!hs_span_find(&ix, (1ul << 30) + 0x12340, &s));
}

/* Page words: an allocator that moves on through address space empties one page of page words
 * (2 MiB of address) after another, and all but the HS_PM_EMPTY_WORD_PAGES most recent go back;
 * one that frees and allocates again in the same place keeps its page. */
static void test_word_pages_given_back(void)
{
    enum { WORDS_BYTES = 2 << 20, SPAN_COUNT = 16384 }; /* a leaf's page words; 64 MiB of spans 4 KiB apart */
    hs_span_index_init(&ix);
    uintptr_t gib = 5ul << 30;
    for (uintptr_t i = 0; i < SPAN_COUNT; i++) {
        insert(gib + i * 4096, 256, i + 1);
        hs_span_lock(&ix);
        CHECK(hs_span_remove_locked(&ix, gib + i * 4096, i + 1, NULL));
        hs_span_unlock(&ix);
    }
    insert(gib + (1ul << 29), 64, 1); /* keeps the leaf in use: only page words go back */
    size_t resident = resident_pages(ix.leaf_mem[5], WORDS_BYTES);
    printf("page words: %zu pages resident after 32 emptied\n", resident);
    CHECK(resident <= HS_PM_EMPTY_WORD_PAGES + 1); /* + the page of the span kept */
    hs_span s;
    insert(gib + 4096, 64, 77); /* a given-back page works as before */
    CHECK(hs_span_find(&ix, gib + 4100, &s) && s.id == 77);
    uint8_t tag;
    CHECK(hs_pm_brief_find(&ix, gib + 4100, 8, &tag) == HS_PM_INSIDE);
    uintptr_t again = 6ul << 30;
    insert(again + (1ul << 29), 64, 2);
    for (int round = 0; round < 100; round++) {
        insert(again, 128, 1000 + (uint64_t)round);
        hs_span_lock(&ix);
        CHECK(hs_span_remove_locked(&ix, again, 1000 + (uint64_t)round, NULL));
        hs_span_unlock(&ix);
    }
    CHECK_EQ(resident_pages(ix.leaf_mem[6], 4096), 1);
}
#endif

int main(void)
{
    CHECK_EQ(hs_span_index_init(&ix), 0);
    test_lookup_and_growth();
    test_replace_and_remove();
#ifndef TEST_PAGE_MAP
    test_end_in_place();
#endif
    test_readers_racing_writer();
    test_against_reference();
#ifdef TEST_PAGE_MAP
    test_page_map_edges();
    test_emptied_leaves_given_back();
    test_word_pages_given_back();
#endif
    return UNIT_DONE();
}
