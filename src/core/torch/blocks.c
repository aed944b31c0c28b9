/* PyTorch caching-allocator blocks (see blocks.h). */
#define _GNU_SOURCE
#include "torch/blocks.h"
#include "shadow/span_index.h"
#include "shadow/shadow.h"
#include "streams/access.h"
#include "process/hot_memory.h"
#include "process/util.h"
#include "process/own_fd.h"
#include "process/spin.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Quarantined blocks remembered at most (FIFO, like the shadow map's quarantine); their bytes
 * are bounded by quarantine= as well. */
enum { QUARANTINE_MAX_RECORDS = 65536 };

/* Live and quarantined blocks share one index: an allocator that hands a block out again where
 * it was (its steady state) changes a span in place, and a lookup is one search.  A span is
 * quarantined when its end_time_ns is set; in the index its kind holds its record's slot (every
 * block is device memory: readers get HS_MEM_DEVICE back). */
static bool quarantined_span(const hs_span *s) { return s->end_time_ns != 0; }

/* What the span does not hold, per block, in a slot the span names: found without a search. */
typedef struct block_rec {
    uint64_t id; /* the block's; 0 while the slot is free */
    hs_block_info info;
    uint32_t free_stack, free_thread; /* who requested the free (shown once it completes) */
    uint32_t alloc_context;           /* the allocator's context number at the allocation */
    uint32_t next_free;               /* the free list: slot + 1, 0 ends it */
} block_rec;

enum { REC_CHUNK = 4096, REC_CHUNKS = 4096 }; /* 16M blocks live or quarantined at most */

typedef struct quarantined {
    uintptr_t base;
    uint64_t id;
    uint32_t slot; /* its record: a block handed out again since has another id there */
} quarantined;

typedef struct free_request {
    bool valid;
    uintptr_t addr;
    uint32_t stack, thread, pystack, context;
    uint64_t now;
} free_request;

typedef struct blocks_state {
    /* Every change, the block index's included: its writers are all here, under this lock, so
     * the index's own writer lock is not taken too (a second lock pair at every block event).
     * Lookups take none.  A spin lock (spin.h): events come one at a time, under the allocator's
     * own lock, so only the cold readers ever wait for it. */
    hs_spin lock;
    bool ready; /* the index is mapped */
    hs_span_index blocks;
    uint64_t next_id;
    uint64_t quarantine_max, quarantine_bytes;
    size_t n_live, n_quarantined;
    quarantined *fifo;
    size_t fifo_head, fifo_len;
    uint32_t n_slots, free_slots;
    hs_block_segment *segs;
    size_t n_segs, cap_segs;
    hs_blocks_stats stats;
    FILE *trace;
    /* A free request not applied yet.  Its block stays live until the completion, which mostly
     * comes next (no other stream used the block): the two then take one search of the index.
     * Any other event, and a reader of the records, applies it first (apply_request). */
    free_request request;
    /* Chunks, made as slots are first needed; never freed.  Last: an event reads one of the first
     * entries, on the page of the fields above (32 KiB of entries between them would be a second). */
    block_rec *recs[REC_CHUNKS];
} blocks_state;
/* Until hs_blocks_init moves it among the hot structures (hot_memory.h): an event reads its
 * first fields at every step, on a page the launch path's structures share. */
static blocks_state bk_initial = {.lock = HS_SPIN_INIT};
HS_HOT_DATA static blocks_state *bk = &bk_initial;
/* Readers: an event was seen, the index is ready (read at every launch: with the other such flags). */
HS_HOT_DATA static atomic_bool blocks_any;

static const char *const action_names[HIPSHADOW_BLOCK_ACTION_COUNT] = {
    "alloc",       "free_requested", "free_completed", "segment_alloc", "segment_free",
    "segment_map", "segment_unmap",  "snapshot",       "oom",
};

const char *hs_block_action_name(uint32_t action)
{
    return action < HIPSHADOW_BLOCK_ACTION_COUNT ? action_names[action] : "?";
}

void hs_blocks_init(uint64_t quarantine_bytes)
{
    blocks_state *hot;
    if (bk == &bk_initial && !bk_initial.ready && (hot = hs_hot_memory(sizeof *hot)))
        bk = hot; /* zeroed: its lock free, nothing tracked */
    bk->quarantine_max = quarantine_bytes;
}

void hs_blocks_after_fork(void)
{
    hs_spin_init(&bk->lock);
    if (bk->ready)
        hs_span_index_after_fork(&bk->blocks);
}

bool hs_blocks_any(void) { return atomic_load_explicit(&blocks_any, memory_order_relaxed); }

