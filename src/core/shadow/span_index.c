/* The ordered index (see span_index.h), as a two-level sorted array: a directory of blocks,
 * each holding up to BLOCK spans in address order, and the first base of every block in a
 * parallel key array.  A lookup is two binary searches (the keys, then one block); an insert
 * or a remove moves at most one block's spans, and a directory entry when a block splits or
 * empties: O(BLOCK + blocks) instead of O(n).
 *
 * Readers never lock: they read under the sequence counter and retry if a writer was active.
 * Nothing a reader can reach is ever unmapped: blocks come from slabs that are kept, emptied
 * blocks are reused, and a directory that grows is retired, not freed.  A reader racing a
 * writer may read stale bytes, never unmapped memory, and the sequence check throws them away. */
#include "shadow/span_index.h"
#include "process/hot_memory.h"
#include "process/util.h"

#include <string.h>
#include <sys/mman.h>

enum { INITIAL_BLOCKS = 64, SLAB_BLOCKS = 64, HINTS = 1024 };

/* Aligned so that a hint holds a block's address and a span's place in it in one word. */
struct hs_span_block {
    _Alignas(64) uint32_t n;         /* 0 once it is given back: then no hint takes it */
    uint32_t at;                     /* its place in the directory, while n > 0 */
    struct hs_span_block *free_next; /* on the free list */
    /* items[i].base again, packed: a search in the block reads a few lines of these, not one
     * line per span probed (an engine's lookups find them cold between its own work) */
    uintptr_t bases[HS_SPAN_BLOCK];
    hs_span items[HS_SPAN_BLOCK];
};

