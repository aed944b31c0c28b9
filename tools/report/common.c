#include "formats.h"
#include "symbolize.h"

#include <string.h>

const hs_log_finding *hsr_next_finding(hsr_set *set, size_t *i, hsr_log **log)
{
    for (; *i < set->n_events; (*i)++) {
        const hsr_event *e = &set->events[*i];
        if (e->type == HS_LOG_FINDING) {
            *log = &set->logs[e->log];
            (*i)++;
            return e->rec;
        }
    }
    return NULL;
}

const char *hsr_severity_name(unsigned severity)
{
    return severity == 2 ? "error" : severity == 1 ? "warning" : "info";
}

const char *hsr_action_name(unsigned action)
{
    static const char *const names[] = {"forwarded", "blocked", "aborted", "fallback"};
    return action < 4 ? names[action] : "?";
}

void hsr_finding_message(const hsr_log *log, const hs_log_finding *f, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s on %s", hsr_kind_name(f->kind), hsr_api_name(log, f->api));
    if (f->direction < 5 && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ": %s of %llu bytes", hsr_direction_name(f->direction),
                      (unsigned long long)f->bytes);
    if (f->alloc_id && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " at allocation #%llu + %llu (of %llu bytes)",
                      (unsigned long long)f->alloc_id, (unsigned long long)f->alloc_offset,
                      (unsigned long long)f->alloc_size);
    if (f->overrun && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", %llu bytes past the end", (unsigned long long)f->overrun);
    if (f->kind == 12 /* runtime-error */ && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", the runtime returned %d", f->result);
}

static bool foreign_module(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(path, "/lib", 4) || !strncmp(path, "/usr/lib", 8) || !strncmp(base, "libhipshadow", 12) ||
           !strncmp(base, "libamdhip64", 11) || !strncmp(base, "libcudart", 9) || !strncmp(base, "libc.so", 7);
}

bool hsr_own_frame(hsr_log *log, uint32_t stack, char *file, size_t file_len, int *line)
{
    const hsr_stack *s = hsr_find_stack(log, stack);
    for (uint32_t i = 0; s && i < s->n_frames; i++) {
        hsr_frame_info fi;
        hsr_symbolize(log, hsr_frame(s, i), &fi);
        if (fi.file[0] && fi.line > 0 && !foreign_module(fi.module)) {
            snprintf(file, file_len, "%s", fi.file);
            *line = fi.line;
            return true;
        }
    }
    return false;
}

const char *hsr_fault_where_name(unsigned where)
{
    static const char *const names[] = {"unknown", "inside", "past-end", "before-start", "freed", "reserved-unmapped"};
    return where < 6 ? names[where] : "unknown";
}
