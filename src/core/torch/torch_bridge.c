/* The core's side of the PyTorch plugin (see torch_bridge.h). */
#define _GNU_SOURCE
#include "torch/torch_bridge.h"
#include "torch/blocks.h"
#include "torch/pystacks.h"
#include "process/stacks.h"
#include "process/stats.h"
#include "process/util.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { T_SEARCHING = 0, T_LOADED, T_ATTACHING, T_ATTACHED, T_OFF };

/* 0 off, 1 findings, 2 alloc; read at every block event: with the other flags (one page) */
HS_HOT_DATA static int python_stacks;
/* passthrough=all: block events are dropped as they come (the trace hook's own cost alone) */
HS_HOT_DATA static bool drop_events;

static struct {
    const hs_options *opt;
    atomic_int state;
    atomic_bool have_plugin;               /* plugin (its python_stack) usable */
    pthread_mutex_t lock;                  /* loading */
    _Atomic(unsigned long long) seen_adds; /* the loader's count of objects added, at the last look */
    _Atomic(uint64_t) next_look_ns;        /* hs_coarse_monotonic_ns() before which the loader is not asked again */
    hipshadow_torch_plugin plugin;
} tb = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *const fallback_text = "checking at the level of the allocator's segments";

void hs_torch_after_fork(void) { pthread_mutex_init(&tb.lock, NULL); }

/* ---- what the core offers the plugin ---- */

HS_HOT_BLOCK_PATH static void core_block_event(const hipshadow_block_event *e)
{
    if (HS_UNLIKELY(drop_events))
        return;
    const uint64_t timed = hs_stat_clock();
    uint32_t stack = 0;
    if (HS_UNLIKELY(hs_stats_on))
        hs_stat_count(e->action == HIPSHADOW_BLOCK_ALLOC            ? HS_STAT_block_alloc
                      : e->action == HIPSHADOW_BLOCK_FREE_REQUESTED ? HS_STAT_block_free_requested
                      : e->action == HIPSHADOW_BLOCK_FREE_COMPLETED ? HS_STAT_block_free_completed
                      : e->action == HIPSHADOW_BLOCK_SEGMENT_ALLOC || e->action == HIPSHADOW_BLOCK_SEGMENT_FREE ||
                              e->action == HIPSHADOW_BLOCK_SEGMENT_MAP || e->action == HIPSHADOW_BLOCK_SEGMENT_UNMAP
                          ? HS_STAT_block_segment
                          : HS_STAT_block_other);
    if (python_stacks == 2 && (e->action == HIPSHADOW_BLOCK_ALLOC || e->action == HIPSHADOW_BLOCK_FREE_REQUESTED))
        stack = hs_stack_capture();
    hs_blocks_event(e, stack, hs_thread_id(), hs_coarse_ns());
    hs_stat_time(HS_STAT_block_ns, timed, 0);
}

static const hipshadow_torch_core core_table = {
    .abi = HIPSHADOW_TORCH_ABI,
    .size = sizeof(hipshadow_torch_core),
    .block_event = core_block_event,
    .pyframe_intern = hs_pyframe_intern,
    .pystack_put = hs_pystack_put,
};

void hs_torch_init(const hs_options *o)
{
    tb.opt = o;
    python_stacks = !strcmp(o->python_stacks, "off") ? 0 : !strcmp(o->python_stacks, "alloc") ? 2 : 1;
    drop_events = !strcmp(o->passthrough, "all");
    hs_blocks_init(o->quarantine);
    if (!o->torch_blocks)
        atomic_store(&tb.state, T_OFF);
}

static void say(const char *why)
{
    hs_say("hipshadow: PyTorch is loaded, but its caching allocator's blocks are not tracked: %s; %s\n", why,
           fallback_text);
}

/* Has the loader added objects since the last look? (dl_iterate_phdr's count, no dlopen.) */
static int count_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds;
    return 1;
}

