/* The radix page map (see page_map.h).
 *
 * Words a reader may race with a writer are read and written with relaxed atomics (never plain
 * memcpy), so the seqlock is data-race free in C11 terms and ThreadSanitizer sees no race. */
#include "shadow/page_map.h"
#include "process/util.h"
#include "process/hot_memory.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

enum {
    CHUNK_SHIFT = 16, /* 64 KiB chunks */
    LEAF_BITS = 14,   /* a leaf: 16384 chunks = 1 GiB */
    TOP_BITS = 18,    /* 2^18 leaves: 48 bits of address */
    LEAF_SHIFT = CHUNK_SHIFT + LEAF_BITS,
    SLAB_SHIFT = 16,     /* records per slab: 65536 */
    MAX_SLABS = 1 << 16, /* 2^32 records at most */
    ARENA_BYTES = 4 << 20,
    PAGE_SHIFT = 12, /* page words: one per 4 KiB of address space */
    PAGE_BITS = LEAF_SHIFT - PAGE_SHIFT,
    PAGE_WORDS_MAX = 1 << CHUNK_SHIFT, /* spans up to this size get page words (17 at most) */
    PAGE_BYTES = 1 << PAGE_SHIFT,
    WORD_PAGES = (sizeof(uint64_t) << PAGE_BITS) / PAGE_BYTES, /* pages of page words in a leaf: 512 */
};
#define ADDR_LIMIT ((uintptr_t)1 << (LEAF_SHIFT + TOP_BITS))
#define SPAN_WORDS (sizeof(hs_span) / sizeof(uint64_t))
_Static_assert(sizeof(hs_span) % sizeof(uint64_t) == 0, "hs_span is copied word by word");

/* A page word names one span touching its 4 KiB page and which bytes of the page it holds:
 *   record (32 bits) | first byte in the page (12) << 32 | bytes in the page - 1 (12) << 44 | tag << 56
 * 0: none.  A lookup whose range those bytes hold needs no slot and no bucket: one cache miss,
 * where the slot and bucket are two in a row (at a million allocations 4 KiB apart, as ROCm lays
 * small ones out, the bucket is a miss to memory; the page words are 8 MiB).  Kept for spans of
 * up to PAGE_WORDS_MAX bytes (bigger ones cover whole chunks, which their slots say).  The first
 * span placed in a page keeps its word until it leaves the map; spans placed beside it take the
 * slot and bucket.  A span whose every page names it "owns its pages": its page words are then
 * where its tag is kept, and a retag (a free) rewrites only them, not its slot or bucket entries,
 * whose tags go stale; a reader that reaches such an entry finds the page word of the same page
 * naming the same record, and takes the tag from it (page_tag). */
struct hs_pm_leaf {
    _Atomic(uint64_t) page[1 << PAGE_BITS]; /* first: page-aligned, so an empty leaf's pages can be given back */
    _Atomic(uint64_t) slot[1 << LEAF_BITS];
    _Atomic(uint32_t) used; /* non-empty slots (readers skip empty leaves) */
    /* writer, for each page of page words: the words naming a span, whether it is counted in
     * m->bytes (touched since it was last given back), and whether it is on the map's ring */
    uint16_t words_named[WORD_PAGES];
    uint64_t word_page_counted[WORD_PAGES / 64], word_page_listed[WORD_PAGES / 64];
    bool listed; /* writer: on the map's list of emptied leaves */
};

/* A bucket's entries are sorted by base; spans do not overlap, so bases are distinct.  A removed
 * entry mid-bucket becomes a tombstone (its base kept, its record word 0) instead of shifting the
 * rest down: in a bucket of hundreds that shift read and wrote kilobytes per free.  A search that
 * lands on a tombstone means "no span here" (a span before it ends at or before its base); the
 * tombstones are swept out when they are half the bucket.  A bucket
 * of HINTED_CAP or more entries (many small allocations in one chunk: an allocator that packs
 * them) also keeps, for each 1/HINTS of its chunk, how many entries begin below it, so a search
 * reads one hint and then the few entries beginning in that part, not a binary search's chain of
 * cache misses across the whole bucket. */
enum { HINTS = 64, HINT_SHIFT = CHUNK_SHIFT - 6, HINTED_CAP = 64 };
_Static_assert(HINTS << HINT_SHIFT == 1 << CHUNK_SHIFT, "the hints split a chunk");

struct hs_pm_bucket {
    _Atomic(uint32_t) cap; /* fixed for the memory: buckets are reused within their class */
    _Atomic(uint32_t) n;   /* entries, tombstones included */
    union {
        hs_pm_bucket *free_next; /* writer: while on the free list */
        uint32_t dead;           /* writer: tombstones among the n entries, while in use */
    };
    _Atomic(uint64_t) data[]; /* the entries (2 * cap words: base, record word), then, hinted,
                                  * HINTS 32-bit counts.  The entries come first so that their
                                  * address does not wait for the header's cap: in a big map the
                                  * header and the entries then miss together, not one after the other */
};

HS_HOT static bool hinted(const hs_pm_bucket *b)
{
    return atomic_load_explicit(&b->cap, memory_order_relaxed) >= HINTED_CAP;
}
static _Atomic(uint64_t) *ents(const hs_pm_bucket *b) { return (_Atomic(uint64_t) *)b->data; }
/* hint k: how many entries begin below chunk_base + (k << HINT_SHIFT) */
static _Atomic(uint32_t) *hints(const hs_pm_bucket *b)
{
    size_t cap = atomic_load_explicit(&b->cap, memory_order_relaxed);
    return (_Atomic(uint32_t) *)(void *)((_Atomic(uint64_t) *)b->data + 2 * cap);
}

typedef struct {
    _Atomic(uint64_t) w[SPAN_WORDS];
} record;

static inline uint64_t ld(const _Atomic(uint64_t) *p) { return atomic_load_explicit(p, memory_order_relaxed); }
static inline void st(_Atomic(uint64_t) *p, uint64_t v) { atomic_store_explicit(p, v, memory_order_relaxed); }
static inline uint32_t ld32(const _Atomic(uint32_t) *p) { return atomic_load_explicit(p, memory_order_relaxed); }
static inline void st32(_Atomic(uint32_t) *p, uint32_t v) { atomic_store_explicit(p, v, memory_order_relaxed); }

static void *map_bytes(hs_page_map *m, size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    (void)m;
    return p == MAP_FAILED ? NULL : p;
}

/* Records and buckets of a big map are read at random: with 4 KiB pages nearly every lookup
 * also misses the TLB (and a VM walks two page tables).  Past the first slab they are mapped on
 * 2 MiB boundaries and offered to transparent huge pages (hs_map_huge); a small program keeps
 * small pages (a huge page would cost it 2 MiB of resident memory for a few records). */

static int init(hs_page_map *m, bool hot)
{
    memset(m, 0, sizeof *m);
    size_t top_bytes = sizeof(uint64_t) << TOP_BITS; /* 2 MiB of address space, touched as used */
    m->top = hot ? hs_hot_memory(top_bytes) : NULL;
    if (!m->top)
        m->top = map_bytes(m, top_bytes);
    m->leaf_mem = map_bytes(m, sizeof(hs_pm_leaf *) << TOP_BITS);
    m->rec_slabs = map_bytes(m, sizeof(void *) * MAX_SLABS);
    if (!m->top || !m->leaf_mem || !m->rec_slabs)
        return -1;
    atomic_init(&m->n_recs, 1); /* record 0 means "none" */
    pthread_mutex_init(&m->writer, NULL);
    return 0;
}