HS_HOT_PATH hs_block_state hs_block_lookup(uintptr_t addr, hs_span *block)
{
    if (!atomic_load_explicit(&blocks_any, memory_order_acquire) || !hs_span_find(&bk->blocks, addr, block))
        return HS_BLOCK_NONE;
    block->kind = HS_MEM_DEVICE;
    return quarantined_span(block) ? HS_BLOCK_FREED : HS_BLOCK_LIVE;
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
    hs_spin_lock(&bk->lock);
    if (!bk->trace) {
        bk->trace = hs_own_fd_stream(open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), "w",
                                     "option 'torch_trace'");
        if (bk->trace) {
            setvbuf(bk->trace, NULL, _IOFBF, 1 << 20);
            fprintf(bk->trace, "# hipshadow: PyTorch caching-allocator trace, one event a line:\n"
                               "# action device addr size stream pool0 pool1\n");
        } else {
            hs_say("hipshadow: option 'torch_trace': cannot write '%s'; the trace is not recorded\n", path);
        }
    }
    hs_spin_unlock(&bk->lock);
}

void hs_blocks_trace_close(void)
{
    hs_spin_lock(&bk->lock);
    if (bk->trace)
        fflush(bk->trace);
    hs_spin_unlock(&bk->lock);
}

/* ---- writer side, under bk->lock ---- */

static int setup_locked(void)
{
    if (bk->ready)
        return 0;
    if (hs_span_index_init(&bk->blocks))
        return -1;
    /* Touched now, with the model loading, not a page at a time while it runs: a page's first
     * touch is a fault, costly on a virtual machine whose host backs its memory lazily. */
    size_t fifo_bytes = QUARANTINE_MAX_RECORDS * sizeof *bk->fifo;
    void *fifo = hs_hot_memory(fifo_bytes);
    if (fifo)
        memset(fifo, 0, fifo_bytes); /* zero already: the write is the touch */
    else if ((fifo = mmap(NULL, fifo_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
                          0)) == MAP_FAILED)
        return -1;
    bk->fifo = fifo;
    bk->ready = true;
    atomic_store_explicit(&blocks_any, true, memory_order_release);
    return 0;
}

static block_rec *rec_at(uint32_t slot) { return &bk->recs[slot / REC_CHUNK][slot % REC_CHUNK]; }

/* A free slot, its record zeroed; UINT32_MAX when memory ran out. */
HS_HOT static uint32_t rec_take(void)
{
    uint32_t slot;
    if (bk->free_slots) {
        slot = bk->free_slots - 1;
        bk->free_slots = rec_at(slot)->next_free;
    } else {
        if (bk->n_slots == (uint32_t)REC_CHUNK * REC_CHUNKS)
            return UINT32_MAX;
        if (bk->n_slots % REC_CHUNK == 0 && !bk->recs[bk->n_slots / REC_CHUNK] &&
            !(bk->recs[bk->n_slots / REC_CHUNK] = hs_hot_memory(REC_CHUNK * sizeof(block_rec))) &&
            !(bk->recs[bk->n_slots / REC_CHUNK] = calloc(REC_CHUNK, sizeof(block_rec))))
            return UINT32_MAX;
        slot = bk->n_slots++;
    }
    memset(rec_at(slot), 0, sizeof(block_rec));
    return slot;
}

HS_HOT static void rec_give(uint32_t slot)
{
    block_rec *r = rec_at(slot);
    r->id = 0;
    r->next_free = bk->free_slots;
    bk->free_slots = slot + 1;
}

/* The record of an index span (its kind is the slot), or NULL. */
HS_HOT_BLOCK_PATH static block_rec *rec_of(const hs_span *s)
{
    block_rec *r = s->kind < bk->n_slots ? rec_at(s->kind) : NULL;
    return r && r->id == s->id ? r : NULL;
}

/* A span that left the index (removed, or overwritten by a new block): its record and its
 * share of the counts. */
HS_HOT_BLOCK_PATH static void forget(const hs_span *s)
{
    if (quarantined_span(s)) {
        bk->n_quarantined--;
        bk->quarantine_bytes -= s->size < bk->quarantine_bytes ? s->size : bk->quarantine_bytes;
    } else {
        bk->n_live--;
    }
    if (rec_of(s))
        rec_give(s->kind);
}

/* The span whose base is addr, live, with its record; false when there is none. */
HS_HOT_BLOCK_PATH static bool live_at(uintptr_t addr, hs_span *s, block_rec **r)
{
    if (!hs_span_find_exact(&bk->blocks, addr, s) || quarantined_span(s))
        return false;
    *r = rec_of(s);
    return true;
}

