#define _GNU_SOURCE
#include "process/stacks.h"
#include "process/depot.h"
#include "process/exit_lock.h"
#include "process/log.h"
#include "process/stats.h"
#include "process/util.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

/* What one stored stack costs, as stack_depot_max counts it (malloc's own overhead is not). */
#define ENTRY_BYTES(n) hs_depot_entry_cost((size_t)(n) * sizeof(uintptr_t))

static struct {
    int depth;
    uintptr_t own_start, own_end; /* hipshadow's text, left out of captured stacks */
    pthread_mutex_t lock;
    hs_depot table;            /* the stacks, each an array of return addresses */
    uint64_t bytes, max_bytes; /* stored, and stack_depot_max (findings may go 1/8 past it) */
    atomic_bool full;          /* a stack was not recorded for want of room (said once) */
} depot = {.lock = PTHREAD_MUTEX_INITIALIZER, .max_bytes = UINT64_MAX};

static int find_own_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t probe = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (probe >= start && probe < start + ph->p_memsz) {
            depot.own_start = start;
            depot.own_end = start + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

void hs_stacks_init(int depth, uint64_t max_bytes, const void *any_symbol_of_ours)
{
    depot.depth = depth < 0 ? 0 : depth > HS_STACK_MAX_FRAMES ? HS_STACK_MAX_FRAMES : depth;
    depot.max_bytes = max_bytes ? max_bytes : UINT64_MAX;
    sigset_t saved;
    hs_loader_signals_hold(&saved);
    dl_iterate_phdr(find_own_segment, (void *)any_symbol_of_ours);
    hs_loader_signals_release(&saved);
}

void hs_stacks_after_fork(void) { pthread_mutex_init(&depot.lock, NULL); }

/* Stores a stack not seen before, unless that would take the depot past its cap (for a
 * finding's stack, past the cap and its reserve of 1/8 more): then 0, said once. */
static uint32_t depot_put(const uintptr_t *frames, int n, bool for_finding)
{
    size_t bytes = (size_t)n * sizeof *frames;
    uint64_t h = hs_depot_hash(frames, bytes);
    uint32_t id = 0, stored = 0;
    bool say_full = false;
    if (hs_exit_lock_held_here(HS_EXIT_LOCK_DEPOT))
        return 0; /* a signal handler that interrupted this thread in the depot: no stack, no wait */
    hs_exit_lock_take(&depot.lock, HS_EXIT_LOCK_DEPOT);
    id = hs_depot_find(&depot.table, frames, bytes, h);
    if (id)
        goto out;
    /* once full, it stays full for all but findings (a smaller stack that would still fit is
     * refused too: what is recorded does not depend on the order stacks come in) */
    uint64_t room = for_finding ? depot.max_bytes + depot.max_bytes / 8 : depot.max_bytes;
    if ((!for_finding && atomic_load_explicit(&depot.full, memory_order_relaxed)) ||
        depot.bytes + ENTRY_BYTES(n) > room) {
        say_full = !atomic_exchange(&depot.full, true);
        stored = depot.table.count;
        goto out;
    }
    id = hs_depot_add(&depot.table, frames, bytes, h);
    if (id) {
        depot.bytes += ENTRY_BYTES(n);
        hs_log_write_stack(id, frames, n);
    }
out:
    hs_exit_lock_drop(&depot.lock, HS_EXIT_LOCK_DEPOT);
    if (say_full)
        hs_say("hipshadow: WARNING: stack_depot_max=%llu reached (%u distinct stacks stored); stacks not seen before "
               "are no longer recorded (reports say 'stack not recorded'), except a finding's own stack\n",
               (unsigned long long)depot.max_bytes, stored);
    return id;
}

/* libunwind 1.6 (Debian bookworm's) frees unw_backtrace's per-thread cache in the last round of
 * thread-exit destructors, after ThreadSanitizer has let go of the thread: the cache's lock then
 * crashes TSan at every such thread's exit.  When TSan is in the process (a TSan-built program,
 * or tests/sanitizers.sh), stacks are walked with unw_step, which keeps no per-thread cache (but
 * takes libunwind's global cache lock on every step, not fork-safe: tests/sanitizers.sh). */
extern void __tsan_init(void) __attribute__((weak));

static __attribute__((noinline)) int backtrace_by_steps(void **pcs, int max)
{
    unw_context_t uc;
    unw_cursor_t cursor;
    int n = 0;
    if (unw_getcontext(&uc) != 0 || unw_init_local(&cursor, &uc) != 0)
        return 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || !ip)
            break;
        pcs[n++] = (void *)ip;
    } while (n < max && unw_step(&cursor) > 0);
    return n;
}

