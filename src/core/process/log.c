#define _GNU_SOURCE
#include "process/log.h"
#include "process/deep_stack.h"
#include "process/environment.h"
#include "process/own_fd.h"
#include "process/paths.h"
#include "process/util.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The growing area is mapped (and its space reserved) a segment at a time.  Segments double
 * from one chunk to CHUNKS_PER_SEGMENT (4 MiB), so a small log asks for little: a ring log's
 * metadata takes 64 KiB at first, not 4 MiB (with 2 MB free, even log_size=128k failed).
 * Segment s holds chunks [2^s - 1, 2^(s+1) - 1) up to s = DOUBLINGS, CHUNKS_PER_SEGMENT each
 * after: 256 GiB at most. */
enum { CHUNKS_PER_SEGMENT = 64, DOUBLINGS = 6, MAX_SEGMENTS = 65536 };
_Static_assert(CHUNKS_PER_SEGMENT == 1 << DOUBLINGS, "segments double up to CHUNKS_PER_SEGMENT");

static uint64_t segment_chunks(uint64_t s) { return s < DOUBLINGS ? 1ull << s : CHUNKS_PER_SEGMENT; }

static uint64_t segment_start(uint64_t s)
{
    return s <= DOUBLINGS ? (1ull << s) - 1 : CHUNKS_PER_SEGMENT - 1 + CHUNKS_PER_SEGMENT * (s - DOUBLINGS);
}

static uint64_t segment_of(uint64_t index)
{
    if (index < CHUNKS_PER_SEGMENT - 1)
        return 63 - (uint64_t)__builtin_clzll(index + 1);
    return DOUBLINGS + (index - (CHUNKS_PER_SEGMENT - 1)) / CHUNKS_PER_SEGMENT;
}

static struct {
    hs_own_fd file; /* the log's descriptor: the program may close and reuse it */
    const hs_options *opt;
    const char *const *api_names;
    int n_apis, runtime;
    hs_log_file_header *header;
    uint8_t *ring; /* ring mode: the event ring */
    uint64_t ring_chunks;
    uint64_t growing_offset;
    atomic_uint_fast64_t next_event_seq;
    atomic_uint_fast64_t next_growing; /* next free chunk index in the growing area */
    _Atomic(uint8_t *) segments[MAX_SEGMENTS];
    pthread_mutex_t grow_lock; /* mapping a new segment: rare */
    pthread_mutex_t meta_lock; /* metadata chunk: rare */
    hs_log_chunk_header *meta_chunk;
    uint64_t meta_seq;
    unsigned long module_adds; /* the loader's dlpi_adds when the module map was written */
    uint32_t module_generation;
    atomic_bool warned;
    char path[4096]; /* the file this process writes (the template expanded) */
} lg = {.grow_lock = PTHREAD_MUTEX_INITIALIZER, .meta_lock = PTHREAD_MUTEX_INITIALIZER, .file = {.fd = -1}};
HS_HOT_DATA static atomic_bool log_on; /* read at every call: with the other such flags */

/* This thread's current event chunk. */
static HS_TLS hs_log_chunk_header *my_chunk;
static HS_TLS uint64_t my_seq;

bool hs_log_on(void) { return atomic_load_explicit(&log_on, memory_order_relaxed); }

static void log_off(const char *what, int err)
{
    atomic_store(&log_on, false);
    if (!atomic_exchange(&lg.warned, true))
        hs_say("hipshadow: WARNING: post-mortem log '%s': %s (%s); logging stops, the program carries on\n",
               lg.path[0]              ? lg.path
               : lg.opt && lg.opt->log ? lg.opt->log
                                       : "?",
               what, strerror(err));
}

/* ---- the file's chunks ---- */

static uint8_t *map_at(uint64_t offset, uint64_t bytes)
{
    if (!hs_own_fd_ok(&lg.file)) { /* closed by the program, its number perhaps the program's file now */
        log_off("the program closed its file descriptor", EBADF);
        return NULL;
    }
    /* Reserve the blocks first: writing into a hole of a full disk would be SIGBUS, not ENOSPC. */
    int rc = posix_fallocate(lg.file.fd, (off_t)offset, (off_t)bytes);
    if (rc != 0) {
        log_off("cannot reserve space", rc);
        return NULL;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, lg.file.fd, (off_t)offset);
    if (p == MAP_FAILED) {
        log_off("cannot map", errno);
        return NULL;
    }
    return p;
}

