#include "shadow.h"
#include "page_map.h"
#include <stdio.h>
#include <stdlib.h>

/* Quarantine order: oldest first, so eviction is FIFO like ASan's. */
typedef struct quarantined {
    uintptr_t base;
    uint64_t id;
    size_t size;
} quarantined;

enum { QUARANTINE_MAX_RECORDS = 16384 };

static struct {
    hs_page_map live;   /* found by any address inside, or by base, in O(1) */
    hs_page_map freed;
    pthread_mutex_t lock; /* orders every change of live + freed + the FIFO */
    quarantined fifo[QUARANTINE_MAX_RECORDS];
    size_t fifo_head, fifo_len;
    uint64_t quarantine_bytes_max, quarantine_bytes;
    uint64_t live_bytes;
    uint64_t next_id;
    size_t max_live;
    bool cap_warned;
} sh = {.lock = PTHREAD_MUTEX_INITIALIZER};

int hs_shadow_init(uint64_t quarantine_bytes, size_t max_live)
{
    sh.quarantine_bytes_max = quarantine_bytes;
    sh.max_live = max_live;
    if (hs_pm_init(&sh.live) || hs_pm_init(&sh.freed))
        return -1;
    hs_pm_set_cap(&sh.live, max_live);
    return 0;
}

void hs_shadow_after_fork(void)
{
    pthread_mutex_init(&sh.lock, NULL);
    hs_pm_after_fork(&sh.live);
    hs_pm_after_fork(&sh.freed);
}

size_t hs_shadow_bytes(void) { return hs_pm_bytes(&sh.live) + hs_pm_bytes(&sh.freed); }
size_t hs_shadow_live_count(void) { return hs_pm_count(&sh.live); }

const char *hs_mem_kind_name(uint32_t kind)
{
    switch (kind) {
    case HS_MEM_DEVICE: return "device";
    case HS_MEM_MANAGED: return "managed";
    case HS_MEM_PINNED_HOST: return "pinned host";
    case HS_MEM_REGISTERED_HOST: return "registered host";
    case HS_MEM_EXTERNAL_DEVICE: return "device (runtime-known)";
    case HS_MEM_MAPPED: return "mapped device";
    default: return "unknown";
    }
}

bool hs_mem_kind_is_device(uint32_t kind)
{
    return kind == HS_MEM_DEVICE || kind == HS_MEM_MANAGED || kind == HS_MEM_EXTERNAL_DEVICE || kind == HS_MEM_MAPPED;
}

bool hs_mem_kind_is_host(uint32_t kind)
{
    return kind == HS_MEM_PINNED_HOST || kind == HS_MEM_REGISTERED_HOST || kind == HS_MEM_MANAGED;
}

static void evict_oldest(void)
{
    quarantined *q = &sh.fifo[sh.fifo_head];
    hs_span gone;
    /* The span may already have been superseded by a newer free at the same address. */
    hs_pm_lock(&sh.freed);
    if (hs_pm_remove_locked(&sh.freed, q->base, q->id, &gone))
        sh.quarantine_bytes -= gone.size;
    hs_pm_unlock(&sh.freed);
    sh.fifo_head = (sh.fifo_head + 1) % QUARANTINE_MAX_RECORDS;
    sh.fifo_len--;
}

static void quarantine_locked(const hs_span *s)
{
    if (sh.quarantine_bytes_max == 0)
        return;
    while (sh.fifo_len > 0 &&
           (sh.fifo_len == QUARANTINE_MAX_RECORDS || sh.quarantine_bytes + s->size > sh.quarantine_bytes_max))
        evict_oldest();
    if (s->size > sh.quarantine_bytes_max)
        return;
    uint64_t superseded = 0; /* older frees at the same addresses: the newer free replaces them */
    hs_pm_lock(&sh.freed);
    int rc = hs_pm_insert_locked(&sh.freed, s, &superseded);
    hs_pm_unlock(&sh.freed);
    sh.quarantine_bytes -= superseded;
    if (rc != 0)
        return; /* forgetting a freed allocation only weakens a later report */
    size_t tail = (sh.fifo_head + sh.fifo_len) % QUARANTINE_MAX_RECORDS;
    sh.fifo[tail] = (quarantined){s->base, s->id, s->size};
    sh.fifo_len++;
    sh.quarantine_bytes += s->size;
}

/* Under sh.lock.  A span the runtime reused before we saw it freed (an unwrapped free path) is
 * replaced.  At the cap the allocation is not tracked: said once, and copies to it are then
 * judged as the runtime judges them (query_runtime). */
