#include "shadow/regions.h"
#include "shadow/span_index.h"
#include "process/util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* Regions freed through NVTX remembered at most (FIFO, like the blocks' quarantine). */
enum { QUARANTINE_MAX_RECORDS = 65536 };

typedef struct named {
    uint64_t id;
    char *name;
    UT_hash_handle hh;
} named;

static struct {
    hs_span_index index, freed;
    pthread_mutex_t lock;
    named *regions, *allocs; /* id -> name */
    uint64_t next_id;
    struct {
        uintptr_t base;
        uint64_t id;
    } * fifo;
    size_t fifo_head, fifo_len;
} rg = {.lock = PTHREAD_MUTEX_INITIALIZER};
/* Live and quarantined: readers look only when there are some (read at every launch: with the
 * other such flags). */
HS_HOT_DATA static atomic_uint regions_count;

int hs_regions_init(void) { return hs_span_index_init(&rg.index) || hs_span_index_init(&rg.freed) ? -1 : 0; }

void hs_regions_after_fork(void)
{
    pthread_mutex_init(&rg.lock, NULL);
    hs_span_index_after_fork(&rg.index);
    hs_span_index_after_fork(&rg.freed);
}

static void set_name(named **table, uint64_t id, const char *name)
{
    named *n = NULL;
    HASH_FIND(hh, *table, &id, sizeof id, n);
    char *copy = strdup(name ? name : "");
    if (!copy)
        return;
    if (!n && (n = calloc(1, sizeof *n))) {
        n->id = id;
        HASH_ADD(hh, *table, id, sizeof n->id, n);
    }
    if (n) {
        free(n->name);
        n->name = copy;
    } else {
        free(copy);
    }
}

static void drop_name(named **table, uint64_t id)
{
    named *n = NULL;
    HASH_FIND(hh, *table, &id, sizeof id, n);
    if (n) {
        HASH_DEL(*table, n);
        free(n->name);
        free(n);
    }
}

static const char *get_name(named *table, uint64_t id, char *buf, size_t len)
{
    named *n = NULL;
    HASH_FIND(hh, table, &id, sizeof id, n);
    if (!n)
        return NULL;
    snprintf(buf, len, "%s", n->name);
    return buf;
}

/* ---- writers, under rg.lock ---- */

static void recount(void)
{
    atomic_store(&regions_count, (unsigned)(hs_span_count(&rg.index) + hs_span_count(&rg.freed)));
}

/* Removes every span of ix that overlaps [lo, hi), with its name. */
static void remove_overlapping(hs_span_index *ix, uintptr_t lo, uintptr_t hi)
{
    for (;;) {
        hs_span below, above;
        bool has_below = false, has_above = false;
        hs_span_neighbours(ix, hi - 1, &below, &has_below, &above, &has_above);
        if (!has_below || below.base + below.size <= lo)
            return;
        hs_span_lock(ix);
        bool removed = hs_span_remove_locked(ix, below.base, below.id, NULL);
        hs_span_unlock(ix);
        if (!removed)
            return;
        drop_name(&rg.regions, below.id);
        if (below.base <= lo)
            return; /* the highest base below hi, and spans are disjoint: none other overlaps */
    }
}

static uint64_t add_locked(uintptr_t base, size_t size, uint64_t owner, const char *name)
{
    if (!size || base + size < base)
        return 0;
    if (hs_span_count(&rg.freed))
        remove_overlapping(&rg.freed, base, base + size); /* handed out again: the old pointer is live */
    remove_overlapping(&rg.index, base, base + size);
    hs_span s = {.base = base, .size = size, .id = ++rg.next_id, .owner = owner, .time_ns = hs_now_ns()};
    set_name(&rg.regions, s.id, name);
    hs_span_lock(&rg.index);
    int rc = hs_span_insert_locked(&rg.index, &s, NULL);
    hs_span_unlock(&rg.index);
    if (rc != 0)
        drop_name(&rg.regions, s.id);
    recount();
    return rc == 0 ? s.id : 0;
}

/* Replaces the live span at base with *s (same base). */
static bool replace_live(const hs_span *s)
{
    hs_span_lock(&rg.index);
    bool ok = hs_span_remove_locked(&rg.index, s->base, s->id, NULL) && hs_span_insert_locked(&rg.index, s, NULL) == 0;
    hs_span_unlock(&rg.index);
    return ok;
}

