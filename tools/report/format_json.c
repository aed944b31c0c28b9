/* Everything, machine-readable: the logs, the summary, every event, every finding with its
 * symbolized stacks. */
#include "emit.h"
#include "formats.h"
#include "symbolize.h"

#include <string.h>

static void stack_json(FILE *out, hsr_log *log, uint32_t id)
{
    const hsr_stack *s = hsr_find_stack(log, id);
    fputc('[', out);
    for (uint32_t i = 0; s && i < s->n_frames; i++) {
        hsr_frame_info fi;
        uint64_t pc = hsr_frame(s, i);
        hsr_symbolize(log, pc, &fi);
        fprintf(out, "%s{\"pc\":\"0x%llx\",\"function\":", i ? "," : "", (unsigned long long)pc);
        hsr_json_string(out, fi.function);
        fprintf(out, ",\"file\":");
        hsr_json_string(out, fi.file);
        fprintf(out, ",\"line\":%d,\"module\":", fi.line);
        hsr_json_string(out, fi.module);
        fputc('}', out);
    }
    fputc(']', out);
}

/* A stack as the findings file writes it: ["function+0xoff (module)" or "0x...", ...]. */
static void stack_strings(FILE *out, hsr_log *log, uint32_t id)
{
    const hsr_stack *s = hsr_find_stack(log, id);
    fputc('[', out);
    for (uint32_t i = 0; s && i < s->n_frames; i++) {
        hsr_frame_info fi;
        uint64_t pc = hsr_frame(s, i);
        hsr_symbolize(log, pc, &fi);
        char text[1024];
        hsr_frame_text(&fi, pc, text, sizeof text);
        fputs(i ? "," : "", out);
        hsr_json_string(out, text);
    }
    fputc(']', out);
}

/* A finding's fields, from the schema (hipshadow/finding_schema.inc): KEY(kind) is "\"kind\":",
 * and a name the schema lacks does not compile. */
enum {
#define HS_FIELD(name, type, writers, meaning) FIELD_##name,
#include "hipshadow/finding_schema.inc"
#undef HS_FIELD
};
#define KEY(name) (sizeof(char[FIELD_##name + 1]) ? "\"" #name "\":" : "")
/* The log's direction byte: HS_DIR numbering (0..4), 255 for a finding that is not a copy. */
enum { HS_DIR_DEFAULT_LOG = 4 };

/* A finding's parts (hsr_finding_parts_of) with the findings file's names and types:
 * src/core/findings/report_json.c and report_races.c write the same. */
static void access_json(FILE *out, hsr_log *log, const char *key, const hs_log_access *a, const char *kernel,
                        uint64_t base, uint32_t stack)
{
    fprintf(out, "\"%s\":{\"api\":", key);
    hsr_json_string(out, hsr_api_name(log, a->api));
    fprintf(out,
            ",\"stream\":\"0x%llx\",\"seq\":%llu,\"access\":\"%s\",\"known\":%s,\"offset\":%llu,\"bytes\":%llu,"
            "\"ptr\":\"0x%llx\"",
            (unsigned long long)a->stream, (unsigned long long)a->seq,
            a->flags & HS_LOG_ACCESS_WRITE ? "write" : "read", a->flags & HS_LOG_ACCESS_ASSUMED ? "false" : "true",
            (unsigned long long)a->lo, (unsigned long long)(a->hi - a->lo), (unsigned long long)(base + a->lo));
    if (a->flags & HS_LOG_ACCESS_LAUNCH) {
        fprintf(out, ",\"kernel\":");
        if (a->kernel_bytes)
            hsr_json_string(out, kernel);
        else
            fprintf(out, "null");
        fprintf(out, ",\"arg\":%u", a->arg);
    }
    fprintf(out, ",\"thread\":%u,\"stack_id\":%u,\"stack\":", a->thread, stack);
    stack_strings(out, log, stack);
    fputc('}', out);
}

