#include "shadow/shadow.h"
#include "shadow/page_map.h"
#include "process/util.h"

#include <stdio.h>
#include <stdlib.h>

/* Live and freed allocations share one map: a free marks the allocation's record freed in place
 * (FREED in its kind), so a free touches the cache lines the lookup just brought in, and one
 * lookup says live, freed or neither.  A new allocation over freed memory takes its place; a
 * freed span that reaches past the new one moves to a second map (superseded), so the old
 * pointer's use beyond the new allocation is still a use after free.  A newer free over freed
 * memory replaces what it overlaps. */
#define FREED 0x80000000u

/* Quarantine order: oldest first, so eviction is FIFO like ASan's. */
typedef struct quarantined {
    uintptr_t base;
    uint64_t id;
} quarantined;

enum { QUARANTINE_MAX_RECORDS = 16384 };

/* Found by any address inside, or by base, in O(1).  Every copy and launch reads its head: with
 * the other flags they read (one page, HS_HOT_DATA), not at the head of the quarantine below. */
HS_HOT_DATA static hs_page_map map;

static struct {
    hs_page_map superseded; /* freed spans a newer allocation covers in part (rare) */
    pthread_mutex_t lock;   /* orders every change of the map and the FIFO */
    quarantined fifo[QUARANTINE_MAX_RECORDS];
    size_t fifo_head, fifo_len;
    uint64_t quarantine_bytes_max, quarantine_bytes;
    size_t quarantined; /* freed spans in the map */
    uint64_t live_bytes;
    uint64_t next_id;
    size_t max_live;
    bool cap_warned;
} sh = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* What the map keeps next to each span for hs_shadow_brief: its kind, and whether it is freed
 * (0: a kind the brief does not speak of). */
enum { TAG_FREED = 0x80, TAG_KIND = 0x7f };
static uint8_t tag_of(const hs_span *s)
{
    uint32_t kind = s->kind & ~FREED;
    return kind < TAG_KIND ? (uint8_t)(kind | (s->kind & FREED ? TAG_FREED : 0)) : 0;
}

int hs_shadow_init(uint64_t quarantine_bytes, size_t max_live)
{
    sh.quarantine_bytes_max = quarantine_bytes;
    sh.max_live = max_live;
    if (hs_pm_init_hot(&map) || hs_pm_init(&sh.superseded))
        return -1;
    hs_pm_set_tag(&map, tag_of);
    hs_pm_set_cap(&map, max_live ? max_live + QUARANTINE_MAX_RECORDS : 0);
    return 0;
}

void hs_shadow_after_fork(void)
{
    pthread_mutex_init(&sh.lock, NULL);
    hs_pm_after_fork(&map);
    hs_pm_after_fork(&sh.superseded);
}

uint64_t hs_shadow_version(void) { return (uint64_t)hs_pm_version(&sh.superseded) << 32 | hs_pm_version(&map); }

size_t hs_shadow_live_count(void) { return hs_pm_count(&map) + hs_pm_count(&sh.superseded) - sh.quarantined; }

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

/* Under sh.lock: a span the map dropped (replaced by a newer one over it, or evicted). */
static void forget(const hs_span *old, void *arg)
{
    (void)arg;
    if (old->kind & FREED) {
        sh.quarantine_bytes -= old->size;
        sh.quarantined--;
    } else { /* the runtime reused a base we never saw freed (an unwrapped free path) */
        sh.live_bytes -= old->size;
    }
}

/* Under sh.lock: a span a new allocation (*arg) replaces.  A freed one reaching past it moves
 * to the superseded map. */
static void replaced_by_allocation(const hs_span *old, void *arg)
{
    const hs_span *now = arg;
    if ((old->kind & FREED) && (old->base < now->base || old->base + old->size > now->base + now->size)) {
        hs_pm_lock(&sh.superseded);
        int rc = hs_pm_insert_locked(&sh.superseded, old, forget, NULL);
        hs_pm_unlock(&sh.superseded);
        if (rc == 0)
            return;
    }
    forget(old, NULL);
}

/* Under sh.lock: the oldest quarantined span leaves the map, unless it is gone already (a newer
 * allocation replaced it) or came back to life (hs_shadow_restore). */