static int backtrace_pcs(void **pcs, int max)
{
    return &__tsan_init ? backtrace_by_steps(pcs, max) : unw_backtrace(pcs, max);
}

/* A walk takes ~6 KiB of stack (libunwind's context and cursor, and the loader resolving
 * libunwind's functions the first time), which a thread made with a small stack (16 KiB:
 * PTHREAD_STACK_MIN) does not have left below a wrapped call: such a thread records no stacks
 * (its allocations are still tracked), said once. */
enum { WALK_ROOM = 10 << 10 };
static atomic_bool said_small_stack;

static bool room_to_walk(void)
{
    size_t room = hs_stack_room();
    if (room >= WALK_ROOM)
        return true;
    if (!atomic_exchange(&said_small_stack, true))
        hs_say("hipshadow: thread T%u has %zu bytes of stack left at a wrapped call, a stack walk needs %d: its "
               "calls' stacks are not recorded (their allocations are still tracked)\n",
               hs_thread_id(), room, WALK_ROOM);
    return false;
}

uint32_t hs_stack_of_frames(const uintptr_t *frames, int n) { return n > 0 ? depot_put(frames, n, true) : 0; }

HS_TLS uintptr_t hs_entry_slot;

/* ---- the event stacks' cache (x86-64) ----
 * A program makes its allocations, frees and launches from a few call paths, over and over: a
 * walk (libunwind, ~30 ns a frame with our own frames, then the depot's lock and hash) costs
 * more than the rest of the event.  So each thread keeps its last stacks, each with the stack
 * address of every return address it holds (the slot), and a capture whose entry slot is a
 * kept stack's first first checks that every slot still holds its return address: then the
 * stack is the same (the frames from the call into hipshadow outwards are the same return
 * addresses at the same places; a frame that differs changes the return address at its slot,
 * or moves the frames outside it), and its id is taken without a walk or the depot's lock.
 * What it gives up: a local variable of the program that holds, at a kept slot's address, the
 * very return address kept there (a code address stored as data exactly where a frame of the
 * same path had its return address) would pass for the frame; and only event stacks use it (a
 * finding's stack is always walked).  Slots are read only between the entry slot and the
 * kept stack's outermost one, within this thread's stack as it was when the stack was kept. */
#if defined(__x86_64__) && !defined(HS_NO_STACK_CACHE)
enum { CACHE_SETS = 32, CACHE_WAYS = 4, SLOT_SPAN_MAX = 8 << 20 };
typedef struct cached_stack {
    uintptr_t entry; /* the slot of the first frame (0: empty) */
    uint32_t id;
    int n;
    uintptr_t slot[HS_STACK_MAX_FRAMES], pc[HS_STACK_MAX_FRAMES];
} cached_stack;
static HS_TLS cached_stack *stack_cache; /* CACHE_SETS x CACHE_WAYS, made at a thread's first capture */
static HS_TLS bool stack_cache_failed;
static HS_TLS unsigned stack_cache_turn; /* which way of a full set a new stack takes */

/* A set per entry slot and the return address in it: one function's several call sites into
 * hipshadow share the slot (the same frame depth), and paths that differ only further out share
 * both; each set keeps CACHE_WAYS of them side by side, so alternating between them (an engine's
 * copy from two places through one helper) does not walk every time. */
