/* The shadow map's index of allocations: a radix map over 64 KiB address chunks, for O(1)
 * lookups at any number of allocations (tcmalloc's page map, ASan's shadow).
 *
 *   top[addr >> 30]          a leaf (1 GiB of address space), or a record covering all of it
 *   leaf[(addr >> 16) & ..]  empty, a record covering the whole chunk, or a bucket: the spans
 *                            that touch the chunk, sorted by base (small allocations share one)
 *   records                  one hs_span per span, in slabs; a span is stored once
 *
 * A lookup is two array loads, a binary search in one small bucket and one record copy.  Inserts
 * and removes touch the chunks the span covers: O(1) for allocations under 64 KiB.  Readers
 * never lock: they read under the map's sequence counter (a seqlock) and retry if a writer was
 * active; nothing a reader can reach is ever unmapped (buckets and records are reused), and every
 * index a reader follows is clamped, so a stale read touches mapped memory and is thrown away.
 * Spans above the 48-bit address space (none on today's GPUs and hosts) go to a short list.
 *
 * The API mirrors span_index.h (the ordered index the host-mapping snapshot and streams keep). */
#ifndef HS_PAGE_MAP_H
#define HS_PAGE_MAP_H

#include "shadow/span_index.h" /* hs_span, and the index it pages */

typedef struct hs_pm_leaf hs_pm_leaf;
typedef struct hs_pm_bucket hs_pm_bucket;

enum { HS_PM_BUCKET_CLASSES = 18, HS_PM_OVERFLOW = 64, HS_PM_EMPTY_LEAVES = 2, HS_PM_EMPTY_WORD_PAGES = 8 };

typedef struct hs_page_map {
    atomic_uint seq;        /* odd while a writer is changing the map */
    _Atomic(uint64_t) *top; /* 2^18 entries: 0, a leaf pointer, or (record << 1 | 1) */
    hs_pm_leaf **leaf_mem;  /* writer: the leaf made for each top entry, kept when covered */
    void **rec_slabs;       /* record r lives in slab r >> 16 */
    atomic_uint n_recs;     /* records made so far (readers clamp to it) */
    uint32_t free_recs;     /* writer: freed records, linked through their first word */
    atomic_size_t count;    /* spans in the map */
    size_t max_spans;       /* hs_pm_set_cap: inserts past it fail with -2 */
    pthread_mutex_t writer;
    hs_pm_bucket *free_buckets[HS_PM_BUCKET_CLASSES];
    hs_pm_leaf *empty_leaves[HS_PM_EMPTY_LEAVES]; /* writer: the most recently emptied leaves, a ring */
    uint32_t n_empty; /* writer: leaves ever put on the ring (the next goes at n_empty % size) */
    struct {
        hs_pm_leaf *leaf;
        uint32_t page;
    } empty_word_pages[HS_PM_EMPTY_WORD_PAGES]; /* writer: the same for
                                      * pages of page words (page_map.c), each naming no span */
    uint32_t n_empty_word_pages;
    char *arena; /* writer: where new buckets are cut from */
    size_t arena_left;
    uint32_t arenas;                            /* writer: arenas made so far */
    size_t bytes;                               /* memory the map uses: leaves, buckets and records made */
    _Atomic(uint32_t) overflow[HS_PM_OVERFLOW]; /* records of spans reaching past 2^48, by base */
    atomic_uint n_overflow;
    uint8_t (*tag_of)(const hs_span *); /* the owner's 8 bits kept next to each span (hs_pm_set_tag) */
} hs_page_map;

/* 0 on success, -1 when the top level could not be mapped. */
int hs_pm_init(hs_page_map *m);
/* The same, its top level among the hot structures (process/hot_memory.h): for the map every
 * launch reads, whose top entries lie a page apart (one per 512 GiB of address). */
int hs_pm_init_hot(hs_page_map *m);
/* At most max_spans spans (0: no limit); an insert past it fails with -2. */
void hs_pm_set_cap(hs_page_map *m, size_t max_spans);

