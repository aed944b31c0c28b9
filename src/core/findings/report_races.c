/* Cold path: what the text report and the findings JSON say about a stream-race (both accesses)
 * and an uninitialized-read (the never-written ranges).  Kept apart from the report's table,
 * which calls these at its fixed places. */
#include "findings/report_races.h"
#include "process/stacks.h"
#include "process/util.h"
#include "runtime/frontend.h"

#include <string.h>

static const char *api_name(uint16_t api) { return hs_frontend_active.api_names[api]; }

/* "hip", "cuda" or "cu": the runtime the program calls, for the names of the calls that order. */
static const char *prefix_of(uint16_t api)
{
    const char *n = api_name(api);
    return !strncmp(n, "hip", 3) ? "hip" : !strncmp(n, "cuda", 4) ? "cuda" : "cu";
}

static const char *what_of(const hs_access *a)
{
    return !a->write ? "reads" : a->assumed ? "may write (a kernel argument whose access is not said)" : "writes";
}

static void print_access(FILE *f, const char *who, const hs_access *a, uintptr_t base)
{
    fprintf(f, "  %s: %s", who, api_name(a->api));
    if (a->launch)
        fprintf(f, " of kernel '%s' (argument %u)", a->kernel ? a->kernel : "?", a->arg);
    else
        fprintf(f, " (%llu bytes)", (unsigned long long)a->bytes);
    fprintf(f, " on stream 0x%lx, %s [0x%lx, 0x%lx)", (unsigned long)a->stream, what_of(a),
            (unsigned long)(base + a->lo), (unsigned long)(base + a->hi));
    if (a->seq)
        fprintf(f, ", operation %llu of its stream", (unsigned long long)a->seq);
    fprintf(f, ", thread T%u\n", a->thread);
}

static void race_text(FILE *f, const hs_event *e, const hs_race *r)
{
    const char *p = prefix_of(r->mine.api);
    bool driver = !strcmp(p, "cu");
    fprintf(f,
            "  bytes [0x%lx, 0x%lx) of allocation #%llu (offset %llu, %llu bytes) are touched by two streams\n"
            "  with nothing ordering them, and at least one of the two writes them:\n",
            (unsigned long)(r->alloc_base + r->lo), (unsigned long)(r->alloc_base + r->hi),
            (unsigned long long)r->alloc_id, (unsigned long long)r->lo, (unsigned long long)(r->hi - r->lo));
    print_access(f, "this call", &r->mine, r->alloc_base);
    print_access(f, "earlier, still in flight", &r->other, r->alloc_base);
    fprintf(f,
            "  to order them: record an event on stream 0x%lx after the earlier call (%sEventRecord) and make\n"
            "  stream 0x%lx wait for it (%sStreamWaitEvent) before this one, or synchronise stream 0x%lx\n"
            "  (%sStreamSynchronize%s) before this call\n",
            (unsigned long)r->other.stream, p, (unsigned long)r->mine.stream, p, (unsigned long)r->other.stream, p,
            driver ? ", cuEventSynchronize" : ", or the device");
    (void)e;
    fprintf(f, "Earlier access (%s, thread T%u, %.6f s before this call):\n", api_name(r->other.api), r->other.thread,
            (hs_coarse_ns() - hs_stamp_ns(r->other.stamp)) / 1e9);
    if (r->other.stack)
        hs_stack_print(r->other.stack, f);
    else
        fprintf(f, "    called from 0x%lx%s\n", (unsigned long)r->other.caller,
                r->other.launch ? " (launch_stacks=1 keeps a launch's whole stack)" : "");
}