/* The ranges are read member by member: the log's records are packed, so a pointer to one of
 * their arrays may be misaligned. */
static void ranges_json(FILE *out, const char *key, const hs_log_uninit *u, bool written)
{
    uint32_t count = written ? u->n_written : u->n_gaps;
    fprintf(out, ",\"%s\":[", key);
    for (uint32_t i = 0; i < count && i < HS_LOG_UNINIT_RANGES; i++) {
        uint64_t lo = written ? u->written[i][0] : u->gaps[i][0], hi = written ? u->written[i][1] : u->gaps[i][1];
        fprintf(out, "%s{\"ptr\":\"0x%llx\",\"offset\":%llu,\"bytes\":%llu}", i ? "," : "",
                (unsigned long long)(u->alloc_base + lo), (unsigned long long)lo,
                (unsigned long long)(hi > lo ? hi - lo : 0));
    }
    fputc(']', out);
}

static void parts_json(FILE *out, hsr_log *log, const hs_log_finding *f)
{
    hsr_finding_parts p;
    if (!hsr_finding_parts_of(f, &p))
        return;
    if (p.has_cause) {
        fprintf(out, ",%s", KEY(cause));
        hsr_json_string(out, p.cause);
        fprintf(out, ",%s", KEY(cause_rule));
        hsr_json_string(out, p.cause_rule);
    }
    if (p.has_race) {
        const hs_log_race *r = &p.race;
        fprintf(out, ",%s{\"alloc_id\":%llu,\"ptr\":\"0x%llx\",\"offset\":%llu,\"bytes\":%llu,", KEY(race),
                (unsigned long long)r->alloc_id, (unsigned long long)(r->alloc_base + r->lo), (unsigned long long)r->lo,
                (unsigned long long)(r->hi - r->lo));
        access_json(out, log, "this", &r->mine, p.mine_kernel, r->alloc_base, f->stack);
        fputc(',', out);
        access_json(out, log, "other", &r->other, p.other_kernel, r->alloc_base, r->other.stack);
        const char *pre = hsr_call_prefix(hsr_api_name(log, r->mine.api));
        fprintf(out,
                ",\"order_with\":\"%sEventRecord on stream 0x%llx after the other call, %sStreamWaitEvent on stream "
                "0x%llx before this one; or %sStreamSynchronize of stream 0x%llx before this call\"}",
                pre, (unsigned long long)r->other.stream, pre, (unsigned long long)r->mine.stream, pre,
                (unsigned long long)r->other.stream);
    }
    if (p.has_uninit) {
        const hs_log_uninit *u = &p.uninit;
        fprintf(out, ",%s{\"alloc_id\":%llu,\"offset\":%llu,\"bytes\":%llu", KEY(uninit),
                (unsigned long long)u->alloc_id, (unsigned long long)u->lo, (unsigned long long)(u->hi - u->lo));
        ranges_json(out, "never_written", u, false);
        ranges_json(out, "written", u, true);
        if (u->has_last_write) {
            fprintf(out, ",\"short_write\":{\"api\":");
            hsr_json_string(out, hsr_api_name(log, u->last_write.api));
            fprintf(out, ",\"op\":\"%s\",\"offset\":%llu,\"bytes\":%llu}",
                    u->last_write.op == HS_LOG_ACCESS_MEMSET ? "memset" : "copy", (unsigned long long)u->last_write.lo,
                    (unsigned long long)(u->last_write.hi - u->last_write.lo));
        }
        fputc('}', out);
    }
}