static hs_log_chunk_header *growing_chunk(uint64_t index)
{
    uint64_t s = segment_of(index);
    if (s >= MAX_SEGMENTS) {
        log_off("the log reached its maximum size", EFBIG);
        return NULL;
    }
    uint8_t *seg = atomic_load_explicit(&lg.segments[s], memory_order_acquire);
    if (!seg) {
        pthread_mutex_lock(&lg.grow_lock);
        seg = atomic_load(&lg.segments[s]);
        if (!seg && (seg = map_at(lg.growing_offset + segment_start(s) * HS_LOG_CHUNK_BYTES,
                                  segment_chunks(s) * HS_LOG_CHUNK_BYTES)))
            atomic_store_explicit(&lg.segments[s], seg, memory_order_release);
        pthread_mutex_unlock(&lg.grow_lock);
        if (!seg)
            return NULL;
    }
    return (hs_log_chunk_header *)(seg + (index - segment_start(s)) * HS_LOG_CHUNK_BYTES);
}

static void init_chunk(hs_log_chunk_header *c, uint16_t kind, uint64_t seq)
{
    c->magic = 0; /* a reused ring slot stops being the old chunk before it becomes the new one */
    atomic_thread_fence(memory_order_release);
    c->used = 0;
    c->kind = kind;
    c->reserved = 0;
    c->seq = seq;
    c->thread = hs_thread_id();
    atomic_thread_fence(memory_order_release);
    c->magic = HS_LOG_CHUNK_MAGIC;
}

static hs_log_chunk_header *new_event_chunk(void)
{
    uint64_t seq = atomic_fetch_add(&lg.next_event_seq, 1) + 1;
    hs_log_chunk_header *c;
    if (lg.ring)
        c = (hs_log_chunk_header *)(lg.ring + ((seq - 1) % lg.ring_chunks) * HS_LOG_CHUNK_BYTES);
    else
        c = growing_chunk(atomic_fetch_add(&lg.next_growing, 1));
    if (c)
        init_chunk(c, HS_LOG_CHUNK_EVENTS, seq);
    return c;
}

static uint32_t space_left(const hs_log_chunk_header *c) { return HS_LOG_CHUNK_BYTES - (uint32_t)sizeof *c - c->used; }

void *hs_log_begin(uint16_t type, uint32_t size)
{
    if (!hs_log_on())
        return NULL;
    hs_log_chunk_header *c = my_chunk;
    if (HS_UNLIKELY(!c || c->seq != my_seq || space_left(c) < size)) {
        c = new_event_chunk();
        if (!c)
            return NULL;
        my_chunk = c;
        my_seq = c->seq;
    }
    hs_log_record_header *h = (hs_log_record_header *)((uint8_t *)(c + 1) + c->used);
    h->type = type;
    h->version = 1;
    h->flags = 0;
    h->size = size;
    return h;
}

void hs_log_commit(void *record)
{
    hs_log_chunk_header *c = my_chunk;
    if (!record || !c)
        return;
    atomic_thread_fence(memory_order_release); /* the record's bytes before the count that covers them */
    c->used += ((hs_log_record_header *)record)->size;
}

bool hs_log_still_mine(const void *record)
{
    hs_log_chunk_header *c = my_chunk;
    return record && c && c->seq == my_seq && (const uint8_t *)record > (const uint8_t *)c &&
           (const uint8_t *)record < (const uint8_t *)c + HS_LOG_CHUNK_BYTES;
}

/* ---- metadata (under meta_lock) ---- */

static void meta_append_locked(const void *rec, uint32_t size)
{
    if (!hs_log_on() || size > HS_LOG_CHUNK_BYTES - sizeof(hs_log_chunk_header))
        return;
    hs_log_chunk_header *c = lg.meta_chunk;
    if (!c || space_left(c) < size) {
        c = growing_chunk(atomic_fetch_add(&lg.next_growing, 1));
        if (!c)
            return;
        init_chunk(c, HS_LOG_CHUNK_META, ++lg.meta_seq);
        lg.meta_chunk = c;
    }
    memcpy((uint8_t *)(c + 1) + c->used, rec, size);
    atomic_thread_fence(memory_order_release);
    c->used += size;
}

typedef struct module_walk {
    unsigned long adds;
    bool write;
} module_walk;

