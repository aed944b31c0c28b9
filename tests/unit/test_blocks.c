/* PyTorch caching-allocator blocks (src/core/torch/blocks.c): the state machine on hand-made event
 * sequences, then on traces recorded from real PyTorch workloads on a GPU (tests/unit/data,
 * torch_trace=), replayed and compared with a naive model of the same rules; then planted
 * copies into the replayed state, through fact gathering and the rules, must give region-overrun
 * and use-after-free naming the block, and none where the allocator handed the block out again.
 * Usage: test_blocks [TRACE...] */
#define _GNU_SOURCE
#include "torch/blocks.h"
#include "rules/check.h"
#include "path/facts.h"
#include "path/init.h"
#include "shadow/shadow.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static hipshadow_block_event ev(uint32_t action, uint64_t addr, uint64_t size)
{
    return (hipshadow_block_event){.action = action, .addr = addr, .size = size};
}

static void send(uint32_t action, uint64_t addr, uint64_t size)
{
    hipshadow_block_event e = ev(action, addr, size);
    hs_blocks_event(&e, 0, 1, 1000);
}

/* ---- the rules on hand-made facts ---- */

static void test_rules(void)
{
    hs_finding out[HS_MAX_FINDINGS_PER_CALL];
    hs_call c = {.op = HS_OP_COPY, .bytes = 8096, .dir = HS_DIR_D2H, .dst = 0x1000, .src = 0x10000};
    hs_facts f = {.dir = HS_DIR_D2H,
                  .src = {.ptr = 0x10000,
                          .extent = 8096,
                          .where = HS_WHERE_LIVE,
                          .alloc = {.base = 0x10000, .size = 2 << 20, .kind = HS_MEM_DEVICE, .id = 1},
                          .block_state = HS_BLOCK_LIVE,
                          .block = {.base = 0x10000, .size = 4000, .id = 9}},
                  .dst = {.ptr = 0x1000, .extent = 8096, .where = HS_WHERE_NONE, .host_checked = true}};
    CHECK_EQ(hs_check_memory_op(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_REGION_OVERRUN);
    CHECK_EQ(out[0].overrun, 4096);
    f.src.extent = 4000; /* exactly the block */
    CHECK_EQ(hs_check_memory_op(&c, &f, out, 4), 0);
    f.src.block_state = HS_BLOCK_FREED;
    CHECK_EQ(hs_check_memory_op(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_USE_AFTER_FREE);
    CHECK_EQ(out[0].side, HS_SIDE_SRC);
    /* an annotated region wins over the block it lies in: one finding, about the region */
    f.src.block_state = HS_BLOCK_LIVE;
    f.src.extent = 8096;
    f.src.in_region = true;
    f.src.region = (hs_span){.base = 0x10000, .size = 8000};
    CHECK_EQ(hs_check_memory_op(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].overrun, 96);
    /* launches: a pointer parameter into a freed block is an error; a scanned word is nothing */
    hs_call l = {.op = HS_OP_LAUNCH};
    hs_facts g = {.n_args = 1, .args = {{.state = HS_ARG_LIVE, .block_state = HS_BLOCK_FREED, .how = HS_ARG_EXACT}}};
    CHECK_EQ(hs_check_launch(&l, &g, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_KERNEL_USE_AFTER_FREE);
    CHECK_EQ(out[0].severity, HS_SEV_ERROR);
    g.args[0].how = HS_ARG_SCANNED;
    CHECK_EQ(hs_check_launch(&l, &g, out, 4), 0);
    g.args[0].block_state = HS_BLOCK_LIVE;
    g.args[0].how = HS_ARG_EXACT;
    CHECK_EQ(hs_check_launch(&l, &g, out, 4), 0);
}

/* ---- the state machine on hand-made sequences ---- */

static hs_block_state at(uintptr_t addr, hs_span *b) { return hs_block_lookup(addr, b); }

static void test_sequences(void)
{
    hs_span b;
    const uint64_t seg = 0x7f0000000000, MB2 = 2 << 20;
    send(HIPSHADOW_BLOCK_SEGMENT_ALLOC, seg, MB2);
    send(HIPSHADOW_BLOCK_ALLOC, seg, 4000);
    CHECK_EQ(at(seg + 3999, &b), HS_BLOCK_LIVE);
    CHECK_EQ(b.size, 4000);
    CHECK_EQ(at(seg + 4000, &b), HS_BLOCK_NONE); /* the rounding after the size asked for is no block's */
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, seg, 4000);
    CHECK_EQ(at(seg, &b), HS_BLOCK_LIVE); /* stream-ordered: still in use */
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, seg, 4000);
    CHECK_EQ(at(seg + 10, &b), HS_BLOCK_FREED);
    CHECK_EQ(b.base, seg);
    uint64_t first = b.id;
    /* handed out again, smaller: the old block is forgotten whole, the new one is live */
    send(HIPSHADOW_BLOCK_ALLOC, seg, 512);
    CHECK_EQ(at(seg + 10, &b), HS_BLOCK_LIVE);
    CHECK(b.id != first);
    CHECK_EQ(at(seg + 1000, &b), HS_BLOCK_NONE);
    /* a block split off the start of a larger freed one */
    send(HIPSHADOW_BLOCK_ALLOC, seg + 4096, 8192);
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, seg + 4096, 8192);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, seg + 4096, 8192);
    send(HIPSHADOW_BLOCK_ALLOC, seg + 8192, 100); /* overlaps the freed block's tail */
    CHECK_EQ(at(seg + 4096, &b), HS_BLOCK_NONE);
    CHECK_EQ(at(seg + 8192, &b), HS_BLOCK_LIVE);
    /* frees of blocks never seen are counted, not trusted */
    hs_blocks_stats s0, s1;
    hs_blocks_get_stats(&s0);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, seg + 65536, 64);
    hs_blocks_get_stats(&s1);
    CHECK_EQ(s1.unmatched, s0.unmatched + 1);
    /* the segment given back: every block in it is forgotten */
    send(HIPSHADOW_BLOCK_ALLOC, seg + 16384, 256);
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, seg + 16384, 256);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, seg + 16384, 256);
    CHECK_EQ(at(seg + 16384, &b), HS_BLOCK_FREED);
    hs_block_segment sg;
    CHECK(hs_block_segment_of(seg + 16384, &sg) && sg.base == seg && sg.size == MB2 && !sg.expandable);
    send(HIPSHADOW_BLOCK_SEGMENT_FREE, seg, MB2);
    CHECK_EQ(at(seg + 16384, &b), HS_BLOCK_NONE);
    CHECK_EQ(at(seg + 8192, &b), HS_BLOCK_NONE);
    CHECK(!hs_block_segment_of(seg, &sg));
    /* expandable segments: adjacent maps are one segment; an unmap drops the blocks in it */
    const uint64_t ex = 0x7e0000000000;
    send(HIPSHADOW_BLOCK_SEGMENT_MAP, ex, MB2);
    send(HIPSHADOW_BLOCK_SEGMENT_MAP, ex + MB2, MB2);
    CHECK(hs_block_segment_of(ex + MB2 + 5, &sg) && sg.base == ex && sg.size == 2 * MB2 && sg.expandable);
    send(HIPSHADOW_BLOCK_ALLOC, ex + MB2 - 512, 1024); /* across the two maps */
    send(HIPSHADOW_BLOCK_ALLOC, ex + MB2 + 4096, 64);
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, ex + MB2 + 4096, 64);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, ex + MB2 + 4096, 64);
    send(HIPSHADOW_BLOCK_SEGMENT_UNMAP, ex + MB2, MB2);
    CHECK_EQ(at(ex + MB2 + 4096, &b), HS_BLOCK_NONE);
    CHECK_EQ(at(ex + MB2 - 512, &b), HS_BLOCK_NONE); /* it had pages in the unmapped range */
    CHECK(hs_block_segment_of(ex + 5, &sg) && sg.size == MB2);
    CHECK(!hs_block_segment_of(ex + MB2 + 5, &sg));
    send(HIPSHADOW_BLOCK_SEGMENT_UNMAP, ex, MB2);
    /* python_stacks=alloc: a free that gathered no context carries the allocation's: not its stack */
    const uint64_t py = 0x7d0000000000;
    send(HIPSHADOW_BLOCK_SEGMENT_ALLOC, py, MB2);
    hipshadow_block_event e = ev(HIPSHADOW_BLOCK_ALLOC, py, 64);
    e.pystack = 5;
    e.context = 11;
    hs_blocks_event(&e, 0, 1, 1000);
    e.action = HIPSHADOW_BLOCK_FREE_REQUESTED; /* the allocation's context again */
    hs_blocks_event(&e, 0, 1, 1000);
    CHECK_EQ(at(py, &b), HS_BLOCK_LIVE);
    hs_block_info info;
    CHECK(hs_block_info_of(&b, &info) && info.alloc_pystack == 5 && info.free_pystack == 0 && info.free_requested_ns);
    e.action = HIPSHADOW_BLOCK_ALLOC;
    e.addr = py + 4096;
    hs_blocks_event(&e, 0, 1, 1000);
    e.action = HIPSHADOW_BLOCK_FREE_REQUESTED;
    e.pystack = 6;
    e.context = 12; /* a context of its own: the free's stack */
    hs_blocks_event(&e, 0, 1, 1000);
    CHECK_EQ(at(py + 4096, &b), HS_BLOCK_LIVE);
    CHECK(hs_block_info_of(&b, &info) && info.free_pystack == 6);
    send(HIPSHADOW_BLOCK_SEGMENT_FREE, py, MB2);
    /* A free's request and its completion, with the thread, stack and time of each: the request
     * is the free's, whether the completion comes next (one search for both) or after other
     * events (the block was used on another stream: PyTorch completes it later). */
    const uint64_t rq = 0x7c0000000000;
    send(HIPSHADOW_BLOCK_SEGMENT_ALLOC, rq, MB2);
    for (int later = 0; later < 2; later++) {
        uint64_t a = rq + (uint64_t)later * 4096;
        send(HIPSHADOW_BLOCK_ALLOC, a, 256);
        hipshadow_block_event q = ev(HIPSHADOW_BLOCK_FREE_REQUESTED, a, 256);
        hs_blocks_event(&q, 77, 7, 2000);
        if (later)
            send(HIPSHADOW_BLOCK_ALLOC, rq + 65536, 256);
        CHECK_EQ(at(a, &b), HS_BLOCK_LIVE);
        q.action = HIPSHADOW_BLOCK_FREE_COMPLETED;
        hs_blocks_event(&q, 88, 8, 3000);
        CHECK_EQ(at(a, &b), HS_BLOCK_FREED);
        CHECK(b.end_stack == 77 && b.end_thread == 7 && b.end_time_ns == 3000);
        CHECK(hs_block_info_of(&b, &info) && info.free_requested_ns == 2000);
    }
    /* a completion with no request: its own thread and stack */
    send(HIPSHADOW_BLOCK_ALLOC, rq + 8192, 256);
    hipshadow_block_event done = ev(HIPSHADOW_BLOCK_FREE_COMPLETED, rq + 8192, 256);
    hs_blocks_event(&done, 88, 8, 3000);
    CHECK(at(rq + 8192, &b) == HS_BLOCK_FREED && b.end_stack == 88 && b.end_thread == 8);
    /* the request and the completion of a block never handed out: both counted, nothing made */
    hs_blocks_get_stats(&s0);
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, rq + 12288, 256);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, rq + 12288, 256);
    hs_blocks_get_stats(&s1);
    CHECK_EQ(s1.unmatched, s0.unmatched + 2);
    CHECK_EQ(at(rq + 12288, &b), HS_BLOCK_NONE);
    send(HIPSHADOW_BLOCK_SEGMENT_FREE, rq, MB2);
    /* the text form round-trips */
    char line[160];
    hipshadow_block_event in = {.action = HIPSHADOW_BLOCK_SEGMENT_MAP,
                                .device = 1,
                                .addr = 0x7f12,
                                .size = 77,
                                .stream = 0xabc,
                                .pool = {3, 4}},
                          back;
    hs_block_event_format(&in, line, sizeof line);
    CHECK_EQ(hs_block_event_parse(line, &back), 1);
    CHECK(!memcmp(&in, &back, sizeof in));
    CHECK_EQ(hs_block_event_parse("# a comment", &back), 0);
    CHECK_EQ(hs_block_event_parse("alloc zero", &back), -1);
}