static void uninit_text(FILE *f, const hs_event *e, const hs_uninit *u)
{
    bool kernel = e->call->op == HS_OP_LAUNCH;
    uint32_t n = u->n_gaps < HS_GAPS_MAX ? u->n_gaps : HS_GAPS_MAX;
    if (!kernel) {
        fprintf(f, "  the copy reads [0x%lx, 0x%lx) of allocation #%llu, and nothing wrote %s of it:\n",
                (unsigned long)(u->alloc_base + u->lo), (unsigned long)(u->alloc_base + u->hi),
                (unsigned long long)u->alloc_id,
                u->n_gaps == 1 && u->gaps[0].lo == u->lo && u->gaps[0].hi == u->hi ? "any" : "these bytes");
        for (uint32_t i = 0; i < n; i++)
            fprintf(f, "    never written: [0x%lx, 0x%lx) (offset %llu, %llu bytes)\n",
                    (unsigned long)(u->alloc_base + u->gaps[i].lo), (unsigned long)(u->alloc_base + u->gaps[i].hi),
                    (unsigned long long)u->gaps[i].lo, (unsigned long long)(u->gaps[i].hi - u->gaps[i].lo));
        if (u->n_gaps > n)
            fprintf(f, "    (and %u more ranges)\n", u->n_gaps - n);
        return;
    }
    fprintf(f,
            "  the kernel is given a pointer into allocation #%llu (%llu bytes), which is only partly written,\n"
            "  and by no kernel:\n",
            (unsigned long long)u->alloc_id, (unsigned long long)u->alloc_size);
    uint32_t w = u->n_written < HS_GAPS_MAX ? u->n_written : HS_GAPS_MAX;
    for (uint32_t i = 0; i < w; i++)
        fprintf(f, "    written: [0x%lx, 0x%lx) (offset %llu, %llu bytes)\n",
                (unsigned long)(u->alloc_base + u->written[i].lo), (unsigned long)(u->alloc_base + u->written[i].hi),
                (unsigned long long)u->written[i].lo, (unsigned long long)(u->written[i].hi - u->written[i].lo));
    for (uint32_t i = 0; i < n; i++)
        fprintf(f, "    never written: [0x%lx, 0x%lx) (offset %llu, %llu bytes)\n",
                (unsigned long)(u->alloc_base + u->gaps[i].lo), (unsigned long)(u->alloc_base + u->gaps[i].hi),
                (unsigned long long)u->gaps[i].lo, (unsigned long long)(u->gaps[i].hi - u->gaps[i].lo));
    if (u->has_last_write) {
        const hs_access *l = &u->last_write;
        fprintf(f, "  the %s of %llu bytes at 0x%lx (%s) covered %llu of %llu bytes\n",
                l->op == HS_OP_MEMSET ? "memset" : "copy", (unsigned long long)l->bytes,
                (unsigned long)(u->alloc_base + l->lo), api_name(l->api), (unsigned long long)(l->hi - l->lo),
                (unsigned long long)u->alloc_size);
    }
}

void hs_report_access_text(FILE *f, const hs_event *e)
{
    const hs_access_facts *a = e->facts ? e->facts->access : NULL;
    if (!a)
        return;
    if (e->finding->kind == HS_KIND_STREAM_RACE && a->has_race)
        race_text(f, e, &a->race);
    else if (e->finding->kind == HS_KIND_UNINITIALIZED_READ && a->has_uninit)
        uninit_text(f, e, &a->uninit);
}

/* ---- JSON ---- */

#define J(...) hs_appendf(buf, cap, n, __VA_ARGS__)

static void json_string(char *buf, size_t cap, size_t *n, const char *s)
{
    J("\"");
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            J("\\%c", ch);
        else if (ch < 0x20)
            J("\\u%04x", ch);
        else
            J("%c", ch);
    }
    J("\"");
}

