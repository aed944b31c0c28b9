/* One self-contained page: SVG charts of device memory in use over time and of copies and kernel
 * launches on a per-stream timeline, then a findings table.  No scripts, no external files.
 * Every string from the log goes out through hsr_xml_string: it is text, never markup. */
#include "emit.h"
#include "formats.h"
#include "symbolize.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

enum { WIDTH = 1140, CHART_H = 220, LANE_H = 26, LEFT = 215, MAX_RECTS = 20000 };

static double x_of(const hsr_summary *s, uint64_t t)
{
    uint64_t span = s->last_ns > s->first_ns ? s->last_ns - s->first_ns : 1;
    return LEFT + (double)(t - s->first_ns) * (WIDTH - LEFT - 20) / (double)span;
}

static const char *color_of(unsigned type, unsigned dir)
{
    if (type == HS_LOG_MEMSET)
        return "#8e44ad";
    if (type == HS_LOG_SYNC)
        return "#95a5a6";
    if (type == HS_LOG_LAUNCH)
        return "#c2185b";
    static const char *const by_dir[] = {"#7f8c8d", "#2980b9", "#e67e22", "#27ae60", "#34495e"};
    return dir < 5 ? by_dir[dir] : "#34495e";
}

static void memory_chart(FILE *out, const hsr_summary *s)
{
    char b[32];
    uint64_t peak = s->peak_device_bytes ? s->peak_device_bytes : 1;
    fprintf(out,
            "<h2>Device memory in use</h2>\n<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"device memory in "
            "use over time\">\n",
            WIDTH, CHART_H + 40);
    fprintf(out, "<rect x=\"%d\" y=\"10\" width=\"%d\" height=\"%d\" fill=\"#fbfbfb\" stroke=\"#ccc\"/>\n", LEFT,
            WIDTH - LEFT - 20, CHART_H);
    fprintf(out, "<text x=\"5\" y=\"20\" font-size=\"12\">%s</text><text x=\"5\" y=\"%d\" font-size=\"12\">0</text>\n",
            hsr_human_bytes(peak, b, sizeof b), CHART_H + 10);
    fprintf(out, "<polyline fill=\"rgba(41,128,185,0.25)\" stroke=\"#2980b9\" stroke-width=\"2\" points=\"%d,%d ", LEFT,
            CHART_H + 10);
    double last_y = CHART_H + 10;
    for (size_t i = 0; i < s->n_memory; i++) {
        double x = x_of(s, s->memory[i].time_ns),
               y = 10 + CHART_H - (double)s->memory[i].bytes * CHART_H / (double)peak;
        fprintf(out, "%.1f,%.1f %.1f,%.1f ", x, last_y, x, y); /* a step: memory changes at the event */
        last_y = y;
    }
    fprintf(out, "%d,%.1f %d,%d\"/>\n", WIDTH - 20, last_y, WIDTH - 20, CHART_H + 10);
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" font-size=\"12\">0 s</text><text x=\"%d\" y=\"%d\" font-size=\"12\" "
            "text-anchor=\"end\">%.6f s</text>\n</svg>\n",
            LEFT, CHART_H + 30, WIDTH - 20, CHART_H + 30, (s->last_ns - s->first_ns) / 1e9);
}

typedef struct lane {
    uint32_t log;
    uint64_t stream;
} lane;

/* Lanes: one per stream of each log, in order of first use, found by hash. */
typedef struct lane_index {
    struct {
        uint64_t stream;
        uint32_t log;
        uint32_t pad;
    } key;
    int lane;
    UT_hash_handle hh;
} lane_index;

typedef struct lanes {
    lane *items;
    int n, cap;
    lane_index *by_stream;
} lanes;

static bool on_timeline(const hsr_event *e, uint64_t *stream)
{
    if (e->type == HS_LOG_COPY || e->type == HS_LOG_MEMSET)
        *stream = ((const hs_log_copy *)e->rec)->stream;
    else if (e->type == HS_LOG_LAUNCH)
        *stream = ((const hs_log_launch *)e->rec)->stream;
    else
        return false;
    return true;
}

