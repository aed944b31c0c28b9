/* Stream-race search over the access histories (streams/access.c), alone: two streams that
 * nothing orders, accesses added as the path adds them, and what hs_access_find_first_race
 * answers, including when it may answer without taking the caller's clock. */
#include "unit.h"

#include "streams/access.h"
#include "streams/ordering.h"
#include "streams/streams.h"

enum { HISTORY = 4 };

static hs_stream *sa, *sb;
static uintptr_t next_caller = 0x4000;

/* An access of stream s: its seq the stream's next operation (enqueued), from a new call site
 * (a pair of call sites is reported once). */
static hs_access on(hs_stream *s, uint64_t lo, uint64_t hi, bool write, bool open)
{
    return (hs_access){.lo = lo,
                       .hi = hi,
                       .seq = hs_order_enqueue(s),
                       .stream_index = s->index,
                       .caller = next_caller++,
                       .write = write,
                       .launch = open,
                       .open = open};
}

static void add(uint64_t id, hs_access x)
{
    const hs_access *p = &x;
    hs_access_add_all(&id, &p, 1);
}

/* The search for one call's accesses; *clock_taken: whether the caller's clock was filled. */
static int search(const uint64_t *ids, const hs_access *xs, int n, hs_stream *s, hs_race *out, bool *clock_taken)
{
    const hs_access *all[8];
    for (int i = 0; i < n; i++)
        all[i] = &xs[i];
    hs_vclock clock;
    clock.n = 0xdead;
    int at = hs_access_find_first_race(ids, all, n, s, &clock, out);
    *clock_taken = clock.n != 0xdead;
    return at;
}

static int search_one(uint64_t id, hs_access x, hs_stream *s, bool *clock_taken)
{
    hs_race r;
    return search(&id, &x, 1, s, &r, clock_taken);
}

static void setup(void)
{
    static const uintptr_t builtin[] = {0};
    CHECK_EQ(hs_streams_init(builtin, 1, 0, 0, 16, 16), 0);
    hs_access_init(HISTORY, 1024, false, true);
    hs_stream_created(0x1000, 1, 0, 0, 0, 1);
    hs_stream_created(0x2000, 1, 0, 0, 0, 2);
    sa = hs_stream_get(0x1000);
    sb = hs_stream_get(0x2000);
    CHECK(sa && sb && sa != sb);
    hs_access_stream_seen(sa, true); /* a non-blocking stream: race tracking starts */
    CHECK(hs_access_races());
}

/* A write on A still in flight races with B's read of the same bytes; A's own next access
 * searches nothing and takes no clock. */
static void test_race_and_own_stream(void)
{
    bool taken = false;
    add(1, on(sa, 0, 256, true, false));
    hs_race r;
    hs_access x = on(sb, 128, 512, false, false);
    uint64_t id = 1;
    CHECK_EQ(search(&id, &x, 1, sb, &r, &taken), 0);
    CHECK(taken);
    CHECK_EQ(r.alloc_id, 1);
    CHECK_EQ(r.lo, 128);
    CHECK_EQ(r.hi, 256);
    CHECK_EQ(r.other.stream_index, sa->index);
    CHECK_EQ(search_one(1, on(sa, 0, 64, true, false), sa, &taken), -1);
    CHECK(!taken);
}

/* Once A's work is complete, B's search forgets A's access (and needs no clock): no race.  B's
 * own access in flight is found by A's search, which takes a clock; once it completes and the
 * next add prunes it, A's searches take none. */
static void test_pruned_history(void)
{
    bool taken = false;
    hs_access w = on(sa, 0, 256, true, false);
    add(2, w);
    hs_order_complete(sa, w.seq);
    CHECK_EQ(search_one(2, on(sb, 0, 256, true, false), sb, &taken), -1);
    CHECK(!taken); /* A's access was done: forgotten at the search, nothing else to look at */
    hs_access b1 = on(sb, 0, 256, true, false);
    add(2, b1); /* prunes A's done access: only B's is left */
    CHECK_EQ(search_one(2, on(sb, 0, 16, true, false), sb, &taken), -1);
    CHECK(!taken);
    CHECK_EQ(search_one(2, on(sa, 0, 16, false, false), sa, &taken), 0); /* B's write is in flight */
    CHECK(taken);
    hs_order_complete(sb, b1.seq);
    add(2, on(sa, 512, 600, true, false)); /* prunes B's */
    CHECK_EQ(search_one(2, on(sa, 0, 16, true, false), sa, &taken), -1);
    CHECK(!taken);
}

/* A full history evicts its oldest; an access of the other stream further in is still found. */
static void test_eviction_keeps_others(void)
{
    bool taken = false;
    add(3, on(sb, 1000, 1100, true, false));
    for (int i = 0; i < HISTORY - 1; i++)
        add(3, on(sa, (uint64_t)i * 10, (uint64_t)i * 10 + 5, true, true)); /* open: no pruning */
    CHECK_EQ(search_one(3, on(sa, 1050, 1060, false, false), sa, &taken), 0);
    add(3, on(sa, 2000, 2010, true, false)); /* the history was full: B's access, the oldest, goes */
    CHECK_EQ(search_one(3, on(sa, 1050, 1061, false, false), sa, &taken), -1);
}

/* One call's accesses across shards: the first that races is named, in order. */
static void test_first_of_several(void)
{
    bool taken = false;
    uint64_t ids[3] = {10, 11, 12};
    add(12, on(sa, 0, 64, true, false));
    add(11, on(sa, 0, 64, false, false));
    hs_access xs[3] = {on(sb, 0, 64, false, false), on(sb, 0, 64, false, false), on(sb, 0, 64, true, false)};
    hs_race r;
    CHECK_EQ(search(ids, xs, 3, sb, &r, &taken), 2); /* 10: nothing; 11: read with read */
    CHECK_EQ(r.alloc_id, 12);
    xs[1].write = true;
    xs[1].caller = next_caller++;
    CHECK_EQ(search(ids, xs, 3, sb, &r, &taken), 1);
    CHECK_EQ(r.alloc_id, 11);
}

/* A later exact access of A that covers an earlier one (its bytes and more, a write where it
 * wrote) takes its place, past the open ones between them: B's race names the later one. */
static void test_covered_past_open_ones(void)
{
    bool taken = false;
    hs_access first = on(sa, 0, 256, true, false);
    add(20, first);
    add(20, on(sa, 64, 65, false, true));
    add(20, on(sa, 128, 129, false, true));
    hs_access later = on(sa, 0, 512, true, false);
    add(20, later);
    uint64_t id = 20;
    hs_race r;
    hs_access x = on(sb, 0, 16, false, false);
    CHECK_EQ(search(&id, &x, 1, sb, &r, &taken), 0);
    CHECK_EQ(r.other.caller, later.caller);
    /* not covered: a read does not cover a write, nor a shorter range a longer one */
    add(21, on(sa, 0, 256, true, false));
    add(21, on(sa, 0, 512, false, false));
    add(21, on(sa, 0, 128, true, false));
    id = 21;
    x = on(sb, 200, 210, false, false);
    CHECK_EQ(search(&id, &x, 1, sb, &r, &taken), 0);
    CHECK(r.other.write && r.other.hi == 256);
}

int main(void)
{
    setup();
    test_race_and_own_stream();
    test_pruned_history();
    test_eviction_keeps_others();
    test_first_of_several();
    test_covered_past_open_ones();
    return UNIT_DONE();
}
