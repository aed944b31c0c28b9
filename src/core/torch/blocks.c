/* PyTorch caching-allocator blocks (see blocks.h). */
#define _GNU_SOURCE
#include "torch/blocks.h"
#include "shadow/span_index.h"
#include "shadow/shadow.h"
#include "streams/access.h"
#include "process/util.h"
#include "process/own_fd.h"

#include <fcntl.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* Quarantined blocks remembered at most (FIFO, like the shadow map's quarantine); their bytes
 * are bounded by quarantine= as well. */
enum { QUARANTINE_MAX_RECORDS = 65536 };

/* What the span does not hold, per block: found by id (reports) and, while the block is live,
 * by its base (the allocator names blocks by address), so a free costs no index search. */
typedef struct info_rec {
    uint64_t id;    /* key of hh */
    uintptr_t base; /* key of by_base, while live */
    hs_block_info info;
    uint32_t free_stack, free_thread; /* who requested the free (shown once it completes) */
    uint32_t alloc_context;           /* the allocator's context number at the allocation */
    bool live;
    UT_hash_handle hh, by_base;
    struct info_rec *next_free;
} info_rec;

typedef struct quarantined {
    uintptr_t base;
    uint64_t id;
    size_t size;
} quarantined;

static struct {
    pthread_mutex_t lock; /* every change; lookups take none */
    bool ready;           /* the indexes are mapped */
    atomic_bool any;      /* readers: an event was seen, the indexes are ready */
    hs_span_index live, freed;
    uint64_t next_id;
    uint64_t quarantine_max, quarantine_bytes;
    quarantined *fifo;
    size_t fifo_head, fifo_len;
    info_rec *infos, *live_infos, *spare;
    hs_block_segment *segs;
    size_t n_segs, cap_segs;
    hs_blocks_stats stats;
    FILE *trace;
} bk = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *const action_names[HIPSHADOW_BLOCK_ACTION_COUNT] = {
    "alloc",       "free_requested", "free_completed", "segment_alloc", "segment_free",
    "segment_map", "segment_unmap",  "snapshot",       "oom",
};

const char *hs_block_action_name(uint32_t action)
{
    return action < HIPSHADOW_BLOCK_ACTION_COUNT ? action_names[action] : "?";
}

void hs_blocks_init(uint64_t quarantine_bytes) { bk.quarantine_max = quarantine_bytes; }

void hs_blocks_after_fork(void)
{
    pthread_mutex_init(&bk.lock, NULL);
    if (bk.ready) {
        hs_span_index_after_fork(&bk.live);
        hs_span_index_after_fork(&bk.freed);
    }
}

bool hs_blocks_any(void) { return atomic_load_explicit(&bk.any, memory_order_relaxed); }

hs_block_state hs_block_lookup(uintptr_t addr, hs_span *block)
{
    if (!atomic_load_explicit(&bk.any, memory_order_acquire))
        return HS_BLOCK_NONE;
    if (hs_span_find(&bk.live, addr, block))
        return HS_BLOCK_LIVE;
    if (hs_span_count(&bk.freed) && hs_span_find(&bk.freed, addr, block))
        return HS_BLOCK_FREED;
    return HS_BLOCK_NONE;
}

/* ---- the trace's text form ---- */

void hs_block_event_format(const hipshadow_block_event *e, char *buf, size_t len)
{
    snprintf(buf, len, "%s %d 0x%" PRIx64 " %" PRIu64 " 0x%" PRIx64 " %" PRIu64 " %" PRIu64,
             hs_block_action_name(e->action), (int)e->device, e->addr, e->size, e->stream, e->pool[0], e->pool[1]);
}

