/* The default report: who ran, what was wrong with the log, a summary, then every finding
 * with its stacks symbolized to function and file:line.  Names from the log go out through
 * hsr_text_string, so none can start a line of its own or drive the terminal. */
#include "emit.h"
#include "formats.h"
#include "symbolize.h"

#include <string.h>
#include <time.h>

static void print_stack(FILE *out, hsr_log *log, uint32_t id, const char *title)
{
    const hsr_stack *s = hsr_find_stack(log, id);
    if (!s)
        return;
    fprintf(out, "      %s:\n", title);
    for (uint32_t i = 0; i < s->n_frames; i++) {
        hsr_frame_info fi;
        uint64_t pc = hsr_frame(s, i);
        hsr_symbolize(log, pc, &fi);
        char text[1400];
        hsr_frame_text(&fi, pc, text, sizeof text);
        fprintf(out, "        #%u ", i);
        hsr_text_string(out, text);
        fputc('\n', out);
    }
}

/* A call recorded without its stack: the one frame known, its caller's return address. */
static void print_caller(FILE *out, hsr_log *log, uint64_t pc, const char *title, const char *note)
{
    hsr_frame_info fi;
    hsr_symbolize(log, pc, &fi);
    char text[1400];
    hsr_frame_text(&fi, pc, text, sizeof text);
    fprintf(out, "      %s:\n        #0 ", title);
    hsr_text_string(out, text);
    fprintf(out, note ? " (%s)\n" : "\n", note);
}

static double rel(const hsr_summary *s, uint64_t t) { return t >= s->first_ns ? (t - s->first_ns) / 1e9 : 0; }

