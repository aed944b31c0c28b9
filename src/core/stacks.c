#define _GNU_SOURCE
#include "stacks.h"
#include "log.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <uthash.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

typedef struct depot_entry {
    uint64_t hash;          /* key */
    uint32_t id;
    uint32_t nframes;
    uintptr_t *frames;
    struct depot_entry *next_same_hash;
    UT_hash_handle hh;
} depot_entry;

static struct {
    int depth;
    uintptr_t own_start, own_end; /* hipshadow's text, left out of captured stacks */
    pthread_mutex_t lock;
    depot_entry *by_hash;
    depot_entry **by_id; /* by_id[id - 1] */
    uint32_t count, capacity;
} depot = {.lock = PTHREAD_MUTEX_INITIALIZER};

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

void hs_stacks_init(int depth, const void *any_symbol_of_ours)
{
    depot.depth = depth < 0 ? 0 : depth > HS_STACK_MAX_FRAMES ? HS_STACK_MAX_FRAMES : depth;
    dl_iterate_phdr(find_own_segment, (void *)any_symbol_of_ours);
}

void hs_stacks_after_fork(void) { pthread_mutex_init(&depot.lock, NULL); }

static uint64_t hash_frames(const uintptr_t *f, int n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the frame words */
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)f[i];
        h *= 1099511628211ULL;
    }
    return h ^ (uint64_t)n;
}

static uint32_t depot_put(const uintptr_t *frames, int n)
{
    uint64_t h = hash_frames(frames, n);
    uint32_t id = 0;
    pthread_mutex_lock(&depot.lock);
    depot_entry *head = NULL;
    HASH_FIND(hh, depot.by_hash, &h, sizeof h, head);
    for (depot_entry *e = head; e; e = e->next_same_hash)
        if (e->nframes == (uint32_t)n && !memcmp(e->frames, frames, n * sizeof *frames)) {
            id = e->id;
            goto out;
        }
    if (depot.count == depot.capacity) {
        uint32_t cap = depot.capacity ? depot.capacity * 2 : 1024;
        depot_entry **grown = realloc(depot.by_id, cap * sizeof *grown);
        if (!grown)
            goto out;
        depot.by_id = grown;
        depot.capacity = cap;
    }
    depot_entry *e = calloc(1, sizeof *e);
    uintptr_t *copy = malloc(n * sizeof *copy);
    if (!e || !copy) {
        free(e);
        free(copy);
        goto out;
    }
    memcpy(copy, frames, n * sizeof *copy);
    e->hash = h;
    e->frames = copy;
    e->nframes = (uint32_t)n;
    e->id = ++depot.count;
    depot.by_id[e->id - 1] = e;
    if (head) {
        e->next_same_hash = head->next_same_hash;
        head->next_same_hash = e;
    } else {
        HASH_ADD(hh, depot.by_hash, hash, sizeof e->hash, e);
    }
    id = e->id;
    hs_log_write_stack(id, frames, n);
out:
    pthread_mutex_unlock(&depot.lock);
    return id;
}

uint32_t hs_stack_of_frames(const uintptr_t *frames, int n) { return n > 0 ? depot_put(frames, n) : 0; }

uint32_t hs_stack_capture(void)
{
    if (depot.depth == 0)
        return 0;
    void *raw[HS_STACK_MAX_FRAMES + 16];
    int got = unw_backtrace(raw, depot.depth + 16);
    uintptr_t frames[HS_STACK_MAX_FRAMES];
    int n = 0;
    for (int i = 0; i < got && n < depot.depth; i++) {
        uintptr_t pc = (uintptr_t)raw[i];
        if (pc >= depot.own_start && pc < depot.own_end)
            continue;
        frames[n++] = pc;
    }
    return n ? depot_put(frames, n) : 0;
}

int hs_stack_frames(uint32_t id, uintptr_t *frames, int max)
{
    int n = 0;
    pthread_mutex_lock(&depot.lock);
    if (id >= 1 && id <= depot.count) {
        depot_entry *e = depot.by_id[id - 1];
        n = (int)e->nframes < max ? (int)e->nframes : max;
        memcpy(frames, e->frames, n * sizeof *frames);
    }
    pthread_mutex_unlock(&depot.lock);
    return n;
}

void hs_frame_describe(uintptr_t pc, char *buf, size_t len)
{
    Dl_info info;
    /* Return addresses point after the call; look up pc-1 so the frame names the caller's line. */
    if (!dladdr((void *)(pc - 1), &info) || !info.dli_fname) {
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
        fprintf(out, "    <no stack: stack_depth=0 or capture failed>\n");
        return;
    }
    for (int i = 0; i < n; i++) {
        char where[512];
        hs_frame_describe(frames[i], where, sizeof where);
        fprintf(out, "    #%d 0x%lx in %s\n", i, (unsigned long)frames[i], where);
    }
}
