#define _GNU_SOURCE
#include "symbolize.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

typedef struct cached_frame {
    uint64_t pc;
    hsr_frame_info info;
    UT_hash_handle hh;
} cached_frame;

/* Which module holds an address: disjoint ranges, sorted, each owned by the newest module
 * (the last in the log) that has a segment there. */
typedef struct span {
    uint64_t start, end;
    int module;
} span;

typedef struct symbolizer {
    Dwfl *dwfl;
    cached_frame *cache;
    span *spans;
    size_t n_spans;
} symbolizer;

static char *printed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

/* Whether what stands at path, if anything, is a regular file (what libdw may open). */
static bool absent_or_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

/* libdw opens separate debug information where the module's .gnu_debuglink (or its own name with
 * .debug) says, in its directory, in .debug there, and under /usr/lib/debug (its default path):
 * refused when one of those places holds something other than a regular file, whose open would
 * block or never end. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink, GElf_Word crc, char **debuginfo_file)
{
    if (file_name) {
        const char *slash = strrchr(file_name, '/');
        int dir = slash ? (int)(slash - file_name) : 1;
        const char *dir_name = slash ? file_name : ".";
        char *name = debuglink ? strdup(debuglink) : printed("%s.debug", slash ? slash + 1 : file_name);
        char *place[3] = {NULL, NULL, NULL};
        if (name && name[0] == '/') {
            place[0] = strdup(name);
        } else if (name) {
            place[0] = printed("%.*s/%s", dir, dir_name, name);
            place[1] = printed("%.*s/.debug/%s", dir, dir_name, name);
            place[2] = printed("/usr/lib/debug%.*s/%s", dir, dir_name, name);
        }
        bool safe = place[0] && (name[0] == '/' || (place[1] && place[2]));
        for (int i = 0; i < 3; i++) {
            safe = safe && (!place[i] || absent_or_regular(place[i]));
            free(place[i]);
        }
        free(name);
        if (!safe)
            return -1;
    }
    return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc, debuginfo_file);
}

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* A module's file for libdw, opened here: only a regular file (a FIFO or a device named in a
 * log would block the report or read forever).  -1 when it is not one. */