/* ---- a block handed out again where one was: in place ---- */

static void free_block(uint64_t addr, uint64_t size)
{
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, addr, size);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, addr, size);
}

static void test_reuse(void)
{
    hs_span b, c;
    hs_blocks_stats s0, s;
    const uint64_t seg = 0x7c0000000000, MB2 = 2 << 20;
    send(HIPSHADOW_BLOCK_SEGMENT_FREE, 0, UINT64_MAX);
    hs_blocks_get_stats(&s0);
    CHECK_EQ(s0.live + s0.quarantined, 0);
    send(HIPSHADOW_BLOCK_SEGMENT_ALLOC, seg, MB2);
    /* the allocator's steady state: the same blocks made and let go, token after token */
    uint64_t last = 0;
    for (int round = 0; round < 3; round++) {
        send(HIPSHADOW_BLOCK_ALLOC, seg, 1024);
        send(HIPSHADOW_BLOCK_ALLOC, seg + 1024, 512);
        CHECK_EQ(at(seg + 1023, &b), HS_BLOCK_LIVE);
        CHECK(b.id > last && b.size == 1024 && b.end_time_ns == 0 && b.kind == HS_MEM_DEVICE);
        last = b.id;
        free_block(seg, 1024);
        free_block(seg + 1024, 512);
        CHECK_EQ(at(seg + 1023, &b), HS_BLOCK_FREED);
        CHECK_EQ(b.id, last);
        hs_blocks_get_stats(&s);
        CHECK_EQ(s.live, 0);
        CHECK_EQ(s.quarantined, 2);
    }
    /* again where a quarantined block was, larger: it fits up to the next block, in place */
    send(HIPSHADOW_BLOCK_ALLOC, seg + 1024, 4096);
    CHECK_EQ(at(seg + 1024 + 4095, &b), HS_BLOCK_LIVE);
    CHECK_EQ(at(seg + 1023, &c), HS_BLOCK_FREED); /* the block below stays quarantined */
    /* one that overlaps the block above: both of the old ones go */
    send(HIPSHADOW_BLOCK_ALLOC, seg, 2048);
    CHECK_EQ(at(seg + 2047, &c), HS_BLOCK_LIVE);
    CHECK_EQ(at(seg + 2048, &b), HS_BLOCK_NONE);
    hs_blocks_get_stats(&s);
    CHECK_EQ(s.live, 1);
    CHECK_EQ(s.quarantined, 0);
    CHECK_EQ(s.unmatched, s0.unmatched + 1); /* the live one it replaced never had its free */
    free_block(seg, 2048);
    /* a quarantine of 2 KiB: the oldest goes first, and one handed out since counts no longer */
    hs_blocks_init(2048);
    const uint64_t a1 = seg + 8192, a2 = seg + 16384, a3 = seg + 24576;
    send(HIPSHADOW_BLOCK_SEGMENT_FREE, seg, MB2);
    send(HIPSHADOW_BLOCK_SEGMENT_ALLOC, seg, MB2);
    send(HIPSHADOW_BLOCK_ALLOC, a1, 1024);
    send(HIPSHADOW_BLOCK_ALLOC, a2, 1024);
    send(HIPSHADOW_BLOCK_ALLOC, a3, 1024);
    free_block(a1, 1024);
    free_block(a2, 1024);
    send(HIPSHADOW_BLOCK_ALLOC, a1, 1024); /* its FIFO entry is stale now */
    free_block(a3, 1024);
    CHECK_EQ(at(a1, &b), HS_BLOCK_LIVE);
    CHECK_EQ(at(a2, &b), HS_BLOCK_FREED);
    CHECK_EQ(at(a3, &b), HS_BLOCK_FREED);
    hs_blocks_get_stats(&s0);
    free_block(a1, 1024); /* over 2 KiB: the stale entry is passed over, a2 evicted */
    hs_blocks_get_stats(&s);
    CHECK_EQ(at(a2, &b), HS_BLOCK_NONE);
    CHECK_EQ(at(a3, &b), HS_BLOCK_FREED);
    CHECK_EQ(at(a1, &b), HS_BLOCK_FREED);
    CHECK_EQ(s.evicted, s0.evicted + 1);
    CHECK_EQ(s.quarantined, 2);
    /* a completion takes the block its request just found, unless the index changed between
     * them or it names another block: each still ends where it was asked */
    hs_blocks_init(1ull << 50);
    const uint64_t d1 = seg + 32768, d2 = seg + 40960, d3 = seg + 49152;
    send(HIPSHADOW_BLOCK_ALLOC, d1, 256);
    send(HIPSHADOW_BLOCK_ALLOC, d2, 256);
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, d1, 256);
    send(HIPSHADOW_BLOCK_ALLOC, d1, 256); /* between request and completion, d1 is another block */
    CHECK_EQ(at(d1, &c), HS_BLOCK_LIVE);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, d1, 256);
    CHECK_EQ(at(d1, &b), HS_BLOCK_FREED);
    CHECK_EQ(b.id, c.id); /* the block there now is the one freed, not the one asked about */
    send(HIPSHADOW_BLOCK_ALLOC, d3, 256);
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, d2, 256);
    send(HIPSHADOW_BLOCK_FREE_REQUESTED, d3, 256);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, d2, 256); /* not the block asked last */
    CHECK_EQ(at(d2, &b), HS_BLOCK_FREED);
    CHECK_EQ(at(d3, &c), HS_BLOCK_LIVE);
    CHECK_EQ(b.size, 256);
    send(HIPSHADOW_BLOCK_FREE_COMPLETED, d3, 256);
    CHECK_EQ(at(d3, &c), HS_BLOCK_FREED);
    CHECK(c.id != b.id);
    /* no quarantine: a completed free forgets the block */
    hs_blocks_init(0);
    send(HIPSHADOW_BLOCK_ALLOC, a2, 64);
    free_block(a2, 64);
    CHECK_EQ(at(a2, &b), HS_BLOCK_NONE);
    hs_blocks_get_stats(&s);
    CHECK_EQ(s.live, 0);
    hs_blocks_init(1ull << 50);
    send(HIPSHADOW_BLOCK_SEGMENT_FREE, seg, MB2);
}