int hs_block_event_parse(const char *line, hipshadow_block_event *e)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (!*line || *line == '#' || *line == '\n')
        return 0;
    char name[32];
    int device;
    uint64_t addr, size, stream, p0, p1;
    if (sscanf(line, "%31s %d %" SCNx64 " %" SCNu64 " %" SCNx64 " %" SCNu64 " %" SCNu64, name, &device, &addr, &size,
               &stream, &p0, &p1) != 7)
        return -1;
    for (uint32_t a = 0; a < HIPSHADOW_BLOCK_ACTION_COUNT; a++)
        if (!strcmp(name, action_names[a])) {
            *e = (hipshadow_block_event){
                .action = a, .device = device, .addr = addr, .size = size, .stream = stream, .pool = {p0, p1}};
            return 1;
        }
    return -1;
}

void hs_blocks_trace_to(const char *path)
{
    if (!path || !*path)
        return;
    pthread_mutex_lock(&bk.lock);
    if (!bk.trace) {
        bk.trace = hs_own_fd_stream(open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), "w",
                                    "option 'torch_trace'");
        if (bk.trace) {
            setvbuf(bk.trace, NULL, _IOFBF, 1 << 20);
            fprintf(bk.trace, "# hipshadow: PyTorch caching-allocator trace, one event a line:\n"
                              "# action device addr size stream pool0 pool1\n");
        } else {
            hs_say("hipshadow: option 'torch_trace': cannot write '%s'; the trace is not recorded\n", path);
        }
    }
    pthread_mutex_unlock(&bk.lock);
}

void hs_blocks_trace_close(void)
{
    pthread_mutex_lock(&bk.lock);
    if (bk.trace)
        fflush(bk.trace);
    pthread_mutex_unlock(&bk.lock);
}

/* ---- writer side, under bk.lock ---- */

static int setup_locked(void)
{
    if (bk.ready)
        return 0;
    if (hs_span_index_init(&bk.live) || hs_span_index_init(&bk.freed))
        return -1;
    bk.fifo = calloc(QUARANTINE_MAX_RECORDS, sizeof *bk.fifo);
    if (!bk.fifo)
        return -1;
    bk.ready = true;
    atomic_store_explicit(&bk.any, true, memory_order_release);
    return 0;
}

static void info_drop(uint64_t id);

static info_rec *info_new(uint64_t id, uintptr_t base)
{
    info_rec *r = bk.spare;
    if (r) {
        bk.spare = r->next_free;
    } else {
        enum { CHUNK = 1024 };
        info_rec *chunk = calloc(CHUNK, sizeof *chunk); /* never freed: records are reused */
        if (!chunk)
            return NULL;
        for (int i = 1; i < CHUNK; i++) {
            chunk[i].next_free = bk.spare;
            bk.spare = &chunk[i];
        }
        r = &chunk[0];
    }
    memset(r, 0, sizeof *r);
    r->id = id;
    r->base = base;
    r->live = true;
    info_rec *stale = NULL; /* a live block at this base whose free never came: the insert replaces it */
    HASH_FIND(by_base, bk.live_infos, &base, sizeof base, stale);
    if (stale)
        info_drop(stale->id);
    HASH_ADD(hh, bk.infos, id, sizeof r->id, r);
    HASH_ADD(by_base, bk.live_infos, base, sizeof r->base, r);
    return r;
}

static info_rec *info_live_at(uintptr_t base)
{
    info_rec *r = NULL;
    HASH_FIND(by_base, bk.live_infos, &base, sizeof base, r);
    return r;
}

static void info_not_live(info_rec *r)
{
    if (r && r->live) {
        HASH_DELETE(by_base, bk.live_infos, r);
        r->live = false;
    }
}

static info_rec *info_find(uint64_t id)
{
    info_rec *r = NULL;
    HASH_FIND(hh, bk.infos, &id, sizeof id, r);
    return r;
}

static void info_drop(uint64_t id)
{
    info_rec *r = info_find(id);
    if (!r)
        return;
    info_not_live(r);
    HASH_DEL(bk.infos, r);
    r->next_free = bk.spare;
    bk.spare = r;
}