int hs_pm_init(hs_page_map *m) { return init(m, false); }
int hs_pm_init_hot(hs_page_map *m) { return init(m, true); }

void hs_pm_set_cap(hs_page_map *m, size_t max_spans) { m->max_spans = max_spans; }

void hs_pm_after_fork(hs_page_map *m)
{
    pthread_mutex_init(&m->writer, NULL);
    unsigned s = atomic_load(&m->seq); /* a writer interrupted by fork leaves it odd forever */
    if (s & 1u)
        atomic_store(&m->seq, s + 1);
}

/* ---- records ---- */

static record *rec_at(const hs_page_map *m, uint32_t r)
{
    return (record *)m->rec_slabs[r >> SLAB_SHIFT] + (r & ((1u << SLAB_SHIFT) - 1));
}

static void rec_read(const hs_page_map *m, uint32_t r, hs_span *out)
{
    uint64_t w[SPAN_WORDS];
    const record *rec = rec_at(m, r);
    for (size_t i = 0; i < SPAN_WORDS; i++)
        w[i] = ld(&rec->w[i]);
    memcpy(out, w, sizeof *out);
}

static void rec_write(hs_page_map *m, uint32_t r, const hs_span *s)
{
    uint64_t w[SPAN_WORDS];
    memcpy(w, s, sizeof w);
    record *rec = rec_at(m, r);
    for (size_t i = 0; i < SPAN_WORDS; i++)
        st(&rec->w[i], w[i]);
}

static uint32_t rec_take(hs_page_map *m)
{
    if (m->free_recs) {
        uint32_t r = m->free_recs;
        m->free_recs = (uint32_t)ld(&rec_at(m, r)->w[0]);
        return r;
    }
    uint32_t r = atomic_load_explicit(&m->n_recs, memory_order_relaxed);
    if (r == UINT32_MAX)
        return 0;
    if (!m->rec_slabs[r >> SLAB_SHIFT]) {
        m->rec_slabs[r >> SLAB_SHIFT] = r >> SLAB_SHIFT ? hs_map_huge(sizeof(record) << SLAB_SHIFT)
                                                        : map_bytes(m, sizeof(record) << SLAB_SHIFT);
        if (!m->rec_slabs[r >> SLAB_SHIFT])
            return 0;
    }
    m->bytes += sizeof(record);                                     /* slabs are touched as records are made */
    atomic_store_explicit(&m->n_recs, r + 1, memory_order_release); /* the slab is published first */
    return r;
}

static void rec_give(hs_page_map *m, uint32_t r)
{
    st(&rec_at(m, r)->w[0], m->free_recs);
    m->free_recs = r;
}

/* A record index read by a reader, clamped: a stale one still names a mapped record. */
static uint32_t clamp_rec(const hs_page_map *m, uint64_t r)
{
    return r < atomic_load_explicit(&m->n_recs, memory_order_acquire) ? (uint32_t)r : 0;
}

static uintptr_t span_end(const hs_span *s) { return s->base + (s->size ? s->size : 1); }
static bool span_contains(const hs_span *s, uintptr_t a)
{
    return a - s->base < s->size || (s->size == 0 && a == s->base);
}

/* ---- briefs: what a slot or bucket entry keeps of its span besides the record index ----
 * A covering word is (tag << 56 | r << 1 | 1); a bucket entry's second word is (brief << 32 | r),
 * brief = (size saturated to 24 bits) << 8 | tag.  The tag is the owner's (hs_pm_set_tag). */
enum { BRIEF_SIZE_MAX = (1u << 24) - 1, COVER_TAG_SHIFT = 56 };

static uint8_t tag_of(const hs_page_map *m, const hs_span *s) { return m->tag_of ? m->tag_of(s) : 0; }
static uint64_t cover_word(const hs_page_map *m, uint32_t r, const hs_span *s)
{
    return (uint64_t)tag_of(m, s) << COVER_TAG_SHIFT | (uint64_t)r << 1 | 1;
}
static uint32_t cover_rec(uint64_t w) { return (uint32_t)(w >> 1); }
static uint64_t entry_word(const hs_page_map *m, uint32_t r, const hs_span *s)
{
    uint64_t size = s->size < BRIEF_SIZE_MAX ? s->size : BRIEF_SIZE_MAX;
    return (size << 8 | tag_of(m, s)) << 32 | r;
}
static uint32_t entry_rec(uint64_t w) { return (uint32_t)w; }

/* ---- buckets ---- */

static int class_of(uint32_t cap)
{
    int k = 0;
    while ((1u << k) < cap)
        k++;
    return k;
}

static hs_pm_bucket *bucket_take(hs_page_map *m, uint32_t cap)
{
    int k = class_of(cap);
    if (k >= HS_PM_BUCKET_CLASSES)
        return NULL;
    hs_pm_bucket *b = m->free_buckets[k];
    if (b) {
        m->free_buckets[k] = b->free_next;
    } else {
        size_t bytes = sizeof *b + sizeof(uint64_t) * 2 * ((size_t)1 << k) +
                       ((1u << k) >= HINTED_CAP ? sizeof(uint32_t) * HINTS : 0);
        if (m->arena_left < bytes) {
            size_t want = bytes > ARENA_BYTES ? bytes : ARENA_BYTES;
            m->arena = m->arenas++ ? hs_map_huge(want) : map_bytes(m, want);
            if (!m->arena)
                return NULL;
            m->arena_left = want;
        }
        b = (hs_pm_bucket *)m->arena;
        m->arena += bytes;
        m->arena_left -= bytes;
        m->bytes += bytes;
        st32(&b->cap, 1u << k);
    }
    atomic_store_explicit(&b->n, 0, memory_order_relaxed);
    b->dead = 0;
    return b;
}

static void bucket_give(hs_page_map *m, hs_pm_bucket *b)
{
    int k = class_of(ld32(&b->cap));
    b->free_next = m->free_buckets[k]; /* readers may still look into it: it stays mapped */
    m->free_buckets[k] = b;
}

static uint32_t bucket_n(const hs_pm_bucket *b)
{
    uint32_t n = ld32(&b->n), cap = ld32(&b->cap);
    return n < cap ? n : cap;
}

/* How many of the entries [from, to) have base <= addr (they are sorted).  Up to 32 (8 cache
 * lines) are counted: no load waits for another, so in a big map their misses overlap and cost one
 * miss, where a binary search would wait for each step's.  More are halved branch-free (the step
 * is a conditional move); buckets that big keep hints, so it is rare. */
static uint32_t count_at_or_below(const _Atomic(uint64_t) *e, uint32_t from, uint32_t to, uintptr_t addr)
{
    if (to - from <= 32) {
        uint32_t below = 0;
        for (uint32_t i = from; i < to; i++)
            below += ld(&e[2 * i]) <= addr;
        return below;
    }
    if (ld(&e[2 * from]) > addr)
        return 0;
    uint32_t at = from; /* e[at] <= addr holds throughout */
    for (uint32_t len = to - from; len > 1;) {
        uint32_t half = len / 2;
        at = ld(&e[2 * (at + half)]) <= addr ? at + half : at;
        len -= half;
    }
    return at + 1 - from;
}

/* Index of the last entry of the bucket of the chunk at chunk_base with base <= addr, or -1.
 * Readers may see a bucket mid-change: every bound is clamped to n, so the read stays inside it. */
