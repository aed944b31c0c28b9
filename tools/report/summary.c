#include "summary.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct live_alloc {
    struct {
        uint32_t log;
        uint64_t id;
    } key;
    const hs_log_alloc *alloc;
    bool device;
    UT_hash_handle hh;
} live_alloc;

/* Launches counted by log and kernel-name id (id 0: by kernel_ref) while the timeline is read. */
typedef struct kernel_tally {
    struct {
        uint32_t log;
        uint32_t ref;
        uint32_t id;
    } key;
    const char *name;
    uint64_t launches;
    UT_hash_handle hh;
} kernel_tally;

static void count_launch(hsr_summary *s, kernel_tally **tally, const hsr_log *log, uint32_t index,
                         const hs_log_launch *l)
{
    kernel_tally key, *t = NULL;
    memset(&key, 0, sizeof key);
    key.key.log = index;
    key.key.id = l->name;
    key.key.ref = !l->name && (l->kernel_ref == HS_LOG_KREF_GRAPH || l->kernel_ref == HS_LOG_KREF_HOST_FN)
                      ? l->kernel_ref
                      : 0;
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
    int *room = s->launches_by_log ? calloc((size_t)s->n_launch_logs, sizeof *room) : NULL;
    HASH_ITER(hh, *tally, t, tmp)
    if (room)
        room[t->key.log]++;
    for (int i = 0; room && i < s->n_launch_logs; i++)
        if (room[i] && !(s->launches_by_log[i].kernels = malloc((size_t)room[i] * sizeof(hsr_kernel_count))))
            room[i] = 0;
    HASH_ITER(hh, *tally, t, tmp)
    {
        hsr_log_launches *per = room && room[t->key.log] ? &s->launches_by_log[t->key.log] : NULL;
        if (per)
            per->kernels[per->n_kernels++] = (hsr_kernel_count){t->name, t->launches};
        HASH_DEL(*tally, t);
        free(t);
    }
    free(room);
    for (int i = 0; s->launches_by_log && i < s->n_launch_logs; i++)
        if (s->launches_by_log[i].n_kernels > 1)
            qsort(s->launches_by_log[i].kernels, s->launches_by_log[i].n_kernels, sizeof(hsr_kernel_count),
                  by_launches);
}

/* Calls are counted by log and api number as the timeline is read (one slot per name the log
 * gives, and one for the numbers it does not name), then merged by name. */
typedef struct api_calls {
    uint64_t **by_log; /* by_log[log][api], api n_api_names: unnamed */
    int n_logs;
} api_calls;

static void count_api(api_calls *c, const hsr_log *log, uint32_t index, uint16_t api)
{
    if (!c->by_log || !c->by_log[index])
        return;
    c->by_log[index][api < log->n_api_names && log->api_names[api] ? api : log->n_api_names]++;
}

typedef struct api_total {
    const char *name;
    uint64_t calls;
    UT_hash_handle hh;
} api_total;

static void list_apis(hsr_summary *s, const hsr_set *set, api_calls *c)
{
    api_total *totals = NULL, *t, *tmp;
    for (int i = 0; c->by_log && i < c->n_logs; i++) {
        const hsr_log *log = &set->logs[i];
        for (int api = 0; c->by_log[i] && api <= log->n_api_names; api++) {
            if (!c->by_log[i][api])
                continue;
            const char *name = api < log->n_api_names ? log->api_names[api] : "unknown-api"; /* as hsr_api_name() */
            HASH_FIND_STR(totals, name, t);
            if (!t) {
                if (!(t = calloc(1, sizeof *t)))
                    continue;
                t->name = name;
                HASH_ADD_KEYPTR(hh, totals, t->name, strlen(t->name), t);
            }
            t->calls += c->by_log[i][api];
        }
        free(c->by_log[i]);
    }
    free(c->by_log);
    size_t n = HASH_COUNT(totals);
    s->apis = n ? malloc(n * sizeof *s->apis) : NULL;
    HASH_ITER(hh, totals, t, tmp)
    {
        if (s->apis)
            s->apis[s->n_apis++] = (hsr_api_count){t->name, t->calls};
        HASH_DEL(totals, t);
        free(t);
    }
}

static bool add_ref(hsr_finding_ref **refs, size_t *n, size_t *cap, uint32_t log, uint32_t finding, size_t event,
                    const void *rec)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        hsr_finding_ref *grown = realloc(*refs, c * sizeof *grown);
        if (!grown)
            return false;
        *refs = grown;
        *cap = c;
    }
    (*refs)[(*n)++] = (hsr_finding_ref){log, finding, event, rec};
    return true;
}

