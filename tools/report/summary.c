#include "summary.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct live_alloc {
    struct { uint32_t log; uint64_t id; } key;
    const hs_log_alloc *alloc;
    bool device;
    UT_hash_handle hh;
} live_alloc;

/* Launches counted by log and kernel-name id (id 0: by kernel_ref) while the timeline is read. */
typedef struct kernel_tally {
    struct { uint32_t log; uint32_t ref; uint32_t id; } key;
    const char *name;
    uint64_t launches;
    UT_hash_handle hh;
} kernel_tally;

static void count_launch(hsr_summary *s, kernel_tally **tally, const hsr_log *log, uint32_t index, const hs_log_launch *l)
{
    kernel_tally key, *t = NULL;
    memset(&key, 0, sizeof key);
    key.key.log = index;
    key.key.id = l->name;
    key.key.ref = !l->name && (l->kernel_ref == HS_LOG_KREF_GRAPH || l->kernel_ref == HS_LOG_KREF_HOST_FN) ? l->kernel_ref : 0;
    HASH_FIND(hh, *tally, &key.key, sizeof key.key, t);
    if (!t) {
        if (!(t = calloc(1, sizeof *t)))
            return;
        t->key = key.key;
        t->name = hsr_launch_name(log, l);
        HASH_ADD(hh, *tally, key, sizeof t->key, t);
    }
    t->launches++;
    s->launches++;
    if (s->launches_by_log)
        s->launches_by_log[index].launches++;
}

static int by_launches(const void *a, const void *b)
{
    const hsr_kernel_count *x = a, *y = b;
    return x->launches != y->launches ? (x->launches < y->launches ? 1 : -1) : strcmp(x->name, y->name);
}

/* The tallies into each log's list, most launched first. */
static void list_kernels(hsr_summary *s, kernel_tally **tally)
{
    kernel_tally *t, *tmp;
    HASH_ITER(hh, *tally, t, tmp) {
        hsr_log_launches *per = s->launches_by_log ? &s->launches_by_log[t->key.log] : NULL;
        hsr_kernel_count *grown = per ? realloc(per->kernels, (per->n_kernels + 1) * sizeof *grown) : NULL;
        if (grown) {
            per->kernels = grown;
            per->kernels[per->n_kernels++] = (hsr_kernel_count){t->name, t->launches};
        }
        HASH_DEL(*tally, t);
        free(t);
    }
    for (int i = 0; s->launches_by_log && i < s->n_launch_logs; i++)
        if (s->launches_by_log[i].n_kernels > 1)
            qsort(s->launches_by_log[i].kernels, s->launches_by_log[i].n_kernels, sizeof(hsr_kernel_count), by_launches);
}

static void count_api(hsr_summary *s, const char *name)
{
    for (int i = 0; i < s->n_apis; i++)
        if (!strcmp(s->apis[i].name, name)) {
            s->apis[i].calls++;
            return;
        }
    hsr_api_count *grown = realloc(s->apis, (s->n_apis + 1) * sizeof *grown);
    if (!grown)
        return;
    s->apis = grown;
    s->apis[s->n_apis++] = (hsr_api_count){name, 1};
}

static void memory_point(hsr_summary *s, uint64_t t, uint32_t log, uint64_t bytes, size_t *cap)
{
    if (s->n_memory == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        hsr_memory_point *grown = realloc(s->memory, c * sizeof *grown);
        if (!grown)
            return;
        s->memory = grown;
        *cap = c;
    }
    s->memory[s->n_memory++] = (hsr_memory_point){t, log, bytes};
}

static int by_calls(const void *a, const void *b)
{
    const hsr_api_count *x = a, *y = b;
    return x->calls != y->calls ? (x->calls < y->calls ? 1 : -1) : strcmp(x->name, y->name);
}