/* Removes every span of ix that overlaps [lo, hi), with its record. */
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
        if (ix == &bk.freed)
            bk.quarantine_bytes -= below.size < bk.quarantine_bytes ? below.size : bk.quarantine_bytes;
        info_drop(below.id);
        if (below.base <= lo)
            return; /* it was the highest base below hi, and spans are disjoint: none other overlaps */
    }
}

static void evict_oldest(void)
{
    quarantined *q = &bk.fifo[bk.fifo_head];
    hs_span gone;
    hs_span_lock(&bk.freed);
    bool removed = hs_span_remove_locked(&bk.freed, q->base, q->id, &gone); /* may have been superseded */
    hs_span_unlock(&bk.freed);
    if (removed) {
        bk.quarantine_bytes -= gone.size < bk.quarantine_bytes ? gone.size : bk.quarantine_bytes;
        info_drop(gone.id);
        bk.stats.evicted++;
    }
    bk.fifo_head = (bk.fifo_head + 1) % QUARANTINE_MAX_RECORDS;
    bk.fifo_len--;
}

static void quarantine(const hs_span *s)
{
    if (bk.quarantine_max == 0 || s->size > bk.quarantine_max) {
        info_drop(s->id);
        return;
    }
    while (bk.fifo_len > 0 &&
           (bk.fifo_len == QUARANTINE_MAX_RECORDS || bk.quarantine_bytes + s->size > bk.quarantine_max))
        evict_oldest();
    /* Nothing quarantined overlaps a block that was live: its allocation cleared the range. */
    hs_span_lock(&bk.freed);
    int rc = hs_span_insert_locked(&bk.freed, s, NULL);
    hs_span_unlock(&bk.freed);
    if (rc != 0) {
        info_drop(s->id); /* forgetting a freed block only weakens a later report */
        return;
    }
    size_t tail = (bk.fifo_head + bk.fifo_len) % QUARANTINE_MAX_RECORDS;
    bk.fifo[tail] = (quarantined){s->base, s->id, s->size};
    bk.fifo_len++;
    bk.quarantine_bytes += s->size;
}

static void on_alloc(const hipshadow_block_event *e, uint32_t stack, uint32_t thread, uint64_t now)
{
    if (!e->size || e->addr + e->size < e->addr)
        return;
    uintptr_t lo = e->addr, hi = e->addr + e->size;
    if (hs_span_count(&bk.freed))
        remove_overlapping(&bk.freed, lo, hi); /* handed out again: the old pointer is live memory */
    hs_span s = {.base = lo,
                 .size = e->size,
                 .id = ++bk.next_id,
                 .time_ns = now,
                 .kind = HS_MEM_DEVICE,
                 .owner = e->stream,
                 .device = e->device < 0 ? 0 : e->device,
                 .stack = stack,
                 .thread = thread};
    info_rec *r = info_new(s.id, lo);
    if (!r)
        return;
    r->info.pool[0] = e->pool[0];
    r->info.pool[1] = e->pool[1];
    r->info.alloc_pystack = e->pystack;
    r->alloc_context = e->context;
    /* A live block overlapping it (one whose free never came) is replaced by the insert. */
    uint64_t replaced = 0;
    hs_span_lock(&bk.live);
    int rc = hs_span_insert_locked(&bk.live, &s, &replaced);
    hs_span_unlock(&bk.live);
    if (rc != 0)
        info_drop(s.id);
    if (replaced)
        bk.stats.unmatched++;
    /* initcheck: a block handed out holds no data of its new owner's, whatever its bytes held
     * before (its segment's written ranges lose it) */
    hs_span seg;
    if (hs_access_initcheck() && hs_shadow_lookup(lo, &seg) == HS_WHERE_LIVE && hi <= seg.base + seg.size)
        hs_access_unwrite(seg.id, lo - seg.base, hi - seg.base);
}

