#define _GNU_SOURCE
#include "shadow/hostmem.h"
#include "process/stats.h"
#include "shadow/span_index.h"
#include "process/util.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { PERM_R = 1, PERM_W = 2, PERM_X = 4, PERM_SHARED = 8 };

static hs_span_index maps; /* one span per line of /proc/self/maps; kind = PERM_* bits */
static uintptr_t page_mask;
/* Counted changes of the mappings, and the count the snapshot was read at (never equal before
 * the first read). */
static atomic_uint maps_changes, snapshot_at = 1;
static atomic_uint snapshots; /* how many times the snapshot was read: a thread's cached hit names one */

/* Each thread's last mapping that passed in a fresh snapshot (a copy's host buffer is usually
 * where the last one was: its stack, its staging buffer): trusted with no lookup until the maps
 * change (a re-read of the snapshot alone changes nothing about them). */
static HS_TLS struct {
    unsigned changes, perms;
    uintptr_t lo, hi;
} last_hit;

/* The last RECENT changes, by the count each one made (a slot is the count / 2 modulo RECENT):
 * what they changed, so a thread's last hit outlives the changes elsewhere in the address space
 * (an interpreter maps and unmaps its arenas between a program's copies into one heap buffer).
 * A slot's count is written last and read first and last: a reader that sees another count, or
 * none yet, knows nothing of that change and takes the slow path.  (A writer held up for 64 other
 * changes between its count and its ranges could mix its ranges with a later writer's: at worst
 * a host range trusted that should have been checked again, a report missed, never a false one.) */
enum { RECENT = 64 };
static struct {
    _Atomic unsigned count;
    _Atomic uintptr_t lo[2], hi[2];
} recent[RECENT];