/* Every index's directory, keys, hints and slabs: a lookup reads all four (hot_memory.h). */
static void *map_bytes(size_t bytes)
{
    void *hot = hs_hot_memory(bytes);
    if (hot)
        return hot;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* A block for a writer: an emptied one, else a new one from the current slab. */
static hs_span_block *block_take(hs_span_index *ix)
{
    hs_span_block *b = ix->free_blocks;
    if (b) {
        ix->free_blocks = b->free_next;
    } else {
        if (ix->slab_left == 0) {
            ix->slab = map_bytes(SLAB_BLOCKS * sizeof(hs_span_block));
            if (!ix->slab)
                return NULL;
            ix->slab_left = SLAB_BLOCKS;
        }
        b = &ix->slab[SLAB_BLOCKS - ix->slab_left--];
    }
    b->n = 0;
    return b;
}

static void block_give(hs_span_index *ix, hs_span_block *b)
{
    b->n = 0;
    b->free_next = ix->free_blocks; /* readers may still look into it: it stays mapped */
    ix->free_blocks = b;
}

int hs_span_index_init(hs_span_index *ix)
{
    memset(ix, 0, sizeof *ix);
    hs_span_block **dir = map_bytes(INITIAL_BLOCKS * sizeof *dir);
    uintptr_t *keys = map_bytes(INITIAL_BLOCKS * sizeof *keys);
    ix->hints = map_bytes(HINTS * sizeof *ix->hints);
    if (!dir || !keys || !ix->hints)
        return -1;
    atomic_init(&ix->seq, 0);
    atomic_init(&ix->dir, dir);
    atomic_init(&ix->keys, keys);
    atomic_init(&ix->nblocks, 0);
    atomic_init(&ix->count, 0);
    ix->capacity = INITIAL_BLOCKS;
    pthread_mutex_init(&ix->writer, NULL);
    return 0;
}

void hs_span_index_after_fork(hs_span_index *ix)
{
    pthread_mutex_init(&ix->writer, NULL);
    /* A writer interrupted by fork in another thread leaves seq odd forever: even it out. */
    unsigned s = atomic_load(&ix->seq);
    if (s & 1u)
        atomic_store(&ix->seq, s + 1);
}

/* Index of the last key <= addr among n, or -1. */
static ptrdiff_t last_key_at_or_below(const uintptr_t *keys, size_t n, uintptr_t addr)
{
    /* Without branches on the keys (a conditional move a step): the addresses a program looks
     * up go either way at random, and a mispredicted step cost more than the load. */
    if (!n)
        return -1;
    const uintptr_t *at = keys;
    while (n > 1) {
        size_t half = n / 2;
        at = at[half] <= addr ? at + half : at;
        n -= half;
    }
    return (ptrdiff_t)(at - keys) - (*at > addr);
}

/* Index of the last span with base <= addr in a block, or -1. */
static ptrdiff_t last_span_at_or_below(const hs_span_block *blk, size_t n, uintptr_t addr)
{
    return last_key_at_or_below(blk->bases, n, addr);
}

/* The hint slot of an address. */
static size_t hint_slot(uintptr_t addr) { return (size_t)(((addr >> 4) * 0x9E3779B97F4A7C15ull) >> 54); }

/* A hint: the block's address, and the span's place in it in the low bits. */
enum { HINT_SPAN_BITS = 6 };
_Static_assert(HS_SPAN_BLOCK <= 1 << HINT_SPAN_BITS && _Alignof(hs_span_block) >= 1 << HINT_SPAN_BITS,
               "a span's place in its block fits below the block's alignment");
static uint64_t hint_of(const hs_span_block *blk, ptrdiff_t i) { return (uint64_t)(uintptr_t)blk | (uint64_t)i; }

/* The block the hint h names, when addr still falls in it, with *i set; NULL otherwise.  Its span
 * when that is still the one (its base at or below addr, the next one in the block above it),
 * else a search of the block when addr still falls in it (spans moved within the block: a span
 * was inserted or removed before it).  No directory load: a block holding spans is in the
 * directory, at its `at`, and the spans of one block are consecutive in the whole order.  Every
 * load is clamped as the searches' are. */
HS_HOT_PATH static const hs_span_block *hinted(const uintptr_t *keys, size_t nblocks, uintptr_t addr, uint64_t h,
                                               ptrdiff_t *i)
{
    const hs_span_block *blk = (const hs_span_block *)(uintptr_t)(h & ~(uint64_t)((1u << HINT_SPAN_BITS) - 1));
    if (!blk)
        return NULL;
    size_t n = blk->n < HS_SPAN_BLOCK ? blk->n : HS_SPAN_BLOCK, at = blk->at, hi = h & ((1u << HINT_SPAN_BITS) - 1);
    if (!n || at >= nblocks)
        return NULL; /* given back since */
    if (hi + 1 < n && blk->bases[hi] <= addr && blk->bases[hi + 1] > addr) {
        *i = (ptrdiff_t)hi;
        return blk;
    }
    if (blk->bases[0] > addr || (at + 1 < nblocks && keys[at + 1] <= addr))
        return NULL;
    *i = last_span_at_or_below(blk, n, addr);
    return blk;
}

/* Where addr falls: block *b (-1 when below every span) and, in it, span *i (the last with
 * base <= addr); returns that block (NULL when *b is -1).  Readers and writers alike; readers
 * clamp what they read.  The hint for addr first, else the two searches; either refreshes it. */
HS_HOT_PATH static const hs_span_block *locate(hs_span_index *ix, hs_span_block *const *dir, const uintptr_t *keys,
                                               size_t nblocks, uintptr_t addr, ptrdiff_t *b, ptrdiff_t *i)
{
    _Atomic uint64_t *hint = &ix->hints[hint_slot(addr)];
    uint64_t h = atomic_load_explicit(hint, memory_order_relaxed);
    const hs_span_block *blk = hinted(keys, nblocks, addr, h, i);
    if (blk) {
        *b = (ptrdiff_t)blk->at;
    } else {
        *b = last_key_at_or_below(keys, nblocks, addr);
        *i = -1;
        if (*b < 0 || !(blk = dir[*b])) { /* !blk: never for a writer; a reader's stale view is thrown
                                              away by its sequence check */
            *b = -1;
            return NULL;
        }
        *i = last_span_at_or_below(blk, blk->n < HS_SPAN_BLOCK ? blk->n : HS_SPAN_BLOCK, addr);
    }
    if (*i >= 0 && hint_of(blk, *i) != h)
        atomic_store_explicit(hint, hint_of(blk, *i), memory_order_relaxed);
    return blk;
}

static bool contains(const hs_span *s, uintptr_t addr)
{
    return addr - s->base < s->size || (s->size == 0 && addr == s->base);
}

/* Inlined into each of the two finds: `exact` is then a constant, not a test at every lookup. */
HS_INLINE_HOT static bool lookup(hs_span_index *ix, uintptr_t addr, bool exact, hs_span *out)
{
    for (;;) {
        unsigned before = atomic_load_explicit(&ix->seq, memory_order_acquire);
        if (before & 1u)
            continue; /* a writer is mid-change; it holds the index for microseconds */
        /* the count first: a directory loaded after it holds at least that many entries */
        size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_acquire);
        hs_span_block *const *dir = atomic_load_explicit(&ix->dir, memory_order_acquire);
        const uintptr_t *keys = atomic_load_explicit(&ix->keys, memory_order_acquire);
        ptrdiff_t b, i;
        const hs_span_block *blk = locate(ix, dir, keys, nb, addr, &b, &i);
        bool found = false;
        if (blk && i >= 0) { /* the span straight into *out, and only when it is the one */
            const hs_span *s = &blk->items[i];
            found = exact ? s->base == addr : contains(s, addr);
            if (found)
                memcpy(out, s, sizeof *out);
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&ix->seq, memory_order_relaxed) == before)
            return found;
    }
}