static int walk_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    module_walk *w = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        w->adds = info->dlpi_adds;
    if (!w->write)
        return 1; /* only the counter was wanted */
    char exe[512];
    const char *path = info->dlpi_name;
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = 0;
        path = exe;
    }
    if (path[0] != '/')
        return 0; /* linux-vdso.so.1 and the like: nothing on disk to symbolize from */
    uint8_t buf[4096];
    hs_log_module *m = (hs_log_module *)buf;
    hs_log_segment *seg = (hs_log_segment *)(m + 1);
    uint16_t n = 0;
    for (int i = 0; i < info->dlpi_phnum && n < 32; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        seg[n++] = (hs_log_segment){info->dlpi_addr + ph->p_vaddr, ph->p_memsz, ph->p_flags, 0};
    }
    size_t path_bytes = strlen(path);
    size_t total = sizeof *m + n * sizeof *seg + path_bytes;
    if (total > sizeof buf)
        return 0;
    memcpy((uint8_t *)(seg + n), path, path_bytes);
    m->h = (hs_log_record_header){HS_LOG_MODULE, 1, 0, (uint32_t)total};
    m->load_bias = info->dlpi_addr;
    m->generation = lg.module_generation;
    m->n_segments = n;
    m->path_bytes = (uint16_t)path_bytes;
    meta_append_locked(m, (uint32_t)total);
    return 0;
}

static void write_modules_locked(void)
{
    lg.module_generation++;
    module_walk w = {0, true};
    dl_iterate_phdr(walk_module, &w);
    lg.module_adds = w.adds;
}

void hs_log_write_stack(uint32_t id, const uintptr_t *frames, int n)
{
    if (!hs_log_on())
        return;
    pthread_mutex_lock(&lg.meta_lock);
    module_walk w = {0, false};
    hs_fork_gate_enter(); /* dl_iterate_phdr's lock is not reset in a fork child (util.h) */
    dl_iterate_phdr(walk_module, &w);
    if (w.adds != lg.module_adds) /* something was dlopen'ed since: its frames need its module */
        write_modules_locked();
    hs_fork_gate_leave();
    uint8_t buf[sizeof(hs_log_stack) + 64 * sizeof(uint64_t)];
    hs_log_stack *s = (hs_log_stack *)buf;
    if (n > 64)
        n = 64;
    uint32_t size = (uint32_t)(sizeof *s + (size_t)n * sizeof(uint64_t));
    s->h = (hs_log_record_header){HS_LOG_STACK, 1, 0, size};
    s->id = id;
    s->n_frames = (uint32_t)n;
    for (int i = 0; i < n; i++)
        ((uint64_t *)(s + 1))[i] = frames[i];
    meta_append_locked(s, size);
    pthread_mutex_unlock(&lg.meta_lock);
}

/* ---- kernel names (under meta_lock) ----
 * Open addressing on the name's hash; each entry keeps the runtime's pointer (its names are
 * stable) to skip the strcmp, and a copy to compare with and to write into a forked child's log.
 * Never shrinks; survives fork. */

typedef struct kernel_name {
    const char *ptr;
    char *copy;
    uint32_t hash;
} kernel_name;

static struct {
    kernel_name *names; /* by id - 1 */
    uint32_t n, cap;
    uint32_t *slots; /* ids, 0 = empty; slot_count is a power of two */
    uint32_t slot_count;
} kn;

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void write_kernel_name_locked(uint32_t id)
{
    const char *name = kn.names[id - 1].copy;
    size_t len = strlen(name);
    if (len > HS_LOG_KERNEL_NAME_MAX)
        len = HS_LOG_KERNEL_NAME_MAX;
    uint8_t buf[sizeof(hs_log_kernel_name) + HS_LOG_KERNEL_NAME_MAX];
    hs_log_kernel_name *k = (hs_log_kernel_name *)buf;
    *k = (hs_log_kernel_name){{HS_LOG_KERNEL_NAME, 1, 0, (uint32_t)(sizeof *k + len)}, id, (uint16_t)len, 0};
    memcpy(k + 1, name, len);
    meta_append_locked(k, k->h.size);
}

static bool grow_slots_locked(void)
{
    uint32_t count = kn.slot_count ? kn.slot_count * 2 : 256;
    uint32_t *slots = calloc(count, sizeof *slots);
    if (!slots)
        return false;
    for (uint32_t id = 1; id <= kn.n; id++) {
        uint32_t h = kn.names[id - 1].hash & (count - 1);
        while (slots[h])
            h = (h + 1) & (count - 1);
        slots[h] = id;
    }
    free(kn.slots);
    kn.slots = slots;
    kn.slot_count = count;
    return true;
}