static int open_module(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int by_path_bias_newest(const void *a, const void *b, void *arg)
{
    const hsr_module *m = arg;
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(m[x].path, m[y].path);
    if (c)
        return c;
    if (m[x].load_bias != m[y].load_bias)
        return m[x].load_bias < m[y].load_bias ? -1 : 1;
    return y - x;
}

/* The modules libdw is told about: one per path and load bias, the newest (a map rewritten at
 * each dlopen repeats every module). */
static bool *newest_modules(const hsr_log *log)
{
    int n = log->n_modules;
    bool *keep = calloc((size_t)n + 1, sizeof *keep);
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!keep || !order) {
        free(order);
        free(keep);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, by_path_bias_newest, log->modules);
    for (int i = 0; i < n; i++) {
        const hsr_module *m = &log->modules[order[i]], *prev = i ? &log->modules[order[i - 1]] : NULL;
        keep[order[i]] = !prev || strcmp(prev->path, m->path) || prev->load_bias != m->load_bias;
    }
    free(order);
    return keep;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct segment_ref {
    uint64_t start, end;
    int module;
} segment_ref;

static int by_module_newest(const void *a, const void *b)
{
    const segment_ref *x = a, *y = b;
    return x->module != y->module ? (x->module < y->module ? 1 : -1) : 0;
}

/* First index >= i in the union-find of elementary ranges that no module owns yet. */
static size_t unowned(size_t *next, size_t i)
{
    size_t root = i;
    while (next[root] != root)
        root = next[root];
    while (next[i] != root) {
        size_t up = next[i];
        next[i] = root;
        i = up;
    }
    return root;
}

/* The address map as disjoint spans: every segment's bounds cut the address space into elementary
 * ranges; segments, newest module first, claim the ranges no newer one holds. */
static void build_spans(symbolizer *s, const hsr_log *log)
{
    size_t n = 0;
    for (int i = 0; i < log->n_modules; i++)
        n += (size_t)log->modules[i].n_segments;
    segment_ref *segs = malloc((n + 1) * sizeof *segs);
    uint64_t *cuts = malloc((2 * n + 1) * sizeof *cuts);
    size_t n_segs = 0, n_cuts = 0;
    for (int i = 0; segs && cuts && i < log->n_modules; i++)
        for (int k = 0; k < log->modules[i].n_segments; k++) {
            hs_log_segment seg;
            memcpy(&seg, &log->modules[i].segments[k], sizeof seg);
            uint64_t end = seg.start + seg.size < seg.start ? UINT64_MAX : seg.start + seg.size;
            if (end == seg.start)
                continue;
            segs[n_segs++] = (segment_ref){seg.start, end, i};
            cuts[n_cuts++] = seg.start;
            cuts[n_cuts++] = end;
        }
    size_t *next = n_cuts ? malloc((n_cuts + 1) * sizeof *next) : NULL;
    int *owner = n_cuts ? malloc(n_cuts * sizeof *owner) : NULL;
    s->spans = n_cuts ? malloc(n_cuts * sizeof *s->spans) : NULL;
    if (!next || !owner || !s->spans)
        goto out;
    qsort(cuts, n_cuts, sizeof *cuts, by_u64);
    size_t u = 0;
    for (size_t i = 0; i < n_cuts; i++)
        if (!u || cuts[u - 1] != cuts[i])
            cuts[u++] = cuts[i];
    n_cuts = u; /* elementary range j is [cuts[j], cuts[j + 1]) */
    for (size_t j = 0; j <= n_cuts; j++)
        next[j] = j;
    for (size_t j = 0; j < n_cuts; j++)
        owner[j] = -1;
    qsort(segs, n_segs, sizeof *segs, by_module_newest);
    for (size_t i = 0; i < n_segs; i++) {
        size_t first = (uint64_t *)bsearch(&segs[i].start, cuts, n_cuts, sizeof *cuts, by_u64) - cuts;
        size_t last = (uint64_t *)bsearch(&segs[i].end, cuts, n_cuts, sizeof *cuts, by_u64) - cuts;
        for (size_t j = unowned(next, first); j < last; j = unowned(next, j + 1)) {
            owner[j] = segs[i].module;
            next[j] = j + 1;
        }
    }
    for (size_t j = 0; j + 1 < n_cuts; j++) {
        if (owner[j] < 0)
            continue;
        span *prev = s->n_spans ? &s->spans[s->n_spans - 1] : NULL;
        if (prev && prev->module == owner[j] && prev->end == cuts[j])
            prev->end = cuts[j + 1];
        else
            s->spans[s->n_spans++] = (span){cuts[j], cuts[j + 1], owner[j]};
    }
out:
    free(owner);
    free(next);
    free(cuts);
    free(segs);
}

static symbolizer *get(hsr_log *log)
{
    if (log->symbolizer)
        return log->symbolizer;
    symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    log->symbolizer = s;
    build_spans(s, log);
    s->dwfl = dwfl_begin(&offline_callbacks);
    if (!s->dwfl)
        return s;
    dwfl_report_begin(s->dwfl);
    /* the newest generation of the map first; an older entry at the same place is skipped by libdw */
    bool *keep = newest_modules(log);
    for (int g = log->n_modules - 1; keep && g >= 0; g--) {
        const hsr_module *m = &log->modules[g];
        int fd = keep[g] ? open_module(m->path) : -1;
        if (fd >= 0 && !dwfl_report_elf(s->dwfl, m->path, m->path, fd, m->load_bias, false))
            close(fd); /* libdw takes the descriptor only when it succeeds */
    }
    free(keep);
    dwfl_report_end(s->dwfl, NULL, NULL);
    return s;
}

static const hsr_module *module_of(const hsr_log *log, const symbolizer *s, uint64_t pc)
{
    size_t lo = 0, hi = s->n_spans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->spans[mid].end <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n_spans && s->spans[lo].start <= pc ? &log->modules[s->spans[lo].module] : NULL;
}

void hsr_symbolize(hsr_log *log, uint64_t pc, hsr_frame_info *out)
{
    symbolizer *s = get(log);
    cached_frame *hit = NULL;
    if (s) {
        HASH_FIND(hh, s->cache, &pc, sizeof pc, hit);
        if (hit) {
            *out = hit->info;
            return;
        }
    }
    memset(out, 0, sizeof *out);
    snprintf(out->function, sizeof out->function, "??");
    const hsr_module *m = s ? module_of(log, s, pc) : NULL;
    if (m) {
        snprintf(out->module, sizeof out->module, "%s", m->path);
        out->offset = pc - m->load_bias;
    }
    uint64_t addr = pc ? pc - 1 : 0; /* a return address: look up the call instruction */
    Dwfl_Module *mod = s && s->dwfl ? dwfl_addrmodule(s->dwfl, addr) : NULL;
    if (mod) {
        GElf_Sym sym;
        GElf_Off off = 0;
        const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
        if (name) {
            snprintf(out->function, sizeof out->function, "%s", name);
            out->offset = off + 1;
        }
        Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
        int lineno = 0;
        const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
        if (file) {
            snprintf(out->file, sizeof out->file, "%s", file);
            out->line = lineno;
        }
    }
    if (s && (hit = malloc(sizeof *hit))) {
        hit->pc = pc;
        hit->info = *out;
        HASH_ADD(hh, s->cache, pc, sizeof hit->pc, hit);
    }
}

void hsr_frame_text(const hsr_frame_info *f, uint64_t pc, char *buf, size_t len)
{
    if (f->file[0])
        snprintf(buf, len, "%s (%s:%d)", f->function, f->file, f->line);
    else if (f->module[0])
        snprintf(buf, len, "%s+0x%llx (%s)", f->function, (unsigned long long)f->offset, f->module);
    else
        snprintf(buf, len, "0x%llx", (unsigned long long)pc);
}

void hsr_symbolizer_free(hsr_log *log)
{
    symbolizer *s = log->symbolizer;
    if (!s)
        return;
    cached_frame *c, *tmp;
    HASH_ITER(hh, s->cache, c, tmp)
    {
        HASH_DEL(s->cache, c);
        free(c);
    }
    if (s->dwfl)
        dwfl_end(s->dwfl);
    free(s->spans);
    free(s);
    log->symbolizer = NULL;
}