void hsr_summarize(const hsr_set *set, hsr_summary *s)
{
    memset(s, 0, sizeof *s);
    s->findings_by_kind = calloc(hsr_kind_count(), sizeof *s->findings_by_kind);
    for (int i = 0; i < set->n_logs; i++)
        s->any_ring |= set->logs[i].header_ok && !(set->logs[i].header.flags & HS_LOG_FLAG_FULL);
    live_alloc *live = NULL;
    uint64_t in_use = 0;
    size_t mem_cap = 0, finding_launch_cap = 0;
    kernel_tally *tally = NULL;
    if (set->n_logs && (s->launches_by_log = calloc(set->n_logs, sizeof *s->launches_by_log)))
        s->n_launch_logs = set->n_logs;
    for (size_t i = 0; i < set->n_events; i++) {
        const hsr_event *e = &set->events[i];
        const hsr_log *log = &set->logs[e->log];
        if (i == 0 || e->time_ns < s->first_ns)
            s->first_ns = e->time_ns;
        uint64_t end = hsr_event_end(e);
        if (end > s->last_ns)
            s->last_ns = end;
        switch (e->type) {
        case HS_LOG_COPY: {
            const hs_log_copy *c = e->rec;
            count_api(s, hsr_api_name(log, c->api));
            s->copies++;
            unsigned d = c->direction < 5 ? c->direction : 4;
            s->copies_by_dir[d]++;
            s->bytes_by_dir[d] += c->bytes;
            break;
        }
        case HS_LOG_MEMSET:
            count_api(s, hsr_api_name(log, ((const hs_log_copy *)e->rec)->api));
            s->memsets++;
            break;
        case HS_LOG_SYNC:
            count_api(s, hsr_api_name(log, ((const hs_log_sync *)e->rec)->api));
            s->syncs++;
            break;
        case HS_LOG_STREAM:
            count_api(s, hsr_api_name(log, ((const hs_log_stream *)e->rec)->api));
            break;
        case HS_LOG_EVENT:
            count_api(s, hsr_api_name(log, ((const hs_log_event *)e->rec)->api));
            break;
        case HS_LOG_ALLOC: {
            const hs_log_alloc *a = e->rec;
            count_api(s, hsr_api_name(log, a->api));
            s->allocs++;
            if (a->result != 0 || !a->id)
                break;
            live_alloc *l = calloc(1, sizeof *l);
            if (!l)
                break;
            l->key.log = e->log;
            l->key.id = a->id;
            l->alloc = a;
            l->device = a->mem_kind == 1 || a->mem_kind == 2 || a->mem_kind == 6; /* device, managed, mapped */
            HASH_ADD(hh, live, key, sizeof l->key, l);
            if (l->device) {
                in_use += a->size;
                memory_point(s, e->time_ns, e->log, in_use, &mem_cap);
                if (in_use > s->peak_device_bytes) {
                    s->peak_device_bytes = in_use;
                    s->peak_time_ns = e->time_ns;
                }
            }
            break;
        }
        case HS_LOG_FREE: {
            const hs_log_free *f = e->rec;
            count_api(s, hsr_api_name(log, f->api));
            s->frees++;
            live_alloc key = {.key = {e->log, f->id}}, *l = NULL;
            memset(&key.key, 0, sizeof key.key);
            key.key.log = e->log;
            key.key.id = f->id;
            HASH_FIND(hh, live, &key.key, sizeof key.key, l);
            if (l && f->result == 0) {
                if (l->device) {
                    in_use -= l->alloc->size;
                    memory_point(s, e->time_ns, e->log, in_use, &mem_cap);
                }
                HASH_DEL(live, l);
                free(l);
            }
            break;
        }
        case HS_LOG_LAUNCH: {
            const hs_log_launch *l = e->rec;
            count_api(s, hsr_api_name(log, l->api));
            count_launch(s, &tally, log, e->log, l);
            if (!l->first_finding)
                break;
            if (s->n_finding_launches == finding_launch_cap) {
                size_t c = finding_launch_cap ? finding_launch_cap * 2 : 16;
                hsr_finding_launch *grown = realloc(s->finding_launches, c * sizeof *grown);
                if (!grown)
                    break;
                s->finding_launches = grown;
                finding_launch_cap = c;
            }
            s->finding_launches[s->n_finding_launches++] = (hsr_finding_launch){e->log, l->first_finding, l};
            break;
        }
        case HS_LOG_FINDING: {
            const hs_log_finding *f = e->rec;
            s->findings++;
            if (f->kind < hsr_kind_count())
                s->findings_by_kind[f->kind]++;
            break;
        }
        default:
            break;
        }
    }
    if (s->n_apis)
        qsort(s->apis, s->n_apis, sizeof *s->apis, by_calls);
    list_kernels(s, &tally);
    live_alloc *l, *tmp;
    size_t n = HASH_COUNT(live);
    s->leaks = n ? calloc(n, sizeof *s->leaks) : NULL;
    HASH_ITER(hh, live, l, tmp) {
        if (s->leaks) {
            s->leaks[s->n_leaks++] = (hsr_leak){l->key.log, l->alloc};
            s->leaked_bytes += l->alloc->size;
        }
        HASH_DEL(live, l);
        free(l);
    }
}

const hs_log_launch *hsr_launch_of_finding(const hsr_summary *s, uint32_t log, uint32_t seq)
{
    for (size_t i = 0; i < s->n_finding_launches; i++)
        if (s->finding_launches[i].log == log && s->finding_launches[i].finding == seq)
            return s->finding_launches[i].launch;
    return NULL;
}

void hsr_summary_free(hsr_summary *s)
{
    for (int i = 0; s->launches_by_log && i < s->n_launch_logs; i++)
        free(s->launches_by_log[i].kernels);
    free(s->launches_by_log);
    free(s->finding_launches);
    free(s->apis);
    free(s->findings_by_kind);
    free(s->leaks);
    free(s->memory);
    memset(s, 0, sizeof *s);
}