/* ---- a recorded trace, replayed, against a naive model ---- */

typedef struct nb {
    uint64_t base, size;
} nb;
typedef struct model {
    nb *live, *freed, *segs;
    size_t n_live, n_freed, n_segs;
} model;

static void drop(nb *a, size_t *n, uint64_t lo, uint64_t hi)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (a[i].base + a[i].size <= lo || a[i].base >= hi)
            a[k++] = a[i];
    *n = k;
}

static void model_event(model *m, const hipshadow_block_event *e)
{
    uint64_t lo = e->addr, hi = e->addr + e->size;
    switch (e->action) {
    case HIPSHADOW_BLOCK_ALLOC:
        if (!e->size)
            break;
        drop(m->freed, &m->n_freed, lo, hi);
        drop(m->live, &m->n_live, lo, hi);
        m->live[m->n_live++] = (nb){lo, e->size};
        break;
    case HIPSHADOW_BLOCK_FREE_COMPLETED:
        for (size_t i = 0; i < m->n_live; i++)
            if (m->live[i].base == lo) {
                nb b = m->live[i];
                m->live[i] = m->live[--m->n_live];
                drop(m->freed, &m->n_freed, b.base, b.base + b.size);
                m->freed[m->n_freed++] = b;
                break;
            }
        break;
    case HIPSHADOW_BLOCK_SEGMENT_ALLOC:
    case HIPSHADOW_BLOCK_SEGMENT_MAP:
        drop(m->live, &m->n_live, lo, hi);
        drop(m->freed, &m->n_freed, lo, hi);
        m->segs[m->n_segs++] = (nb){lo, e->size};
        break;
    case HIPSHADOW_BLOCK_SEGMENT_FREE:
    case HIPSHADOW_BLOCK_SEGMENT_UNMAP:
        drop(m->live, &m->n_live, lo, hi);
        drop(m->freed, &m->n_freed, lo, hi);
        drop(m->segs, &m->n_segs, lo, hi); /* a partial unmap forgets the whole map here: only used to pick */
        break;
    default: break;
    }
}