static void evict_oldest(void)
{
    quarantined *q = &sh.fifo[sh.fifo_head];
    hs_span s;
    uint32_t ref = hs_pm_find_ref(&map, q->base, true, &s);
    if (ref && s.id == q->id && (s.kind & FREED)) {
        hs_pm_lock(&map);
        hs_pm_remove_ref_locked(&map, ref, &s);
        hs_pm_unlock(&map);
        forget(&s, NULL);
    } else if (hs_pm_count(&sh.superseded) && hs_pm_find_exact(&sh.superseded, q->base, &s) && s.id == q->id) {
        hs_pm_lock(&sh.superseded);
        hs_pm_remove_locked(&sh.superseded, q->base, q->id, NULL);
        hs_pm_unlock(&sh.superseded);
        forget(&s, NULL);
    }
    sh.fifo_head = (sh.fifo_head + 1) % QUARANTINE_MAX_RECORDS;
    sh.fifo_len--;
}

/* Under sh.lock: the oldest EVICT_BATCH quarantined spans leave the map together.  Each eviction
 * alone waits for three cache misses in a row (slot, bucket, record) in a big map; looked up as a
 * batch, their misses overlap.  The quarantine then holds a few records fewer for a while. */
enum { EVICT_BATCH = 32 };
static void evict_batch(void)
{
    uintptr_t bases[EVICT_BATCH];
    size_t n = sh.fifo_len < EVICT_BATCH ? sh.fifo_len : EVICT_BATCH;
    for (size_t i = 0; i < n; i++)
        bases[i] = sh.fifo[(sh.fifo_head + i) % QUARANTINE_MAX_RECORDS].base;
    hs_pm_prefetch(&map, bases, n);
    for (size_t i = 0; i < n; i++)
        evict_oldest();
}

/* Under sh.lock: the allocation *s (live in the map, its record ref) is freed: kept as freed, or
 * dropped.  Evictions remove other records only (freed ones), so ref still names *s after them. */
static void quarantine_locked(hs_span *s, uint32_t ref)
{
    bool keep = sh.quarantine_bytes_max && s->size <= sh.quarantine_bytes_max;
    if (keep && sh.fifo_len == QUARANTINE_MAX_RECORDS)
        evict_batch();
    while (keep && sh.fifo_len > 0 && sh.quarantine_bytes + s->size > sh.quarantine_bytes_max)
        evict_oldest(); /* by bytes: one at a time, so a quarantine of a few large spans keeps them */
    hs_span freed = *s;
    freed.kind |= FREED;
    hs_pm_lock(&map);
    if (keep)
        hs_pm_rewrite_ref_locked(&map, ref, s, &freed);
    else
        hs_pm_remove_ref_locked(&map, ref, s);
    hs_pm_unlock(&map);
    if (!keep)
        return;
    size_t tail = (sh.fifo_head + sh.fifo_len) % QUARANTINE_MAX_RECORDS;
    sh.fifo[tail] = (quarantined){s->base, s->id};
    sh.fifo_len++;
    sh.quarantine_bytes += s->size;
    sh.quarantined++;
}

/* Under sh.lock.  At the cap the allocation is not tracked: said once, and copies to it are then
 * judged as the runtime judges them (query_runtime). */
HS_HOT_DATA atomic_uintptr_t hs_shadow_floor = UINTPTR_MAX;
HS_HOT_DATA atomic_uintptr_t hs_shadow_ceiling = 0;