static int lane_of(lanes *ls, uint32_t log, uint64_t stream)
{
    lane_index key, *found = NULL;
    memset(&key, 0, sizeof key);
    key.key.stream = stream;
    key.key.log = log;
    HASH_FIND(hh, ls->by_stream, &key.key, sizeof key.key, found);
    if (found)
        return found->lane;
    if (ls->n == ls->cap) {
        int c = ls->cap ? ls->cap * 2 : 16;
        lane *grown = realloc(ls->items, (size_t)c * sizeof *grown);
        if (!grown)
            return 0;
        ls->items = grown;
        ls->cap = c;
    }
    if (!(found = calloc(1, sizeof *found)))
        return 0;
    found->key = key.key;
    found->lane = ls->n;
    HASH_ADD(hh, ls->by_stream, key, sizeof found->key, found);
    ls->items[ls->n] = (lane){log, stream};
    return ls->n++;
}

static void timeline(FILE *out, hsr_set *set, const hsr_summary *s)
{
    lanes ls = {0};
    uint64_t stream;
    for (size_t i = 0; i < set->n_events; i++)
        if (on_timeline(&set->events[i], &stream))
            lane_of(&ls, set->events[i].log, stream);
    int n = ls.n;
    fprintf(out,
            "<h2>Copies and launches by stream</h2>\n<svg width=\"%d\" height=\"%d\" role=\"img\" "
            "aria-label=\"copies and kernel launches on a per-stream timeline\">\n",
            WIDTH, n * LANE_H + 30);
    for (int i = 0; i < n; i++)
        fprintf(out,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/><text x=\"5\" y=\"%d\" "
                "font-size=\"12\">pid %u stream 0x%llx</text>\n",
                LEFT, i * LANE_H + 5, WIDTH - LEFT - 20, LANE_H - 4, i % 2 ? "#f4f4f4" : "#fafafa", i * LANE_H + 21,
                set->logs[ls.items[i].log].header.pid, (unsigned long long)ls.items[i].stream);
    size_t drawn = 0;
    for (size_t i = 0; i < set->n_events && drawn < MAX_RECTS; i++) {
        const hsr_event *e = &set->events[i];
        if (!on_timeline(e, &stream))
            continue;
        int l = lane_of(&ls, e->log, stream);
        if (e->type == HS_LOG_LAUNCH) {
            const hs_log_launch *k = e->rec;
            double x0 = x_of(s, k->start_ns), x1 = x_of(s, k->end_ns > k->start_ns ? k->end_ns : k->start_ns);
            fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", x0,
                    l * LANE_H + 7, x1 - x0 < 2 ? 2 : x1 - x0, LANE_H - 8, color_of(e->type, 0));
            hsr_xml_string(out, hsr_launch_name(&set->logs[e->log], k));
            fprintf(out, " grid (%u,%u,%u) block (%u,%u,%u)</title></rect>\n", k->grid[0], k->grid[1], k->grid[2],
                    k->block[0], k->block[1], k->block[2]);
            drawn++;
            continue;
        }
        const hs_log_copy *c = e->rec;
        double x0 = x_of(s, c->start_ns), x1 = x_of(s, c->end_ns ? c->end_ns : c->start_ns);
        fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", x0, l * LANE_H + 7,
                x1 - x0 < 2 ? 2 : x1 - x0, LANE_H - 8, color_of(e->type, c->direction));
        hsr_xml_string(out, hsr_api_name(&set->logs[e->log], c->api));
        fprintf(out, " %s %llu bytes</title></rect>\n",
                e->type == HS_LOG_COPY ? hsr_direction_name(c->direction) : "memset", (unsigned long long)c->bytes);
        drawn++;
    }
    fprintf(out,
            "</svg>\n<p class=\"legend\"><span style=\"color:#2980b9\">&#9632; H2D</span> <span "
            "style=\"color:#e67e22\">&#9632; D2H</span> "
            "<span style=\"color:#27ae60\">&#9632; D2D</span> <span style=\"color:#7f8c8d\">&#9632; H2H</span> "
            "<span style=\"color:#8e44ad\">&#9632; memset</span> <span style=\"color:#c2185b\">&#9632; kernel "
            "launch</span>%s</p>\n",
            drawn == MAX_RECTS ? " (first 20000 operations drawn)" : "");
    lane_index *k, *tmp;
    HASH_ITER(hh, ls.by_stream, k, tmp)
    {
        HASH_DEL(ls.by_stream, k);
        free(k);
    }
    free(ls.items);
}