static int by_base(const void *a, const void *b)
{
    uint64_t x = ((const nb *)a)->base, y = ((const nb *)b)->base;
    return x < y ? -1 : x > y;
}

typedef struct collected {
    nb *a;
    size_t n;
} collected;
static void collect(const hs_span *s, void *arg)
{
    collected *c = arg;
    c->a[c->n++] = (nb){s->base, s->size};
}

static void same_set(const char *what, nb *want, size_t n, hs_block_state state, size_t cap)
{
    collected got = {calloc(cap, sizeof(nb)), 0};
    hs_blocks_foreach(state, collect, &got);
    qsort(want, n, sizeof *want, by_base);
    CHECK_EQ(got.n, n);
    size_t diff = 0;
    for (size_t i = 0; i < n && i < got.n; i++)
        diff += want[i].base != got.a[i].base || want[i].size != got.a[i].size;
    CHECK_EQ(diff, 0);
    fprintf(stderr, "  %s blocks: %zu (the naive model: %zu)\n", what, got.n, n);
    free(got.a);
}

static int copy_findings(uintptr_t src, size_t n, hs_finding *out, hs_call_state *st)
{
    static char host[2 << 20];
    hs_call c = {.op = HS_OP_COPY, .dst = (uintptr_t)host, .src = src, .bytes = n, .dir = HS_DIR_D2H};
    memset(st, 0, sizeof *st);
    hs_gather_copy(&c, st);
    return hs_check_copy(&c, &st->facts, out, HS_MAX_FINDINGS_PER_CALL);
}

