#define _GNU_SOURCE
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_DAMAGE = 1000 }; /* messages kept per log; a log of garbage is counted past that */

static const char *const kind_names[] = {
#define HS_KIND(id, name, sev, meaning) name,
#include "hipshadow/finding_kinds.inc"
#undef HS_KIND
};

const char *hsr_kind_name(unsigned kind)
{
    return kind < sizeof kind_names / sizeof *kind_names ? kind_names[kind] : "unknown-kind";
}
unsigned hsr_kind_count(void) { return sizeof kind_names / sizeof *kind_names; }

const char *hsr_direction_name(unsigned dir)
{
    static const char *const names[] = {"H2H", "H2D", "D2H", "D2D", "default"};
    return dir < 5 ? names[dir] : "none";
}

/* The array `items` (n items of `size` bytes, cap allocated) with room for one more, doubled when
 * full: moved or not; NULL, items left as they were, when memory runs out. */
static void *room(void *items, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return items;
    size_t c = *cap ? *cap * 2 : 16;
    void *grown = realloc(items, c * size);
    if (grown)
        *cap = c;
    return grown;
}

static void damage(hsr_log *log, const char *fmt, ...)
{
    if (log->n_damage >= MAX_DAMAGE) {
        log->damage_unlisted++;
        return;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *copy = strdup(buf);
    char **grown = copy ? room(log->damage, (size_t)log->n_damage, &log->damage_cap, sizeof *grown) : NULL;
    if (!grown) {
        free(copy);
        return;
    }
    log->damage = grown;
    log->damage[log->n_damage++] = copy;
}

/* Where a log's bytes come from: a file, read with pread, or a buffer in memory. */
typedef struct source {
    int fd; /* -1: buf */
    const uint8_t *buf;
    uint64_t size;
} source;

/* Copies len bytes at off into dst; false when they cannot all be read. */
static bool read_at(const source *src, uint64_t off, void *dst, size_t len)
{
    if (off > src->size || len > src->size - off)
        return false;
    if (src->fd < 0) {
        memcpy(dst, src->buf + off, len);
        return true;
    }
    for (size_t done = 0; done < len;) {
        ssize_t n = pread(src->fd, (uint8_t *)dst + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

/* The bytes [off, off + len) for as long as the set lives: in place for a buffer, else a copy
 * the log owns.  NULL when they cannot be read. */
static const uint8_t *hold(hsr_log *log, const source *src, uint64_t off, size_t len)
{
    if (src->fd < 0)
        return off <= src->size && len <= src->size - off ? src->buf + off : NULL;
    uint8_t **grown = room(log->blocks, log->n_blocks, &log->blocks_cap, sizeof *grown);
    if (!grown)
        return NULL;
    log->blocks = grown;
    uint8_t *b = malloc(len ? len : 1);
    if (!b || !read_at(src, off, b, len)) {
        free(b);
        return NULL;
    }
    log->blocks[log->n_blocks++] = b;
    return b;
}

/* The first chunk at or after `off` (chunks start at `base`) that may hold data: the holes of a
 * sparse file are passed over without reading them. */
static uint64_t next_chunk(const source *src, uint64_t base, uint64_t off)
{
    if (src->fd < 0)
        return off;
    off_t d = lseek(src->fd, (off_t)off, SEEK_DATA);
    if (d < 0)
        return errno == ENXIO ? src->size : off; /* ENXIO: holes to the end; else no hole information */
    if ((uint64_t)d <= off)
        return off;
    return base + ((uint64_t)d - base) / HS_LOG_CHUNK_BYTES * HS_LOG_CHUNK_BYTES;
}

static void add_event(hsr_set *set, uint32_t log, uint16_t type, const void *rec, uint64_t time)
{
    if (set->n_events == set->events_cap) {
        size_t c = set->events_cap ? set->events_cap * 2 : 4096;
        hsr_event *grown = realloc(set->events, c * sizeof *grown);
        if (!grown)
            return;
        set->events = grown;
        set->events_cap = c;
    }
    set->events[set->n_events++] = (hsr_event){time, rec, log, type};
}

/* Minimum size of each record type: anything shorter is damage. */
static uint32_t min_size(uint16_t type)
{
    switch (type) {
#define HS_LOG_MIN(id, num, ver, st)                                                                                   \
    case num: return (uint32_t)sizeof(st);
        HS_LOG_RECORDS(HS_LOG_MIN)
#undef HS_LOG_MIN
    default: return 0;
    }
}

/* A C++ kernel's name as the runtime gives it is mangled ("_Z4pokePixi"): shown demangled
 * ("poke(int*, long long, int)") when the C++ runtime's demangler is linked in (the report tool
 * links libstdc++; a reader built without it keeps the mangled name).  Takes and returns a
 * malloc'd string. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status) __attribute__((weak));

static char *demangled(char *name)
{
    if (!name || strncmp(name, "_Z", 2) || !__cxa_demangle)
        return name;
    int status = -1;
    char *plain = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0 || !plain)
        return name;
    free(name);
    return plain;
}

static void parse_meta(hsr_log *log, uint16_t type, const uint8_t *p, uint32_t size, uint64_t off)
{
    if (type == HS_LOG_MODULE) {
        hs_log_module m;
        memcpy(&m, p, sizeof m);
        uint64_t need = sizeof m + (uint64_t)m.n_segments * sizeof(hs_log_segment) + m.path_bytes;
        if (need > size) {
            damage(log, "offset %llu: module record longer than its size", (unsigned long long)off);
            return;
        }
        hsr_module *grown = room(log->modules, (size_t)log->n_modules, &log->modules_cap, sizeof *grown);
        if (!grown)
            return;
        log->modules = grown;
        char *path = strndup((const char *)p + sizeof m + m.n_segments * sizeof(hs_log_segment), m.path_bytes);
        if (!path)
            return;
        log->modules[log->n_modules++] = (hsr_module){path, m.load_bias, m.generation,
                                                      (const hs_log_segment *)(p + sizeof m), m.n_segments};
    } else if (type == HS_LOG_STACK) {
        hs_log_stack s;
        memcpy(&s, p, sizeof s);
        if (sizeof s + (uint64_t)s.n_frames * 8 > size) {
            damage(log, "offset %llu: stack record longer than its size", (unsigned long long)off);
            return;
        }
        hsr_stack *grown = room(log->stacks, log->n_stacks, &log->stacks_cap, sizeof *grown);
        if (!grown)
            return;
        log->stacks = grown;
        log->stacks[log->n_stacks++] = (hsr_stack){s.id, s.n_frames, p + sizeof s};
    } else if (type == HS_LOG_API_NAME) {
        hs_log_api_name a;
        memcpy(&a, p, sizeof a);
        if (sizeof a + (uint64_t)a.name_bytes > size) {
            damage(log, "offset %llu: api-name record longer than its size", (unsigned long long)off);
            return;
        }
        if (a.api >= log->n_api_names) {
            size_t cap = log->api_names_cap;
            while (cap <= a.api)
                cap = cap ? cap * 2 : 64;
            if (cap != log->api_names_cap) {
                char **grown = realloc(log->api_names, cap * sizeof *grown);
                if (!grown)
                    return;
                memset(grown + log->api_names_cap, 0, (cap - log->api_names_cap) * sizeof *grown);
                log->api_names = grown;
                log->api_names_cap = cap;
            }
            log->n_api_names = a.api + 1;
        }
        free(log->api_names[a.api]);
        log->api_names[a.api] = strndup((const char *)p + sizeof a, a.name_bytes);
    } else if (type == HS_LOG_KERNEL_NAME) {
        hs_log_kernel_name k;
        memcpy(&k, p, sizeof k);
        if (sizeof k + (uint64_t)k.name_bytes > size) {
            damage(log, "offset %llu: kernel-name record longer than its size", (unsigned long long)off);
            return;
        }
        if (!k.id) {
            damage(log, "offset %llu: kernel-name record with id 0: skipped", (unsigned long long)off);
            return;
        }
        hsr_kname *grown = room(log->kernel_names, log->n_kernel_names, &log->kernel_names_cap, sizeof *grown);
        if (!grown)
            return;
        log->kernel_names = grown;
        char *name = demangled(strndup((const char *)p + sizeof k, k.name_bytes));
        if (name)
            log->kernel_names[log->n_kernel_names++] = (hsr_kname){k.id, name};
    }
}

/* A launch's arguments must fit in its record; false (and damage) when they do not. */
static bool launch_ok(hsr_log *log, const uint8_t *p, uint32_t size, uint64_t off)
{
    hs_log_launch l;
    memcpy(&l, p, sizeof l);
    if (l.n_args > HS_LOG_LAUNCH_MAX_ARGS || sizeof l + (uint64_t)l.n_args * sizeof(hs_log_launch_arg) > size) {
        damage(log, "offset %llu: launch record with %u arguments does not hold them (size %u): skipped",
               (unsigned long long)off, l.n_args, size);
        return false;
    }
    return true;
}

static uint64_t event_time(uint16_t type, const uint8_t *p)
{
    (void)type;
    uint64_t t; /* every event record starts its payload with its (start) time */
    memcpy(&t, p + sizeof(hs_log_record_header), sizeof t);
    return t;
}

static void parse_chunk(hsr_set *set, uint32_t index, const source *src, uint64_t off)
{
    hsr_log *log = &set->logs[index];
    uint64_t avail = src->size - off;
    hs_log_chunk_header h;
    if (avail < sizeof h) {
        damage(log, "offset %llu: the file ends inside a chunk header (truncated)", (unsigned long long)off);
        return;
    }
    if (!read_at(src, off, &h, sizeof h)) {
        damage(log, "offset %llu: the chunk header cannot be read: chunk skipped", (unsigned long long)off);
        return;
    }
    if (h.magic == 0)
        return; /* reserved space never written */
    if (h.magic != HS_LOG_CHUNK_MAGIC) {
        damage(log, "offset %llu: bad chunk magic 0x%08x: chunk skipped", (unsigned long long)off, h.magic);
        return;
    }
    uint64_t used = h.used;
    if (used > HS_LOG_CHUNK_BYTES - sizeof h) {
        damage(log, "offset %llu: chunk claims %llu bytes, more than a chunk holds: read as far as it can be",
               (unsigned long long)off, (unsigned long long)used);
        used = HS_LOG_CHUNK_BYTES - sizeof h;
    }
    bool truncated = sizeof h + used > avail;
    if (truncated) {
        damage(log,
               "offset %llu: the file ends inside this chunk (truncated at offset %llu): records up to there are read",
               (unsigned long long)off, (unsigned long long)(off + avail));
        used = avail - sizeof h;
    }
    if (!used)
        return;
    const uint8_t *records = hold(log, src, off + sizeof h, (size_t)used);
    if (!records) {
        damage(log, "offset %llu: the chunk's records cannot be read: chunk skipped", (unsigned long long)off);
        return;
    }
    const uint8_t *p = records, *end = records + used;
    while (p < end) {
        uint64_t roff = off + sizeof h + (uint64_t)(p - records);
        if ((size_t)(end - p) < sizeof(hs_log_record_header)) {
            damage(log, "offset %llu: a record header is cut short: the rest of the chunk is skipped",
                   (unsigned long long)roff);
            return;
        }
        hs_log_record_header rh;
        memcpy(&rh, p, sizeof rh);
        uint32_t need = min_size(rh.type);
        if (!need) {
            damage(log, "offset %llu: unknown record type %u: the rest of the chunk is skipped",
                   (unsigned long long)roff, rh.type);
            return;
        }
        if (truncated && rh.size >= need && rh.size > (uint64_t)(end - p))
            return; /* the record the truncation cut in two: already said */
        if (rh.size < need || rh.size > (uint64_t)(end - p)) {
            damage(log, "offset %llu: record of type %u has a bad size %u: the rest of the chunk is skipped",
                   (unsigned long long)roff, rh.type, rh.size);
            return;
        }
        if (rh.type == HS_LOG_MODULE || rh.type == HS_LOG_STACK || rh.type == HS_LOG_API_NAME ||
            rh.type == HS_LOG_KERNEL_NAME)
            parse_meta(log, rh.type, p, rh.size, roff);
        else if (rh.type != HS_LOG_LAUNCH || launch_ok(log, p, rh.size, roff))
            add_event(set, index, rh.type, p, event_time(rh.type, p));
        p += rh.size;
    }
}

/* A fixed-width header field as a string: at most its size, terminated or not. */
static void bounded(char *dst, const char *field, size_t size)
{
    size_t n = strnlen(field, size);
    memcpy(dst, field, n);
    dst[n] = 0;
}

static void parse(hsr_set *set, uint32_t index, const source *src)
{
    hsr_log *log = &set->logs[index];
    log->size = src->size;
    if (src->size < sizeof(hs_log_file_header)) {
        damage(log, "offset 0: %llu bytes is too short for a log header: nothing read", (unsigned long long)src->size);
        return;
    }
    if (!read_at(src, 0, &log->header, sizeof log->header)) {
        memset(&log->header, 0, sizeof log->header);
        damage(log, "offset 0: the log header cannot be read: nothing read");
        return;
    }
    const hs_log_file_header *h = &log->header;
    bounded(log->host, h->host, sizeof h->host);
    bounded(log->executable, h->executable, sizeof h->executable);
    bounded(log->command_line, h->command_line, sizeof h->command_line);
    bounded(log->options, h->options, sizeof h->options);
    bounded(log->environment, h->environment, sizeof h->environment);
    if (h->magic == HS_LOG_MAGIC_SWAPPED) {
        damage(log, "offset 0: written with the other byte order, which this reader does not convert");
        return;
    }
    if (h->magic != HS_LOG_MAGIC) {
        damage(log, "offset 0: not a hipshadow log (magic 0x%08x)", h->magic);
        return;
    }
    if (h->format_version != HS_LOG_FORMAT_VERSION) {
        damage(log, "offset 4: format version %u, this reader knows %u", h->format_version, HS_LOG_FORMAT_VERSION);
        return;
    }
    if (h->chunk_bytes != HS_LOG_CHUNK_BYTES || h->ring_offset < HS_LOG_HEADER_BYTES ||
        h->growing_offset < h->ring_offset ||
        (h->growing_offset - h->ring_offset) / HS_LOG_CHUNK_BYTES != h->ring_chunks) {
        damage(log, "offset 8: inconsistent layout in the header (chunk %u, ring at %llu x %llu, growing at %llu)",
               h->chunk_bytes, (unsigned long long)h->ring_offset, (unsigned long long)h->ring_chunks,
               (unsigned long long)h->growing_offset);
        return;
    }
    log->header_ok = true;
    for (uint64_t off = h->ring_offset; off < src->size; off += HS_LOG_CHUNK_BYTES) {
        off = next_chunk(src, h->ring_offset, off);
        if (off >= src->size)
            break;
        parse_chunk(set, index, src, off);
    }
    if (src->size <= h->growing_offset)
        damage(log,
               "offset %llu: the file ends before its metadata (module map, stacks, API names): "
               "frames and API names cannot be resolved",
               (unsigned long long)h->growing_offset);
    if (log->damage_unlisted)
        damage(log, "%zu more problems are not listed", log->damage_unlisted);
}

static int by_stack_id(const void *a, const void *b)
{
    uint32_t x = ((const hsr_stack *)a)->id, y = ((const hsr_stack *)b)->id;
    return x < y ? -1 : x > y;
}

static int by_kernel_id(const void *a, const void *b)
{
    uint32_t x = ((const hsr_kname *)a)->id, y = ((const hsr_kname *)b)->id;
    return x < y ? -1 : x > y;
}

static hsr_log *new_log(hsr_set *set, const char *name)
{
    hsr_log *grown = room(set->logs, (size_t)set->n_logs, &set->logs_cap, sizeof *grown);
    if (!grown)
        return NULL;
    set->logs = grown;
    hsr_log *log = &set->logs[set->n_logs];
    memset(log, 0, sizeof *log);
    log->path = strdup(name);
    return log;
}

static void add(hsr_set *set, const char *name, const source *src)
{
    hsr_log *log = new_log(set, name);
    if (!log)
        return;
    parse(set, (uint32_t)set->n_logs++, src);
    if (log->n_stacks)
        qsort(log->stacks, log->n_stacks, sizeof *log->stacks, by_stack_id);
    if (log->n_kernel_names)
        qsort(log->kernel_names, log->n_kernel_names, sizeof *log->kernel_names, by_kernel_id);
}

void hsr_add_buffer(hsr_set *set, const char *name, const uint8_t *data, size_t size)
{
    source src = {-1, data, size};
    add(set, name, &src);
}

bool hsr_add_file(hsr_set *set, const char *path)
{
    /* O_NONBLOCK: a FIFO named as a log must not hang the open; it is refused below */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return false;
    struct stat st;
    int refused = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : !S_ISREG(st.st_mode) ? EINVAL : 0;
    if (!refused) {
        source src = {fd, NULL, (uint64_t)st.st_size};
        add(set, path, &src);
    }
    close(fd);
    errno = refused;
    return !refused;
}

static int by_time(const void *a, const void *b)
{
    const hsr_event *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    if (x->log != y->log)
        return x->log < y->log ? -1 : 1;
    return x->rec < y->rec ? -1 : x->rec > y->rec; /* same time: file order */
}

void hsr_finish(hsr_set *set)
{
    if (set->n_events)
        qsort(set->events, set->n_events, sizeof *set->events, by_time);
}

void hsr_free(hsr_set *set)
{
    for (int i = 0; i < set->n_logs; i++) {
        hsr_log *l = &set->logs[i];
        for (size_t b = 0; b < l->n_blocks; b++)
            free(l->blocks[b]);
        free(l->blocks);
        for (int m = 0; m < l->n_modules; m++)
            free((void *)l->modules[m].path);
        for (int a = 0; a < l->n_api_names; a++)
            free(l->api_names[a]);
        for (size_t k = 0; k < l->n_kernel_names; k++)
            free(l->kernel_names[k].name);
        free(l->kernel_names);
        for (int d = 0; d < l->n_damage; d++)
            free(l->damage[d]);
        free(l->modules);
        free(l->stacks);
        free(l->api_names);
        free(l->damage);
        free(l->path);
    }
    free(set->logs);
    free(set->events);
    memset(set, 0, sizeof *set);
}

const hsr_stack *hsr_find_stack(const hsr_log *log, uint32_t id)
{
    hsr_stack key = {.id = id};
    return id && log->n_stacks ? bsearch(&key, log->stacks, log->n_stacks, sizeof key, by_stack_id) : NULL;
}

uint64_t hsr_frame(const hsr_stack *s, uint32_t i)
{
    uint64_t pc;
    memcpy(&pc, s->frames + (size_t)i * 8, 8);
    return pc;
}

const char *hsr_api_name(const hsr_log *log, uint16_t api)
{
    return api < log->n_api_names && log->api_names[api] ? log->api_names[api] : "unknown-api";
}

uint64_t hsr_event_end(const hsr_event *e)
{
    if (e->type == HS_LOG_COPY || e->type == HS_LOG_MEMSET) {
        hs_log_copy c;
        memcpy(&c, e->rec, sizeof c);
        return c.end_ns ? c.end_ns : c.start_ns;
    }
    if (e->type == HS_LOG_SYNC) {
        hs_log_sync s;
        memcpy(&s, e->rec, sizeof s);
        return s.end_ns ? s.end_ns : s.start_ns;
    }
    if (e->type == HS_LOG_LAUNCH) {
        hs_log_launch l;
        memcpy(&l, e->rec, sizeof l);
        return l.end_ns > l.start_ns ? l.end_ns : l.start_ns;
    }
    return e->time_ns;
}

const char *hsr_kernel_name(const hsr_log *log, uint32_t id)
{
    hsr_kname key = {.id = id};
    const hsr_kname *k = id && log->n_kernel_names
                             ? bsearch(&key, log->kernel_names, log->n_kernel_names, sizeof key, by_kernel_id)
                             : NULL;
    return k ? k->name : NULL;
}

const char *hsr_launch_name(const hsr_log *log, const hs_log_launch *l)
{
    const char *name = hsr_kernel_name(log, l->name);
    if (name && *name)
        return name;
    return l->kernel_ref == HS_LOG_KREF_GRAPH     ? "(graph)"
           : l->kernel_ref == HS_LOG_KREF_HOST_FN ? "(host function)"
                                                  : "(unknown kernel)";
}

hs_log_launch_arg hsr_launch_arg(const hs_log_launch *l, unsigned i)
{
    hs_log_launch_arg a;
    memcpy(&a, (const uint8_t *)l + sizeof *l + (size_t)i * sizeof a, sizeof a);
    return a;
}

const char *hsr_kernel_ref_name(unsigned ref)
{
    static const char *const names[] = {"none", "host-stub", "module-function", "graph", "host-function"};
    return ref < 5 ? names[ref] : "unknown";
}

const char *hsr_arg_state_name(unsigned state)
{
    static const char *const names[] = {"live", "freed", "unknown"};
    return state < 3 ? names[state] : "unknown";
}

/* A string of n bytes at p, inside [p, end): copied into dst (HS_LOG_PART_TEXT_MAX + 1 bytes);
 * false when it runs past end. */
static bool part_text(char *dst, const uint8_t *p, const uint8_t *end, uint32_t n)
{
    if (n > HS_LOG_PART_TEXT_MAX || n > (uint64_t)(end - p))
        return false;
    memcpy(dst, p, n);
    dst[n] = 0;
    return true;
}

bool hsr_finding_parts_of(const hs_log_finding *f, hsr_finding_parts *out)
{
    memset(out, 0, sizeof *out);
    hs_log_record_header h;
    memcpy(&h, f, sizeof h);
    if (h.version < 2 || h.size <= sizeof *f)
        return false;
    const uint8_t *p = (const uint8_t *)f + sizeof *f, *end = (const uint8_t *)f + h.size;
    while ((size_t)(end - p) >= sizeof(hs_log_part)) {
        hs_log_part part;
        memcpy(&part, p, sizeof part);
        if (part.size < sizeof part || part.size > (uint64_t)(end - p))
            break; /* damaged: the rest is not read */
        const uint8_t *pend = p + part.size;
        if (part.kind == HS_LOG_PART_CAUSE && part.size >= sizeof(hs_log_cause)) {
            hs_log_cause c;
            memcpy(&c, p, sizeof c);
            const uint8_t *q = p + sizeof c;
            out->has_cause = part_text(out->cause_rule, q, pend, c.rule_bytes) &&
                             part_text(out->cause, q + c.rule_bytes, pend, c.text_bytes);
        } else if (part.kind == HS_LOG_PART_RACE && part.size >= sizeof(hs_log_race)) {
            memcpy(&out->race, p, sizeof out->race);
            const uint8_t *q = p + sizeof out->race;
            out->has_race = part_text(out->mine_kernel, q, pend, out->race.mine.kernel_bytes) &&
                            part_text(out->other_kernel, q + out->race.mine.kernel_bytes, pend,
                                      out->race.other.kernel_bytes);
        } else if (part.kind == HS_LOG_PART_UNINIT && part.size >= sizeof(hs_log_uninit)) {
            memcpy(&out->uninit, p, sizeof out->uninit);
            out->has_uninit = part_text(out->last_write_kernel, p + sizeof out->uninit, pend,
                                        out->uninit.last_write.kernel_bytes);
        }
        p = pend;
    }
    return out->has_cause || out->has_race || out->has_uninit;
}