static cached_stack *cache_set(uintptr_t entry, uintptr_t ret)
{
    return &stack_cache[((entry >> 3) ^ (ret * 0x9E3779B97F4A7C15u >> 7)) * 0x9E3779B1u % CACHE_SETS * CACHE_WAYS];
}

static uint32_t cache_find(uintptr_t entry)
{
    if (!stack_cache)
        return 0;
    const cached_stack *set = cache_set(entry, *(const volatile uintptr_t *)entry);
    for (int w = 0; w < CACHE_WAYS; w++) {
        const cached_stack *c = &set[w];
        if (c->entry != entry)
            continue;
        int i = 0;
        while (i < c->n && *(const volatile uintptr_t *)c->slot[i] == c->pc[i])
            i++;
        if (i == c->n)
            return c->id;
    }
    return 0;
}

static void cache_keep(uintptr_t entry, uint32_t id, const uintptr_t *slot, const uintptr_t *pc, int n)
{
    if (!stack_cache && !stack_cache_failed) {
        /* mmap, not malloc: captures run inside the program's allocator calls too */
        void *m = mmap(NULL, CACHE_SETS * CACHE_WAYS * sizeof(cached_stack), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        stack_cache_failed = m == MAP_FAILED;
        stack_cache = stack_cache_failed ? NULL : m;
    }
    if (!stack_cache || !id || n <= 0 || slot[0] != entry)
        return;
    for (int i = 1; i < n; i++)
        if (slot[i] <= slot[i - 1] || slot[i] - entry > SLOT_SPAN_MAX)
            return; /* not one stack growing down: not kept */
    cached_stack *set = cache_set(entry, pc[0]), *c = NULL;
    for (int w = 0; w < CACHE_WAYS && !c; w++)
        if (!set[w].entry)
            c = &set[w];
    if (!c)
        c = &set[stack_cache_turn++ % CACHE_WAYS];
    c->entry = entry;
    c->id = id;
    c->n = n;
    memcpy(c->slot, slot, (size_t)n * sizeof *slot);
    memcpy(c->pc, pc, (size_t)n * sizeof *pc);
}

/* The walk that fills the cache: libunwind's steps, which give each frame's stack pointer (the
 * return address into frame i sits just below frame i's stack pointer). */
static __attribute__((noinline)) int walk_with_slots(uintptr_t *pcs, uintptr_t *slots, int max)
{
    unw_context_t uc;
    unw_cursor_t cursor;
    int n = 0;
    if (unw_getcontext(&uc) != 0 || unw_init_local(&cursor, &uc) != 0)
        return 0;
    do {
        unw_word_t ip, sp;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || !ip || unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0)
            break;
        pcs[n] = ip;
        slots[n++] = sp - sizeof(uintptr_t);
    } while (n < max && unw_step(&cursor) > 0);
    return n;
}

/* A walk whose stack is kept for the next capture from entry.  noinline: its arrays (2.3 KiB) are
 * taken only when it runs, not by every capture (a thread with a small stack must still have room
 * to say it has no room to walk) */
static __attribute__((noinline)) uint32_t walk_and_keep(uintptr_t entry)
{
    uintptr_t raw[HS_STACK_MAX_FRAMES + 16], raw_slot[HS_STACK_MAX_FRAMES + 16];
    hs_stat_count(HS_STAT_stack_walk);
    hs_fork_gate_enter();
    int got = walk_with_slots(raw, raw_slot, depot.depth + 16);
    hs_fork_gate_leave();
    uintptr_t frames[HS_STACK_MAX_FRAMES], slots[HS_STACK_MAX_FRAMES];
    int n = 0;
    for (int i = 1; i < got && n < depot.depth; i++) { /* raw[0] is this function's own pc: no slot */
        if (raw[i] >= depot.own_start && raw[i] < depot.own_end)
            continue;
        frames[n] = raw[i];
        slots[n++] = raw_slot[i];
    }
    uint32_t id = n ? depot_put(frames, n, false) : 0;
    cache_keep(entry, id, slots, frames, n);
    return id;
}
#endif