static int make_live_locked(const hs_span *s)
{
    /* moved before the span is findable: no address of it is ever outside them */
    if (s->base < atomic_load_explicit(&hs_shadow_floor, memory_order_relaxed))
        atomic_store_explicit(&hs_shadow_floor, s->base, memory_order_release);
    uintptr_t end = s->base + (s->size ? s->size : 1) + s->redzone; /* a size-0 span holds its base */
    if (end < s->base)
        end = UINTPTR_MAX;
    if (end > atomic_load_explicit(&hs_shadow_ceiling, memory_order_relaxed))
        atomic_store_explicit(&hs_shadow_ceiling, end, memory_order_release);
    hs_pm_lock(&map);
    int rc = hs_pm_insert_locked(&map, s, replaced_by_allocation, (void *)s);
    hs_pm_unlock(&map);
    if (rc == 0)
        sh.live_bytes += s->size;
    else if (rc == -2 && !sh.cap_warned) {
        sh.cap_warned = true;
        hs_say("hipshadow: WARNING: shadow_max=%zu reached: allocations beyond it are not tracked, and copies "
               "to them are judged as the runtime judges them (raise shadow_max)\n",
               sh.max_live);
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

hs_release_result hs_shadow_release(uintptr_t base, uint32_t free_stack, uint32_t thread, uint64_t now_ns,
                                    hs_span *span)
{
    hs_release_result result = HS_RELEASE_UNKNOWN;
    pthread_mutex_lock(&sh.lock);
    uint32_t ref = hs_pm_find_ref(&map, base, false, span);
    if (ref) {
        if (span->kind & FREED) {
            span->kind &= ~FREED;
            result = HS_RELEASE_TWICE;
        } else if (span->base != base) {
            result = HS_RELEASE_INTERIOR;
        } else {
            sh.live_bytes -= span->size;
            span->end_stack = free_stack;
            span->end_thread = thread;
            span->end_time_ns = now_ns;
            quarantine_locked(span, ref);
            result = HS_RELEASED;
        }
    } else if (hs_pm_count(&sh.superseded) && hs_pm_find(&sh.superseded, base, span)) {
        span->kind &= ~FREED;
        result = HS_RELEASE_TWICE;
    }
    pthread_mutex_unlock(&sh.lock);
    return result;
}

typedef struct owned {
    uint64_t owner;
    uintptr_t *bases;
    size_t n, cap;
} owned;

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
    hs_shadow_foreach_live(collect_owned, &o, -1); /* one walk, then a release each */
    for (size_t i = 0; i < o.n; i++) {
        hs_span gone;
        hs_shadow_release(o.bases[i], free_stack, thread, now_ns, &gone);
    }
    free(o.bases);
}

void hs_shadow_restore(const hs_span *s)
{
    pthread_mutex_lock(&sh.lock);
    hs_span back = *s, in_map;
    back.kind &= ~FREED;
    back.end_stack = 0;
    back.end_time_ns = 0;
    if (hs_pm_find_exact(&map, s->base, &in_map) && in_map.id == s->id && (in_map.kind & FREED)) {
        hs_pm_lock(&map); /* still in quarantine: alive again where it lies (its FIFO entry goes stale) */
        hs_pm_update_locked(&map, &back);
        hs_pm_unlock(&map);
        sh.quarantine_bytes -= s->size;
        sh.quarantined--;
        sh.live_bytes += s->size;
    } else {
        make_live_locked(&back);
    }
    pthread_mutex_unlock(&sh.lock);
}

HS_HOT_PATH hs_where hs_shadow_lookup(uintptr_t addr, hs_span *span)
{
    if (!hs_pm_find(&map, addr, span) &&
        !(HS_UNLIKELY(hs_pm_count(&sh.superseded)) && hs_pm_find(&sh.superseded, addr, span)))
        return HS_WHERE_NONE;
    if (span->kind & FREED) {
        span->kind &= ~FREED;
        return HS_WHERE_FREED;
    }
    return HS_WHERE_LIVE;
}

bool hs_shadow_brief(uintptr_t addr, size_t extent, hs_where *where, uint32_t *kind)
{
    uint8_t tag = 0;
    switch (hs_pm_brief_find(&map, addr, extent, &tag)) {
    case HS_PM_INSIDE:
        if (!(tag & TAG_KIND) || (tag & TAG_FREED))
            return false; /* freed: the full lookup finds what a report needs */
        *where = HS_WHERE_LIVE;
        *kind = tag & TAG_KIND;
        return true;
    case HS_PM_ABSENT:
        if (hs_pm_count(&sh.superseded))
            return false;
        *where = HS_WHERE_NONE;
        return true;
    default: return false;
    }
}

void hs_shadow_nearest(uintptr_t addr, hs_span *below, bool *has_below, hs_span *above, bool *has_above)
{
    hs_pm_neighbours(&map, addr, FREED, below, has_below, above, has_above);
}

typedef struct live_visit {
    void (*fn)(const hs_span *, void *);
    void *arg;
} live_visit;

static void visit_if_live(const hs_span *s, void *arg)
{
    const live_visit *v = arg;
    if (!(s->kind & FREED))
        v->fn(s, v->arg);
}

bool hs_shadow_foreach_live(void (*fn)(const hs_span *, void *), void *arg, int wait_s)
{
    /* At exit: the thread that called exit() may hold these locks itself (exit() from a signal
     * handler that interrupted a wrapped call), so they are waited for a bounded time only. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_s;
    live_visit v = {fn, arg};
    if (wait_s < 0) {
        pthread_mutex_lock(&sh.lock);
        hs_pm_lock(&map);
    } else if (pthread_mutex_timedlock(&sh.lock, &until) != 0) {
        return false;
    } else if (!hs_pm_timedlock(&map, &until)) {
        pthread_mutex_unlock(&sh.lock);
        return false;
    }
    hs_pm_foreach_locked(&map, visit_if_live, &v);
    hs_pm_unlock(&map);
    pthread_mutex_unlock(&sh.lock);
    return true;
}

uint64_t hs_shadow_live_bytes(void) { return sh.live_bytes; }