void hs_hostmem_maps_changed(uintptr_t lo, size_t len, uintptr_t lo2, size_t len2)
{
    hs_stat_count(HS_STAT_maps_change);
    unsigned count = atomic_fetch_add_explicit(&maps_changes, 2, memory_order_acq_rel) + 2;
    __typeof__(recent[0]) *r = &recent[(count / 2) % RECENT];
    atomic_store_explicit(&r->count, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* the ranges below are not seen under the old count */
    atomic_store_explicit(&r->lo[0], lo, memory_order_relaxed);
    atomic_store_explicit(&r->hi[0], lo + len < lo ? UINTPTR_MAX : lo + len, memory_order_relaxed);
    atomic_store_explicit(&r->lo[1], lo2, memory_order_relaxed);
    atomic_store_explicit(&r->hi[1], lo2 + len2 < lo2 ? UINTPTR_MAX : lo2 + len2, memory_order_relaxed);
    atomic_store_explicit(&r->count, count, memory_order_release);
}

/* Whether every change after count `since`, up to `now`, is known and left [lo, hi) alone. */
static bool changes_elsewhere(unsigned since, unsigned now, uintptr_t lo, uintptr_t hi)
{
    if ((now - since) / 2 > RECENT)
        return false;
    for (unsigned c = since + 2; c - since <= now - since; c += 2) {
        __typeof__(recent[0]) *r = &recent[(c / 2) % RECENT];
        if (atomic_load_explicit(&r->count, memory_order_acquire) != c)
            return false;
        bool apart = true;
        for (int i = 0; i < 2; i++)
            apart &= atomic_load_explicit(&r->hi[i], memory_order_relaxed) <= lo ||
                     atomic_load_explicit(&r->lo[i], memory_order_relaxed) >= hi;
        atomic_thread_fence(memory_order_acquire);
        if (!apart || atomic_load_explicit(&r->count, memory_order_relaxed) != c)
            return false;
    }
    return true;
}

int hs_hostmem_init(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    page_mask = (uintptr_t)(pg > 0 ? pg : 4096) - 1;
    return hs_span_index_init(&maps);
}

static void reader_after_fork(void);
void hs_hostmem_after_fork(void)
{
    hs_span_index_after_fork(&maps);
    reader_after_fork();
}

static atomic_ulong kernel_probes; /* msync probes made (hs_host_kernel_probes) */

static bool kernel_says_mapped(uintptr_t p, size_t len)
{
    atomic_fetch_add_explicit(&kernel_probes, 1, memory_order_relaxed);
    uintptr_t start = p & ~page_mask;
    size_t span = (size_t)(p - start) + len;
    return msync((void *)start, span, MS_ASYNC) == 0 || errno != ENOMEM;
}

uint64_t hs_host_kernel_probes(void) { return atomic_load_explicit(&kernel_probes, memory_order_relaxed); }

/* A stale snapshot is read again at most once a millisecond, by one thread. */
static _Atomic uint64_t next_refresh_ns;
static bool refresh_allowed(void)
{
    uint64_t now = hs_coarse_monotonic_ns(), next = atomic_load_explicit(&next_refresh_ns, memory_order_relaxed);
    return now >= next && atomic_compare_exchange_strong(&next_refresh_ns, &next, now + 1000000);
}

/* What a read of /proc/self/maps is read into, kept and only ever grown: freeing large buffers
 * unmaps them, and a munmap would mark the snapshot just made stale again (then every check
 * would go to the kernel).  One reader at a time. */
static struct {
    pthread_mutex_t lock;
    char *text;
    size_t text_cap;
    hs_span *spans;
    size_t spans_cap;
} rd = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void reader_after_fork(void) { pthread_mutex_init(&rd.lock, NULL); }

static bool grow(void **buf, size_t *cap, size_t want, size_t elem)
{
    if (*cap >= want)
        return true;
    size_t cap2 = *cap ? *cap : want;
    while (cap2 < want)
        cap2 *= 2;
    void *grown = realloc(*buf, cap2 * elem);
    if (!grown)
        return false;
    *buf = grown;
    *cap = cap2;
    return true;
}

/* Cold: re-read /proc/self/maps into the snapshot. */
static void refresh_snapshot(void)
{
    pthread_mutex_lock(&rd.lock);
    hs_stat_count(HS_STAT_maps_read);
    unsigned at = atomic_load_explicit(&maps_changes, memory_order_acquire); /* changes after this make it stale */
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        pthread_mutex_unlock(&rd.lock);
        return;
    }
    size_t len = 0;
    bool ok = grow((void **)&rd.text, &rd.text_cap, (1 << 16) + 1, 1);
    while (ok) {
        ssize_t got = read(fd, rd.text + len, rd.text_cap - 1 - len);
        if (got <= 0)
            break;
        len += (size_t)got;
        if (len == rd.text_cap - 1)
            ok = grow((void **)&rd.text, &rd.text_cap, rd.text_cap * 2, 1);
    }
    close(fd);
    size_t n = 0;
    if (ok) {
        rd.text[len] = 0;
        ok = grow((void **)&rd.spans, &rd.spans_cap, 1024, sizeof *rd.spans);
    }
    for (char *line = rd.text; ok && line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3) {
            if (n == rd.spans_cap && !(ok = grow((void **)&rd.spans, &rd.spans_cap, n + 1, sizeof *rd.spans)))
                break;
            hs_span *s = &rd.spans[n++];
            memset(s, 0, sizeof *s);
            s->base = lo;
            s->size = hi - lo;
            s->kind = (perms[0] == 'r' ? PERM_R : 0) | (perms[1] == 'w' ? PERM_W : 0) | (perms[2] == 'x' ? PERM_X : 0) |
                      (perms[3] == 's' ? PERM_SHARED : 0);
        }
        line = next;
    }
    if (ok) {
        hs_span_lock(&maps);
        if (hs_span_replace_all_locked(&maps, rd.spans, n) == 0)
            atomic_store_explicit(&snapshot_at, at, memory_order_release);
        /* after the new content: a cache keyed on this count (hs_host_snapshot_serial) sees
         * the new content once it sees the new count */
        atomic_fetch_add_explicit(&snapshots, 1, memory_order_release);
        hs_span_unlock(&maps);
    }
    pthread_mutex_unlock(&rd.lock);
}

/* Cold: the name of the mapping holding addr, read again from /proc/self/maps. */
static void name_mapping(uintptr_t addr, hs_host_fact *fact)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[5];
        int name_at = 0;
        if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &lo, &hi, perms, &name_at) >= 3 && addr >= lo && addr < hi) {
            memcpy(fact->perms, perms, sizeof fact->perms);
            char *name = line + name_at;
            name[strcspn(name, "\n")] = 0;
            snprintf(fact->mapping, sizeof fact->mapping, "%s", *name ? name : "[anonymous]");
            break;
        }
    }
    fclose(f);
}

/* Walks the snapshot over [p, p+len). Returns false when the snapshot has a gap (stale). */
static bool walk_snapshot(uintptr_t p, size_t len, unsigned need, hs_host_fact *fact)
{
    uintptr_t end = p + len;
    for (uintptr_t a = p; a < end;) {
        hs_span m;
        if (!hs_span_find(&maps, a, &m))
            return false;
        if ((m.kind & need) != need) {
            fact->status = HS_HOST_NO_ACCESS;
            fact->bad_at = a;
            return true;
        }
        a = m.base + m.size;
    }
    fact->status = HS_HOST_OK;
    return true;
}

