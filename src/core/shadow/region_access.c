/* Permissions objects and the access a thread has to a region (see region_access.h). */
#include "shadow/region_access.h"
#include "shadow/span_index.h"
#include "shadow/regions.h"
#include "process/util.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct access_set {
    bool in_use, ready;     /* writers, under the lock */
    atomic_uint generation; /* bumped by destroy: threads bound to the old object are unbound */
    atomic_uint exclude;
    hs_span_index regions; /* base = the region's, id = its id, kind = READ|WRITE */
} access_set;

static struct {
    pthread_mutex_t lock;
    access_set sets[HS_ACCESS_SETS];
} ac = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The calling thread's binding; generation 0 is never a live object's. */
static HS_TLS struct {
    unsigned set, generation, strict;
} bound;

void hs_region_access_after_fork(void)
{
    pthread_mutex_init(&ac.lock, NULL);
    for (unsigned i = 0; i < HS_ACCESS_SETS; i++)
        if (ac.sets[i].ready)
            hs_span_index_after_fork(&ac.sets[i].regions);
}

static access_set *set_of(unsigned set) { return set >= 1 && set <= HS_ACCESS_SETS ? &ac.sets[set - 1] : NULL; }

unsigned hs_access_set_create(uint32_t exclude)
{
    pthread_mutex_lock(&ac.lock);
    unsigned got = 0;
    for (unsigned i = 0; i < HS_ACCESS_SETS && !got; i++) {
        access_set *a = &ac.sets[i];
        if (a->in_use || (!a->ready && hs_span_index_init(&a->regions) != 0))
            continue;
        a->ready = a->in_use = true;
        atomic_store(&a->exclude, exclude & HS_REGION_RW);
        if (!atomic_load(&a->generation))
            atomic_store(&a->generation, 1);
        got = i + 1;
    }
    pthread_mutex_unlock(&ac.lock);
    return got;
}

static void clear(access_set *a)
{
    hs_span_lock(&a->regions);
    hs_span_replace_all_locked(&a->regions, NULL, 0);
    hs_span_unlock(&a->regions);
}

bool hs_access_set_destroy(unsigned set)
{
    access_set *a = set_of(set);
    pthread_mutex_lock(&ac.lock);
    bool ok = a && a->in_use;
    if (ok) {
        atomic_fetch_add(&a->generation, 1);
        clear(a);
        a->in_use = false;
    }
    pthread_mutex_unlock(&ac.lock);
    return ok;
}

bool hs_access_set_reset(unsigned set)
{
    access_set *a = set_of(set);
    pthread_mutex_lock(&ac.lock);
    bool ok = a && a->in_use;
    if (ok)
        clear(a);
    pthread_mutex_unlock(&ac.lock);
    return ok;
}

bool hs_access_set_assign(unsigned set, const hs_span *region, uint32_t access, bool reset)
{
    access_set *a = set_of(set);
    pthread_mutex_lock(&ac.lock);
    bool ok = a && a->in_use;
    if (ok) {
        hs_span e = {.base = region->base, .size = 1, .id = region->id, .kind = access & HS_REGION_RW};
        hs_span_lock(&a->regions);
        hs_span_remove_locked(&a->regions, region->base, 0, NULL);
        if (!reset)
            ok = hs_span_insert_locked(&a->regions, &e, NULL) == 0;
        hs_span_unlock(&a->regions);
    }
    pthread_mutex_unlock(&ac.lock);
    return ok;
}

bool hs_access_bind(unsigned set, uint32_t strict)
{
    access_set *a = set_of(set);
    pthread_mutex_lock(&ac.lock);
    bool ok = a && a->in_use;
    if (ok) {
        bound.set = set;
        bound.generation = atomic_load(&a->generation);
        bound.strict = strict & HS_REGION_RW;
    }
    pthread_mutex_unlock(&ac.lock);
    return ok;
}

void hs_access_unbind(void) { bound.set = 0; }

uint32_t hs_region_access(const hs_span *region)
{
    uint32_t global = region->kind & HS_REGION_ACCESS_SET ? region->kind & HS_REGION_RW : HS_REGION_RW;
    if (HS_LIKELY(!bound.set))
        return global;
    access_set *a = &ac.sets[bound.set - 1];
    if (atomic_load_explicit(&a->generation, memory_order_acquire) != bound.generation)
        return global; /* destroyed since: destroying an object unbinds it */
    hs_span e;
    if (hs_span_find_exact(&a->regions, region->base, &e) && e.id == region->id)
        return e.kind & HS_REGION_RW;
    return global & ~(atomic_load_explicit(&a->exclude, memory_order_relaxed) | bound.strict);
}
