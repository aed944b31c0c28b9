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

typedef struct symbolizer {
    Dwfl *dwfl;
    cached_frame *cache;
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

static symbolizer *get(hsr_log *log)
{
    if (log->symbolizer)
        return log->symbolizer;
    symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    log->symbolizer = s;
    s->dwfl = dwfl_begin(&offline_callbacks);
    if (!s->dwfl)
        return s;
    dwfl_report_begin(s->dwfl);
    /* the newest generation of the map first; an older entry at the same place is skipped by libdw */
    for (int g = log->n_modules - 1; g >= 0; g--) {
        const hsr_module *m = &log->modules[g];
        bool seen = false;
        for (int k = log->n_modules - 1; k > g; k--)
            seen |= !strcmp(log->modules[k].path, m->path) && log->modules[k].load_bias == m->load_bias;
        int fd = seen ? -1 : open_module(m->path);
        if (fd >= 0 && !dwfl_report_elf(s->dwfl, m->path, m->path, fd, m->load_bias, false))
            close(fd); /* libdw takes the descriptor only when it succeeds */
    }
    dwfl_report_end(s->dwfl, NULL, NULL);
    return s;
}

static const hsr_module *module_of(const hsr_log *log, uint64_t pc)
{
    for (int i = log->n_modules - 1; i >= 0; i--) {
        const hsr_module *m = &log->modules[i];
        for (int k = 0; k < m->n_segments; k++) {
            hs_log_segment seg;
            memcpy(&seg, &m->segments[k], sizeof seg);
            if (pc >= seg.start && pc < seg.start + seg.size)
                return m;
        }
    }
    return NULL;
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
    const hsr_module *m = module_of(log, pc);
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
    HASH_ITER(hh, s->cache, c, tmp) {
        HASH_DEL(s->cache, c);
        free(c);
    }
    if (s->dwfl)
        dwfl_end(s->dwfl);
    free(s);
    log->symbolizer = NULL;
}