uint32_t hs_log_kernel_name_id(const char *name)
{
    if (!name)
        return 0;
    uint32_t hash = name_hash(name), id = 0;
    pthread_mutex_lock(&lg.meta_lock);
    if ((kn.n + 1) * 2 > kn.slot_count && !grow_slots_locked())
        goto out;
    uint32_t h = hash & (kn.slot_count - 1);
    for (; kn.slots[h]; h = (h + 1) & (kn.slot_count - 1)) {
        const kernel_name *e = &kn.names[kn.slots[h] - 1];
        if (e->hash == hash && (e->ptr == name || !strcmp(e->copy, name))) {
            id = kn.slots[h];
            goto out;
        }
    }
    if (kn.n == kn.cap) {
        uint32_t cap = kn.cap ? kn.cap * 2 : 64;
        kernel_name *grown = realloc(kn.names, cap * sizeof *grown);
        if (!grown)
            goto out;
        kn.names = grown;
        kn.cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        goto out;
    kn.names[kn.n] = (kernel_name){name, copy, hash};
    id = ++kn.n;
    kn.slots[h] = id;
    write_kernel_name_locked(id);
out:
    pthread_mutex_unlock(&lg.meta_lock);
    return id;
}

/* ---- opening ---- */

static void read_file_into(const char *path, char *buf, size_t len, bool nul_to_space)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
    if (fd >= 0)
        close(fd);
    n = n < 0 ? 0 : n;
    buf[n] = 0;
    if (nul_to_space)
        for (ssize_t i = 0; i + 1 < n; i++)
            if (!buf[i])
                buf[i] = ' ';
}

static void fill_header(hs_log_file_header *h, int rank, bool full)
{
    memset(h, 0, sizeof *h);
    h->magic = HS_LOG_MAGIC;
    h->format_version = HS_LOG_FORMAT_VERSION;
    h->header_bytes = sizeof *h;
    h->chunk_bytes = HS_LOG_CHUNK_BYTES;
    h->flags = full ? HS_LOG_FLAG_FULL : 0;
    h->ring_offset = HS_LOG_HEADER_BYTES;
    h->ring_chunks = lg.ring_chunks;
    h->growing_offset = lg.growing_offset;
    h->start_time_ns = hs_start_ns();
    h->pid = (uint32_t)getpid();
    h->parent_pid = (uint32_t)getppid();
    h->rank = rank;
    h->runtime = (uint32_t)lg.runtime;
#define HS_LOG_VERSION(id, num, ver, type) h->record_versions[num] = ver;
    HS_LOG_RECORDS(HS_LOG_VERSION)
#undef HS_LOG_VERSION
    gethostname(h->host, sizeof h->host - 1);
    ssize_t n = readlink("/proc/self/exe", h->executable, sizeof h->executable - 1);
    if (n < 0)
        h->executable[0] = 0;
    read_file_into("/proc/self/cmdline", h->command_line, sizeof h->command_line, true);
    hs_options_format(lg.opt, h->options, sizeof h->options);
    snprintf(h->environment, sizeof h->environment, "%s", hs_environment_text());
}