static void on_free_requested(const hipshadow_block_event *e, uint32_t stack, uint32_t thread, uint64_t now)
{
    info_rec *r = info_live_at(e->addr);
    if (!r) {
        bk.stats.unmatched++;
        return;
    }
    r->info.free_requested_ns = now;
    /* PyTorch hands the allocation's context to a free that gathered none: not the free's stack */
    r->info.free_pystack = e->context && e->context == r->alloc_context ? 0 : e->pystack;
    r->free_stack = stack;
    r->free_thread = thread;
}

static void on_free_completed(const hipshadow_block_event *e, uint32_t stack, uint32_t thread, uint64_t now)
{
    info_rec *r = info_live_at(e->addr);
    hs_span s;
    hs_span_lock(&bk.live);
    bool removed = r && hs_span_remove_locked(&bk.live, e->addr, r->id, &s);
    hs_span_unlock(&bk.live);
    if (!removed) {
        bk.stats.unmatched++;
        return;
    }
    info_not_live(r);
    s.end_time_ns = now;
    if (r && r->info.free_requested_ns) {
        s.end_stack = r->free_stack;
        s.end_thread = r->free_thread;
    } else {
        s.end_stack = stack;
        s.end_thread = thread;
        if (r)
            r->info.free_requested_ns = now; /* the context of a completion is not the free's */
    }
    quarantine(&s);
}

/* ---- segments: a sorted array (there are few; changed rarely, read on the cold path) ---- */

static bool same_owner(const hs_block_segment *a, const hs_block_segment *b)
{
    return a->expandable && b->expandable && a->stream == b->stream && a->device == b->device &&
           a->pool[0] == b->pool[0] && a->pool[1] == b->pool[1];
}

static void segments_remove(uintptr_t lo, uintptr_t hi)
{
    size_t n = 0, cap = bk.n_segs * 2 + 1; /* each range may split in two */
    hs_block_segment *out = malloc(cap * sizeof *out);
    if (!out)
        return;
    for (size_t i = 0; i < bk.n_segs; i++) {
        hs_block_segment s = bk.segs[i];
        uintptr_t b = s.base, e = s.base + s.size;
        if (e <= lo || b >= hi) {
            out[n++] = s;
            continue;
        }
        if (b < lo) {
            out[n] = s;
            out[n++].size = lo - b;
        }
        if (e > hi) {
            out[n] = s;
            out[n].base = hi;
            out[n++].size = e - hi;
        }
    }
    free(bk.segs);
    bk.segs = out;
    bk.n_segs = n;
    bk.cap_segs = cap;
}

static void segments_add(const hipshadow_block_event *e, bool expandable)
{
    if (!e->size)
        return;
    segments_remove(e->addr, e->addr + e->size);
    if (bk.n_segs == bk.cap_segs) {
        size_t cap = bk.cap_segs ? bk.cap_segs * 2 : 64;
        hs_block_segment *grown = realloc(bk.segs, cap * sizeof *grown);
        if (!grown)
            return;
        bk.segs = grown;
        bk.cap_segs = cap;
    }
    hs_block_segment s = {.base = e->addr,
                          .size = e->size,
                          .stream = e->stream,
                          .device = e->device,
                          .expandable = expandable,
                          .pool = {e->pool[0], e->pool[1]}};
    size_t at = 0;
    while (at < bk.n_segs && bk.segs[at].base < s.base)
        at++;
    memmove(&bk.segs[at + 1], &bk.segs[at], (bk.n_segs - at) * sizeof s);
    bk.segs[at] = s;
    bk.n_segs++;
    /* an expandable segment grows map by map: adjacent maps of one segment are one range */
    if (at + 1 < bk.n_segs && same_owner(&bk.segs[at], &bk.segs[at + 1]) &&
        bk.segs[at].base + bk.segs[at].size == bk.segs[at + 1].base) {
        bk.segs[at].size += bk.segs[at + 1].size;
        memmove(&bk.segs[at + 1], &bk.segs[at + 2], (bk.n_segs - at - 2) * sizeof s);
        bk.n_segs--;
    }
    if (at > 0 && same_owner(&bk.segs[at - 1], &bk.segs[at]) &&
        bk.segs[at - 1].base + bk.segs[at - 1].size == bk.segs[at].base) {
        bk.segs[at - 1].size += bk.segs[at].size;
        memmove(&bk.segs[at], &bk.segs[at + 1], (bk.n_segs - at - 1) * sizeof s);
        bk.n_segs--;
    }
}