static long bucket_last_at_or_below(const hs_pm_bucket *b, uint32_t n, uintptr_t chunk_base, uintptr_t addr)
{
    uint32_t from = 0, to = n; /* the entries with base <= addr are [0, from) and some of [from, to) */
    if (hinted(b)) {
        const _Atomic(uint32_t) *h = hints(b);
        uintptr_t offset = addr - chunk_base;
        if (addr < chunk_base) {
            to = ld32(&h[0]);
        } else if (offset < ((uintptr_t)1 << CHUNK_SHIFT)) {
            uint32_t k = (uint32_t)(offset >> HINT_SHIFT);
            from = ld32(&h[k]);
            to = k + 1 < HINTS ? ld32(&h[k + 1]) : n;
        } else {
            from = n;
        }
        to = to < n ? to : n;
        from = from < to ? from : to;
    }
    return (long)(from + count_at_or_below(ents(b), from, to, addr)) - 1;
}

/* Writer: the hints after an entry with this base came (+1) or went (-1). */
static void hints_adjust(hs_pm_bucket *b, uintptr_t chunk_base, uintptr_t base, int by)
{
    if (!hinted(b))
        return;
    uint32_t k = base < chunk_base ? 0 : (uint32_t)((base - chunk_base) >> HINT_SHIFT) + 1;
    for (_Atomic(uint32_t) *h = hints(b); k < HINTS; k++)
        st32(&h[k], ld32(&h[k]) + (uint32_t)by);
}

/* Writer: the hints of a bucket whose entries were copied in. */
static void hints_build(hs_pm_bucket *b, uintptr_t chunk_base)
{
    if (!hinted(b))
        return;
    const _Atomic(uint64_t) *e = ents(b);
    uint32_t n = bucket_n(b), i = 0;
    for (uint32_t k = 0; k < HINTS; k++) {
        uintptr_t start = chunk_base + ((uintptr_t)k << HINT_SHIFT);
        while (i < n && ld(&e[2 * i]) < start)
            i++;
        st32(&hints(b)[k], i);
    }
}

/* ---- slots ---- */

static _Atomic(uint64_t) *leaf_slot(hs_pm_leaf *leaf, uintptr_t addr)
{
    return &leaf->slot[(addr >> CHUNK_SHIFT) & ((1u << LEAF_BITS) - 1)];
}

static _Atomic(uint64_t) *leaf_page(hs_pm_leaf *leaf, uintptr_t addr)
{
    return &leaf->page[(addr >> PAGE_SHIFT) & ((1u << PAGE_BITS) - 1)];
}

static uint64_t word_lo(uint64_t w) { return w >> 32 & 0xfff; }
static uint64_t word_len(uint64_t w) { return (w >> 44 & 0xfff) + 1; }

/* The record a page word names when its bytes hold [addr, addr + extent) (extent >= 1, within
 * addr's page), else 0. */
static uint32_t page_word_holds(uint64_t w, uintptr_t addr, size_t extent)
{
    uint64_t at = addr & (PAGE_BYTES - 1), lo = word_lo(w), len = word_len(w);
    return at - lo < len && extent <= len - (at - lo) ? (uint32_t)w : 0;
}

/* Reader: the page words of the first and last pages of [addr, addr + extent), w being the
 * first's: when both name one span holding the range's ends, it holds the whole range (a span is
 * one interval).  Its record, or 0. */
static uint32_t page_words_hold(const hs_pm_leaf *leaf, uint64_t w, uintptr_t addr, size_t extent)
{
    uintptr_t last = addr + (extent ? extent : 1) - 1;
    if ((last ^ addr) >> PAGE_SHIFT == 0)
        return page_word_holds(w, addr, extent ? extent : 1);
    if ((last ^ addr) >> LEAF_SHIFT || last - addr >= PAGE_WORDS_MAX || !page_word_holds(w, addr, 1) ||
        word_lo(w) + word_len(w) != PAGE_BYTES)
        return 0;
    uint64_t w2 = ld(leaf_page((hs_pm_leaf *)leaf, last));
    return (uint32_t)w2 == (uint32_t)w && word_lo(w2) == 0 && page_word_holds(w2, last, 1) ? (uint32_t)w : 0;
}

/* Reader: the tag of record r, found in a slot or bucket entry (entry_tag) in addr's page whose
 * word is w: the page word's when it names r (r may own its pages: its entries' tags are stale). */
static uint8_t page_tag(uint64_t w, uint32_t r, uint8_t entry_tag)
{
    return (uint32_t)w == r ? (uint8_t)(w >> 56) : entry_tag;
}

static bool bit(const uint64_t *bits, size_t i) { return bits[i / 64] >> (i % 64) & 1; }
static void bit_set(uint64_t *bits, size_t i, bool on)
{
    bits[i / 64] = (bits[i / 64] & ~((uint64_t)1 << (i % 64))) | (uint64_t)on << (i % 64);
}

/* Writer: the page of page words i of a leaf, named by no span, goes back to the kernel.  It is
 * uncounted first (a given-back page reads as zeros and is counted again when next touched). */
static void word_page_give_back(hs_page_map *m, hs_pm_leaf *leaf, size_t i)
{
    if (bit(leaf->word_page_counted, i)) {
        bit_set(leaf->word_page_counted, i, false);
        m->bytes -= PAGE_BYTES;
    }
    madvise((char *)leaf->page + i * PAGE_BYTES, PAGE_BYTES, MADV_DONTNEED);
}

/* Writer: page i of a leaf's page words names no span any more.  As with leaves (leaf_emptied),
 * the map keeps the HS_PM_EMPTY_WORD_PAGES most recently emptied pages and gives back the oldest
 * when one more empties, if it is still empty: an allocator that moves on through address space
 * touches a page of page words for each 2 MiB and would otherwise hold up to 2 MiB for each GiB
 * it has passed, while one that frees and allocates again in the same place pays no system call. */
static void word_page_emptied(hs_page_map *m, hs_pm_leaf *leaf, size_t i)
{
    if (bit(leaf->word_page_listed, i))
        return;
    bit_set(leaf->word_page_listed, i, true);
    uint32_t at = m->n_empty_word_pages++ % HS_PM_EMPTY_WORD_PAGES;
    hs_pm_leaf *oldest = m->empty_word_pages[at].leaf;
    uint32_t page = m->empty_word_pages[at].page;
    m->empty_word_pages[at].leaf = leaf;
    m->empty_word_pages[at].page = (uint32_t)i;
    if (!oldest)
        return;
    bit_set(oldest->word_page_listed, page, false);
    if (!oldest->words_named[page])
        word_page_give_back(m, oldest, page);
}

/* Writer: a leaf (2 MiB of page words and 128 KiB of slots for 1 GiB of address space) that
 * emptied.  The map keeps the HS_PM_EMPTY_LEAVES most recently emptied ones resident, and gives
 * the pages of the oldest back to the kernel when one more empties: a program that frees and
 * allocates again in a lone GiB would otherwise pay a system call and page faults each time, and
 * a program that moves on through address space (an allocator that never reuses it) keeps a
 * constant number resident, not a sawtooth.  The whole leaf goes back, its counters' page too (it
 * reads as zeros: empty and not listed, which is what it is).  Readers may still look into it:
 * it stays mapped. */
static void leaf_emptied(hs_page_map *m, hs_pm_leaf *leaf)
{
    if (leaf->listed)
        return;
    leaf->listed = true;
    uint32_t at = m->n_empty++ % HS_PM_EMPTY_LEAVES;
    hs_pm_leaf *oldest = m->empty_leaves[at];
    m->empty_leaves[at] = leaf;
    if (!oldest)
        return;
    oldest->listed = false;
    if (!ld32(&oldest->used)) {                 /* not used again since it emptied */
        for (size_t i = 0; i < WORD_PAGES; i++) /* the counters' page is given back below */
            if (bit(oldest->word_page_counted, i))
                m->bytes -= PAGE_BYTES;
        madvise(oldest, sizeof *oldest, MADV_DONTNEED);
    }
}