static int by_finding(const void *a, const void *b)
{
    const hsr_finding_ref *x = a, *y = b;
    if (x->log != y->log)
        return x->log < y->log ? -1 : 1;
    if (x->finding != y->finding)
        return x->finding < y->finding ? -1 : 1;
    return x->event < y->event ? -1 : x->event > y->event;
}

/* The first (in time) record of finding `seq` of log `log` in refs, sorted by by_finding. */
static const void *ref_of(const hsr_finding_ref *refs, size_t n, uint32_t log, uint32_t seq)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (refs[mid].log < log || (refs[mid].log == log && refs[mid].finding < seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && refs[lo].log == log && refs[lo].finding == seq ? refs[lo].rec : NULL;
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
    size_t mem_cap = 0, finding_launch_cap = 0, finding_fault_cap = 0;
    kernel_tally *tally = NULL;
    if (set->n_logs && (s->launches_by_log = calloc(set->n_logs, sizeof *s->launches_by_log)))
        s->n_launch_logs = set->n_logs;
    api_calls calls = {NULL, set->n_logs};
    if (set->n_logs && (calls.by_log = calloc(set->n_logs, sizeof *calls.by_log)))
        for (int i = 0; i < set->n_logs; i++)
            calls.by_log[i] = calloc((size_t)set->logs[i].n_api_names + 1, sizeof **calls.by_log);
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
            count_api(&calls, log, e->log, c->api);
            s->copies++;
            unsigned d = c->direction < 5 ? c->direction : 4;
            s->copies_by_dir[d]++;
            s->bytes_by_dir[d] += c->bytes;
            break;
        }
        case HS_LOG_MEMSET:
            count_api(&calls, log, e->log, ((const hs_log_copy *)e->rec)->api);
            s->memsets++;
            break;
        case HS_LOG_SYNC:
            count_api(&calls, log, e->log, ((const hs_log_sync *)e->rec)->api);
            s->syncs++;
            break;
        case HS_LOG_STREAM: count_api(&calls, log, e->log, ((const hs_log_stream *)e->rec)->api); break;
        case HS_LOG_EVENT: count_api(&calls, log, e->log, ((const hs_log_event *)e->rec)->api); break;
        case HS_LOG_ALLOC: {
            const hs_log_alloc *a = e->rec;
            count_api(&calls, log, e->log, a->api);
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
            count_api(&calls, log, e->log, f->api);
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
            count_api(&calls, log, e->log, l->api);
            count_launch(s, &tally, log, e->log, l);
            if (l->first_finding)
                add_ref(&s->finding_launches, &s->n_finding_launches, &finding_launch_cap, e->log, l->first_finding, i,
                        l);
            break;
        }
        case HS_LOG_GPU_FAULT:
            add_ref(&s->finding_faults, &s->n_finding_faults, &finding_fault_cap, e->log,
                    ((const hs_log_gpu_fault *)e->rec)->finding_seq, i, e->rec);
            break;
        case HS_LOG_FINDING: {
            const hs_log_finding *f = e->rec;
            s->findings++;
            if (f->kind < hsr_kind_count())
                s->findings_by_kind[f->kind]++;
            break;
        }
        default: break;
        }
    }
    list_apis(s, set, &calls);
    if (s->n_apis)
        qsort(s->apis, s->n_apis, sizeof *s->apis, by_calls);
    if (s->n_finding_launches)
        qsort(s->finding_launches, s->n_finding_launches, sizeof *s->finding_launches, by_finding);
    if (s->n_finding_faults)
        qsort(s->finding_faults, s->n_finding_faults, sizeof *s->finding_faults, by_finding);
    list_kernels(s, &tally);
    live_alloc *l, *tmp;
    size_t n = HASH_COUNT(live);
    s->leaks = n ? calloc(n, sizeof *s->leaks) : NULL;
    HASH_ITER(hh, live, l, tmp)
    {
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
    return ref_of(s->finding_launches, s->n_finding_launches, log, seq);
}

const hs_log_gpu_fault *hsr_gpu_fault_of(const hsr_summary *s, uint32_t log, uint32_t seq)
{
    return ref_of(s->finding_faults, s->n_finding_faults, log, seq);
}

void hsr_summary_free(hsr_summary *s)
{
    for (int i = 0; s->launches_by_log && i < s->n_launch_logs; i++)
        free(s->launches_by_log[i].kernels);
    free(s->launches_by_log);
    free(s->finding_launches);
    free(s->finding_faults);
    free(s->apis);
    free(s->findings_by_kind);
    free(s->leaks);
    free(s->memory);
    memset(s, 0, sizeof *s);
}