static void event_json(FILE *out, hsr_log *log, const hsr_event *e)
{
    switch (e->type) {
    case HS_LOG_COPY:
    case HS_LOG_MEMSET: {
        const hs_log_copy *c = e->rec;
        fprintf(out, "{\"type\":\"%s\",\"api\":", e->type == HS_LOG_COPY ? "copy" : "memset");
        hsr_json_string(out, hsr_api_name(log, c->api));
        fprintf(out,
                ",\"start_ns\":%llu,\"end_ns\":%llu,\"thread\":%u,"
                "\"direction\":\"%s\",\"async\":%s,\"blocked\":%s,\"stream\":\"0x%llx\",\"dst\":\"0x%llx\","
                "\"src\":\"0x%llx\",\"bytes\":%llu,\"dst_alloc\":%llu,\"dst_offset\":%llu,\"src_alloc\":%llu,"
                "\"src_offset\":%llu,\"result\":",
                (unsigned long long)c->start_ns, (unsigned long long)c->end_ns, c->thread,
                hsr_direction_name(c->direction), c->flags & 1 ? "true" : "false", c->flags & 2 ? "true" : "false",
                (unsigned long long)c->stream, (unsigned long long)c->dst, (unsigned long long)c->src,
                (unsigned long long)c->bytes, (unsigned long long)c->dst_alloc, (unsigned long long)c->dst_offset,
                (unsigned long long)c->src_alloc, (unsigned long long)c->src_offset);
        if (c->result == HS_LOG_RESULT_PENDING)
            fprintf(out, "null");
        else
            fprintf(out, "%d", c->result);
        fprintf(out, ",\"first_finding\":%u}", c->first_finding);
        break;
    }
    case HS_LOG_ALLOC: {
        const hs_log_alloc *a = e->rec;
        fprintf(out, "{\"type\":\"alloc\",\"api\":");
        hsr_json_string(out, hsr_api_name(log, a->api));
        fprintf(out,
                ",\"time_ns\":%llu,\"thread\":%u,\"id\":%llu,\"base\":\"0x%llx\","
                "\"size\":%llu,\"mem_kind\":%u,\"device\":%d,\"stream\":\"0x%llx\",\"result\":%d}",
                (unsigned long long)a->time_ns, a->thread, (unsigned long long)a->id, (unsigned long long)a->base,
                (unsigned long long)a->size, a->mem_kind, a->device, (unsigned long long)a->stream, a->result);
        break;
    }
    case HS_LOG_FREE: {
        const hs_log_free *f = e->rec;
        fprintf(out, "{\"type\":\"free\",\"api\":");
        hsr_json_string(out, hsr_api_name(log, f->api));
        fprintf(out,
                ",\"time_ns\":%llu,\"thread\":%u,\"id\":%llu,\"base\":\"0x%llx\","
                "\"stream\":\"0x%llx\",\"result\":%d}",
                (unsigned long long)f->time_ns, f->thread, (unsigned long long)f->id, (unsigned long long)f->base,
                (unsigned long long)f->stream, f->result);
        break;
    }
    case HS_LOG_SYNC: {
        const hs_log_sync *y = e->rec;
        fprintf(out, "{\"type\":\"sync\",\"api\":");
        hsr_json_string(out, hsr_api_name(log, y->api));
        fprintf(out,
                ",\"start_ns\":%llu,\"end_ns\":%llu,\"thread\":%u,"
                "\"stream\":\"0x%llx\",\"result\":%d}",
                (unsigned long long)y->start_ns, (unsigned long long)y->end_ns, y->thread,
                (unsigned long long)y->stream, y->result);
        break;
    }
    case HS_LOG_STREAM: {
        const hs_log_stream *t = e->rec;
        fprintf(out, "{\"type\":\"stream\",\"api\":");
        hsr_json_string(out, hsr_api_name(log, t->api));
        fprintf(out,
                ",\"time_ns\":%llu,\"thread\":%u,\"op\":\"%s\","
                "\"stream\":\"0x%llx\",\"result\":%d}",
                (unsigned long long)t->time_ns, t->thread, t->op == HS_LOG_STREAM_CREATE ? "create" : "destroy",
                (unsigned long long)t->stream, t->result);
        break;
    }
    case HS_LOG_EVENT: {
        const hs_log_event *v = e->rec;
        static const char *const ops[] = {"?",    "create",  "record",        "wait",
                                          "sync", "destroy", "capture-begin", "capture-end"};
        fprintf(out, "{\"type\":\"event\",\"api\":");
        hsr_json_string(out, hsr_api_name(log, v->api));
        fprintf(out,
                ",\"time_ns\":%llu,\"thread\":%u,\"op\":\"%s\","
                "\"event\":\"0x%llx\",\"stream\":\"0x%llx\",\"result\":%d}",
                (unsigned long long)v->time_ns, v->thread, v->op < 8 ? ops[v->op] : "?", (unsigned long long)v->event,
                (unsigned long long)v->stream, v->result);
        break;
    }
    case HS_LOG_LAUNCH: {
        const hs_log_launch *l = e->rec;
        fprintf(out, "{\"type\":\"launch\",\"api\":");
        hsr_json_string(out, hsr_api_name(log, l->api));
        fprintf(out, ",\"start_ns\":%llu,\"end_ns\":%llu,\"thread\":%u,\"name\":", (unsigned long long)l->start_ns,
                (unsigned long long)l->end_ns, l->thread);
        hsr_json_string(out, hsr_launch_name(log, l));
        fprintf(out,
                ",\"kernel_ref\":\"%s\",\"stream\":\"0x%llx\",\"seq\":%llu,\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],"
                "\"shmem\":%u,\"caller\":\"0x%llx\",\"blocked\":%s,\"result\":%d,\"first_finding\":%u,\"args\":[",
                hsr_kernel_ref_name(l->kernel_ref), (unsigned long long)l->stream, (unsigned long long)l->seq,
                l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->shmem,
                (unsigned long long)l->caller, l->flags & HS_LOG_LAUNCH_BLOCKED ? "true" : "false", l->result,
                l->first_finding);
        for (unsigned i = 0; i < l->n_args; i++) {
            hs_log_launch_arg a = hsr_launch_arg(l, i);
            fprintf(
                out,
                "%s{\"index\":%u,\"how\":\"%s\",\"value\":\"0x%llx\",\"alloc\":%llu,\"offset\":%lld,\"state\":\"%s\"}",
                i ? "," : "", a.index, a.how ? "scanned" : "exact", (unsigned long long)a.value,
                (unsigned long long)a.alloc_id, (long long)a.offset, hsr_arg_state_name(a.state));
        }
        fprintf(out, "],\"stack\":");
        stack_json(out, log, l->stack);
        fputc('}', out);
        break;
    }
    case HS_LOG_FINDING: {
        /* The findings file's fields, with its names and types (finding_schema.inc), then the log's own. */
        const hs_log_finding *f = e->rec;
        const char *kind = hsr_kind_name(f->kind);
        fprintf(out, "{%s\"%s\",%s\"%s\",%s", KEY(kind), kind, KEY(severity), hsr_severity_name(f->severity), KEY(api));
        hsr_json_string(out, hsr_api_name(log, f->api));
        fprintf(out, ",%s\"%s\",%s", KEY(action), hsr_action_name(f->action), KEY(direction));
        if (f->direction <= HS_DIR_DEFAULT_LOG) /* 255: not a copy */
            fprintf(out, "\"%s\"", hsr_direction_name(f->direction));
        else
            fprintf(out, "null");
        fprintf(out, ",%s\"0x%llx\",%s\"0x%llx\",%s%llu,%s", KEY(dst), (unsigned long long)f->dst, KEY(src),
                (unsigned long long)f->src, KEY(bytes), (unsigned long long)f->bytes, KEY(alloc));
        if (f->alloc_id)
            fprintf(out, "{\"base\":\"0x%llx\",\"size\":%llu,\"offset\":%llu,\"id\":%llu}",
                    (unsigned long long)f->alloc_base, (unsigned long long)f->alloc_size,
                    (unsigned long long)f->alloc_offset, (unsigned long long)f->alloc_id);
        else
            fprintf(out, "null");
        /* as the findings file: a number for the overrun kinds (and any finding that has one) */
        if (f->overrun || !strcmp(kind, "out-of-bounds") || !strcmp(kind, "host-out-of-bounds") ||
            !strcmp(kind, "region-overrun"))
            fprintf(out, ",%s%llu", KEY(overrun), (unsigned long long)f->overrun);
        else
            fprintf(out, ",%snull", KEY(overrun));
        fprintf(out, ",%snull,%s\"0x%llx\",%s", KEY(device), KEY(stream), (unsigned long long)f->stream, KEY(stack));
        stack_strings(out, log, f->stack);
        parts_json(out, log, f);
        fprintf(out, ",%s%u,%s%llu,%s\"finding\",%s%u,%s%d,%s", KEY(thread), f->thread, KEY(time_ns),
                (unsigned long long)f->time_ns, KEY(type), KEY(seq), f->seq, KEY(result), f->result, KEY(stack_frames));
        stack_json(out, log, f->stack);
        fprintf(out, ",%s", KEY(alloc_stack));
        stack_json(out, log, f->alloc_stack);
        fprintf(out, ",%s", KEY(free_stack));
        stack_json(out, log, f->free_stack);
        fputc('}', out);
        break;
    }
    case HS_LOG_GPU_FAULT: {
        hs_log_gpu_fault g;
        memcpy(&g, e->rec, sizeof g); /* packed: copied out before its fields are read */
        fprintf(out,
                "{\"type\":\"gpu_fault\",\"time_ns\":%llu,\"finding\":%u,\"address\":\"0x%llx\","
                "\"reasons\":%u,\"agent\":\"0x%llx\",\"where\":\"%s\",\"alloc\":%llu,\"base\":\"0x%llx\","
                "\"size\":%llu,\"offset\":%lld,\"below\":%llu,\"above\":%llu}",
                (unsigned long long)g.time_ns, g.finding_seq, (unsigned long long)g.address, g.reasons,
                (unsigned long long)g.agent, hsr_fault_where_name(g.where), (unsigned long long)g.alloc_id,
                (unsigned long long)g.alloc_base, (unsigned long long)g.alloc_size, (long long)g.offset,
                (unsigned long long)g.below_id, (unsigned long long)g.above_id);
        break;
    }
    default: fprintf(out, "{\"type\":\"unknown\",\"record\":%u}", e->type);
    }
}

