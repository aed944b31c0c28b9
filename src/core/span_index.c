#include "span_index.h"

#include <string.h>
#include <sys/mman.h>

enum { INITIAL_CAPACITY = 256 };

static hs_span *map_array(size_t capacity)
{
    void *p = mmap(NULL, capacity * sizeof(hs_span), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int hs_span_index_init(hs_span_index *ix)
{
    hs_span *items = map_array(INITIAL_CAPACITY);
    if (!items)
        return -1;
    atomic_init(&ix->seq, 0);
    atomic_init(&ix->items, items);
    atomic_init(&ix->count, 0);
    ix->capacity = INITIAL_CAPACITY;
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

/* Index of the last span with base <= addr, or -1. */
static ptrdiff_t last_at_or_below(const hs_span *items, size_t n, uintptr_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (items[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

static bool lookup(hs_span_index *ix, uintptr_t addr, bool exact, hs_span *out)
{
    for (;;) {
        unsigned before = atomic_load_explicit(&ix->seq, memory_order_acquire);
        if (before & 1u)
            continue; /* a writer is mid-change; it holds the array for microseconds */
        const hs_span *items = atomic_load_explicit(&ix->items, memory_order_acquire);
        size_t n = atomic_load_explicit(&ix->count, memory_order_acquire);
        ptrdiff_t i = last_at_or_below(items, n, addr);
        bool found = false;
        if (i >= 0) {
            hs_span s;
            memcpy(&s, &items[i], sizeof s);
            found = exact ? s.base == addr : (addr - s.base < s.size || (s.size == 0 && addr == s.base));
            if (found)
                *out = s;
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&ix->seq, memory_order_relaxed) == before)
            return found;
    }
}

bool hs_span_find(hs_span_index *ix, uintptr_t addr, hs_span *out) { return lookup(ix, addr, false, out); }

void hs_span_neighbours(hs_span_index *ix, uintptr_t addr, hs_span *below, bool *has_below, hs_span *above,
                        bool *has_above)
{
    for (;;) {
        unsigned before = atomic_load_explicit(&ix->seq, memory_order_acquire);
        if (before & 1u)
            continue;
        const hs_span *items = atomic_load_explicit(&ix->items, memory_order_acquire);
        size_t n = atomic_load_explicit(&ix->count, memory_order_acquire);
        ptrdiff_t i = last_at_or_below(items, n, addr);
        *has_below = i >= 0;
        *has_above = (size_t)(i + 1) < n;
        if (*has_below)
            memcpy(below, &items[i], sizeof *below);
        if (*has_above)
            memcpy(above, &items[i + 1], sizeof *above);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&ix->seq, memory_order_relaxed) == before)
            return;
    }
}
bool hs_span_find_exact(hs_span_index *ix, uintptr_t addr, hs_span *out) { return lookup(ix, addr, true, out); }
size_t hs_span_count(hs_span_index *ix) { return atomic_load_explicit(&ix->count, memory_order_relaxed); }

void hs_span_lock(hs_span_index *ix) { pthread_mutex_lock(&ix->writer); }
void hs_span_unlock(hs_span_index *ix) { pthread_mutex_unlock(&ix->writer); }

static void begin_write(hs_span_index *ix)
{
    atomic_fetch_add_explicit(&ix->seq, 1, memory_order_acq_rel);
    atomic_thread_fence(memory_order_release);
}

static void end_write(hs_span_index *ix)
{
    atomic_thread_fence(memory_order_release);
    atomic_fetch_add_explicit(&ix->seq, 1, memory_order_release);
}

/* Grow to hold at least `need` spans.  The old array is retired, never unmapped:
 * readers may still be walking it.  Growth doubles, so the retired total stays below
 * the live array's size. */
static int reserve(hs_span_index *ix, size_t need)
{
    if (need <= ix->capacity)
        return 0;
    size_t cap = ix->capacity;
    while (cap < need)
        cap *= 2;
    hs_span *fresh = map_array(cap);
    if (!fresh)
        return -1;
    hs_span *old = atomic_load_explicit(&ix->items, memory_order_relaxed);
    memcpy(fresh, old, atomic_load_explicit(&ix->count, memory_order_relaxed) * sizeof(hs_span));
    atomic_store_explicit(&ix->items, fresh, memory_order_release);
    ix->capacity = cap;
    return 0;
}

int hs_span_insert_locked(hs_span_index *ix, const hs_span *s, uint64_t *replaced_bytes)
{
    size_t n = atomic_load_explicit(&ix->count, memory_order_relaxed);
    if (reserve(ix, n + 1) != 0)
        return -1;
    hs_span *items = atomic_load_explicit(&ix->items, memory_order_relaxed);
    uintptr_t end = s->base + (s->size ? s->size : 1);

    /* [first, last) are the spans that overlap the new one. */
    ptrdiff_t pos = last_at_or_below(items, n, s->base);
    size_t first = (size_t)(pos + 1);
    if (pos >= 0 && items[pos].base + (items[pos].size ? items[pos].size : 1) > s->base)
        first = (size_t)pos;
    size_t last = first;
    while (last < n && items[last].base < end)
        last++;

    if (replaced_bytes)
        for (size_t i = first; i < last; i++)
            *replaced_bytes += items[i].size;
    begin_write(ix);
    size_t removed = last - first;
    memmove(&items[first + 1], &items[last], (n - last) * sizeof(hs_span));
    items[first] = *s;
    atomic_store_explicit(&ix->count, n + 1 - removed, memory_order_relaxed);
    end_write(ix);
    return 0;
}

bool hs_span_remove_locked(hs_span_index *ix, uintptr_t base, uint64_t id, hs_span *removed)
{
    size_t n = atomic_load_explicit(&ix->count, memory_order_relaxed);
    hs_span *items = atomic_load_explicit(&ix->items, memory_order_relaxed);
    ptrdiff_t i = last_at_or_below(items, n, base);
    if (i < 0 || items[i].base != base || (id != 0 && items[i].id != id))
        return false;
    if (removed)
        *removed = items[i];
    begin_write(ix);
    memmove(&items[i], &items[i + 1], (n - (size_t)i - 1) * sizeof(hs_span));
    atomic_store_explicit(&ix->count, n - 1, memory_order_relaxed);
    end_write(ix);
    return true;
}

int hs_span_replace_all_locked(hs_span_index *ix, const hs_span *sorted, size_t n)
{
    if (reserve(ix, n) != 0)
        return -1;
    hs_span *items = atomic_load_explicit(&ix->items, memory_order_relaxed);
    begin_write(ix);
    memcpy(items, sorted, n * sizeof(hs_span));
    atomic_store_explicit(&ix->count, n, memory_order_relaxed);
    end_write(ix);
    return 0;
}

void hs_span_foreach_locked(hs_span_index *ix, void (*fn)(const hs_span *, void *), void *arg)
{
    size_t n = atomic_load_explicit(&ix->count, memory_order_relaxed);
    hs_span *items = atomic_load_explicit(&ix->items, memory_order_relaxed);
    for (size_t i = 0; i < n; i++)
        fn(&items[i], arg);
}