HS_HOT static uint32_t capture(bool for_finding)
{
    if (depot.depth == 0)
        return 0;
#if defined(__x86_64__) && !defined(HS_NO_STACK_CACHE)
    if (!for_finding && hs_entry_slot && !&__tsan_init) {
        uint32_t id = cache_find(hs_entry_slot); /* reads only the slots of the stack as kept: no walk */
        return id ? id : room_to_walk() ? walk_and_keep(hs_entry_slot) : 0;
    }
#endif
    if (!room_to_walk())
        return 0;
    void *raw[HS_STACK_MAX_FRAMES + 16];
    hs_stat_count(HS_STAT_stack_walk);
    hs_fork_gate_enter(); /* libunwind takes the loader's lock: not across a fork (util.h) */
    int got = backtrace_pcs(raw, depot.depth + 16);
    hs_fork_gate_leave();
    uintptr_t frames[HS_STACK_MAX_FRAMES];
    int n = 0;
    for (int i = 0; i < got && n < depot.depth; i++) {
        uintptr_t pc = (uintptr_t)raw[i];
        if (pc >= depot.own_start && pc < depot.own_end)
            continue;
        frames[n++] = pc;
    }
    return n ? depot_put(frames, n, for_finding) : 0;
}

uint32_t hs_stack_capture(void) { return capture(false); }
uint32_t hs_stack_capture_for_finding(void) { return capture(true); }

bool hs_stack_depot_full(void) { return atomic_load_explicit(&depot.full, memory_order_relaxed); }

int hs_stack_frames(uint32_t id, uintptr_t *frames, int max)
{
    int n = 0;
    if (hs_exit_lock_held_here(HS_EXIT_LOCK_DEPOT))
        return 0; /* exit() from a signal handler that interrupted this thread in the depot */
    hs_exit_lock_take(&depot.lock, HS_EXIT_LOCK_DEPOT);
    size_t bytes;
    const uintptr_t *stored = hs_depot_get(&depot.table, id, &bytes);
    if (stored) {
        n = (int)(bytes / sizeof *frames) < max ? (int)(bytes / sizeof *frames) : max;
        memcpy(frames, stored, n * sizeof *frames);
    }
    hs_exit_lock_drop(&depot.lock, HS_EXIT_LOCK_DEPOT);
    return n;
}

void hs_frame_describe(uintptr_t pc, char *buf, size_t len)
{
    Dl_info info;
    sigset_t saved;
    hs_loader_signals_hold(&saved);
    /* Return addresses point after the call; look up pc-1 so the frame names the caller's line. */
    int found = dladdr((void *)(pc - 1), &info);
    hs_loader_signals_release(&saved);
    if (!found || !info.dli_fname) {
        snprintf(buf, len, "?? (0x%lx)", (unsigned long)pc);
        return;
    }
    const char *module = info.dli_fname[0] ? info.dli_fname : "<main>";
    if (info.dli_sname)
        snprintf(buf, len, "%s+0x%lx (%s)", info.dli_sname, (unsigned long)(pc - (uintptr_t)info.dli_saddr), module);
    else
        snprintf(buf, len, "?? (%s+0x%lx)", module, (unsigned long)(pc - (uintptr_t)info.dli_fbase));
}

void hs_stack_print(uint32_t id, FILE *out)
{
    uintptr_t frames[HS_STACK_MAX_FRAMES];
    int n = hs_stack_frames(id, frames, HS_STACK_MAX_FRAMES);
    if (n == 0) {
        if (id == 0 && depot.depth > 0 && hs_stack_depot_full())
            fprintf(out, "    <no stack: stack not recorded (stack_depot_max reached) or capture failed>\n");
        else
            fprintf(out, "    <no stack: stack_depth=0 or capture failed>\n");
        return;
    }
    for (int i = 0; i < n; i++) {
        char where[512];
        hs_frame_describe(frames[i], where, sizeof where);
        fprintf(out, "    #%d 0x%lx in %s\n", i, (unsigned long)frames[i], where);
    }
}