/* Launches by kernel, per log (the ten most launched of each). */
static void launches_table(FILE *out, hsr_set *set, const hsr_summary *s)
{
    if (!s->launches)
        return;
    fprintf(out, "<h2>Kernel launches</h2>\n<table><tr><th>pid</th><th>kernel</th><th>launches</th></tr>\n");
    for (int i = 0; i < s->n_launch_logs; i++) {
        const hsr_log_launches *per = &s->launches_by_log[i];
        for (int k = 0; k < per->n_kernels && k < 10; k++) {
            fprintf(out, "<tr><td>%u</td><td>", set->logs[i].header.pid);
            hsr_xml_string(out, per->kernels[k].name);
            fprintf(out, "</td><td>%llu</td></tr>\n", (unsigned long long)per->kernels[k].launches);
        }
        if (per->n_kernels > 10)
            fprintf(out, "<tr><td>%u</td><td>(%d more kernels)</td><td></td></tr>\n", set->logs[i].header.pid,
                    per->n_kernels - 10);
    }
    fprintf(out, "</table>\n");
}

static void findings_table(FILE *out, hsr_set *set)
{
    fprintf(out,
            "<h2>Findings</h2>\n<table><tr><th>#</th><th>severity</th><th>kind</th><th>what</th><th>where</th></tr>\n");
    int rows = 0;
    hsr_log *l;
    const hs_log_finding *f;
    for (size_t i = 0; (f = hsr_next_finding(set, &i, &l));) {
        char msg[4096], file[512] = "", where[600] = "";
        int line = 0;
        hsr_finding_message_full(l, f, msg, sizeof msg);
        if (hsr_own_frame(l, f->stack, file, sizeof file, &line))
            snprintf(where, sizeof where, "%s:%d", file, line);
        fprintf(out, "<tr class=\"%s\"><td>%u</td><td>%s</td><td>%s</td><td>", hsr_severity_name(f->severity), f->seq,
                hsr_severity_name(f->severity), hsr_kind_name(f->kind));
        hsr_xml_string(out, msg);
        fprintf(out, "</td><td>");
        hsr_xml_string(out, where);
        fprintf(out, "</td></tr>\n");
        rows++;
    }
    if (!rows)
        fprintf(out, "<tr><td colspan=\"5\">no findings</td></tr>\n");
    fprintf(out, "</table>\n");
}

void hsr_format_html(hsr_set *set, const hsr_summary *s, FILE *out)
{
    char b[32];
    fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hipshadow report</title>\n<style>"
                 "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse}"
                 "td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;text-align:left}"
                 "tr.error td{background:#fdecea}tr.warning td{background:#fff8e1}.legend{font-size:13px}"
                 "</style></head><body>\n<h1>hipshadow report</h1>\n<p>");
    for (int i = 0; i < set->n_logs; i++) {
        fprintf(out, "%s", i ? "<br>" : "");
        hsr_xml_string(out, set->logs[i].path);
        fprintf(out, ": pid %u, ", set->logs[i].header.pid);
        hsr_xml_string(out, set->logs[i].command_line);
        for (int d = 0; d < set->logs[i].n_damage; d++) {
            fprintf(out, "<br><b>damage:</b> ");
            hsr_xml_string(out, set->logs[i].damage[d]);
        }
    }
    fprintf(out,
            "</p>\n<p>%llu copies, %llu memsets, %llu kernel launches, %llu allocations, %llu frees, %llu syncs; "
            "peak device memory %s; %llu findings.</p>\n",
            (unsigned long long)s->copies, (unsigned long long)s->memsets, (unsigned long long)s->launches,
            (unsigned long long)s->allocs, (unsigned long long)s->frees, (unsigned long long)s->syncs,
            hsr_human_bytes(s->peak_device_bytes, b, sizeof b), (unsigned long long)s->findings);
    memory_chart(out, s);
    timeline(out, set, s);
    launches_table(out, set, s);
    findings_table(out, set);
    fprintf(out, "</body></html>\n");
}