static int make_live_locked(const hs_span *s)
{
    uint64_t replaced = 0;
    hs_pm_lock(&sh.live);
    int rc = hs_pm_insert_locked(&sh.live, s, &replaced);
    hs_pm_unlock(&sh.live);
    sh.live_bytes -= replaced;
    if (rc == 0)
        sh.live_bytes += s->size;
    else if (rc == -2 && !sh.cap_warned) {
        sh.cap_warned = true;
        fprintf(stderr, "hipshadow: WARNING: shadow_max=%zu reached: allocations beyond it are not tracked, and copies "
                        "to them are judged as the runtime judges them (raise shadow_max)\n", sh.max_live);
    }
    return rc == 0 ? 0 : -1;
}

int hs_shadow_add(hs_span *s)
{
    pthread_mutex_lock(&sh.lock);
    s->id = ++sh.next_id;
    int rc = make_live_locked(s);
    pthread_mutex_unlock(&sh.lock);
    return rc;
}

hs_release_result hs_shadow_release(uintptr_t base, uint32_t free_stack, uint32_t thread,
                                    uint64_t now_ns, hs_span *span)
{
    hs_release_result result;
    pthread_mutex_lock(&sh.lock);
    hs_pm_lock(&sh.live);
    bool removed = hs_pm_remove_locked(&sh.live, base, 0, span);
    hs_pm_unlock(&sh.live);
    if (removed) {
        sh.live_bytes -= span->size;
        span->end_stack = free_stack;
        span->end_thread = thread;
        span->end_time_ns = now_ns;
        quarantine_locked(span);
        result = HS_RELEASED;
    } else if (hs_pm_find(&sh.live, base, span)) {
        result = HS_RELEASE_INTERIOR;
    } else if (hs_pm_find(&sh.freed, base, span)) {
        result = HS_RELEASE_TWICE;
    } else {
        result = HS_RELEASE_UNKNOWN;
    }
    pthread_mutex_unlock(&sh.lock);
    return result;
}

typedef struct owned { uint64_t owner; uintptr_t *bases; size_t n, cap; } owned;

static void collect_owned(const hs_span *s, void *arg)
{
    owned *o = arg;
    if (s->owner != o->owner)
        return;
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        uintptr_t *grown = realloc(o->bases, cap * sizeof *grown);
        if (!grown)
            return; /* cold path; those left stay live, as if the pool still held them */
        o->bases = grown;
        o->cap = cap;
    }
    o->bases[o->n++] = s->base;
}

void hs_shadow_release_owned(uint64_t owner, uint32_t free_stack, uint32_t thread, uint64_t now_ns)
{
    if (!owner)
        return;
    owned o = {.owner = owner};
    hs_shadow_foreach_live(collect_owned, &o); /* one walk, then a release each */
    for (size_t i = 0; i < o.n; i++) {
        hs_span gone;
        hs_shadow_release(o.bases[i], free_stack, thread, now_ns, &gone);
    }
    free(o.bases);
}

void hs_shadow_restore(const hs_span *s)
{
    pthread_mutex_lock(&sh.lock);
    hs_pm_lock(&sh.freed);
    if (hs_pm_remove_locked(&sh.freed, s->base, s->id, NULL))
        sh.quarantine_bytes -= s->size;
    hs_pm_unlock(&sh.freed);
    hs_span back = *s;
    back.end_stack = 0;
    back.end_time_ns = 0;
    make_live_locked(&back);
    pthread_mutex_unlock(&sh.lock);
}

hs_where hs_shadow_lookup(uintptr_t addr, hs_span *span)
{
    if (hs_pm_find(&sh.live, addr, span))
        return HS_WHERE_LIVE;
    if (hs_pm_count(&sh.freed) && hs_pm_find(&sh.freed, addr, span))
        return HS_WHERE_FREED;
    return HS_WHERE_NONE;
}

void hs_shadow_nearest(uintptr_t addr, hs_span *below, bool *has_below, hs_span *above, bool *has_above)
{
    hs_pm_neighbours(&sh.live, addr, below, has_below, above, has_above);
}

void hs_shadow_foreach_live(void (*fn)(const hs_span *, void *), void *arg)
{
    pthread_mutex_lock(&sh.lock);
    hs_pm_lock(&sh.live);
    hs_pm_foreach_locked(&sh.live, fn, arg);
    hs_pm_unlock(&sh.live);
    pthread_mutex_unlock(&sh.lock);
}

uint64_t hs_shadow_live_bytes(void) { return sh.live_bytes; }
