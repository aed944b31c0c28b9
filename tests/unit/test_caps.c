/* Bounded memory: the stack depot, the stream and event registry and the launch
 * ledger each stop at their cap, say so once on stderr, and keep working: stacks already stored
 * are found, a finding's stack uses the reserve; a stream past streams_max is valid without a
 * record, a destroyed stream's record is reused once its work is done (its operation numbers go
 * on), only the last streams_max destroyed handles are remembered; an event past events_max is
 * not modelled and a destroyed one's record is reused; a ring is made out of what is left of
 * ledger_max, then none. */
#define _GNU_SOURCE
#include "kernels/ledger.h"
#include "streams/ordering.h"
#include "process/stacks.h"
#include "streams/streams.h"
#include "process/util.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- stderr, captured into a memfd ---- */

static int saved_fd = -1, memfd = -1;

static void capture_stderr(void)
{
    fflush(stderr);
    saved_fd = dup(2);
    memfd = memfd_create("stderr", 0);
    dup2(memfd, 2);
}

static char *captured(void)
{
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    off_t n = lseek(memfd, 0, SEEK_END);
    char *text = calloc(1, (size_t)n + 1);
    if (n > 0 && pread(memfd, text, (size_t)n, 0) != n)
        text[0] = 0;
    close(memfd);
    fputs(text, stderr); /* still shown in the test's log */
    return text;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* ---- the stack depot ---- */

#define BARRIER() __asm__ volatile("" ::: "memory")
static uint32_t captured_id;
static bool for_finding;
static void step(int depth, unsigned path);
__attribute__((noinline)) static void leaf(void)
{
    uint32_t (*capture)(void) = for_finding ? hs_stack_capture_for_finding : hs_stack_capture;
    captured_id = capture(); /* one call site: the same path is the same stack either way */
    BARRIER();
}
__attribute__((noinline)) static void left(int d, unsigned p)
{
    step(d, p);
    BARRIER();
}
__attribute__((noinline)) static void right(int d, unsigned p)
{
    step(d, p);
    BARRIER();
}
__attribute__((noinline)) static void step(int depth, unsigned path)
{
    if (depth == 0)
        leaf();
    else if (path & 1)
        right(depth - 1, path >> 1);
    else
        left(depth - 1, path >> 1);
    BARRIER();
}

/* Every capture is made from one call site (the loop below), so a path alone decides its stack. */
typedef struct probe {
    unsigned path; /* 7 bits: left or right at each level */
    bool finding;
    uint32_t id;
} probe;

__attribute__((noinline)) static void run_probes(probe *p, int n)
{
    for (int i = 0; i < n; i++) {
        for_finding = p[i].finding;
        step(7, p[i].path);
        p[i].id = captured_id;
    }
}

static void stack_depot_cap(void)
{
    hs_stacks_init(24, 4096, NULL); /* NULL: no code is left out of the stacks */
    capture_stderr();
    /* 0..127: every path once; 128: path 0 again; 129: path 72 as a finding's stack, 130: again;
     * 131..185: more findings' stacks (paths 73..127).  (Here hipshadow's own frames are in the
     * stacks too, so a finding's stack differs from a plain capture's of the same path.) */
    probe p[186];
    for (int i = 0; i < 128; i++)
        p[i] = (probe){(unsigned)i, false, 0};
    p[128] = (probe){0, false, 0};
    p[129] = (probe){72, true, 0};
    p[130] = (probe){72, true, 0};
    for (int i = 131; i < 186; i++)
        p[i] = (probe){(unsigned)(73 + i - 131), true, 0};
    run_probes(p, 186);
    int stored = 0, first_refused = -1;
    for (int i = 0; i < 128; i++) {
        if (p[i].id)
            stored++;
        else if (first_refused < 0)
            first_refused = i;
    }
    CHECK(first_refused > 0);
    CHECK(stored > 4 && stored < 72); /* each is about 100 + 8 * 20 bytes: 4096 holds 16 */
    for (int i = first_refused; i < 128; i++)
        CHECK_EQ(p[i].id, 0); /* once full, nothing new is stored */
    CHECK(hs_stack_depot_full());
    CHECK(p[0].id != 0);
    CHECK_EQ(p[128].id, p[0].id); /* stacks already stored are still found */
    uintptr_t frames[HS_STACK_MAX_FRAMES];
    CHECK(hs_stack_frames(p[0].id, frames, HS_STACK_MAX_FRAMES) > 14);
    /* a finding's stack goes into the reserve (1/8 of the cap), then that is full too */
    CHECK(p[129].id != 0);
    CHECK_EQ(p[130].id, p[129].id);
    int reserve = 0;
    for (int i = 131; i < 186; i++)
        reserve += p[i].id != 0;
    CHECK(reserve < 8); /* 512 bytes of reserve, path 72 took some */
    CHECK_EQ(p[185].id, 0);
    char *err = captured();
    CHECK_EQ(count(err, "hipshadow: WARNING"), 1);
    CHECK_EQ(count(err, "stack_depot_max=4096 reached"), 1);
    free(err);
    /* a report of an unrecorded stack says why */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hs_stack_print(0, f);
    fclose(f);
    CHECK(strstr(text, "stack not recorded (stack_depot_max reached)") != NULL);
    free(text);
}

/* ---- streams and events ---- */

enum { MAX_STREAMS = 4, MAX_EVENTS = 4 };

static void streams_cap(void)
{
    static const uintptr_t builtin[] = {0};
    CHECK_EQ(hs_streams_init(builtin, 1, 0, 0, MAX_STREAMS, MAX_EVENTS), 0);
    capture_stderr();
    /* the null stream has record 0; three more fit */
    hs_stream *rec[3];
    for (int i = 0; i < 3; i++) {
        hs_stream_created(0x1000 + 16 * i, 0, 0, 0, 0, 1);
        rec[i] = hs_stream_get(0x1000 + 16 * i);
        CHECK(rec[i] != NULL);
    }
    CHECK_EQ(hs_stream_count(), MAX_STREAMS);
    /* past the cap: valid, no record */
    hs_span info;
    hs_stream_created(0x2000, 0, 0, 0, 0, 1);
    CHECK_EQ(hs_stream_state_of(0x2000, &info), HS_STREAM_OK);
    CHECK(hs_stream_get(0x2000) == NULL);
    CHECK_EQ(hs_stream_count(), MAX_STREAMS);
    CHECK_EQ(hs_stream_destroyed(0x2000, 0, 0, 2, &info), HS_STREAM_OK);
    CHECK_EQ(hs_stream_state_of(0x2000, &info), HS_STREAM_DESTROYED);

    /* destroyed with work pending: its record is not reused until the work is done */
    hs_stream *a = rec[0];
    uint64_t seq = hs_order_enqueue(a);
    CHECK_EQ(seq, 1);
    CHECK_EQ(hs_stream_destroyed(0x1000, 0, 0, 3, &info), HS_STREAM_OK);
    hs_stream_created(0x3000, 0, 0, 0, 0, 4);
    CHECK(hs_stream_get(0x3000) == NULL);
    hs_order_complete(a, seq);
    hs_stream_created(0x3010, 1, 0, 0, 0, 5);
    CHECK(hs_stream_get(0x3010) == a); /* reused */
    CHECK_EQ(a->handle, 0x3010);
    CHECK(!a->blocking);
    CHECK_EQ(hs_order_enqueue(a), seq + 1); /* its numbers go on */
    hs_order_complete(a, seq + 1);
    CHECK_EQ(hs_stream_destroyed(0x1020, 0, 0, 6, &info), HS_STREAM_OK); /* quiet: nothing ever enqueued */

    /* made and destroyed over and over: the records go round, nothing more is said */
    for (int i = 0; i < 1000; i++) {
        uintptr_t h = 0x100000 + 16 * (uintptr_t)i;
        hs_stream_created(h, 0, 0, 0, 0, 10 + i);
        CHECK(hs_stream_get(h) != NULL);
        CHECK_EQ(hs_stream_destroyed(h, 0, 0, 10 + i, &info), HS_STREAM_OK);
    }
    CHECK_EQ(hs_stream_count(), MAX_STREAMS);
    /* the last MAX_STREAMS destroyed handles are remembered, older ones are forgotten */
    for (int i = 1000 - MAX_STREAMS; i < 1000; i++)
        CHECK_EQ(hs_stream_state_of(0x100000 + 16 * (uintptr_t)i, &info), HS_STREAM_DESTROYED);
    CHECK_EQ(hs_stream_state_of(0x100000 + 16 * (uintptr_t)(1000 - MAX_STREAMS - 1), &info), HS_STREAM_NEVER_CREATED);
    CHECK_EQ(hs_stream_state_of(0x100000, &info), HS_STREAM_NEVER_CREATED);
    CHECK_EQ(hs_stream_state_of(0x1000, &info), HS_STREAM_NEVER_CREATED);
    CHECK(hs_stream_get(0x3010) == a); /* live ones keep theirs */

    /* events: four records, then none; a destroyed one's record is reused */
    for (int i = 0; i < 6; i++)
        hs_event_created(0x9000 + 16 * i, 0);
    for (int i = 0; i < 6; i++)
        CHECK((hs_event_get(0x9000 + 16 * i) != NULL) == (i < MAX_EVENTS));
    hs_gpu_event *e0 = hs_event_get(0x9000);
    hs_event_destroyed(0x9000);
    CHECK(hs_event_get(0x9000) == NULL);
    hs_event_created(0x9800, 0);
    CHECK(hs_event_get(0x9800) == e0);

    char *err = captured();
    CHECK_EQ(count(err, "hipshadow: WARNING"), 2);
    CHECK_EQ(count(err, "streams_max=4 reached"), 1);
    CHECK_EQ(count(err, "events_max=4 reached"), 1);
    free(err);
}

/* ---- the ledger: rings out of one budget ---- */

/* As a launch records itself: under the stream's lock, with its place in stream order. */
static void record(hs_stream *s, uint64_t seq, void *arg)
{
    const hs_launch *l = arg;
    hs_launch *slot = hs_ledger_claim_locked(s);
    if (slot) {
        *slot = *l;
        slot->seq = seq;
        hs_ledger_commit_locked(s, slot);
    }
}

static void ledger_cap(void)
{
    hs_ledger_init(4, 10);
    capture_stderr();
    hs_stream *s[4] = {hs_stream_by_index(0), hs_stream_by_index(1), hs_stream_by_index(2), hs_stream_by_index(3)};
    for (int i = 0; i < 4; i++)
        CHECK(s[i] != NULL);
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < 4; i++) {
            hs_launch l = {.stamp = hs_order_stamp(), .stream = s[i]->handle, .n_args = 1};
            l.args[0] = (hs_launch_arg){.state = HS_ARG_LIVE, .alloc_id = 100 + (uint64_t)i, .value = 0x5000};
            hs_order_enqueue_recorded(s[i], record, &l);
        }
    int want[4] = {4, 4, 2, 0}; /* 10 launches: two whole rings, a short one, none */
    for (int i = 0; i < 4; i++) {
        hs_suspects users;
        hs_ledger_users(100 + (uint64_t)i, &users);
        CHECK_EQ(users.n, want[i]);
        hs_launch last;
        CHECK_EQ(hs_ledger_last(s[i], &last), want[i] > 0);
    }
    char *err = captured();
    CHECK_EQ(count(err, "hipshadow: WARNING"), 1);
    CHECK_EQ(count(err, "ledger_max=10 reached"), 1);
    free(err);
}

/* The registry's records are reachable only from its mmap'd tables, which LeakSanitizer does
 * not scan: a global copy of the pointers keeps them from reading as leaks. */
static void *keep[16];

int main(void)
{
    stack_depot_cap();
    streams_cap();
    ledger_cap();
    for (uint32_t i = 0; i < hs_stream_count() && i < 8; i++)
        keep[i] = hs_stream_by_index(i);
    for (int i = 0; i < 4; i++)
        keep[8 + i] = hs_event_get(i ? 0x9000 + 16 * (uintptr_t)i : 0x9800);
    return UNIT_DONE();
}