/* Removes every block that overlaps [lo, hi); returns how many of them were live. */
static unsigned remove_overlapping(uintptr_t lo, uintptr_t hi)
{
    unsigned live = 0;
    for (;;) {
        hs_span below, above, gone;
        bool has_below = false, has_above = false;
        hs_span_neighbours(&bk->blocks, hi - 1, &below, &has_below, &above, &has_above);
        if (!has_below || below.base + below.size <= lo)
            return live;
        bool removed = hs_span_remove_locked(&bk->blocks, below.base, below.id, &gone);
        if (!removed)
            return live;
        live += !quarantined_span(&gone);
        forget(&gone);
        if (below.base <= lo)
            return live; /* it was the highest base below hi, and spans are disjoint: none other overlaps */
    }
}

HS_HOT static void evict_oldest(void)
{
    quarantined q = bk->fifo[bk->fifo_head];
    bk->fifo_head = (bk->fifo_head + 1) % QUARANTINE_MAX_RECORDS;
    bk->fifo_len--;
    if (q.slot >= bk->n_slots || rec_at(q.slot)->id != q.id)
        return; /* handed out again or forgotten since: nothing of it is left */
    hs_span gone;
    bool removed = hs_span_remove_locked(&bk->blocks, q.base, q.id, &gone);
    if (removed) {
        forget(&gone);
        bk->stats.evicted++;
    }
}

/* A live block whose free completed, ended in place (hs_span_end_locked): quarantined, older
 * ones going to make room, or forgotten when quarantine= keeps too few bytes for it. */
HS_HOT_BLOCK_PATH static void admit(const hs_span *s)
{
    bool keep = bk->quarantine_max != 0 && s->size <= bk->quarantine_max;
    while (keep && bk->fifo_len > 0 &&
           (bk->fifo_len == QUARANTINE_MAX_RECORDS || bk->quarantine_bytes + s->size > bk->quarantine_max))
        evict_oldest();
    bk->n_live--;
    bk->n_quarantined++;
    bk->quarantine_bytes += s->size;
    if (!keep) {
        hs_span gone;
        if (hs_span_remove_locked(&bk->blocks, s->base, s->id, &gone))
            forget(&gone); /* counted as quarantined just above */
        return;
    }
    size_t tail = (bk->fifo_head + bk->fifo_len) % QUARANTINE_MAX_RECORDS;
    bk->fifo[tail] = (quarantined){s->base, s->id, s->kind};
    bk->fifo_len++;
}

HS_HOT_BLOCK_PATH static void on_alloc(const hipshadow_block_event *e, uint32_t stack, uint32_t thread, uint64_t now)
{
    if (!e->size || e->addr + e->size < e->addr)
        return;
    uintptr_t lo = e->addr, hi = e->addr + e->size;
    uint32_t slot = rec_take();
    if (slot == UINT32_MAX)
        return;
    hs_span s = {.base = lo,
                 .size = e->size,
                 .id = ++bk->next_id,
                 .time_ns = now,
                 .kind = slot,
                 .owner = e->stream,
                 .device = e->device < 0 ? 0 : e->device,
                 .stack = stack,
                 .thread = thread};
    block_rec *r = rec_at(slot);
    r->id = s.id;
    r->info.pool[0] = e->pool[0];
    r->info.pool[1] = e->pool[1];
    r->info.alloc_pystack = e->pystack;
    r->alloc_context = e->context;
    /* Handed out again where a block was (quarantined, or live if its free never came), fitting
     * below the next one: the span changes in place.  Otherwise whatever it overlaps goes. */
    hs_span old;
    bool in_place = hs_span_overwrite_locked(&bk->blocks, &s, &old);
    unsigned replaced_live;
    if (in_place) {
        replaced_live = !quarantined_span(&old);
        forget(&old);
    } else {
        replaced_live = remove_overlapping(lo, hi);
        int rc = hs_span_insert_locked(&bk->blocks, &s, NULL);
        if (rc != 0) {
            rec_give(slot);
            return;
        }
    }
    bk->n_live++;
    bk->stats.unmatched += replaced_live; /* live blocks whose free never came */
    /* initcheck: a block handed out holds no data of its new owner's, whatever its bytes held
     * before (its segment's written ranges lose it) */
    hs_span seg;
    if (hs_access_initcheck() && hs_shadow_lookup(lo, &seg) == HS_WHERE_LIVE && hi <= seg.base + seg.size)
        hs_access_unwrite(seg.id, lo - seg.base, hi - seg.base);
}