static void json_access(char *buf, size_t cap, size_t *n, const char *key, const hs_access *a, uintptr_t base,
                        uint32_t stack)
{
    J("\"%s\":{\"api\":", key);
    json_string(buf, cap, n, api_name(a->api));
    J(",\"stream\":\"0x%lx\",\"seq\":%llu,\"access\":\"%s\",\"known\":%s,\"offset\":%llu,\"bytes\":%llu,\"ptr\":\"0x%"
      "lx\"",
      (unsigned long)a->stream, (unsigned long long)a->seq, a->write ? "write" : "read", a->assumed ? "false" : "true",
      (unsigned long long)a->lo, (unsigned long long)(a->hi - a->lo), (unsigned long)(base + a->lo));
    if (a->launch) {
        J(",\"kernel\":");
        if (a->kernel)
            json_string(buf, cap, n, a->kernel);
        else
            J("null");
        J(",\"arg\":%u", a->arg);
    }
    J(",\"thread\":%u,\"stack_id\":%u,\"stack\":[", a->thread, stack);
    uintptr_t frames[HS_STACK_MAX_FRAMES];
    int k = stack ? hs_stack_frames(stack, frames, HS_STACK_MAX_FRAMES) : 0;
    for (int i = 0; i < k; i++) {
        char where[512];
        hs_frame_describe(frames[i], where, sizeof where);
        J(i ? "," : "");
        json_string(buf, cap, n, where);
    }
    J("]}");
}

static void json_ranges(char *buf, size_t cap, size_t *n, const char *key, uint32_t count, const uint64_t (*r)[2],
                        size_t stride, uintptr_t base)
{
    J(",\"%s\":[", key);
    for (uint32_t i = 0; i < count && i < HS_GAPS_MAX; i++) {
        const uint64_t *x = (const uint64_t *)((const char *)r + i * stride);
        J("%s{\"ptr\":\"0x%lx\",\"offset\":%llu,\"bytes\":%llu}", i ? "," : "", (unsigned long)(base + x[0]),
          (unsigned long long)x[0], (unsigned long long)(x[1] - x[0]));
    }
    J("]");
}

void hs_report_access_json(char *buf, size_t cap, size_t *n, const hs_event *e)
{
    const hs_access_facts *a = e->facts ? e->facts->access : NULL;
    if (!a)
        return;
    if (e->finding->kind == HS_KIND_STREAM_RACE && a->has_race) {
        const hs_race *r = &a->race;
        J(",\"race\":{\"alloc_id\":%llu,\"ptr\":\"0x%lx\",\"offset\":%llu,\"bytes\":%llu,",
          (unsigned long long)r->alloc_id, (unsigned long)(r->alloc_base + r->lo), (unsigned long long)r->lo,
          (unsigned long long)(r->hi - r->lo));
        json_access(buf, cap, n, "this", &r->mine, r->alloc_base, e->stack);
        J(",");
        json_access(buf, cap, n, "other", &r->other, r->alloc_base, r->other.stack);
        const char *p = prefix_of(r->mine.api);
        J(",\"order_with\":\"%sEventRecord on stream 0x%lx after the other call, %sStreamWaitEvent on stream 0x%lx "
          "before this one; or %sStreamSynchronize of stream 0x%lx before this call\"}",
          p, (unsigned long)r->other.stream, p, (unsigned long)r->mine.stream, p, (unsigned long)r->other.stream);
    } else if (e->finding->kind == HS_KIND_UNINITIALIZED_READ && a->has_uninit) {
        const hs_uninit *u = &a->uninit;
        J(",\"uninit\":{\"alloc_id\":%llu,\"offset\":%llu,\"bytes\":%llu", (unsigned long long)u->alloc_id,
          (unsigned long long)u->lo, (unsigned long long)(u->hi - u->lo));
        json_ranges(buf, cap, n, "never_written", u->n_gaps, (const uint64_t(*)[2]) & u->gaps[0].lo, sizeof u->gaps[0],
                    u->alloc_base);
        json_ranges(buf, cap, n, "written", u->n_written, (const uint64_t(*)[2]) & u->written[0].lo,
                    sizeof u->written[0], u->alloc_base);
        if (u->has_last_write)
            J(",\"short_write\":{\"api\":\"%s\",\"op\":\"%s\",\"offset\":%llu,\"bytes\":%llu}",
              api_name(u->last_write.api), u->last_write.op == HS_OP_MEMSET ? "memset" : "copy",
              (unsigned long long)u->last_write.lo, (unsigned long long)(u->last_write.hi - u->last_write.lo));
        J("}");
    }
}