static void slot_set(hs_page_map *m, hs_pm_leaf *leaf, _Atomic(uint64_t) *slot, uint64_t v)
{
    uint64_t old = ld(slot);
    uint32_t used = ld32(&leaf->used) + (v != 0) - (old != 0);
    st32(&leaf->used, used);
    st(slot, v);
    if (!used)
        leaf_emptied(m, leaf);
}

/* Reader and writer: the record holding the highest base <= addr among those touching addr's
 * chunk, or 0. */
static uint32_t probe(const hs_page_map *m, uintptr_t addr)
{
    if (addr >= ADDR_LIMIT)
        return 0;
    uint64_t t = ld(&m->top[addr >> LEAF_SHIFT]);
    if (!t)
        return 0;
    if (t & 1)
        return clamp_rec(m, cover_rec(t));
    uint64_t w = ld(leaf_page((hs_pm_leaf *)t, addr)), e = ld(leaf_slot((hs_pm_leaf *)t, addr));
    if (page_word_holds(w, addr, 1))
        return clamp_rec(m, (uint32_t)w);
    if (!e)
        return 0;
    if (e & 1)
        return clamp_rec(m, cover_rec(e));
    const hs_pm_bucket *b = (const hs_pm_bucket *)e;
    long i = bucket_last_at_or_below(b, bucket_n(b), addr & ~(((uintptr_t)1 << CHUNK_SHIFT) - 1), addr);
    return i < 0 ? 0 : clamp_rec(m, entry_rec(ld(&ents(b)[2 * i + 1])));
}

static uint32_t probe_overflow(const hs_page_map *m, uintptr_t addr)
{
    uint32_t n = atomic_load_explicit(&m->n_overflow, memory_order_relaxed), best = 0;
    n = n < HS_PM_OVERFLOW ? n : HS_PM_OVERFLOW;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = clamp_rec(m, ld32(&m->overflow[i]));
        hs_span s;
        if (r) {
            rec_read(m, r, &s);
            if (span_contains(&s, addr))
                best = r;
        }
    }
    return best;
}

/* ---- readers ---- */

static unsigned read_begin(hs_page_map *m)
{
    for (int spins = 0;; spins++) {
        unsigned s = atomic_load_explicit(&m->seq, memory_order_acquire);
        if (!(s & 1u))
            return s;
        if (spins > 64) /* a writer holds it for microseconds; if it was preempted, let it run */
            sched_yield();
    }
}

static bool read_retry(hs_page_map *m, unsigned before)
{
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&m->seq, memory_order_relaxed) != before;
}

/* The record of the span holding addr (exact: beginning at addr), copied into *out; 0: none.
 * *seen: the map's version the answer holds for (even). */
static uint32_t lookup_seen(hs_page_map *m, uintptr_t addr, bool exact, hs_span *out, unsigned *seen)
{
    for (;;) {
        unsigned before = read_begin(m);
        uint32_t r = probe(m, addr);
        hs_span s;
        bool found = false;
        if (r) {
            rec_read(m, r, &s);
            found = exact ? s.base == addr : span_contains(&s, addr);
        }
        if (!found && atomic_load_explicit(&m->n_overflow, memory_order_relaxed) &&
            (r = probe_overflow(m, addr)) != 0) {
            rec_read(m, r, &s);
            found = !exact || s.base == addr;
        }
        if (read_retry(m, before))
            continue;
        if (found)
            *out = s;
        *seen = before;
        return found ? r : 0;
    }
}

HS_HOT static uint32_t lookup(hs_page_map *m, uintptr_t addr, bool exact, hs_span *out)
{
    unsigned seen;
    return lookup_seen(m, addr, exact, out, &seen);
}

/* Each thread's last few answers, each good while the map's version is the one it was read at:
 * any change to the map (an insert, a free, a record restamped) moves the version, so a hit is
 * exactly what a lookup would answer now.  A launch looks up each pointer argument, and a
 * program launches on the same few buffers between its allocations: at 1M allocations a lookup
 * is two cache misses (the page word, the record), a hit none.  The version is 32 bits: an
 * entry could be taken for current only if exactly 2^32 writes happened since it was read. */
enum { FIND_CACHE = 4, FIND_DIRECT = 64, FIND_REGION_SHIFT = 21 };
typedef struct find_entry {
    const hs_page_map *map;
    unsigned seen;
    hs_span span;
} find_entry;
/* Two ways in: by the address's 2 MiB region (an engine's arguments point into a few dozen
 * allocations, a caching allocator's segments among them: one entry to look at, wherever the
 * pointer falls), then the last few answers whatever their region (two regions that share a
 * slot do not evict each other's answer). */
typedef struct find_cache {
    unsigned next;
    find_entry e[FIND_CACHE];
    find_entry direct[FIND_DIRECT];
} find_cache;
/* A pointer, the entries mapped at a thread's first lookup: static TLS is carved out of each
 * thread's stack by glibc, and a thread made with a 16 KiB stack has none to spare. */
static HS_TLS find_cache *my_finds;
static HS_TLS bool my_finds_failed;

/* The first threads' caches are among the hot structures (hot_memory.h); a program's thread
 * pool does not spend their region. */
enum { HOT_FIND_CACHES = 16 };
static atomic_uint hot_find_caches;