static void drop_range(uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo)
        return;
    remove_overlapping(&bk.live, lo, hi);
    remove_overlapping(&bk.freed, lo, hi);
}

void hs_blocks_event(const hipshadow_block_event *e, uint32_t stack, uint32_t thread, uint64_t now_ns)
{
    pthread_mutex_lock(&bk.lock);
    if (setup_locked() != 0) {
        pthread_mutex_unlock(&bk.lock);
        return;
    }
    if (bk.trace) {
        char line[160];
        hs_block_event_format(e, line, sizeof line);
        fprintf(bk.trace, "%s\n", line);
    }
    if (e->action < HIPSHADOW_BLOCK_ACTION_COUNT)
        bk.stats.events[e->action]++;
    uintptr_t lo = e->addr, hi = e->addr + e->size;
    switch (e->action) {
    case HIPSHADOW_BLOCK_ALLOC: on_alloc(e, stack, thread, now_ns); break;
    case HIPSHADOW_BLOCK_FREE_REQUESTED: on_free_requested(e, stack, thread, now_ns); break;
    case HIPSHADOW_BLOCK_FREE_COMPLETED: on_free_completed(e, stack, thread, now_ns); break;
    case HIPSHADOW_BLOCK_SEGMENT_ALLOC:
    case HIPSHADOW_BLOCK_SEGMENT_MAP:
        drop_range(lo, hi); /* whatever was there before belonged to memory given back since */
        segments_add(e, e->action == HIPSHADOW_BLOCK_SEGMENT_MAP);
        break;
    case HIPSHADOW_BLOCK_SEGMENT_FREE:
    case HIPSHADOW_BLOCK_SEGMENT_UNMAP:
        drop_range(lo, hi);
        segments_remove(lo, hi);
        break;
    default: break;
    }
    pthread_mutex_unlock(&bk.lock);
}

/* ---- cold readers ---- */

bool hs_block_info_of(uint64_t id, hs_block_info *out)
{
    pthread_mutex_lock(&bk.lock);
    info_rec *r = info_find(id);
    if (r)
        *out = r->info;
    pthread_mutex_unlock(&bk.lock);
    return r != NULL;
}

bool hs_block_segment_of(uintptr_t addr, hs_block_segment *out)
{
    bool found = false;
    pthread_mutex_lock(&bk.lock);
    for (size_t i = 0; i < bk.n_segs && !found; i++)
        if (addr >= bk.segs[i].base && addr - bk.segs[i].base < bk.segs[i].size) {
            *out = bk.segs[i];
            found = true;
        }
    pthread_mutex_unlock(&bk.lock);
    return found;
}

void hs_blocks_get_stats(hs_blocks_stats *out)
{
    pthread_mutex_lock(&bk.lock);
    *out = bk.stats;
    out->live = bk.ready ? hs_span_count(&bk.live) : 0;
    out->quarantined = bk.ready ? hs_span_count(&bk.freed) : 0;
    out->segments = bk.n_segs;
    pthread_mutex_unlock(&bk.lock);
}

void hs_blocks_foreach(hs_block_state which, void (*fn)(const hs_span *, void *), void *arg)
{
    pthread_mutex_lock(&bk.lock);
    if (bk.ready) {
        hs_span_index *ix = which == HS_BLOCK_FREED ? &bk.freed : &bk.live;
        hs_span_lock(ix);
        hs_span_foreach_locked(ix, fn, arg);
        hs_span_unlock(ix);
    }
    pthread_mutex_unlock(&bk.lock);
}
