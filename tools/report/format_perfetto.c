/* Chrome trace JSON (traceEvents) that opens in ui.perfetto.dev: one process per log, one track
 * per stream with its copies, memsets, syncs and kernel launches (a slice named by the kernel,
 * as long as the host's launch call), findings as instant events, and a counter track of device
 * memory in use. */
#include "emit.h"
#include "formats.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct track {
    struct {
        uint64_t stream;
        uint32_t log;
        uint32_t pad;
    } key;
    int tid;
    UT_hash_handle hh;
} track;

typedef struct tracks {
    track *by_stream;
    int n;
} tracks;

/* The track (tid) of a stream in a log: 1, 2, ... in order of first use. */
static int track_of(tracks *t, uint32_t log, uint64_t stream, bool *is_new)
{
    track key, *found = NULL;
    memset(&key, 0, sizeof key);
    key.key.stream = stream;
    key.key.log = log;
    HASH_FIND(hh, t->by_stream, &key.key, sizeof key.key, found);
    *is_new = !found;
    if (found)
        return found->tid;
    if (!(found = calloc(1, sizeof *found)))
        return 0;
    found->key = key.key;
    found->tid = ++t->n;
    HASH_ADD(hh, t->by_stream, key, sizeof found->key, found);
    return found->tid;
}

static double us(const hsr_summary *s, uint64_t t) { return t >= s->first_ns ? (t - s->first_ns) / 1000.0 : 0; }

static void name_track(FILE *out, unsigned pid, int tid, uint64_t stream)
{
    fprintf(out,
            ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%d,\"args\":{\"name\":\"stream 0x%llx%s\"}}",
            pid, tid, (unsigned long long)stream, stream ? "" : " (null stream)");
}

void hsr_format_perfetto(hsr_set *set, const hsr_summary *s, FILE *out)
{
    fprintf(out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    fprintf(out, "{\"ph\":\"M\",\"name\":\"hipshadow\",\"pid\":0,\"tid\":0,\"args\":{}}");
    for (int i = 0; i < set->n_logs; i++) {
        hsr_log *l = &set->logs[i];
        char name[600];
        snprintf(name, sizeof name, "%s (pid %u)", l->executable, l->header.pid);
        fprintf(out,
                ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":", l->header.pid);
        hsr_json_string(out, name);
        fprintf(out, "}}");
    }
    tracks t = {0};
    char b[32];
    for (size_t i = 0; i < set->n_events; i++) {
        const hsr_event *e = &set->events[i];
        hsr_log *l = &set->logs[e->log];
        unsigned pid = l->header.pid;
        bool fresh;
        if (e->type == HS_LOG_COPY || e->type == HS_LOG_MEMSET) {
            const hs_log_copy *c = e->rec;
            int tid = track_of(&t, e->log, c->stream, &fresh);
            if (fresh)
                name_track(out, pid, tid, c->stream);
            uint64_t end = c->end_ns ? c->end_ns : c->start_ns;
            char name[200];
            snprintf(name, sizeof name, "%s %s %s", hsr_api_name(l, c->api),
                     e->type == HS_LOG_COPY ? hsr_direction_name(c->direction) : "memset",
                     hsr_human_bytes(c->bytes, b, sizeof b));
            fprintf(out, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", e->type == HS_LOG_COPY ? "copy" : "memset");
            hsr_json_string(out, name);
            fprintf(out,
                    ",\"pid\":%u,\"tid\":%d,\"ts\":%.3f,"
                    "\"dur\":%.3f,\"args\":{\"dst\":\"0x%llx\",\"src\":\"0x%llx\",\"bytes\":%llu,\"result\":%d}}",
                    pid, tid, us(s, c->start_ns), (end - c->start_ns) / 1000.0, (unsigned long long)c->dst,
                    (unsigned long long)c->src, (unsigned long long)c->bytes, c->result);
        } else if (e->type == HS_LOG_SYNC) {
            const hs_log_sync *y = e->rec;
            int tid = track_of(&t, e->log, y->stream, &fresh);
            if (fresh)
                name_track(out, pid, tid, y->stream);
            fprintf(out, ",\n{\"ph\":\"X\",\"cat\":\"sync\",\"name\":");
            hsr_json_string(out, hsr_api_name(l, y->api));
            fprintf(out,
                    ",\"pid\":%u,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                    "\"args\":{\"result\":%d}}",
                    pid, tid, us(s, y->start_ns), (y->end_ns - y->start_ns) / 1000.0, y->result);
        } else if (e->type == HS_LOG_LAUNCH) {
            const hs_log_launch *k = e->rec;
            int tid = track_of(&t, e->log, k->stream, &fresh);
            if (fresh)
                name_track(out, pid, tid, k->stream);
            uint64_t end = k->end_ns > k->start_ns ? k->end_ns : k->start_ns;
            fprintf(out, ",\n{\"ph\":\"X\",\"cat\":\"launch\",\"name\":");
            hsr_json_string(out, hsr_launch_name(l, k));
            fprintf(out, ",\"pid\":%u,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"api\":", pid, tid,
                    us(s, k->start_ns), (end - k->start_ns) / 1000.0);
            hsr_json_string(out, hsr_api_name(l, k->api));
            fprintf(out,
                    ",\"grid\":\"%u,%u,%u\","
                    "\"block\":\"%u,%u,%u\",\"shmem\":%u,\"seq\":%llu,\"result\":%d",
                    k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2], k->shmem,
                    (unsigned long long)k->seq, k->result);
            for (unsigned a = 0; a < k->n_args; a++) {
                hs_log_launch_arg arg = hsr_launch_arg(k, a);
                fprintf(out, ",\"pointer%u\":\"argument %u%s: 0x%llx, allocation #%llu %+lld, %s\"", a, arg.index,
                        arg.how ? " (scanned)" : "", (unsigned long long)arg.value, (unsigned long long)arg.alloc_id,
                        (long long)arg.offset, hsr_arg_state_name(arg.state));
            }
            fprintf(out, "}}");
        } else if (e->type == HS_LOG_FINDING) {
            const hs_log_finding *f = e->rec;
            int tid = track_of(&t, e->log, f->stream, &fresh);
            if (fresh)
                name_track(out, pid, tid, f->stream);
            char msg[4096];
            hsr_finding_message_full(l, f, msg, sizeof msg);
            fprintf(out,
                    ",\n{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"finding\",\"name\":\"%s\",\"pid\":%u,\"tid\":%d,"
                    "\"ts\":%.3f,\"args\":{\"message\":",
                    hsr_kind_name(f->kind), pid, tid, us(s, f->time_ns));
            hsr_json_string(out, msg);
            fprintf(out, "}}");
        }
    }
    for (size_t i = 0; i < s->n_memory; i++)
        fprintf(out,
                ",\n{\"ph\":\"C\",\"name\":\"device memory in use (bytes)\",\"pid\":%u,\"ts\":%.3f,"
                "\"args\":{\"bytes\":%llu}}",
                set->logs[s->memory[i].log].header.pid, us(s, s->memory[i].time_ns),
                (unsigned long long)s->memory[i].bytes);
    fprintf(out, "\n]}\n");
    track *k, *tmp;
    HASH_ITER(hh, t.by_stream, k, tmp)
    {
        HASH_DEL(t.by_stream, k);
        free(k);
    }
}