HS_HOT_PATH bool hs_span_find(hs_span_index *ix, uintptr_t addr, hs_span *out) { return lookup(ix, addr, false, out); }
HS_HOT bool hs_span_find_exact(hs_span_index *ix, uintptr_t addr, hs_span *out) { return lookup(ix, addr, true, out); }

void hs_span_neighbours(hs_span_index *ix, uintptr_t addr, hs_span *below, bool *has_below, hs_span *above,
                        bool *has_above)
{
    for (;;) {
        unsigned before = atomic_load_explicit(&ix->seq, memory_order_acquire);
        if (before & 1u)
            continue;
        /* the count first: a directory loaded after it holds at least that many entries */
        size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_acquire);
        hs_span_block *const *dir = atomic_load_explicit(&ix->dir, memory_order_acquire);
        const uintptr_t *keys = atomic_load_explicit(&ix->keys, memory_order_acquire);
        ptrdiff_t b, i;
        const hs_span_block *blk = locate(ix, dir, keys, nb, addr, &b, &i);
        *has_below = blk && i >= 0;
        if (*has_below)
            memcpy(below, &blk->items[i], sizeof *below);
        /* the next span: in the same block, else the first of the next block */
        *has_above = false;
        if (blk && (uint32_t)(i + 1) < blk->n && i + 1 < HS_SPAN_BLOCK) {
            memcpy(above, &blk->items[i + 1], sizeof *above);
            *has_above = true;
        } else if ((size_t)(b + 1) < nb && dir[b + 1] && dir[b + 1]->n > 0) {
            memcpy(above, &dir[b + 1]->items[0], sizeof *above);
            *has_above = true;
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&ix->seq, memory_order_relaxed) == before)
            return;
    }
}

size_t hs_span_count(hs_span_index *ix) { return atomic_load_explicit(&ix->count, memory_order_relaxed); }
unsigned hs_span_generation(hs_span_index *ix) { return atomic_load_explicit(&ix->seq, memory_order_acquire); }

void hs_span_lock(hs_span_index *ix) { pthread_mutex_lock(&ix->writer); }
void hs_span_unlock(hs_span_index *ix) { pthread_mutex_unlock(&ix->writer); }

/* One writer at a time (the writer lock, or the one lock of the index's owner), so the counter is
 * stored, not incremented atomically: a locked instruction would wait for every store before it
 * to reach the cache (the spans just written, often to lines not in it) at each change.  Odd
 * first, and the fence keeps the changes after it; even again once they are made. */
