#include "formats.h"
#include "symbolize.h"

#include <stdarg.h>
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

/* ---- a finding's parts (hsr_finding_parts_of), as the live text report says them ---- */

typedef struct sbuf {
    char *p;
    size_t len, n;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
{
    if (b->n >= b->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->n, b->len - b->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n = b->n + (size_t)k < b->len ? b->n + (size_t)k : b->len - 1;
}

/* A string from the log: control characters as \xNN, so it cannot end or start a line (the
 * caller escapes the rest for its format). */
static void put_data(sbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f)
            put(b, "\\x%02x", c);
        else
            put(b, "%c", c);
    }
}

const char *hsr_call_prefix(const char *api)
{
    return !strncmp(api, "hip", 3) ? "hip" : !strncmp(api, "cuda", 4) ? "cuda" : "cu";
}

static const char *what_of(const hs_log_access *a)
{
    return !(a->flags & HS_LOG_ACCESS_WRITE)  ? "reads"
           : a->flags & HS_LOG_ACCESS_ASSUMED ? "may write (a kernel argument whose access is not said)"
                                              : "writes";
}

static void access_line(sbuf *b, const hsr_log *log, const char *who, const hs_log_access *a, const char *kernel,
                        uint64_t base)
{
    put(b, "%s: ", who);
    put_data(b, hsr_api_name(log, a->api));
    if (a->flags & HS_LOG_ACCESS_LAUNCH) {
        put(b, " of kernel '");
        put_data(b, a->kernel_bytes ? kernel : "?");
        put(b, "' (argument %u)", a->arg);
    } else
        put(b, " (%llu bytes)", (unsigned long long)a->bytes);
    put(b, " on stream 0x%llx, %s [0x%llx, 0x%llx)", (unsigned long long)a->stream, what_of(a),
        (unsigned long long)(base + a->lo), (unsigned long long)(base + a->hi));
    if (a->seq)
        put(b, ", operation %llu of its stream", (unsigned long long)a->seq);
    put(b, ", thread T%u\n", a->thread);
}

/* lo and hi by value: the log's records are packed, so a pointer into one may be misaligned. */
static void range_line(sbuf *b, const char *what, uint64_t base, uint64_t lo, uint64_t hi)
{
    put(b, "%s: [0x%llx, 0x%llx) (offset %llu, %llu bytes)\n", what, (unsigned long long)(base + lo),
        (unsigned long long)(base + hi), (unsigned long long)lo, (unsigned long long)(hi > lo ? hi - lo : 0));
}

void hsr_finding_details(const hsr_log *log, const hs_log_finding *f, const hsr_finding_parts *p, char *buf, size_t len)
{
    sbuf b = {buf, len, 0};
    if (len)
        buf[0] = 0;
    if (p->has_cause) {
        put(&b, "cause: ");
        put_data(&b, p->cause);
        put(&b, " (rule ");
        put_data(&b, p->cause_rule);
        put(&b, ")\n");
    }
    if (p->has_race) {
        const hs_log_race *r = &p->race;
        const char *pre = hsr_call_prefix(hsr_api_name(log, r->mine.api));
        put(&b,
            "bytes [0x%llx, 0x%llx) of allocation #%llu (offset %llu, %llu bytes) are touched by two streams\n"
            "with nothing ordering them, and at least one of the two writes them:\n",
            (unsigned long long)(r->alloc_base + r->lo), (unsigned long long)(r->alloc_base + r->hi),
            (unsigned long long)r->alloc_id, (unsigned long long)r->lo, (unsigned long long)(r->hi - r->lo));
        access_line(&b, log, "this call", &r->mine, p->mine_kernel, r->alloc_base);
        access_line(&b, log, "earlier, still in flight", &r->other, p->other_kernel, r->alloc_base);
        put(&b,
            "to order them: record an event on stream 0x%llx after the earlier call (%sEventRecord) and make\n"
            "stream 0x%llx wait for it (%sStreamWaitEvent) before this one, or synchronise stream 0x%llx\n"
            "(%sStreamSynchronize%s) before this call\n",
            (unsigned long long)r->other.stream, pre, (unsigned long long)r->mine.stream, pre,
            (unsigned long long)r->other.stream, pre, strcmp(pre, "cu") ? ", or the device" : ", cuEventSynchronize");
        put(&b, "earlier access (");
        put_data(&b, hsr_api_name(log, r->other.api));
        put(&b, ", thread T%u, %.6f s before this call)\n", r->other.thread,
            f->time_ns >= r->other.time_ns ? (f->time_ns - r->other.time_ns) / 1e9 : 0.0);
    }
    if (p->has_uninit) {
        const hs_log_uninit *u = &p->uninit;
        uint32_t n = u->n_gaps < HS_LOG_UNINIT_RANGES ? u->n_gaps : HS_LOG_UNINIT_RANGES;
        if (!u->kernel) {
            put(&b, "the copy reads [0x%llx, 0x%llx) of allocation #%llu, and nothing wrote %s of it:\n",
                (unsigned long long)(u->alloc_base + u->lo), (unsigned long long)(u->alloc_base + u->hi),
                (unsigned long long)u->alloc_id,
                u->n_gaps == 1 && u->gaps[0][0] == u->lo && u->gaps[0][1] == u->hi ? "any" : "these bytes");
        } else {
            put(&b,
                "the kernel is given a pointer into allocation #%llu (%llu bytes), which is only partly written,\n"
                "and by no kernel:\n",
                (unsigned long long)u->alloc_id, (unsigned long long)u->alloc_size);
            uint32_t w = u->n_written < HS_LOG_UNINIT_RANGES ? u->n_written : HS_LOG_UNINIT_RANGES;
            for (uint32_t i = 0; i < w; i++)
                range_line(&b, "  written", u->alloc_base, u->written[i][0], u->written[i][1]);
        }
        for (uint32_t i = 0; i < n; i++)
            range_line(&b, "  never written", u->alloc_base, u->gaps[i][0], u->gaps[i][1]);
        if (!u->kernel && u->n_gaps > n)
            put(&b, "  (and %u more ranges)\n", u->n_gaps - n);
        if (u->kernel && u->has_last_write) {
            const hs_log_access *l = &u->last_write;
            put(&b, "the %s of %llu bytes at 0x%llx (", l->op == HS_LOG_ACCESS_MEMSET ? "memset" : "copy",
                (unsigned long long)l->bytes, (unsigned long long)(u->alloc_base + l->lo));
            put_data(&b, hsr_api_name(log, l->api));
            put(&b, ") covered %llu of %llu bytes\n", (unsigned long long)(l->hi - l->lo),
                (unsigned long long)u->alloc_size);
        }
    }
}

void hsr_finding_message_full(const hsr_log *log, const hs_log_finding *f, char *buf, size_t len)
{
    hsr_finding_message(log, f, buf, len);
    hsr_finding_parts p;
    if (!hsr_finding_parts_of(f, &p))
        return;
    char details[3000];
    hsr_finding_details(log, f, &p, details, sizeof details);
    size_t n = strlen(buf);
    for (const char *d = details; *d && n + 3 < len;) {
        const char *e = strchr(d, '\n');
        size_t k = e ? (size_t)(e - d) : strlen(d);
        n += (size_t)snprintf(buf + n, len - n, "; %.*s", (int)k, d);
        if (n >= len)
            n = len - 1;
        d += k + (e != NULL);
    }
}