static void evict_oldest(void)
{
    hs_span gone;
    hs_span_lock(&rg.freed);
    bool removed = hs_span_remove_locked(&rg.freed, rg.fifo[rg.fifo_head].base, rg.fifo[rg.fifo_head].id, &gone);
    hs_span_unlock(&rg.freed);
    if (removed) /* else superseded by a region registered over it */
        drop_name(&rg.regions, gone.id);
    rg.fifo_head = (rg.fifo_head + 1) % QUARANTINE_MAX_RECORDS;
    rg.fifo_len--;
}

static void quarantine(const hs_span *s)
{
    if (!rg.fifo && !(rg.fifo = calloc(QUARANTINE_MAX_RECORDS, sizeof *rg.fifo))) {
        drop_name(&rg.regions, s->id); /* forgetting a freed region only weakens a later report */
        return;
    }
    if (rg.fifo_len == QUARANTINE_MAX_RECORDS)
        evict_oldest();
    hs_span_lock(&rg.freed);
    int rc = hs_span_insert_locked(&rg.freed, s, NULL);
    hs_span_unlock(&rg.freed);
    if (rc != 0) {
        drop_name(&rg.regions, s->id);
        return;
    }
    rg.fifo[(rg.fifo_head + rg.fifo_len) % QUARANTINE_MAX_RECORDS].base = s->base;
    rg.fifo[(rg.fifo_head + rg.fifo_len) % QUARANTINE_MAX_RECORDS].id = s->id;
    rg.fifo_len++;
}

static bool free_locked(uintptr_t base, hs_region_end why, bool to_quarantine, uint32_t stack, uint32_t thread,
                        uint64_t now)
{
    hs_span s;
    hs_span_lock(&rg.index);
    bool found = hs_span_remove_locked(&rg.index, base, 0, &s);
    hs_span_unlock(&rg.index);
    if (!found)
        return false;
    if (to_quarantine) {
        s.end_time_ns = now;
        s.end_stack = stack;
        s.end_thread = thread;
        s.api = why;
        quarantine(&s);
    } else {
        drop_name(&rg.regions, s.id);
    }
    return true;
}

/* ---- the public API's regions ---- */

int hs_region_register(uintptr_t base, size_t size, const char *name)
{
    pthread_mutex_lock(&rg.lock);
    uint64_t id = add_locked(base, size, 0, name);
    pthread_mutex_unlock(&rg.lock);
    return id ? 0 : -1;
}

bool hs_region_unregister(uintptr_t base)
{
    pthread_mutex_lock(&rg.lock);
    bool found = free_locked(base, 0, false, 0, 0, 0);
    recount();
    pthread_mutex_unlock(&rg.lock);
    return found;
}

/* ---- NVTX's regions ---- */

uint64_t hs_region_add(uintptr_t base, size_t size, uint64_t owner, const char *name)
{
    pthread_mutex_lock(&rg.lock);
    uint64_t id = add_locked(base, size, owner, name);
    pthread_mutex_unlock(&rg.lock);
    return id;
}

bool hs_region_at(uintptr_t base, hs_span *out) { return hs_span_find_exact(&rg.index, base, out); }

bool hs_region_resize(uintptr_t base, size_t size)
{
    pthread_mutex_lock(&rg.lock);
    hs_span s, next, below;
    bool has_next = false, has_below = false, ok = false;
    if (size && base + size > base && hs_span_find_exact(&rg.index, base, &s)) {
        hs_span_neighbours(&rg.index, base, &below, &has_below, &next, &has_next);
        if (!has_next || base + size <= next.base) {
            if (size > s.size && hs_span_count(&rg.freed))
                remove_overlapping(&rg.freed, base + s.size, base + size);
            s.size = size;
            ok = replace_live(&s);
        }
    }
    recount();
    pthread_mutex_unlock(&rg.lock);
    return ok;
}

bool hs_region_rename(uintptr_t base, const char *name)
{
    hs_span s;
    pthread_mutex_lock(&rg.lock);
    bool found = hs_span_find_exact(&rg.index, base, &s);
    if (found)
        set_name(&rg.regions, s.id, name);
    pthread_mutex_unlock(&rg.lock);
    return found;
}