static void begin_write(hs_span_index *ix)
{
    atomic_store_explicit(&ix->seq, atomic_load_explicit(&ix->seq, memory_order_relaxed) + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void end_write(hs_span_index *ix)
{
    atomic_store_explicit(&ix->seq, atomic_load_explicit(&ix->seq, memory_order_relaxed) + 1, memory_order_release);
}

/* ---- writers (ix->writer held) ---- */

/* Room for one more directory entry.  The old arrays are retired, never unmapped (readers may
 * still be walking them); growth doubles, so the retired total stays below the live size. */
static int reserve_dir(hs_span_index *ix, size_t need)
{
    if (need <= ix->capacity)
        return 0;
    size_t cap = ix->capacity * 2;
    while (cap < need)
        cap *= 2;
    hs_span_block **dir = map_bytes(cap * sizeof *dir);
    uintptr_t *keys = map_bytes(cap * sizeof *keys);
    if (!dir || !keys)
        return -1;
    size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    memcpy(dir, atomic_load_explicit(&ix->dir, memory_order_relaxed), nb * sizeof *dir);
    memcpy(keys, atomic_load_explicit(&ix->keys, memory_order_relaxed), nb * sizeof *keys);
    atomic_store_explicit(&ix->dir, dir, memory_order_release);
    atomic_store_explicit(&ix->keys, keys, memory_order_release);
    ix->capacity = cap;
    return 0;
}

/* Directory entry `at` becomes block blk (entries from `at` on move up). */
static void dir_insert(hs_span_index *ix, size_t at, hs_span_block *blk)
{
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    uintptr_t *keys = atomic_load_explicit(&ix->keys, memory_order_relaxed);
    size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    memmove(&dir[at + 1], &dir[at], (nb - at) * sizeof *dir);
    memmove(&keys[at + 1], &keys[at], (nb - at) * sizeof *keys);
    dir[at] = blk;
    keys[at] = blk->items[0].base;
    for (size_t k = at; k <= nb; k++)
        dir[k]->at = (uint32_t)k;
    atomic_store_explicit(&ix->nblocks, nb + 1, memory_order_release); /* after any new directory */
}

static void dir_remove(hs_span_index *ix, size_t at)
{
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    uintptr_t *keys = atomic_load_explicit(&ix->keys, memory_order_relaxed);
    size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    block_give(ix, dir[at]);
    memmove(&dir[at], &dir[at + 1], (nb - at - 1) * sizeof *dir);
    memmove(&keys[at], &keys[at + 1], (nb - at - 1) * sizeof *keys);
    for (size_t k = at; k + 1 < nb; k++)
        dir[k]->at = (uint32_t)k;
    atomic_store_explicit(&ix->nblocks, nb - 1, memory_order_relaxed);
}

/* Removes span i of block b (inside a write). */
HS_HOT static void remove_at(hs_span_index *ix, size_t b, size_t i)
{
    hs_span_block *blk = atomic_load_explicit(&ix->dir, memory_order_relaxed)[b];
    memmove(&blk->items[i], &blk->items[i + 1], (blk->n - i - 1) * sizeof(hs_span));
    memmove(&blk->bases[i], &blk->bases[i + 1], (blk->n - i - 1) * sizeof(uintptr_t));
    blk->n--;
    if (blk->n == 0)
        dir_remove(ix, b);
    else if (i == 0)
        atomic_load_explicit(&ix->keys, memory_order_relaxed)[b] = blk->items[0].base;
    atomic_store_explicit(&ix->count, atomic_load_explicit(&ix->count, memory_order_relaxed) - 1, memory_order_relaxed);
}

static uintptr_t end_of(const hs_span *s) { return s->base + (s->size ? s->size : 1); }

/* The first span that overlaps [base, end), as (block, index); false when none does. */
static bool first_overlap(hs_span_index *ix, uintptr_t base, uintptr_t end, size_t *ob, size_t *oi)
{
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    uintptr_t *keys = atomic_load_explicit(&ix->keys, memory_order_relaxed);
    size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    ptrdiff_t b, i;
    locate(ix, dir, keys, nb, base, &b, &i);
    if (i >= 0 && end_of(&dir[b]->items[i]) > base) {
        *ob = (size_t)b, *oi = (size_t)i;
        return true;
    }
    /* the span after the last one at or below base */
    size_t nbk, ni;
    if (b < 0)
        nbk = 0, ni = 0;
    else if ((size_t)(i + 1) < dir[b]->n)
        nbk = (size_t)b, ni = (size_t)(i + 1);
    else
        nbk = (size_t)b + 1, ni = 0;
    if (nbk < nb && ni < dir[nbk]->n && dir[nbk]->items[ni].base < end) {
        *ob = nbk, *oi = ni;
        return true;
    }
    return false;
}

HS_HOT_BLOCK_PATH bool hs_span_overwrite_locked(hs_span_index *ix, const hs_span *s, hs_span *old)
{
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    ptrdiff_t b, i;
    locate(ix, dir, atomic_load_explicit(&ix->keys, memory_order_relaxed), nb, s->base, &b, &i);
    if (i < 0 || dir[b]->items[i].base != s->base)
        return false;
    hs_span_block *blk = dir[b];
    const hs_span *next = (uint32_t)(i + 1) < blk->n ? &blk->items[i + 1]
                          : (size_t)(b + 1) < nb     ? &dir[b + 1]->items[0]
                                                     : NULL;
    if (next && end_of(s) > next->base)
        return false;
    if (old)
        *old = blk->items[i];
    begin_write(ix);
    blk->items[i] = *s; /* same base: the block's key stays */
    end_write(ix);
    return true;
}

HS_HOT_BLOCK_PATH bool hs_span_end_locked(hs_span_index *ix, uintptr_t base, uint64_t end_time_ns, uint32_t end_stack,
                                          uint32_t end_thread, hs_span *ended)
{
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    ptrdiff_t b, i;
    locate(ix, dir, atomic_load_explicit(&ix->keys, memory_order_relaxed),
           atomic_load_explicit(&ix->nblocks, memory_order_relaxed), base, &b, &i);
    if (i < 0)
        return false;
    hs_span *s = &dir[b]->items[i];
    if (s->base != base || s->end_time_ns)
        return false;
    begin_write(ix);
    s->end_time_ns = end_time_ns;
    s->end_stack = end_stack;
    s->end_thread = end_thread;
    end_write(ix);
    *ended = *s;
    return true;
}

int hs_span_insert_locked(hs_span_index *ix, const hs_span *s, uint64_t *replaced_bytes)
{
    size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    /* A split may need a block and a directory entry: get both before anything changes. */
    if (reserve_dir(ix, nb + 1) != 0)
        return -1;
    hs_span_block *spare = block_take(ix);
    if (!spare)
        return -1;
    begin_write(ix);
    size_t ob, oi; /* the spans the new one overlaps are replaced */
    while (first_overlap(ix, s->base, end_of(s), &ob, &oi)) {
        if (replaced_bytes)
            *replaced_bytes += atomic_load_explicit(&ix->dir, memory_order_relaxed)[ob]->items[oi].size;
        remove_at(ix, ob, oi);
    }
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    uintptr_t *keys = atomic_load_explicit(&ix->keys, memory_order_relaxed);
    nb = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    if (nb == 0) {
        spare->items[0] = *s;
        spare->bases[0] = s->base;
        spare->n = 1;
        dir_insert(ix, 0, spare);
        spare = NULL;
    } else {
        ptrdiff_t b = last_key_at_or_below(keys, nb, s->base);
        if (b < 0)
            b = 0; /* below every span: the first block takes it */
        hs_span_block *blk = dir[b];
        if (blk->n == HS_SPAN_BLOCK) { /* full: its upper half moves to the spare block */
            uint32_t half = HS_SPAN_BLOCK / 2;
            memcpy(spare->items, &blk->items[half], (HS_SPAN_BLOCK - half) * sizeof(hs_span));
            memcpy(spare->bases, &blk->bases[half], (HS_SPAN_BLOCK - half) * sizeof(uintptr_t));
            spare->n = HS_SPAN_BLOCK - half;
            blk->n = half;
            dir_insert(ix, (size_t)b + 1, spare);
            dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
            keys = atomic_load_explicit(&ix->keys, memory_order_relaxed);
            if (s->base >= spare->items[0].base)
                blk = spare, b++;
            spare = NULL;
        }
        ptrdiff_t i = last_span_at_or_below(blk, blk->n, s->base) + 1;
        memmove(&blk->items[i + 1], &blk->items[i], (blk->n - (size_t)i) * sizeof(hs_span));
        memmove(&blk->bases[i + 1], &blk->bases[i], (blk->n - (size_t)i) * sizeof(uintptr_t));
        blk->items[i] = *s;
        blk->bases[i] = s->base;
        blk->n++;
        if (i == 0)
            keys[b] = s->base;
    }
    atomic_store_explicit(&ix->count, atomic_load_explicit(&ix->count, memory_order_relaxed) + 1, memory_order_relaxed);
    end_write(ix);
    if (spare)
        block_give(ix, spare);
    return 0;
}

HS_HOT bool hs_span_remove_locked(hs_span_index *ix, uintptr_t base, uint64_t id, hs_span *removed)
{
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    ptrdiff_t b, i;
    locate(ix, dir, atomic_load_explicit(&ix->keys, memory_order_relaxed),
           atomic_load_explicit(&ix->nblocks, memory_order_relaxed), base, &b, &i);
    if (i < 0 || dir[b]->items[i].base != base || (id != 0 && dir[b]->items[i].id != id))
        return false;
    if (removed)
        *removed = dir[b]->items[i];
    begin_write(ix);
    remove_at(ix, (size_t)b, (size_t)i);
    end_write(ix);
    return true;
}

int hs_span_replace_all_locked(hs_span_index *ix, const hs_span *sorted, size_t n)
{
    /* Blocks half full, so the inserts that follow rarely split. */
    size_t per = HS_SPAN_BLOCK / 2, need = (n + per - 1) / per;
    if (reserve_dir(ix, need) != 0)
        return -1;
    size_t old = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    uintptr_t *keys = atomic_load_explicit(&ix->keys, memory_order_relaxed);
    begin_write(ix);
    for (size_t k = 0; k < old; k++)
        block_give(ix, dir[k]);
    size_t made = 0, kept = 0;
    for (; made < need; made++) {
        hs_span_block *blk = block_take(ix);
        if (!blk)
            break; /* out of memory: the index keeps what fitted */
        size_t from = made * per, m = n - from < per ? n - from : per;
        memcpy(blk->items, &sorted[from], m * sizeof(hs_span));
        for (size_t k = 0; k < m; k++)
            blk->bases[k] = sorted[from + k].base;
        blk->n = (uint32_t)m;
        blk->at = (uint32_t)made;
        dir[made] = blk;
        keys[made] = blk->items[0].base;
        kept += m;
    }
    atomic_store_explicit(&ix->nblocks, made, memory_order_release);
    atomic_store_explicit(&ix->count, kept, memory_order_relaxed);
    end_write(ix);
    return made == need ? 0 : -1;
}

void hs_span_foreach_locked(hs_span_index *ix, void (*fn)(const hs_span *, void *), void *arg)
{
    size_t nb = atomic_load_explicit(&ix->nblocks, memory_order_relaxed);
    hs_span_block **dir = atomic_load_explicit(&ix->dir, memory_order_relaxed);
    for (size_t b = 0; b < nb; b++)
        for (uint32_t i = 0; i < dir[b]->n; i++)
            fn(&dir[b]->items[i], arg);
}