static find_cache *finds(void)
{
    if (HS_UNLIKELY(!my_finds) && !my_finds_failed) {
        void *p = atomic_fetch_add(&hot_find_caches, 1) < HOT_FIND_CACHES ? hs_hot_memory(sizeof(find_cache)) : NULL;
        if (!p)
            p = mmap(NULL, sizeof(find_cache), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        my_finds_failed = p == MAP_FAILED;
        my_finds = my_finds_failed ? NULL : p;
    }
    return my_finds;
}

HS_HOT_PATH bool hs_pm_find(hs_page_map *m, uintptr_t addr, hs_span *out)
{
    /* Nothing in addr's GiB: one load (a launch's arguments are mostly integers, each looked up) */
    if ((addr >= ADDR_LIMIT || !ld(&m->top[addr >> LEAF_SHIFT])) &&
        !atomic_load_explicit(&m->n_overflow, memory_order_relaxed))
        return false;
    find_cache *fc = finds();
    if (HS_UNLIKELY(!fc))
        return lookup(m, addr, false, out) != 0;
    unsigned now = atomic_load_explicit(&m->seq, memory_order_acquire);
    find_entry *d = &fc->direct[(addr >> FIND_REGION_SHIFT) % FIND_DIRECT];
    if (d->map == m && d->seen == now && span_contains(&d->span, addr)) {
        *out = d->span;
        return true;
    }
    for (int i = 0; i < FIND_CACHE; i++) {
        find_entry *e = &fc->e[i];
        if (e->map == m && e->seen == now && span_contains(&e->span, addr)) {
            *out = e->span;
            *d = *e;
            return true;
        }
    }
    unsigned seen;
    if (!lookup_seen(m, addr, false, out, &seen))
        return false;
    find_entry *e = &fc->e[fc->next++ % FIND_CACHE];
    *e = (find_entry){.map = m, .seen = seen, .span = *out};
    *d = *e;
    return true;
}
bool hs_pm_find_exact(hs_page_map *m, uintptr_t addr, hs_span *out) { return lookup(m, addr, true, out) != 0; }
uint32_t hs_pm_find_ref(hs_page_map *m, uintptr_t addr, bool exact, hs_span *out)
{
    return lookup(m, addr, exact, out);
}
void hs_pm_set_tag(hs_page_map *m, uint8_t (*tag_of)(const hs_span *)) { m->tag_of = tag_of; }

/* Reader, from the briefs alone: see hs_pm_brief_find. */
static hs_pm_brief brief_probe(const hs_page_map *m, uintptr_t addr, size_t extent, uint8_t *tag)
{
    if (addr >= ADDR_LIMIT || addr + extent < addr)
        return HS_PM_UNSURE;
    uint64_t t = ld(&m->top[addr >> LEAF_SHIFT]);
    if (!t)
        return HS_PM_ABSENT;
    uintptr_t chunk_base = addr & ~(((uintptr_t)1 << CHUNK_SHIFT) - 1);
    uintptr_t chunk_end = chunk_base + ((uintptr_t)1 << CHUNK_SHIFT);
    if (t & 1) { /* one span covers the GiB: inside it if the range stays in the GiB */
        *tag = (uint8_t)(t >> COVER_TAG_SHIFT);
        return addr + extent <= ((addr >> LEAF_SHIFT) + 1) << LEAF_SHIFT ? HS_PM_INSIDE : HS_PM_UNSURE;
    }
    /* both loaded before either is tested: where the page word does not answer, its miss and
     * the slot's overlap */
    uint64_t pw = ld(leaf_page((hs_pm_leaf *)t, addr)), e = ld(leaf_slot((hs_pm_leaf *)t, addr));
    if (page_words_hold((hs_pm_leaf *)t, pw, addr, extent)) {
        *tag = (uint8_t)(pw >> 56);
        return HS_PM_INSIDE;
    }
    if (!e)
        return HS_PM_ABSENT;
    if (e & 1) {
        *tag = page_tag(pw, cover_rec(e), (uint8_t)(e >> COVER_TAG_SHIFT));
        return addr + extent <= chunk_end ? HS_PM_INSIDE : HS_PM_UNSURE;
    }
    const hs_pm_bucket *b = (const hs_pm_bucket *)e;
    long i = bucket_last_at_or_below(b, bucket_n(b), chunk_base, addr);
    if (i < 0)
        return HS_PM_ABSENT;
    const _Atomic(uint64_t) *ent = ents(b);
    uint64_t offset = addr - ld(&ent[2 * i]), w = ld(&ent[2 * i + 1]);
    if (!entry_rec(w))
        return HS_PM_ABSENT; /* a tombstone: the span before it ends at or before its base */
    uint64_t size = w >> 40; /* saturated: the span is at least this long */
    *tag = page_tag(pw, entry_rec(w), (uint8_t)(w >> 32));
    if (offset + extent <= size)
        return HS_PM_INSIDE;
    /* The one span that could hold addr ends before it (a zero-size span holds its base). */
    return size < BRIEF_SIZE_MAX && offset >= size && (size || offset) ? HS_PM_ABSENT : HS_PM_UNSURE;
}

hs_pm_brief hs_pm_brief_find(hs_page_map *m, uintptr_t addr, size_t extent, uint8_t *tag)
{
    for (;;) {
        unsigned before = read_begin(m);
        uint8_t t = 0;
        hs_pm_brief b = brief_probe(m, addr, extent, &t);
        if (b == HS_PM_ABSENT && atomic_load_explicit(&m->n_overflow, memory_order_relaxed))
            b = HS_PM_UNSURE; /* a span past 2^48 may hold it */
        if (read_retry(m, before))
            continue;
        *tag = t;
        return b;
    }
}

/* The leaf slot of addr, or NULL when addr's GiB has no leaf. */
static const _Atomic(uint64_t) *slot_of(const hs_page_map *m, uintptr_t addr)
{
    if (addr >= ADDR_LIMIT)
        return NULL;
    uint64_t t = ld(&m->top[addr >> LEAF_SHIFT]);
    return t && !(t & 1) ? leaf_slot((hs_pm_leaf *)(uintptr_t)t, addr) : NULL;
}

void hs_pm_prefetch(hs_page_map *m, const uintptr_t *addrs, size_t n)
{
    enum { BUCKET_HEAD_LINES = 5 }; /* the header and all of a bucket of up to 16 */
    for (size_t i = 0; i < n; i++) {
        const _Atomic(uint64_t) *slot = slot_of(m, addrs[i]);
        if (slot)
            __builtin_prefetch(slot);
    }
    for (size_t i = 0; i < n; i++) {
        const _Atomic(uint64_t) *slot = slot_of(m, addrs[i]);
        uint64_t e = slot ? ld(slot) : 0;
        if (e && !(e & 1))
            for (int line = 0; line < BUCKET_HEAD_LINES; line++)
                __builtin_prefetch((const char *)(uintptr_t)e + 64 * line);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t r = probe(m, addrs[i]);
        if (r) {
            const char *rec = (const char *)rec_at(m, r);
            __builtin_prefetch(rec);
            __builtin_prefetch(rec + sizeof(record) - 1);
        }
    }
}

size_t hs_pm_count(hs_page_map *m) { return atomic_load_explicit(&m->count, memory_order_relaxed); }
unsigned hs_pm_version(hs_page_map *m) { return atomic_load_explicit(&m->seq, memory_order_acquire); }
size_t hs_pm_bytes(hs_page_map *m) { return m->bytes; }

/* Whether record r's span is one the caller wants (kind has none of the skip bits), and it. */
static bool wanted(const hs_page_map *m, uint32_t r, uint32_t skip, hs_span *s)
{
    if (!r)
        return false;
    rec_read(m, r, s);
    return !(s->kind & skip);
}

/* Reader and writer: walk chunks from addr's downwards (dir -1) or upwards (+1) and return the
 * first record met whose base is <= addr (down) or > addr (up), passing over spans whose kind has
 * a skip bit.  Cold: reports only. */
static uint32_t scan(const hs_page_map *m, uintptr_t addr, int dir, uint32_t skip)
{
    if (addr >= ADDR_LIMIT)
        return 0;
    long chunk = (long)(addr >> CHUNK_SHIFT);
    const long last_chunk = (long)(ADDR_LIMIT >> CHUNK_SHIFT) - 1;
    hs_span s;
    while (chunk >= 0 && chunk <= last_chunk) {
        uintptr_t chunk_base = (uintptr_t)chunk << CHUNK_SHIFT;
        uint64_t t = ld(&m->top[chunk_base >> LEAF_SHIFT]);
        const hs_pm_leaf *leaf = (t & 1) ? NULL : (const hs_pm_leaf *)t;
        long leaf_first = (long)((chunk_base >> LEAF_SHIFT) << LEAF_BITS);
        long past_leaf = dir < 0 ? leaf_first - 1 : leaf_first + (1L << LEAF_BITS);
        if (!t || (leaf && !ld32(&leaf->used))) { /* nothing in this GiB: skip it */
            chunk = past_leaf;
            continue;
        }
        uint64_t e = t & 1 ? t : ld(leaf_slot((hs_pm_leaf *)leaf, chunk_base));
        if (e & 1) {
            uint32_t r = clamp_rec(m, cover_rec(e));
            if (wanted(m, r, skip, &s) && (dir < 0 ? s.base <= addr : s.base > addr))
                return r;
        } else if (e) {
            const hs_pm_bucket *b = (const hs_pm_bucket *)e;
            uint32_t n = bucket_n(b);
            long i = bucket_last_at_or_below(b, n, chunk_base, addr); /* down: from it; up: from the one after */
            for (i += dir > 0; i >= 0 && (uint32_t)i < n; i += dir) {
                uint32_t r = clamp_rec(m, entry_rec(ld(&ents(b)[2 * i + 1])));
                if (wanted(m, r, skip, &s))
                    return r;
            }
        }
        chunk = t & 1 ? past_leaf : chunk + dir; /* one span covers a whole GiB: met once */
    }
    return 0;
}

void hs_pm_neighbours(hs_page_map *m, uintptr_t addr, uint32_t skip, hs_span *below, bool *has_below, hs_span *above,
                      bool *has_above)
{
    for (;;) {
        unsigned before = read_begin(m);
        uint32_t rb = scan(m, addr, -1, skip), ra = scan(m, addr, +1, skip);
        hs_span b = {0}, a = {0};
        if (rb)
            rec_read(m, rb, &b);
        if (ra)
            rec_read(m, ra, &a);
        uint32_t n = atomic_load_explicit(&m->n_overflow, memory_order_relaxed);
        for (uint32_t i = 0; i < n && i < HS_PM_OVERFLOW; i++) {
            uint32_t r = clamp_rec(m, ld32(&m->overflow[i]));
            hs_span s;
            if (!r)
                continue;
            rec_read(m, r, &s);
            if (s.kind & skip)
                continue;
            if (s.base <= addr && (!rb || s.base > b.base)) {
                b = s;
                rb = r;
            } else if (s.base > addr && (!ra || s.base < a.base)) {
                a = s;
                ra = r;
            }
        }
        if (read_retry(m, before))
            continue;
        *has_below = rb != 0;
        *has_above = ra != 0;
        if (rb)
            *below = b;
        if (ra)
            *above = a;
        return;
    }
}

/* ---- writers ---- */

void hs_pm_lock(hs_page_map *m) { pthread_mutex_lock(&m->writer); }
bool hs_pm_timedlock(hs_page_map *m, const struct timespec *until)
{
    return pthread_mutex_timedlock(&m->writer, until) == 0;
}
void hs_pm_unlock(hs_page_map *m) { pthread_mutex_unlock(&m->writer); }

/* Writers are serialised by the writer lock, so the count is stored, not incremented with a
 * locked read-modify-write (two fewer bus-locked instructions per insert and per free). */
static void begin_write(hs_page_map *m)
{
    unsigned s = atomic_load_explicit(&m->seq, memory_order_relaxed);
    atomic_store_explicit(&m->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* the odd count is seen before any change */
}

static void end_write(hs_page_map *m)
{
    unsigned s = atomic_load_explicit(&m->seq, memory_order_relaxed);
    atomic_store_explicit(&m->seq, s + 1, memory_order_release);
}

static hs_pm_leaf *leaf_for_write(hs_page_map *m, size_t top_index)
{
    hs_pm_leaf *leaf = m->leaf_mem[top_index];
    if (!leaf) {
        leaf = map_bytes(m, sizeof *leaf);
        if (!leaf)
            return NULL;
        /* small pages: with transparent huge pages "always", a leaf placed so that an aligned
         * 2 MiB of it lies in its page words would get a huge page there, resident whole at the
         * first word written and not given back a page at a time */
        madvise(leaf, sizeof *leaf, MADV_NOHUGEPAGE);
        m->bytes += sizeof *leaf - sizeof leaf->page; /* page words are counted as their pages are touched */
        m->leaf_mem[top_index] = leaf;
    }
    if (ld(&m->top[top_index]) != (uint64_t)(uintptr_t)leaf)
        st(&m->top[top_index], (uint64_t)(uintptr_t)leaf);
    return leaf;
}

static bool is_tombstone(const _Atomic(uint64_t) *e, uint32_t i) { return entry_rec(ld(&e[2 * i + 1])) == 0; }

/* Writer: the live entries of `from` (which may be b itself) packed into b from the front, hints
 * rebuilt.  Readers see the shift as any other change: under the map's sequence counter. */
static void bucket_pack(hs_pm_bucket *b, const hs_pm_bucket *from, uintptr_t chunk_base)
{
    const _Atomic(uint64_t) *src = ents(from);
    _Atomic(uint64_t) *dst = ents(b);
    uint32_t n = bucket_n(from), kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (is_tombstone(src, i))
            continue;
        st(&dst[2 * kept], ld(&src[2 * i]));
        st(&dst[2 * kept + 1], ld(&src[2 * i + 1]));
        kept++;
    }
    atomic_store_explicit(&b->n, kept, memory_order_relaxed);
    b->dead = 0;
    hints_build(b, chunk_base);
}

/* Writer: entry i goes, and the entries after it move down one. */
static void bucket_close_gap(hs_pm_bucket *b, uintptr_t chunk_base, uint32_t i)
{
    _Atomic(uint64_t) *e = ents(b);
    uint32_t n = bucket_n(b);
    uintptr_t base = ld(&e[2 * i]);
    for (; i + 1 < n; i++) {
        st(&e[2 * i], ld(&e[2 * i + 2]));
        st(&e[2 * i + 1], ld(&e[2 * i + 3]));
    }
    atomic_store_explicit(&b->n, n - 1, memory_order_relaxed);
    hints_adjust(b, chunk_base, base, -1);
}

/* Writer: the span [base, end) with this record word joins the chunk's bucket. */
static int bucket_insert(hs_page_map *m, hs_pm_leaf *leaf, _Atomic(uint64_t) *slot, uintptr_t chunk_base,
                         uintptr_t base, uintptr_t end, uint64_t word)
{
    hs_pm_bucket *b = (hs_pm_bucket *)(uintptr_t)ld(slot);
    if (b && bucket_n(b) == ld32(&b->cap) && b->dead)
        bucket_pack(b, b, chunk_base); /* full of tombstones: swept, not grown */
    if (!b || bucket_n(b) == ld32(&b->cap)) {
        hs_pm_bucket *grown = bucket_take(m, b ? ld32(&b->cap) * 2 : 2);
        if (!grown)
            return -1;
        if (b)
            bucket_pack(grown, b, chunk_base);
        slot_set(m, leaf, slot, (uint64_t)(uintptr_t)grown);
        if (b)
            bucket_give(m, b);
        b = grown;
    }
    _Atomic(uint64_t) *e = ents(b);
    uint32_t n = bucket_n(b);
    long at = bucket_last_at_or_below(b, n, chunk_base, base) + 1;
    if (at > 0 && ld(&e[2 * (at - 1)]) == base && is_tombstone(e, (uint32_t)at - 1)) { /* a span's at this base */
        st(&e[2 * (at - 1) + 1], word);
        b->dead--;
        goto purge;
    }
    for (long i = (long)n; i > at; i--) {
        st(&e[2 * i], ld(&e[2 * i - 2]));
        st(&e[2 * i + 1], ld(&e[2 * i - 1]));
    }
    st(&e[2 * at], base);
    st(&e[2 * at + 1], word);
    atomic_store_explicit(&b->n, n + 1, memory_order_relaxed);
    hints_adjust(b, chunk_base, base, +1);
    at++;
purge:
    /* Tombstones the new span reaches over would hide it from searches landing on them.  (Live
     * spans there were replaced before the insert.) */
    while ((uint32_t)at < bucket_n(b) && ld(&e[2 * at]) < end && is_tombstone(e, (uint32_t)at)) {
        bucket_close_gap(b, chunk_base, (uint32_t)at);
        b->dead--;
    }
    return 0;
}

/* Writer: where record r's entry is in the bucket of the chunk at chunk_base, or -1 when r is not
 * there.  r's span begins at base and bases are distinct, so a search finds it; the scan after it
 * is a safety net (a removal that missed would leave the record in the map for ever). */
static long bucket_find(const hs_pm_bucket *b, uintptr_t chunk_base, uintptr_t base, uint32_t r)
{
    uint32_t n = bucket_n(b);
    long i = bucket_last_at_or_below(b, n, chunk_base, base);
    if (i >= 0 && entry_rec(ld(&ents(b)[2 * i + 1])) == r)
        return i;
    for (i = 0; i < (long)n; i++) /* met only for a record placed in part (out of memory) */
        if (entry_rec(ld(&ents(b)[2 * i + 1])) == r)
            return i;
    return -1;
}

/* Writer: record r's entry leaves the bucket: the last one is dropped (with tombstones before
 * it), any other becomes a tombstone; an emptied bucket is given back. */
static void bucket_remove(hs_page_map *m, hs_pm_leaf *leaf, _Atomic(uint64_t) *slot, uintptr_t chunk_base,
                          uintptr_t base, uint32_t r)
{
    hs_pm_bucket *b = (hs_pm_bucket *)(uintptr_t)ld(slot);
    long found = bucket_find(b, chunk_base, base, r);
    if (found < 0)
        return;
    _Atomic(uint64_t) *e = ents(b);
    st(&e[2 * found + 1], 0);
    b->dead++;
    for (uint32_t n; (n = bucket_n(b)) > 0 && is_tombstone(e, n - 1);) {
        bucket_close_gap(b, chunk_base, n - 1);
        b->dead--;
    }
    if (!bucket_n(b)) {
        slot_set(m, leaf, slot, 0);
        bucket_give(m, b);
    } else if (b->dead * 2 > bucket_n(b)) {
        bucket_pack(b, b, chunk_base);
    }
}

/* Whether [base, end) covers all of [from, to). */
static bool covers(uintptr_t base, uintptr_t end, uintptr_t from, uintptr_t to) { return base <= from && end >= to; }

/* ---- page words (see struct hs_pm_leaf) ---- */

static bool has_page_words(const hs_span *s) { return s->size && s->size <= PAGE_WORDS_MAX; }

static uint64_t page_word(const hs_page_map *m, uint32_t r, const hs_span *s, uintptr_t page)
{
    uintptr_t page_end = page + PAGE_BYTES, end = span_end(s);
    uintptr_t lo = s->base > page ? s->base : page, hi = end < page_end ? end : page_end;
    return (uint64_t)tag_of(m, s) << 56 | (uint64_t)(hi - lo - 1) << 44 | (uint64_t)(lo - page) << 32 | r;
}

/* Writer: the page words of the pages span s touches (in leaves that exist).  place: give r
 * each page whose word is free; else rewrite the words naming r, with s's tag (retag) or 0
 * (remove).  True when every page's word names r: r owns its pages. */
static bool page_words_write(hs_page_map *m, uint32_t r, const hs_span *s, bool place, bool remove)
{
    if (!has_page_words(s))
        return false;
    bool owns = true;
    uintptr_t end = span_end(s);
    for (uintptr_t page = s->base >> PAGE_SHIFT << PAGE_SHIFT; page < end; page += PAGE_BYTES) {
        uint64_t t = ld(&m->top[page >> LEAF_SHIFT]);
        if (!t || (t & 1)) {
            owns = false;
            continue;
        }
        hs_pm_leaf *leaf = (hs_pm_leaf *)(uintptr_t)t;
        _Atomic(uint64_t) *w = leaf_page(leaf, page);
        size_t word_page = (size_t)(w - leaf->page) * sizeof *w / PAGE_BYTES;
        uint32_t named = (uint32_t)ld(w);
        if (place && !named) {
            if (!bit(leaf->word_page_counted, word_page)) {
                bit_set(leaf->word_page_counted, word_page, true);
                m->bytes += PAGE_BYTES;
            }
            leaf->words_named[word_page]++;
            named = r;
        }
        if (named != r) {
            owns = false;
            continue;
        }
        st(w, remove ? 0 : page_word(m, r, s, page));
        if (remove && !--leaf->words_named[word_page])
            word_page_emptied(m, leaf, word_page);
    }
    return owns;
}

/* Writer: every word naming record r, in the chunks its span touches (a partly placed record
 * too), is removed (remove) or rewritten with the span's current tag (after an update). */
static void rewrite_words(hs_page_map *m, uint32_t r, const hs_span *s, bool remove)
{
    if (page_words_write(m, r, s, false, remove) && !remove)
        return; /* r owns its pages: its tag is kept there */
    uintptr_t end = span_end(s);
    for (uintptr_t c = s->base >> CHUNK_SHIFT; c <= (end - 1) >> CHUNK_SHIFT;) {
        uintptr_t chunk_base = c << CHUNK_SHIFT;
        size_t ti = chunk_base >> LEAF_SHIFT;
        uint64_t t = ld(&m->top[ti]);
        if ((t & 1) && cover_rec(t) == r) { /* covered the whole GiB */
            st(&m->top[ti], remove ? (uint64_t)(uintptr_t)m->leaf_mem[ti] : cover_word(m, r, s));
            c = (uintptr_t)(ti + 1) << LEAF_BITS;
            continue;
        }
        if (t && !(t & 1)) {
            hs_pm_leaf *leaf = (hs_pm_leaf *)(uintptr_t)t;
            _Atomic(uint64_t) *slot = leaf_slot(leaf, chunk_base);
            uint64_t e = ld(slot);
            if ((e & 1) && cover_rec(e) == r) {
                if (remove)
                    slot_set(m, leaf, slot, 0);
                else
                    st(slot, cover_word(m, r, s));
            } else if (e && !(e & 1)) {
                hs_pm_bucket *b = (hs_pm_bucket *)(uintptr_t)e;
                long i;
                if (remove)
                    bucket_remove(m, leaf, slot, chunk_base, s->base, r);
                else if ((i = bucket_find(b, chunk_base, s->base, r)) >= 0)
                    st(&ents(b)[2 * i + 1], entry_word(m, r, s));
            }
        }
        c++;
    }
}

static void unplace(hs_page_map *m, uint32_t r, const hs_span *s) { rewrite_words(m, r, s, true); }
static void retag(hs_page_map *m, uint32_t r, const hs_span *s) { rewrite_words(m, r, s, false); }

/* Writer: put record r into every chunk [s->base, end) touches.  -1 when out of memory. */
static int place(hs_page_map *m, uint32_t r, const hs_span *s)
{
    uintptr_t base = s->base, end = span_end(s);
    for (uintptr_t c = base >> CHUNK_SHIFT; c <= (end - 1) >> CHUNK_SHIFT;) {
        uintptr_t chunk_base = c << CHUNK_SHIFT;
        size_t ti = chunk_base >> LEAF_SHIFT;
        uintptr_t gib = (uintptr_t)ti << LEAF_SHIFT;
        hs_pm_leaf *known = m->leaf_mem[ti];
        if (covers(base, end, gib, gib + ((uintptr_t)1 << LEAF_SHIFT)) && (!known || !ld32(&known->used))) {
            st(&m->top[ti], cover_word(m, r, s)); /* the whole GiB is this span's */
            c = (uintptr_t)(ti + 1) << LEAF_BITS;
            continue;
        }
        hs_pm_leaf *leaf = leaf_for_write(m, ti);
        if (!leaf)
            return -1;
        _Atomic(uint64_t) *slot = leaf_slot(leaf, chunk_base);
        if (covers(base, end, chunk_base, chunk_base + ((uintptr_t)1 << CHUNK_SHIFT)) && !ld(slot))
            slot_set(m, leaf, slot, cover_word(m, r, s));
        else if (bucket_insert(m, leaf, slot, chunk_base, base, end, entry_word(m, r, s)) != 0)
            return -1;
        c++;
    }
    page_words_write(m, r, s, true, false);
    return 0;
}

/* Writer: a record whose span overlaps [base, end), or 0. */
static uint32_t first_overlap(hs_page_map *m, uintptr_t base, uintptr_t end)
{
    uintptr_t placed_end = end < ADDR_LIMIT ? end : ADDR_LIMIT; /* the radix part ends at 2^48 */
    for (uintptr_t c = base >> CHUNK_SHIFT; base < placed_end && c <= (placed_end - 1) >> CHUNK_SHIFT;) {
        uintptr_t chunk_base = c << CHUNK_SHIFT;
        size_t ti = chunk_base >> LEAF_SHIFT;
        uint64_t t = ld(&m->top[ti]);
        if (t & 1)
            return cover_rec(t);
        if (!t || !ld32(&((hs_pm_leaf *)(uintptr_t)t)->used)) {
            c = (uintptr_t)(ti + 1) << LEAF_BITS;
            continue;
        }
        uint64_t e = ld(leaf_slot((hs_pm_leaf *)(uintptr_t)t, chunk_base));
        if (e & 1)
            return cover_rec(e);
        if (e) { /* the last span starting below end is the only one that can reach past base */
            const hs_pm_bucket *b = (const hs_pm_bucket *)(uintptr_t)e;
            long i = bucket_last_at_or_below(b, bucket_n(b), chunk_base, end - 1);
            while (i >= 0 && is_tombstone(ents(b), (uint32_t)i)) /* a live span before it may still reach in */
                i--;
            if (i >= 0) {
                uint64_t w = ld(&ents(b)[2 * i + 1]), size = w >> 40;
                uint32_t r = entry_rec(w);
                hs_span s = {.base = ld(&ents(b)[2 * i]), .size = size};
                if (size == BRIEF_SIZE_MAX) /* saturated: the record has the size */
                    rec_read(m, r, &s);
                if (span_end(&s) > base)
                    return r;
            }
        }
        c++;
    }
    for (uint32_t i = 0; i < atomic_load(&m->n_overflow); i++) {
        hs_span s;
        rec_read(m, ld32(&m->overflow[i]), &s);
        if (s.base < end && span_end(&s) > base)
            return ld32(&m->overflow[i]);
    }
    return 0;
}

static bool is_overflow(const hs_span *s) { return span_end(s) > ADDR_LIMIT; }

/* span: record r's, as just read */
static void remove_record(hs_page_map *m, uint32_t r, const hs_span *span)
{
    if (is_overflow(span)) {
        uint32_t n = atomic_load(&m->n_overflow), w = 0;
        for (uint32_t i = 0; i < n; i++)
            if (ld32(&m->overflow[i]) != r)
                st32(&m->overflow[w++], ld32(&m->overflow[i]));
        atomic_store(&m->n_overflow, w);
    } else {
        unplace(m, r, span);
    }
    rec_give(m, r);
    atomic_fetch_sub_explicit(&m->count, 1, memory_order_relaxed);
}

int hs_pm_insert_locked(hs_page_map *m, const hs_span *s, void (*replaced)(const hs_span *old, void *arg), void *arg)
{
    uintptr_t end = span_end(s);
    if (end < s->base)
        return -1; /* wraps around the address space */
    begin_write(m);
    for (uint32_t r; (r = first_overlap(m, s->base, end)) != 0;) {
        hs_span old;
        rec_read(m, r, &old);
        remove_record(m, r, &old);
        if (replaced)
            replaced(&old, arg);
    }
    int rc = 0;
    uint32_t r = 0;
    if (m->max_spans && hs_pm_count(m) >= m->max_spans)
        rc = -2;
    else if (is_overflow(s) && atomic_load(&m->n_overflow) == HS_PM_OVERFLOW)
        rc = -1;
    else if ((r = rec_take(m)) == 0)
        rc = -1;
    if (rc == 0) {
        rec_write(m, r, s);
        if (is_overflow(s)) {
            uint32_t n = atomic_load(&m->n_overflow);
            st32(&m->overflow[n], r);
            atomic_store(&m->n_overflow, n + 1);
        } else if (place(m, r, s) != 0) {
            unplace(m, r, s);
            rec_give(m, r);
            rc = -1;
        }
        if (rc == 0)
            atomic_fetch_add_explicit(&m->count, 1, memory_order_relaxed);
    }
    end_write(m);
    return rc;
}

void hs_pm_remove_ref_locked(hs_page_map *m, uint32_t ref, const hs_span *s)
{
    begin_write(m);
    remove_record(m, ref, s);
    end_write(m);
}

void hs_pm_rewrite_ref_locked(hs_page_map *m, uint32_t ref, const hs_span *old, const hs_span *s)
{
    begin_write(m);
    rec_write(m, ref, s);
    if (tag_of(m, s) != tag_of(m, old) && !is_overflow(s))
        retag(m, ref, s);
    end_write(m);
}

bool hs_pm_remove_locked(hs_page_map *m, uintptr_t base, uint64_t id, hs_span *removed)
{
    hs_span s;
    uint32_t r = lookup(m, base, true, &s);
    if (!r || (id && s.id != id))
        return false;
    hs_pm_remove_ref_locked(m, r, &s);
    if (removed)
        *removed = s;
    return true;
}

bool hs_pm_update_locked(hs_page_map *m, const hs_span *s)
{
    hs_span old;
    uint32_t r = lookup(m, s->base, true, &old);
    if (!r || old.size != s->size || old.id != s->id)
        return false;
    hs_pm_rewrite_ref_locked(m, r, &old, s);
    return true;
}

void hs_pm_foreach_locked(hs_page_map *m, void (*fn)(const hs_span *, void *), void *arg)
{
    hs_span s;
    for (size_t ti = 0; ti < ((size_t)1 << TOP_BITS); ti++) {
        uint64_t t = ld(&m->top[ti]);
        if (t & 1) { /* visited where it starts */
            rec_read(m, cover_rec(t), &s);
            if (s.base >> LEAF_SHIFT == ti)
                fn(&s, arg);
            continue;
        }
        hs_pm_leaf *leaf = (hs_pm_leaf *)(uintptr_t)t;
        if (!leaf || !ld32(&leaf->used))
            continue;
        for (size_t ci = 0; ci < ((size_t)1 << LEAF_BITS); ci++) {
            uint64_t e = ld(&leaf->slot[ci]);
            uintptr_t chunk = (ti << LEAF_BITS) | ci;
            if (e & 1) {
                rec_read(m, cover_rec(e), &s);
                if (s.base >> CHUNK_SHIFT == chunk)
                    fn(&s, arg);
            } else if (e) {
                const hs_pm_bucket *b = (const hs_pm_bucket *)(uintptr_t)e;
                for (uint32_t i = 0; i < bucket_n(b); i++) {
                    if (ld(&ents(b)[2 * i]) >> CHUNK_SHIFT != chunk || is_tombstone(ents(b), i))
                        continue; /* began in an earlier chunk (visited there), or removed */
                    rec_read(m, entry_rec(ld(&ents(b)[2 * i + 1])), &s);
                    fn(&s, arg);
                }
            }
        }
    }
    /* spans reaching past 2^48, in base order */
    uint32_t n = atomic_load(&m->n_overflow);
    for (uintptr_t last = 0, first = 1;; first = 0) {
        uint32_t best = 0;
        hs_span bs = {0};
        for (uint32_t i = 0; i < n; i++) {
            rec_read(m, ld32(&m->overflow[i]), &s);
            if ((first || s.base > last) && (!best || s.base < bs.base)) {
                best = ld32(&m->overflow[i]);
                bs = s;
            }
        }
        if (!best)
            break;
        fn(&bs, arg);
        last = bs.base;
    }
}