void hsr_format_text(hsr_set *set, const hsr_summary *s, FILE *out)
{
    char b1[32], b2[32];
    fprintf(out, "hipshadow report: %d log%s, %zu events\n", set->n_logs, set->n_logs == 1 ? "" : "s", set->n_events);
    for (int i = 0; i < set->n_logs; i++) {
        hsr_log *l = &set->logs[i];
        fprintf(out, "  log ");
        hsr_text_string(out, l->path);
        fputc('\n', out);
        if (l->header_ok) {
            const hs_log_file_header *h = &l->header;
            time_t t = (time_t)(h->start_time_ns / 1000000000ull);
            struct tm tm;
            char when[64];
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&t, &tm));
            fprintf(out, "    pid %u (parent %u), rank %d, host ", h->pid, h->parent_pid, h->rank);
            hsr_text_string(out, l->host);
            fprintf(out, ", started %s\n    command: ", when);
            hsr_text_string(out, l->command_line);
            fputc('\n', out);
            /* the variables that change GPU memory behaviour, as they were set for the process */
            for (const char *e = l->environment; *e;) {
                const char *end = strchr(e, '\n');
                size_t len = end ? (size_t)(end - e) : strlen(e);
                char line[sizeof l->environment];
                memcpy(line, e, len);
                line[len] = 0;
                fprintf(out, "    environment: ");
                hsr_text_string(out, line);
                fputc('\n', out);
                e += len + (end != NULL);
            }
            if (h->flags & HS_LOG_FLAG_FULL)
                fprintf(out, "    every event kept (log_mode=full)\n");
            else
                fprintf(out, "    the last %s of events kept (log_mode=ring): older events may be gone\n",
                        hsr_human_bytes(h->ring_chunks * HS_LOG_CHUNK_BYTES, b1, sizeof b1));
        }
        for (int d = 0; d < l->n_damage; d++)
            fprintf(out, "    DAMAGE: %s\n", l->damage[d]);
    }

    fprintf(out, "\nSummary\n  calls by API:\n");
    for (int i = 0; i < s->n_apis; i++) {
        fprintf(out, "    ");
        for (int w = hsr_text_string(out, s->apis[i].name); w < 28; w++)
            fputc(' ', out);
        fprintf(out, " %llu\n", (unsigned long long)s->apis[i].calls);
    }
    fprintf(out, "  bytes by direction:\n");
    for (unsigned d = 0; d < 5; d++)
        if (s->copies_by_dir[d])
            fprintf(out, "    %-7s %s in %llu copies\n", hsr_direction_name(d),
                    hsr_human_bytes(s->bytes_by_dir[d], b1, sizeof b1), (unsigned long long)s->copies_by_dir[d]);
    if (s->launches) /* none: logs written before launches were recorded say nothing of them */
        fprintf(out, "  launches: %llu\n", (unsigned long long)s->launches);
    for (int i = 0; i < s->n_launch_logs; i++) {
        const hsr_log_launches *per = &s->launches_by_log[i];
        if (!per->launches)
            continue;
        fprintf(out, "    ");
        hsr_text_string(out, set->logs[i].path);
        fprintf(out, " (pid %u): %llu launch%s by kernel\n", set->logs[i].header.pid, (unsigned long long)per->launches,
                per->launches == 1 ? "" : "es");
        for (int k = 0; k < per->n_kernels && k < 10; k++) {
            fprintf(out, "      %8llu  ", (unsigned long long)per->kernels[k].launches);
            hsr_text_string(out, per->kernels[k].name);
            fputc('\n', out);
        }
        if (per->n_kernels > 10)
            fprintf(out, "      (%d more kernels)\n", per->n_kernels - 10);
    }
    fprintf(out, "  peak device memory in use: %s (%llu bytes) at +%.6f s\n",
            hsr_human_bytes(s->peak_device_bytes, b1, sizeof b1), (unsigned long long)s->peak_device_bytes,
            rel(s, s->peak_time_ns));
    fprintf(out, "  findings by kind:");
    if (!s->findings)
        fprintf(out, " none");
    for (unsigned k = 0; k < hsr_kind_count(); k++)
        if (s->findings_by_kind[k])
            fprintf(out, " %s=%llu", hsr_kind_name(k), (unsigned long long)s->findings_by_kind[k]);
    fprintf(out, "\n  leaks: %zu allocation%s, %s, still live at the end of the log%s\n", s->n_leaks,
            s->n_leaks == 1 ? "" : "s", hsr_human_bytes(s->leaked_bytes, b2, sizeof b2),
            s->any_ring ? " (ring mode: frees before the kept window are not seen)" : "");
    for (size_t i = 0; i < s->n_leaks; i++) {
        hsr_log *l = &set->logs[s->leaks[i].log];
        const hs_log_alloc *a = s->leaks[i].alloc;
        fprintf(out, "    allocation #%llu: %llu bytes from ", (unsigned long long)a->id, (unsigned long long)a->size);
        hsr_text_string(out, hsr_api_name(l, a->api));
        fprintf(out, " at +%.6f s (pid %u)\n", rel(s, a->time_ns), l->header.pid);
        print_stack(out, l, a->stack, "allocated at");
    }

    fprintf(out, "\nFindings\n");
    if (!s->findings)
        fprintf(out, "  none\n");
    hsr_log *l;
    const hs_log_finding *f;
    for (size_t i = 0; (f = hsr_next_finding(set, &i, &l));) {
        char msg[512];
        hsr_finding_message(l, f, msg, sizeof msg);
        fprintf(out, "  [%u] %s ", f->seq, hsr_severity_name(f->severity));
        hsr_text_string(out, msg);
        fputc('\n', out);
        fprintf(out, "      pid %u, thread %u, at +%.6f s; dst 0x%llx, src 0x%llx, stream 0x%llx; action %s\n",
                l->header.pid, f->thread, rel(s, f->time_ns), (unsigned long long)f->dst, (unsigned long long)f->src,
                (unsigned long long)f->stream, hsr_action_name(f->action));
        if (f->alloc_id)
            fprintf(out, "      allocation #%llu [0x%llx, 0x%llx), offset %llu (offset %% 4096 = %llu)\n",
                    (unsigned long long)f->alloc_id, (unsigned long long)f->alloc_base,
                    (unsigned long long)(f->alloc_base + f->alloc_size), (unsigned long long)f->alloc_offset,
                    (unsigned long long)(f->alloc_offset % 4096));
        const hs_log_gpu_fault *gp = hsr_gpu_fault_of(s, (uint32_t)(l - set->logs), f->seq);
        if (gp) {
            hs_log_gpu_fault g;
            memcpy(&g, gp, sizeof g);
            fprintf(out, "      GPU memory fault at 0x%llx (reasons 0x%x): %s", (unsigned long long)g.address,
                    g.reasons, hsr_fault_where_name(g.where));
            if (g.alloc_id)
                fprintf(out, " allocation #%llu [0x%llx, 0x%llx) at offset %lld", (unsigned long long)g.alloc_id,
                        (unsigned long long)g.alloc_base, (unsigned long long)(g.alloc_base + g.alloc_size),
                        (long long)g.offset);
            if (!g.alloc_id && g.below_id)
                fprintf(out, "; nearest below #%llu", (unsigned long long)g.below_id);
            if (!g.alloc_id && g.above_id)
                fprintf(out, "; nearest above #%llu", (unsigned long long)g.above_id);
            fprintf(out, "\n");
        }
        const hs_log_launch *launch = hsr_launch_of_finding(s, (uint32_t)(l - set->logs), f->seq);
        if (launch) {
            fprintf(out, "      launch of ");
            hsr_text_string(out, hsr_launch_name(l, launch));
            fprintf(out, ": grid (%u,%u,%u), block (%u,%u,%u), %u bytes LDS, stream 0x%llx, caller 0x%llx\n",
                    launch->grid[0], launch->grid[1], launch->grid[2], launch->block[0], launch->block[1],
                    launch->block[2], launch->shmem, (unsigned long long)launch->stream,
                    (unsigned long long)launch->caller);
        }
        for (unsigned a = 0; launch && a < launch->n_args; a++) {
            hs_log_launch_arg arg = hsr_launch_arg(launch, a);
            fprintf(out, "        argument %u (%s): 0x%llx, allocation #%llu %+lld, %s\n", arg.index,
                    arg.how ? "scanned" : "pointer", (unsigned long long)arg.value, (unsigned long long)arg.alloc_id,
                    (long long)arg.offset, hsr_arg_state_name(arg.state));
        }
        hsr_finding_parts parts;
        if (hsr_finding_parts_of(f, &parts)) {
            char details[4096];
            hsr_finding_details(l, f, &parts, details, sizeof details);
            for (char *d = details; *d;) {
                char *e = strchr(d, '\n');
                if (e)
                    *e = 0;
                fprintf(out, "      ");
                hsr_text_string(out, d);
                fputc('\n', out);
                d = e ? e + 1 : d + strlen(d);
            }
        }
        print_stack(out, l, f->stack, "at");
        if (parts.has_race && hsr_find_stack(l, parts.race.other.stack))
            print_stack(out, l, parts.race.other.stack, "earlier access at");
        else if (parts.has_race && parts.race.other.caller)
            print_caller(out, l, parts.race.other.caller, "earlier access at",
                         parts.race.other.flags & HS_LOG_ACCESS_LAUNCH ? "launch_stacks=1 keeps a launch's whole stack"
                                                                       : NULL);
        print_stack(out, l, f->alloc_stack, "allocated at");
        print_stack(out, l, f->free_stack, "freed at");
    }
}