bool hs_region_set_access(uintptr_t base, uint32_t access, bool reset)
{
    hs_span s;
    pthread_mutex_lock(&rg.lock);
    bool ok = hs_span_find_exact(&rg.index, base, &s);
    if (ok) {
        s.kind = reset ? 0 : HS_REGION_ACCESS_SET | (access & HS_REGION_RW);
        ok = replace_live(&s);
    }
    pthread_mutex_unlock(&rg.lock);
    return ok;
}

static void collect(const hs_span *s, void *arg)
{
    struct {
        hs_span *v;
        size_t n, cap;
        uint64_t owner;
        bool all;
    } *c = arg;
    if (!c->all && s->owner != c->owner)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        hs_span *grown = realloc(c->v, cap * sizeof *grown);
        if (!grown)
            return;
        c->v = grown;
        c->cap = cap;
    }
    c->v[c->n++] = *s;
}

void hs_region_reset_access(void)
{
    pthread_mutex_lock(&rg.lock);
    struct {
        hs_span *v;
        size_t n, cap;
        uint64_t owner;
        bool all;
    } c = {.all = true};
    hs_span_lock(&rg.index);
    hs_span_foreach_locked(&rg.index, collect, &c);
    hs_span_unlock(&rg.index);
    for (size_t i = 0; i < c.n; i++)
        if (c.v[i].kind) {
            c.v[i].kind = 0;
            replace_live(&c.v[i]);
        }
    free(c.v);
    pthread_mutex_unlock(&rg.lock);
}

bool hs_region_free(uintptr_t base, hs_region_end why, bool to_quarantine, uint32_t stack, uint32_t thread)
{
    pthread_mutex_lock(&rg.lock);
    bool found = free_locked(base, why, to_quarantine, stack, thread, hs_now_ns());
    recount();
    pthread_mutex_unlock(&rg.lock);
    return found;
}

size_t hs_region_free_heap(uint64_t owner, uintptr_t lo, uintptr_t hi, hs_region_end why, bool to_quarantine,
                           uint32_t stack, uint32_t thread)
{
    pthread_mutex_lock(&rg.lock);
    struct {
        hs_span *v;
        size_t n, cap;
        uint64_t owner;
        bool all;
    } c = {.owner = owner};
    hs_span_lock(&rg.index);
    hs_span_foreach_locked(&rg.index, collect, &c);
    hs_span_unlock(&rg.index);
    size_t freed = 0;
    uint64_t now = hs_now_ns();
    for (size_t i = 0; i < c.n; i++)
        if (c.v[i].base >= lo && c.v[i].base < hi)
            freed += free_locked(c.v[i].base, why, to_quarantine, stack, thread, now);
    free(c.v);
    recount();
    pthread_mutex_unlock(&rg.lock);
    return freed;
}

/* ---- readers ---- */

bool hs_regions_any(void) { return atomic_load_explicit(&regions_count, memory_order_relaxed) != 0; }

hs_region_state hs_region_lookup(uintptr_t addr, uint64_t born_ns, hs_span *out)
{
    if (hs_span_find(&rg.index, addr, out) && out->time_ns >= born_ns)
        return HS_REGION_LIVE;
    if (hs_span_count(&rg.freed) && hs_span_find(&rg.freed, addr, out) && out->time_ns >= born_ns)
        return HS_REGION_FREED;
    return HS_REGION_NONE;
}

const char *hs_region_name(uint64_t id, char *buf, size_t len)
{
    pthread_mutex_lock(&rg.lock);
    const char *n = get_name(rg.regions, id, buf, len);
    pthread_mutex_unlock(&rg.lock);
    return n ? n : "?";
}

void hs_alloc_set_name(uint64_t alloc_id, const char *name)
{
    pthread_mutex_lock(&rg.lock);
    set_name(&rg.allocs, alloc_id, name);
    pthread_mutex_unlock(&rg.lock);
}

const char *hs_alloc_name(uint64_t alloc_id, char *buf, size_t len)
{
    pthread_mutex_lock(&rg.lock);
    const char *n = get_name(rg.allocs, alloc_id, buf, len);
    pthread_mutex_unlock(&rg.lock);
    return n;
}