/* Who let the block go, in its record. */
HS_HOT_BLOCK_PATH static void note_request(block_rec *r, const free_request *q)
{
    r->info.free_requested_ns = q->now;
    /* PyTorch hands the allocation's context to a free that gathered none: not the free's stack */
    r->info.free_pystack = q->context && q->context == r->alloc_context ? 0 : q->pystack;
    r->free_stack = q->stack;
    r->free_thread = q->thread;
}

/* The free request waiting in bk->request, applied to its block's record. */
static void apply_request(void)
{
    if (!bk->request.valid)
        return;
    bk->request.valid = false;
    hs_span s;
    block_rec *r = NULL;
    if (!live_at(bk->request.addr, &s, &r) || !r) {
        bk->stats.unmatched++;
        return;
    }
    note_request(r, &bk->request);
}

HS_HOT_BLOCK_PATH static void on_free_requested(const hipshadow_block_event *e, uint32_t stack, uint32_t thread,
                                                uint64_t now)
{
    bk->request = (free_request){.valid = true,
                                 .addr = e->addr,
                                 .stack = stack,
                                 .thread = thread,
                                 .pystack = e->pystack,
                                 .context = e->context,
                                 .now = now};
}

HS_HOT_BLOCK_PATH static void on_free_completed(const hipshadow_block_event *e, uint32_t stack, uint32_t thread,
                                                uint64_t now)
{
    uint64_t ended_at = now ? now : 1; /* a span with end_time_ns 0 is live */
    hs_span s;
    if (bk->request.valid) { /* the request of this block (hs_blocks_event applied any other) */
        bk->request.valid = false;
        if (!hs_span_end_locked(&bk->blocks, e->addr, ended_at, bk->request.stack, bk->request.thread, &s)) {
            bk->stats.unmatched += 2; /* the request's block was not live either */
            return;
        }
        block_rec *r = rec_of(&s);
        if (r)
            note_request(r, &bk->request);
        admit(&s);
        return;
    }
    block_rec *r = NULL;
    if (!live_at(e->addr, &s, &r)) {
        bk->stats.unmatched++;
        return;
    }
    bool requested = r && r->info.free_requested_ns;
    if (r && !requested)
        r->info.free_requested_ns = now; /* the context of a completion is not the free's */
    if (hs_span_end_locked(&bk->blocks, e->addr, ended_at, requested ? r->free_stack : stack,
                           requested ? r->free_thread : thread, &s))
        admit(&s);
}

/* ---- segments: a sorted array (there are few; changed rarely, read on the cold path) ---- */

static bool same_owner(const hs_block_segment *a, const hs_block_segment *b)
{
    return a->expandable && b->expandable && a->stream == b->stream && a->device == b->device &&
           a->pool[0] == b->pool[0] && a->pool[1] == b->pool[1];
}

static void segments_remove(uintptr_t lo, uintptr_t hi)
{
    size_t n = 0, cap = bk->n_segs * 2 + 1; /* each range may split in two */
    hs_block_segment *out = malloc(cap * sizeof *out);
    if (!out)
        return;
    for (size_t i = 0; i < bk->n_segs; i++) {
        hs_block_segment s = bk->segs[i];
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
    free(bk->segs);
    bk->segs = out;
    bk->n_segs = n;
    bk->cap_segs = cap;
}

static void segments_add(const hipshadow_block_event *e, bool expandable)
{
    if (!e->size)
        return;
    segments_remove(e->addr, e->addr + e->size);
    if (bk->n_segs == bk->cap_segs) {
        size_t cap = bk->cap_segs ? bk->cap_segs * 2 : 64;
        hs_block_segment *grown = realloc(bk->segs, cap * sizeof *grown);
        if (!grown)
            return;
        bk->segs = grown;
        bk->cap_segs = cap;
    }
    hs_block_segment s = {.base = e->addr,
                          .size = e->size,
                          .stream = e->stream,
                          .device = e->device,
                          .expandable = expandable,
                          .pool = {e->pool[0], e->pool[1]}};
    size_t at = 0;
    while (at < bk->n_segs && bk->segs[at].base < s.base)
        at++;
    memmove(&bk->segs[at + 1], &bk->segs[at], (bk->n_segs - at) * sizeof s);
    bk->segs[at] = s;
    bk->n_segs++;
    /* an expandable segment grows map by map: adjacent maps of one segment are one range */
    if (at + 1 < bk->n_segs && same_owner(&bk->segs[at], &bk->segs[at + 1]) &&
        bk->segs[at].base + bk->segs[at].size == bk->segs[at + 1].base) {
        bk->segs[at].size += bk->segs[at + 1].size;
        memmove(&bk->segs[at + 1], &bk->segs[at + 2], (bk->n_segs - at - 2) * sizeof s);
        bk->n_segs--;
    }
    if (at > 0 && same_owner(&bk->segs[at - 1], &bk->segs[at]) &&
        bk->segs[at - 1].base + bk->segs[at - 1].size == bk->segs[at].base) {
        bk->segs[at - 1].size += bk->segs[at].size;
        memmove(&bk->segs[at], &bk->segs[at + 1], (bk->n_segs - at - 1) * sizeof s);
        bk->n_segs--;
    }
}

static void drop_range(uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo)
        return;
    remove_overlapping(lo, hi);
}

