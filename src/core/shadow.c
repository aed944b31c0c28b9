#include "shadow.h"

#include <stdlib.h>
#include <uthash.h>

/* Writer-side record of a live allocation, found by exact base through uthash. */
typedef struct live_record {
    uintptr_t base;
    hs_span span;
    UT_hash_handle hh;
} live_record;

/* Quarantine order: oldest first, so eviction is FIFO like ASan's. */
typedef struct quarantined {
    uintptr_t base;
    uint64_t id;
    size_t size;
} quarantined;

enum { QUARANTINE_MAX_RECORDS = 16384 };

static struct {
    hs_span_index live;
    hs_span_index freed;
    pthread_mutex_t lock; /* orders every change of live + freed + records */
    live_record *records;
    quarantined fifo[QUARANTINE_MAX_RECORDS];
    size_t fifo_head, fifo_len;
    uint64_t quarantine_bytes_max, quarantine_bytes;
    uint64_t live_bytes;
    uint64_t next_id;
} sh = {.lock = PTHREAD_MUTEX_INITIALIZER};

int hs_shadow_init(uint64_t quarantine_bytes)
{
    sh.quarantine_bytes_max = quarantine_bytes;
    if (hs_span_index_init(&sh.live) || hs_span_index_init(&sh.freed))
        return -1;
    return 0;
}

void hs_shadow_after_fork(void)
{
    pthread_mutex_init(&sh.lock, NULL);
    hs_span_index_after_fork(&sh.live);
    hs_span_index_after_fork(&sh.freed);
}

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
    if (hs_span_remove_locked(&sh.freed, q->base, q->id, &gone))
        sh.quarantine_bytes -= gone.size;
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
    hs_span_lock(&sh.freed);
    int rc = hs_span_insert_locked(&sh.freed, s, &superseded);
    hs_span_unlock(&sh.freed);
    sh.quarantine_bytes -= superseded;
    if (rc != 0)
        return; /* forgetting a freed allocation only weakens a later report */
    size_t tail = (sh.fifo_head + sh.fifo_len) % QUARANTINE_MAX_RECORDS;
    sh.fifo[tail] = (quarantined){s->base, s->id, s->size};
    sh.fifo_len++;
    sh.quarantine_bytes += s->size;
}

/* Under sh.lock: r becomes live in both the ordered index and the uthash by base. */
static int make_live_locked(live_record *r)
{
    hs_span_lock(&sh.live);
    int rc = hs_span_insert_locked(&sh.live, &r->span, NULL);
    hs_span_unlock(&sh.live);
    if (rc == 0) {
        HASH_ADD(hh, sh.records, base, sizeof r->base, r);
        sh.live_bytes += r->span.size;
    } else {
        free(r);
    }
    return rc;
}

int hs_shadow_add(hs_span *s)
{
    live_record *r = malloc(sizeof *r);
    if (!r)
        return -1;
    pthread_mutex_lock(&sh.lock);
    s->id = ++sh.next_id;
    r->base = s->base;
    r->span = *s;
    live_record *stale = NULL;
    HASH_FIND(hh, sh.records, &r->base, sizeof r->base, stale);
    if (stale) { /* the runtime reused a base we never saw freed (unwrapped free path) */
        HASH_DEL(sh.records, stale);
        sh.live_bytes -= stale->span.size;
        free(stale);
    }
    int rc = make_live_locked(r);
    pthread_mutex_unlock(&sh.lock);
    return rc;
}

hs_release_result hs_shadow_release(uintptr_t base, uint32_t free_stack, uint32_t thread,
                                    uint64_t now_ns, hs_span *span)
{
    hs_release_result result;
    pthread_mutex_lock(&sh.lock);
    live_record *r = NULL;
    HASH_FIND(hh, sh.records, &base, sizeof base, r);
    if (r) {
        HASH_DEL(sh.records, r);
        hs_span_lock(&sh.live);
        hs_span_remove_locked(&sh.live, base, 0, NULL);
        hs_span_unlock(&sh.live);
        sh.live_bytes -= r->span.size;
        r->span.end_stack = free_stack;
        r->span.end_thread = thread;
        r->span.end_time_ns = now_ns;
        *span = r->span;
        quarantine_locked(&r->span);
        free(r);
        result = HS_RELEASED;
    } else if (hs_span_find(&sh.live, base, span)) {
        result = HS_RELEASE_INTERIOR;
    } else if (hs_span_find(&sh.freed, base, span)) {
        result = HS_RELEASE_TWICE;
    } else {
        result = HS_RELEASE_UNKNOWN;
    }
    pthread_mutex_unlock(&sh.lock);
    return result;
}

void hs_shadow_release_owned(uint64_t owner, uint32_t free_stack, uint32_t thread, uint64_t now_ns)
{
    if (!owner)
        return;
    for (;;) {
        uintptr_t base = 0;
        pthread_mutex_lock(&sh.lock);
        for (live_record *r = sh.records; r; r = r->hh.next)
            if (r->span.owner == owner) {
                base = r->base;
                break;
            }
        pthread_mutex_unlock(&sh.lock);
        hs_span gone;
        if (!base || hs_shadow_release(base, free_stack, thread, now_ns, &gone) != HS_RELEASED)
            return;
    }
}

void hs_shadow_restore(const hs_span *s)
{
    live_record *r = malloc(sizeof *r);
    if (!r)
        return;
    pthread_mutex_lock(&sh.lock);
    hs_span_lock(&sh.freed);
    if (hs_span_remove_locked(&sh.freed, s->base, s->id, NULL))
        sh.quarantine_bytes -= s->size;
    hs_span_unlock(&sh.freed);
    r->base = s->base;
    r->span = *s;
    r->span.end_stack = 0;
    r->span.end_time_ns = 0;
    make_live_locked(r);
    pthread_mutex_unlock(&sh.lock);
}

hs_where hs_shadow_lookup(uintptr_t addr, hs_span *span)
{
    if (hs_span_find(&sh.live, addr, span))
        return HS_WHERE_LIVE;
    if (hs_span_count(&sh.freed) && hs_span_find(&sh.freed, addr, span))
        return HS_WHERE_FREED;
    return HS_WHERE_NONE;
}

void hs_shadow_nearest(uintptr_t addr, hs_span *below, bool *has_below, hs_span *above, bool *has_above)
{
    hs_span_neighbours(&sh.live, addr, below, has_below, above, has_above);
}

void hs_shadow_foreach_live(void (*fn)(const hs_span *, void *), void *arg)
{
    pthread_mutex_lock(&sh.lock);
    hs_span_lock(&sh.live);
    hs_span_foreach_locked(&sh.live, fn, arg);
    hs_span_unlock(&sh.live);
    pthread_mutex_unlock(&sh.lock);
}

uint64_t hs_shadow_live_bytes(void) { return sh.live_bytes; }