static unsigned long long loader_adds(void)
{
    unsigned long long adds = 0;
    hs_fork_gate_enter(); /* dl_iterate_phdr's lock is not reset in a fork child (util.h) */
    dl_iterate_phdr(count_adds, &adds);
    hs_fork_gate_leave();
    return adds;
}

static bool torch_loaded(void)
{
    unsigned long long adds = loader_adds();
    if (adds == atomic_load(&tb.seen_adds))
        return false;
    atomic_store(&tb.seen_adds, adds);
    sigset_t saved;
    hs_loader_signals_hold(&saved);
    void *h = dlopen("libc10_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    hs_loader_signals_release(&saved);
    return h != NULL;
}

static void plugin_path(char *buf, size_t len)
{
    if (tb.opt->torch_plugin[0]) {
        snprintf(buf, len, "%s", tb.opt->torch_plugin);
        return;
    }
    Dl_info self;
    sigset_t saved;
    hs_loader_signals_hold(&saved);
    int found = dladdr((void *)&hs_torch_poll, &self);
    hs_loader_signals_release(&saved);
    if (found && self.dli_fname) {
        const char *slash = strrchr(self.dli_fname, '/');
        int dir = slash ? (int)(slash - self.dli_fname) : 1;
        snprintf(buf, len, "%.*s/libhipshadow-torch.so", dir, slash ? self.dli_fname : ".");
    } else {
        snprintf(buf, len, "libhipshadow-torch.so");
    }
}

/* Under tb.lock, while SEARCHING: load the plugin once PyTorch is there. */
static void load_locked(void)
{
    if (!torch_loaded())
        return;
    char path[4096], why[512];
    plugin_path(path, sizeof path);
    if (access(path, R_OK) != 0) {
        snprintf(why, sizeof why, "no plugin at '%.400s' (build it with src/torch/build.sh, or give torch_plugin=PATH)",
                 path);
        say(why);
        atomic_store(&tb.state, T_OFF);
        return;
    }
    sigset_t saved;
    hs_loader_signals_hold(&saved);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const char *err = h ? NULL : dlerror();
    /* dlsym by name is hipshadow's own wrapper (dl.c): on a library's handle, for a name it does
     * not wrap, that is the real lookup. */
    hipshadow_torch_plugin_init_fn init = h ? (hipshadow_torch_plugin_init_fn)dlsym(h, HIPSHADOW_TORCH_PLUGIN_INIT)
                                            : NULL;
    hs_loader_signals_release(&saved);
    if (!h) {
        snprintf(why, sizeof why, "cannot load '%.300s': %.180s", path, err ? err : "?");
        say(why);
        atomic_store(&tb.state, T_OFF);
        return;
    }
    hipshadow_torch_plugin p = {0};
    why[0] = 0;
    hipshadow_torch_core core = core_table;
    core.python_stacks = python_stacks;
    if (!init || init(&core, &p, why, sizeof why) != 0 || p.abi != HIPSHADOW_TORCH_ABI || !p.attach) {
        char more[1024];
        snprintf(more, sizeof more, "the plugin '%.300s' refused: %.380s", path,
                 !init    ? "it has no " HIPSHADOW_TORCH_PLUGIN_INIT
                 : why[0] ? why
                          : "another plugin ABI");
        say(more);
        atomic_store(&tb.state, T_OFF);
        return;
    }
    tb.plugin = p;
    atomic_store_explicit(&tb.have_plugin, p.python_stack != NULL, memory_order_release);
    hs_blocks_trace_to(tb.opt->torch_trace);
    atomic_store_explicit(&tb.state, T_LOADED, memory_order_release);
}

/* Asking the loader (dlopen) and attaching take more stack than a thread made with a small one
 * has left below a wrapped call: such a thread leaves the look to the next call of another. */
enum { LOADER_ROOM = 16 << 10 };

static void poll_slow(int s)
{
    if (hs_stack_room() < LOADER_ROOM)
        return;
    if (s == T_SEARCHING) {
        /* the usual case, a program without PyTorch: nothing loaded since the last look, decided
         * without our lock (every device allocation and free asks).  The loader is asked once a
         * clock tick at most: asking takes its lock and ours for fork (two shared lines, ~40 ns),
         * and PyTorch's first allocation comes long after it is loaded (CUDA's start-up). */
        uint64_t now = hs_coarse_monotonic_ns();
        if (now < atomic_load_explicit(&tb.next_look_ns, memory_order_relaxed))
            return;
        atomic_store_explicit(&tb.next_look_ns, now + 1000000, memory_order_relaxed);
        if (loader_adds() == atomic_load_explicit(&tb.seen_adds, memory_order_relaxed))
            return;
        pthread_mutex_lock(&tb.lock);
        if (atomic_load(&tb.state) == T_SEARCHING)
            load_locked();
        pthread_mutex_unlock(&tb.lock);
        s = atomic_load_explicit(&tb.state, memory_order_acquire);
    }
    if (s != T_LOADED)
        return;
    /* One thread attaches, holding no lock of ours: the allocator takes its own in attach. */
    int expected = T_LOADED;
    if (!atomic_compare_exchange_strong(&tb.state, &expected, T_ATTACHING))
        return;
    char why[512] = "";
    int r = tb.plugin.attach(why, sizeof why);
    atomic_store_explicit(&tb.state, r > 0 ? T_ATTACHED : r == 0 ? T_LOADED : T_OFF, memory_order_release);
    if (r < 0)
        say(why[0] ? why : "the plugin could not attach to the caching allocator");
    else if (r > 0 && tb.opt->verbosity > 0)
        hs_say("hipshadow: tracking the blocks of %s\n", tb.plugin.description ? tb.plugin.description : "PyTorch");
}

void hs_torch_poll(void)
{
    int s = atomic_load_explicit(&tb.state, memory_order_acquire);
    if (HS_UNLIKELY(s == T_SEARCHING || s == T_LOADED))
        poll_slow(s);
}

uint32_t hs_torch_python_stack(bool moves_data)
{
    if (!python_stacks || !atomic_load_explicit(&tb.have_plugin, memory_order_acquire))
        return 0;
    return tb.plugin.python_stack(moves_data); /* the GIL may be taken */
}

void hs_torch_at_exit(void)
{
    hs_blocks_trace_close();
    if (!tb.opt || tb.opt->verbosity < 1 || !hs_blocks_any())
        return;
    hs_blocks_stats s;
    hs_blocks_get_stats(&s);
    uint64_t total = 0;
    for (int a = 0; a < HIPSHADOW_BLOCK_ACTION_COUNT; a++)
        total += s.events[a];
    hs_say("hipshadow: PyTorch caching-allocator blocks: %llu events (alloc %llu, free_requested %llu, free_completed "
           "%llu, "
           "segment_alloc %llu, segment_free %llu, segment_map %llu, segment_unmap %llu), %llu unmatched; at exit %llu "
           "live, %llu quarantined (%llu evicted), %llu segments\n",
           (unsigned long long)total, (unsigned long long)s.events[HIPSHADOW_BLOCK_ALLOC],
           (unsigned long long)s.events[HIPSHADOW_BLOCK_FREE_REQUESTED],
           (unsigned long long)s.events[HIPSHADOW_BLOCK_FREE_COMPLETED],
           (unsigned long long)s.events[HIPSHADOW_BLOCK_SEGMENT_ALLOC],
           (unsigned long long)s.events[HIPSHADOW_BLOCK_SEGMENT_FREE],
           (unsigned long long)s.events[HIPSHADOW_BLOCK_SEGMENT_MAP],
           (unsigned long long)s.events[HIPSHADOW_BLOCK_SEGMENT_UNMAP], (unsigned long long)s.unmatched,
           (unsigned long long)s.live, (unsigned long long)s.quarantined, (unsigned long long)s.evicted,
           (unsigned long long)s.segments);
}