/* Segment events, and actions hipshadow does not act on (snapshot, oom). */
static void on_segment_event(const hipshadow_block_event *e)
{
    uintptr_t lo = e->addr, hi = e->addr + e->size;
    switch (e->action) {
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
}

HS_HOT_BLOCK_PATH void hs_blocks_event(const hipshadow_block_event *e, uint32_t stack, uint32_t thread, uint64_t now_ns)
{
    hs_spin_lock(&bk->lock);
    if (setup_locked() != 0) {
        hs_spin_unlock(&bk->lock);
        return;
    }
    if (bk->trace) {
        char line[160];
        hs_block_event_format(e, line, sizeof line);
        fprintf(bk->trace, "%s\n", line);
    }
    if (e->action < HIPSHADOW_BLOCK_ACTION_COUNT)
        bk->stats.events[e->action]++;
    if (bk->request.valid && (e->action != HIPSHADOW_BLOCK_FREE_COMPLETED || e->addr != bk->request.addr))
        apply_request();
    /* The three of every tensor first, by comparison: a switch's jump table is a read of one more
     * page (.rodata) at every event. */
    if (e->action == HIPSHADOW_BLOCK_ALLOC)
        on_alloc(e, stack, thread, now_ns);
    else if (e->action == HIPSHADOW_BLOCK_FREE_REQUESTED)
        on_free_requested(e, stack, thread, now_ns);
    else if (e->action == HIPSHADOW_BLOCK_FREE_COMPLETED)
        on_free_completed(e, stack, thread, now_ns);
    else
        on_segment_event(e);
    hs_spin_unlock(&bk->lock);
}

/* ---- cold readers ---- */

bool hs_block_info_of(const hs_span *block, hs_block_info *out)
{
    hs_spin_lock(&bk->lock);
    apply_request();
    hs_span s;
    const block_rec *r = bk->ready && hs_span_find_exact(&bk->blocks, block->base, &s) && s.id == block->id ? rec_of(&s)
                                                                                                            : NULL;
    if (r)
        *out = r->info;
    hs_spin_unlock(&bk->lock);
    return r != NULL;
}

bool hs_block_segment_of(uintptr_t addr, hs_block_segment *out)
{
    bool found = false;
    hs_spin_lock(&bk->lock);
    for (size_t i = 0; i < bk->n_segs && !found; i++)
        if (addr >= bk->segs[i].base && addr - bk->segs[i].base < bk->segs[i].size) {
            *out = bk->segs[i];
            found = true;
        }
    hs_spin_unlock(&bk->lock);
    return found;
}

void hs_blocks_get_stats(hs_blocks_stats *out)
{
    hs_spin_lock(&bk->lock);
    apply_request();
    *out = bk->stats;
    out->live = bk->n_live;
    out->quarantined = bk->n_quarantined;
    out->segments = bk->n_segs;
    hs_spin_unlock(&bk->lock);
}

typedef struct visit {
    hs_block_state which;
    void (*fn)(const hs_span *, void *);
    void *arg;
} visit;

static void visit_one(const hs_span *s, void *arg)
{
    const visit *v = arg;
    if ((quarantined_span(s) ? HS_BLOCK_FREED : HS_BLOCK_LIVE) != v->which)
        return;
    hs_span copy = *s;
    copy.kind = HS_MEM_DEVICE;
    v->fn(&copy, v->arg);
}

void hs_blocks_foreach(hs_block_state which, void (*fn)(const hs_span *, void *), void *arg)
{
    hs_spin_lock(&bk->lock);
    if (bk->ready) {
        visit v = {which, fn, arg};
        hs_span_foreach_locked(&bk->blocks, visit_one, &v);
    }
    hs_spin_unlock(&bk->lock);
}