static void open_for_this_process(void)
{
    const hs_options *o = lg.opt;
    bool full = !strcmp(o->log_mode, "full");
    char template[4096], *path = lg.path;
    int rank;
    hs_expand_path(o->log, template, sizeof template, &rank);
    snprintf(path, sizeof lg.path, "%s", template);
    if (hs_own_fd_take(&lg.file, hs_create_unique(template, O_RDWR, path, sizeof lg.path)) < 0) {
        /* hs_create_unique's errno for a name that is not a file: say what the name is (before,
         * a symbolic link read "Too many levels of symbolic links" and /dev/full "No such device") */
        int err = errno;
        const char *why = err == ELOOP    ? "it is a symbolic link (a log is never written through one)"
                          : err == ENODEV ? "it is a device or special file, not a file"
                                          : strerror(err);
        atomic_store(&log_on, false);
        if (!atomic_exchange(&lg.warned, true))
            hs_say(
                "hipshadow: WARNING: cannot create the post-mortem log '%s': %s; the program carries on without it\n",
                path, why);
        return;
    }
    if (strcmp(template, path)) /* said once, as for findings=: the log is not where the user looks */
        hs_say("hipshadow: log '%s' exists; this process writes its log to '%s'\n", template, path);
    uint64_t ring_bytes = full ? 0 : (o->log_size / HS_LOG_CHUNK_BYTES) * HS_LOG_CHUNK_BYTES;
    if (!full && ring_bytes < 2 * HS_LOG_CHUNK_BYTES)
        ring_bytes = 2 * HS_LOG_CHUNK_BYTES;
    lg.ring_chunks = ring_bytes / HS_LOG_CHUNK_BYTES;
    lg.growing_offset = HS_LOG_HEADER_BYTES + ring_bytes;
    atomic_store(&log_on, true); /* map_at may turn it off again */
    lg.header = (hs_log_file_header *)map_at(0, HS_LOG_HEADER_BYTES);
    lg.ring = ring_bytes ? map_at(HS_LOG_HEADER_BYTES, ring_bytes) : NULL;
    if (!lg.header || (ring_bytes && !lg.ring)) {
        atomic_store(&log_on, false);
        return;
    }
    fill_header(lg.header, rank, full);
    pthread_mutex_lock(&lg.meta_lock);
    hs_fork_gate_enter();
    write_modules_locked();
    hs_fork_gate_leave();
    for (int i = 0; i < lg.n_apis; i++) {
        uint8_t buf[256];
        hs_log_api_name *a = (hs_log_api_name *)buf;
        size_t len = strlen(lg.api_names[i]);
        if (len > sizeof buf - sizeof *a)
            continue;
        a->h = (hs_log_record_header){HS_LOG_API_NAME, 1, 0, (uint32_t)(sizeof *a + len)};
        a->api = (uint16_t)i;
        a->name_bytes = (uint16_t)len;
        memcpy(a + 1, lg.api_names[i], len);
        meta_append_locked(a, a->h.size);
    }
    for (uint32_t id = 1; id <= kn.n; id++) /* a forked child: the names its parent already numbered */
        write_kernel_name_locked(id);
    pthread_mutex_unlock(&lg.meta_lock);
}

void hs_log_configure(const hs_options *o, const char *const *api_names, int n_apis, int runtime)
{
    lg.opt = o;
    lg.api_names = api_names;
    lg.n_apis = n_apis;
    lg.runtime = runtime;
    /* log_mode is ring or full: the options parser takes nothing else */
}

static void open_deep(void *arg)
{
    (void)arg;
    open_for_this_process();
}

void hs_log_open_for_process(void)
{
    if (lg.opt && lg.opt->log[0] && lg.file.fd < 0)
        hs_run_deep(open_deep, NULL); /* path buffers of 4 KiB: a small thread's stack may lack them */
}

static void unmap_all(void)
{
    if (lg.header)
        munmap(lg.header, HS_LOG_HEADER_BYTES);
    if (lg.ring)
        munmap(lg.ring, lg.ring_chunks * HS_LOG_CHUNK_BYTES);
    for (int s = 0; s < MAX_SEGMENTS; s++) {
        uint8_t *seg = atomic_load(&lg.segments[s]);
        if (!seg)
            break;
        munmap(seg, segment_chunks((uint64_t)s) * HS_LOG_CHUNK_BYTES);
        atomic_store(&lg.segments[s], NULL);
    }
    lg.header = NULL;
    lg.ring = NULL;
    lg.meta_chunk = NULL;
}

/* In the child, on the only thread: stop writing into the parent's file and open our own. */
void hs_log_after_fork(void)
{
    pthread_mutex_init(&lg.grow_lock, NULL);
    pthread_mutex_init(&lg.meta_lock, NULL);
    my_chunk = NULL;
    my_seq = 0;
    if (lg.file.fd < 0 || !lg.opt || !lg.opt->log[0])
        return;
    atomic_store(&log_on, false);
    unmap_all();
    hs_own_fd_release(&lg.file); /* the parent's, unless the program reused its number */
    atomic_store(&lg.next_event_seq, 0);
    atomic_store(&lg.next_growing, 0);
    lg.meta_seq = 0;
    lg.module_generation = 0;
    lg.path[0] = 0;
    atomic_store(&lg.warned, false);
}

void hs_log_close(void)
{
    if (!hs_log_on())
        return;
    if (lg.header)
        msync(lg.header, HS_LOG_HEADER_BYTES, MS_ASYNC);
    if (lg.ring)
        msync(lg.ring, lg.ring_chunks * HS_LOG_CHUNK_BYTES, MS_ASYNC);
    /* The mapping stays: threads that outlive exit may still record. */
}