static void replay(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    enum { CAP = 1 << 17 };
    model m = {calloc(CAP, sizeof(nb)), calloc(CAP, sizeof(nb)), calloc(4096, sizeof(nb)), 0, 0, 0};
    hs_blocks_stats before, after;
    /* each trace is a process of its own: nothing of the one before */
    send(HIPSHADOW_BLOCK_SEGMENT_FREE, 0, UINT64_MAX);
    hs_blocks_get_stats(&before);
    static uint64_t shadow_bases[4096];
    size_t n_shadow = 0;
    char line[512];
    size_t events = 0, bad = 0, reused = 0;
    uint64_t reused_addr = 0;
    static uint64_t freed_once[CAP];
    size_t n_freed_once = 0;
    while (fgets(line, sizeof line, f)) {
        hipshadow_block_event e;
        int r = hs_block_event_parse(line, &e);
        if (r < 0)
            bad++;
        if (r <= 0)
            continue;
        events++;
        /* the shadow map learns the segments as the wrappers would (cudaMalloc, cuMemMap) */
        if (e.action == HIPSHADOW_BLOCK_SEGMENT_ALLOC || e.action == HIPSHADOW_BLOCK_SEGMENT_MAP) {
            hs_span s = {.base = e.addr,
                         .size = e.size,
                         .kind = e.action == HIPSHADOW_BLOCK_SEGMENT_MAP ? HS_MEM_MAPPED : HS_MEM_DEVICE,
                         .owner = e.action == HIPSHADOW_BLOCK_SEGMENT_MAP ? 1 : 0};
            if (hs_shadow_add(&s) == 0 && n_shadow < 4096)
                shadow_bases[n_shadow++] = e.addr;
        } else if (e.action == HIPSHADOW_BLOCK_SEGMENT_FREE) {
            hs_span gone;
            hs_shadow_release(e.addr, 0, 1, 2000, &gone);
        }
        if (e.action == HIPSHADOW_BLOCK_FREE_COMPLETED && n_freed_once < CAP)
            freed_once[n_freed_once++] = e.addr;
        if (e.action == HIPSHADOW_BLOCK_ALLOC && !reused_addr)
            for (size_t i = 0; i < n_freed_once; i++)
                if (freed_once[i] == e.addr) {
                    reused_addr = e.addr; /* the first block handed out again at an old block's address */
                    break;
                }
        hs_blocks_event(&e, 0, 1, 1000 + events);
        model_event(&m, &e);
    }
    fclose(f);
    hs_blocks_get_stats(&after);
    uint64_t total = 0;
    for (int a = 0; a < HIPSHADOW_BLOCK_ACTION_COUNT; a++)
        total += after.events[a] - before.events[a];
    fprintf(stderr, "%s: %zu events (%zu malformed lines), %llu unmatched\n", path, events, bad,
            (unsigned long long)(after.unmatched - before.unmatched));
    CHECK(events > 100);
    CHECK_EQ(bad, 0);
    CHECK_EQ(total, events);
    CHECK_EQ(after.unmatched - before.unmatched, 0); /* every free completes a block the trace handed out */
    same_set("live", m.live, m.n_live, HS_BLOCK_LIVE, CAP);
    same_set("quarantined", m.freed, m.n_freed, HS_BLOCK_FREED, CAP);

    hs_finding out[HS_MAX_FINDINGS_PER_CALL];
    hs_call_state st;
    /* a live block: a copy 4096 bytes past it, still inside its segment, is region-overrun */
    size_t planted = 0;
    for (size_t i = 0; i < m.n_live && !planted; i++) {
        nb b = m.live[i];
        if (b.size > (1 << 20))
            continue; /* the host buffer is 2 MiB */
        for (size_t s = 0; s < m.n_segs; s++)
            if (b.base >= m.segs[s].base && b.base + b.size + 4096 <= m.segs[s].base + m.segs[s].size) {
                int n = copy_findings(b.base, b.size + 4096, out, &st);
                CHECK_EQ(n, 1);
                CHECK_EQ(out[0].kind, HS_KIND_REGION_OVERRUN);
                CHECK_EQ(out[0].overrun, 4096);
                CHECK_EQ(st.facts.src.block.base, b.base);
                CHECK_EQ(copy_findings(b.base, b.size, out, &st), 0); /* the block itself: clean */
                planted++;
                break;
            }
    }
    CHECK_EQ(planted, 1);
    /* a quarantined block: a copy from its old pointer is use-after-free naming it */
    planted = 0;
    for (size_t i = 0; i < m.n_freed && !planted; i++) {
        nb b = m.freed[i];
        hs_span s;
        if (hs_shadow_lookup(b.base, &s) != HS_WHERE_LIVE)
            continue;
        size_t n = b.size < 4096 ? b.size : 4096;
        CHECK_EQ(copy_findings(b.base, n, out, &st), 1);
        CHECK_EQ(out[0].kind, HS_KIND_USE_AFTER_FREE);
        CHECK_EQ(st.facts.src.block_state, HS_BLOCK_FREED);
        CHECK_EQ(st.facts.src.block.base, b.base);
        planted++;
    }
    CHECK_EQ(planted, 1);
    /* an address the allocator handed out again: whatever holds it now, no use-after-free */
    if (reused_addr) {
        hs_span s;
        hs_block_state state = hs_block_lookup(reused_addr, &s);
        int n = copy_findings(reused_addr, 1, out, &st);
        if (state == HS_BLOCK_LIVE)
            CHECK_EQ(n, 0);
        reused++;
    }
    CHECK_EQ(reused, 1);
    for (size_t i = 0; i < n_shadow; i++) {
        hs_span gone;
        hs_shadow_release(shadow_bases[i], 0, 1, 3000, &gone);
    }
    free(m.live);
    free(m.freed);
    free(m.segs);
}

int main(int argc, char **argv)
{
    hs_ensure_init();
    hs_blocks_init(1ull << 50); /* remember every freed block: the naive model does */
    test_rules();
    test_sequences();
    test_reuse();
    for (int i = 1; i < argc; i++)
        replay(argv[i]);
    return UNIT_DONE();
}