uint64_t hs_host_snapshot_serial(void)
{
    unsigned changes = atomic_load_explicit(&maps_changes, memory_order_acquire);
    unsigned serial = atomic_load_explicit(&snapshots, memory_order_acquire);
    if (atomic_load_explicit(&snapshot_at, memory_order_acquire) != changes)
        return 0; /* stale: nothing may be cached against it */
    return (uint64_t)changes << 32 | serial;
}

bool hs_host_private_mapping(uintptr_t p, uintptr_t *lo, uintptr_t *hi, uint64_t *serial)
{
    *serial = hs_host_snapshot_serial();
    hs_span m;
    if (!*serial || !hs_span_find(&maps, p, &m) || (m.kind & PERM_SHARED))
        return false;
    *lo = m.base;
    *hi = m.base + m.size;
    return hs_host_snapshot_serial() == *serial;
}

static hs_host_status host_check_slow(uintptr_t p, size_t len, unsigned need, unsigned changes, hs_host_fact *fact);

hs_host_status hs_host_check(uintptr_t p, size_t len, bool need_write, hs_host_fact *fact)
{
    /* Cleared in full only past the hot path: a checked copy's fact is read only when not OK. */
    fact->status = HS_HOST_OK;
    fact->bad_at = 0;
    fact->perms[0] = fact->mapping[0] = 0;
    if (len == 0)
        return HS_HOST_OK;
    if (p + len < p) { /* wraps around the address space */
        fact->status = HS_HOST_UNMAPPED;
        fact->bad_at = p;
        return fact->status;
    }
    unsigned need = need_write ? PERM_W : PERM_R;
    /* The hot path: this thread's last range that passed, with no mapping change since. */
    unsigned changes = atomic_load_explicit(&maps_changes, memory_order_acquire);
    if (p >= last_hit.lo && p + len <= last_hit.hi && (last_hit.perms & need) == need) {
        if (last_hit.changes == changes)
            return HS_HOST_OK;
        if (changes_elsewhere(last_hit.changes, changes, last_hit.lo, last_hit.hi)) {
            last_hit.changes = changes; /* the changes since were elsewhere */
            return HS_HOST_OK;
        }
    }
    /* Past it, system calls (msync, reading the maps) may set errno: the program's is kept. */
    int errno_in = errno;
    hs_host_status status = host_check_slow(p, len, need, changes, fact);
    errno = errno_in;
    return status;
}

static hs_host_status host_check_slow(uintptr_t p, size_t len, unsigned need, unsigned changes, hs_host_fact *fact)
{
    /* Next: a fresh snapshot that covers the range with the permission.  A stale one is read
     * again first, once a millisecond at most (a thread's start or its heap's growth changes the
     * mappings; else every later check would pay a system call and trust stale permissions). */
    if (atomic_load_explicit(&snapshot_at, memory_order_acquire) != changes && refresh_allowed()) {
        refresh_snapshot();
        changes = atomic_load_explicit(&maps_changes, memory_order_acquire);
    }
    if (atomic_load_explicit(&snapshot_at, memory_order_acquire) == changes) {
        hs_span m;
        memset(fact, 0, sizeof *fact);
        if (walk_snapshot(p, len, need, fact) && fact->status == HS_HOST_OK) {
            if (hs_span_find(&maps, p, &m) && p + len <= m.base + m.size)
                last_hit = (__typeof__(last_hit)){changes, m.kind, m.base, m.base + m.size};
            return HS_HOST_OK;
        }
    }
    memset(fact, 0, sizeof *fact);
    bool mapped = kernel_says_mapped(p, len);
    if (mapped && walk_snapshot(p, len, need, fact) && fact->status == HS_HOST_OK)
        return HS_HOST_OK; /* stale, read again a moment ago, but right: one msync, a lock-free walk */
    /* The snapshot lacks the range or says it lacks the permission.  Permissions change under
     * us (mprotect: thread stacks and malloc arenas grow into PROT_NONE reservations), so read
     * the maps again before saying anything. */
    refresh_snapshot();
    if (walk_snapshot(p, len, need, fact)) {
        if (fact->status == HS_HOST_OK)
            return HS_HOST_OK;
    } else {
        if (mapped) /* mapped while we read the maps: give it the benefit of the doubt */
            return fact->status = HS_HOST_OK;
        /* find the first byte no mapping covers */
        uintptr_t a = p;
        hs_span m;
        while (a < p + len && hs_span_find(&maps, a, &m))
            a = m.base + m.size;
        fact->status = HS_HOST_UNMAPPED;
        fact->bad_at = a < p + len ? a : p;
    }
    if (fact->status != HS_HOST_OK)
        name_mapping(fact->bad_at, fact);
    return fact->status;
}