void hsr_format_json(hsr_set *set, const hsr_summary *s, FILE *out)
{
    fprintf(out, "{\"logs\":[");
    for (int i = 0; i < set->n_logs; i++) {
        hsr_log *l = &set->logs[i];
        const hs_log_file_header *h = &l->header;
        fprintf(out, "%s{\"path\":", i ? "," : "");
        hsr_json_string(out, l->path);
        if (l->header_ok) {
            fprintf(out, ",\"pid\":%u,\"parent_pid\":%u,\"rank\":%d,\"start_time_ns\":%llu,\"mode\":\"%s\",\"host\":",
                    h->pid, h->parent_pid, h->rank, (unsigned long long)h->start_time_ns,
                    h->flags & HS_LOG_FLAG_FULL ? "full" : "ring");
            hsr_json_string(out, l->host);
            fprintf(out, ",\"executable\":");
            hsr_json_string(out, l->executable);
            fprintf(out, ",\"command_line\":");
            hsr_json_string(out, l->command_line);
            fprintf(out, ",\"options\":");
            hsr_json_string(out, l->options);
            /* "NAME=value" lines as an object of strings */
            fprintf(out, ",\"environment\":{");
            bool first = true;
            for (const char *e = l->environment; *e;) {
                const char *end = strchr(e, '\n');
                size_t len = end ? (size_t)(end - e) : strlen(e);
                const char *eq = memchr(e, '=', len);
                if (eq) {
                    char name[sizeof l->environment], value[sizeof l->environment];
                    snprintf(name, sizeof name, "%.*s", (int)(eq - e), e);
                    snprintf(value, sizeof value, "%.*s", (int)(e + len - eq - 1), eq + 1);
                    fprintf(out, first ? "" : ",");
                    hsr_json_string(out, name);
                    fputc(':', out);
                    hsr_json_string(out, value);
                    first = false;
                }
                e += len + (end != NULL);
            }
            fputc('}', out);
        }
        fprintf(out, ",\"damage\":[");
        for (int d = 0; d < l->n_damage; d++) {
            fprintf(out, d ? "," : "");
            hsr_json_string(out, l->damage[d]);
        }
        fprintf(out, "]}");
    }
    fprintf(out, "],\"summary\":{\"calls_by_api\":{");
    for (int i = 0; i < s->n_apis; i++) {
        fprintf(out, "%s", i ? "," : "");
        hsr_json_string(out, s->apis[i].name);
        fprintf(out, ":%llu", (unsigned long long)s->apis[i].calls);
    }
    fprintf(out, "},\"bytes_by_direction\":{");
    for (unsigned d = 0; d < 5; d++)
        fprintf(out, "%s\"%s\":%llu", d ? "," : "", hsr_direction_name(d), (unsigned long long)s->bytes_by_dir[d]);
    fprintf(out,
            "},\"copies\":%llu,\"memsets\":%llu,\"allocs\":%llu,\"frees\":%llu,\"syncs\":%llu,\"launches\":%llu,"
            "\"launches_by_kernel\":[",
            (unsigned long long)s->copies, (unsigned long long)s->memsets, (unsigned long long)s->allocs,
            (unsigned long long)s->frees, (unsigned long long)s->syncs, (unsigned long long)s->launches);
    const char *comma = "";
    for (int i = 0; i < s->n_launch_logs; i++)
        for (int k = 0; k < s->launches_by_log[i].n_kernels; k++) {
            fprintf(out, "%s{\"pid\":%u,\"name\":", comma, set->logs[i].header.pid);
            hsr_json_string(out, s->launches_by_log[i].kernels[k].name);
            fprintf(out, ",\"launches\":%llu}", (unsigned long long)s->launches_by_log[i].kernels[k].launches);
            comma = ",";
        }
    fprintf(out, "],\"peak_device_bytes\":%llu,\"findings_by_kind\":{", (unsigned long long)s->peak_device_bytes);
    const char *sep = "";
    for (unsigned k = 0; k < hsr_kind_count(); k++)
        if (s->findings_by_kind[k]) {
            fprintf(out, "%s\"%s\":%llu", sep, hsr_kind_name(k), (unsigned long long)s->findings_by_kind[k]);
            sep = ",";
        }
    fprintf(out, "},\"leaks\":[");
    for (size_t i = 0; i < s->n_leaks; i++) {
        hsr_log *l = &set->logs[s->leaks[i].log];
        const hs_log_alloc *a = s->leaks[i].alloc;
        fprintf(out, "%s{\"pid\":%u,\"id\":%llu,\"base\":\"0x%llx\",\"size\":%llu,\"api\":", i ? "," : "",
                l->header.pid, (unsigned long long)a->id, (unsigned long long)a->base, (unsigned long long)a->size);
        hsr_json_string(out, hsr_api_name(l, a->api));
        fprintf(out, ",\"stack\":");
        stack_json(out, l, a->stack);
        fputc('}', out);
    }
    fprintf(out, "]},\"events\":[");
    for (size_t i = 0; i < set->n_events; i++) {
        const hsr_event *e = &set->events[i];
        fprintf(out, "%s{\"pid\":%u,\"record\":", i ? ",\n" : "\n", set->logs[e->log].header.pid);
        event_json(out, &set->logs[e->log], e);
        fputc('}', out);
    }
    fprintf(out, "\n]}\n");
}