/* The 8 bits of a span its owner wants to read without the record (hs_pm_brief_find): a
 * span's tag is fixed while it is in the map, but for hs_pm_update_locked.  Set before inserts. */
void hs_pm_set_tag(hs_page_map *m, uint8_t (*tag_of)(const hs_span *));

/* What the briefs say of [addr, addr + extent), read without any record (one cache miss fewer):
 * INSIDE: one span holds all of it (*tag is its tag); ABSENT: no span holds addr; UNSURE: ask
 * hs_pm_find (a span past its saturated brief size, an overrun, a range leaving its chunk). */
typedef enum hs_pm_brief { HS_PM_UNSURE = 0, HS_PM_ABSENT, HS_PM_INSIDE } hs_pm_brief;
hs_pm_brief hs_pm_brief_find(hs_page_map *m, uintptr_t addr, size_t extent, uint8_t *tag);

/* Lock-free readers, as in span_index.h. */
bool hs_pm_find(hs_page_map *m, uintptr_t addr, hs_span *out);
bool hs_pm_find_exact(hs_page_map *m, uintptr_t addr, hs_span *out);
/* The same, also returning a reference to the span's record (0: not found) for the writers'
 * *_ref_locked calls below. */
uint32_t hs_pm_find_ref(hs_page_map *m, uintptr_t addr, bool exact, hs_span *out);
/* The nearest spans below and above, passing over those whose kind has any of the skip bits. */
void hs_pm_neighbours(hs_page_map *m, uintptr_t addr, uint32_t skip, hs_span *below, bool *has_below, hs_span *above,
                      bool *has_above);
/* Warm the cache lines that looking up each of addrs[0..n) would read, a level at a time (slots,
 * buckets, records), so their misses overlap: for a batch of lookups (quarantine evictions) that
 * would otherwise each wait for three misses in a row.  Reads only; nothing is changed. */
void hs_pm_prefetch(hs_page_map *m, const uintptr_t *addrs, size_t n);
size_t hs_pm_count(hs_page_map *m);
/* The map's version: changed (by two) by every change, odd while one is being made. */
unsigned hs_pm_version(hs_page_map *m);
/* Bytes of memory the map has mapped (stacks and names excluded). */
size_t hs_pm_bytes(hs_page_map *m);

/* Writers: with m->writer held (hs_pm_lock / hs_pm_unlock). */
void hs_pm_lock(hs_page_map *m);
/* The same, giving up at `until` (CLOCK_REALTIME): false when it could not be had by then. */
bool hs_pm_timedlock(hs_page_map *m, const struct timespec *until);
void hs_pm_unlock(hs_page_map *m);
/* Insert, replacing the spans it overlaps (each passed to replaced(old, arg) when not NULL).
 * -1 when out of memory, -2 at the cap; the map is unchanged then but for the replaced spans. */
int hs_pm_insert_locked(hs_page_map *m, const hs_span *s, void (*replaced)(const hs_span *old, void *arg), void *arg);
/* Rewrite the span with s's base, size and id in place (what it says, not where it lies). */
bool hs_pm_update_locked(hs_page_map *m, const hs_span *s);
/* Remove the span whose base is addr (and, if id != 0, whose id matches). */
bool hs_pm_remove_locked(hs_page_map *m, uintptr_t base, uint64_t id, hs_span *removed);
/* By reference, for a writer that has just found the span (hs_pm_find_ref, under the same
 * writer lock, so the reference still names it): no second search.  *s / *old: the span as found.
 * The rewrite keeps the span's base and size (what it says, not where it lies). */
void hs_pm_remove_ref_locked(hs_page_map *m, uint32_t ref, const hs_span *s);
void hs_pm_rewrite_ref_locked(hs_page_map *m, uint32_t ref, const hs_span *old, const hs_span *s);
/* Visit every span in address order. */
void hs_pm_foreach_locked(hs_page_map *m, void (*fn)(const hs_span *, void *), void *arg);

void hs_pm_after_fork(hs_page_map *m);

#endif
