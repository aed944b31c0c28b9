#include "regions.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct named {
    uint64_t id;
    char *name;
    UT_hash_handle hh;
} named;

static struct {
    hs_span_index index;
    pthread_mutex_t lock;
    named *regions, *allocs;   /* id -> name */
    uint64_t next_id;
    atomic_uint count;
} rg = {.lock = PTHREAD_MUTEX_INITIALIZER};

int hs_regions_init(void) { return hs_span_index_init(&rg.index); }

void hs_regions_after_fork(void)
{
    pthread_mutex_init(&rg.lock, NULL);
    hs_span_index_after_fork(&rg.index);
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

static const char *get_name(named *table, uint64_t id, char *buf, size_t len)
{
    named *n = NULL;
    HASH_FIND(hh, table, &id, sizeof id, n);
    if (!n)
        return NULL;
    snprintf(buf, len, "%s", n->name);
    return buf;
}

int hs_region_register(uintptr_t base, size_t size, const char *name)
{
    if (!size)
        return -1;
    pthread_mutex_lock(&rg.lock);
    hs_span s = {.base = base, .size = size, .id = ++rg.next_id};
    set_name(&rg.regions, s.id, name);
    hs_span_lock(&rg.index);
    uint64_t replaced = 0;
    int rc = hs_span_insert_locked(&rg.index, &s, &replaced);
    hs_span_unlock(&rg.index);
    if (rc == 0)
        atomic_store(&rg.count, (unsigned)hs_span_count(&rg.index));
    pthread_mutex_unlock(&rg.lock);
    return rc;
}

bool hs_region_unregister(uintptr_t base)
{
    pthread_mutex_lock(&rg.lock);
    hs_span_lock(&rg.index);
    bool found = hs_span_remove_locked(&rg.index, base, 0, NULL);
    hs_span_unlock(&rg.index);
    atomic_store(&rg.count, (unsigned)hs_span_count(&rg.index));
    pthread_mutex_unlock(&rg.lock);
    return found;
}

bool hs_regions_any(void) { return atomic_load_explicit(&rg.count, memory_order_relaxed) != 0; }
bool hs_region_find(uintptr_t addr, hs_span *out) { return hs_span_find(&rg.index, addr, out); }

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
