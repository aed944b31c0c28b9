/* Writes a large synthetic log (log_mode=full) for the report's benchmark and scaling tests:
 * copies, launches, allocations, frees, syncs and findings spread over many streams, modules,
 * stacks, API names and kernel names, each count settable so one dimension can grow alone.
 * Usage: make_big_log FILE EVENTS [findings=N] [streams=N] [modules=N] [stacks=N] [apis=N] [kernels=N]
 * Every count defaults to a fixed share of EVENTS (see main), so the log's shape stays the same
 * as it grows.  Each finding comes with a GPU fault record and a launch that names it. */
#include "hipshadow/log_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
    uint8_t bytes[HS_LOG_CHUNK_BYTES];
    hs_log_chunk_header *h;
} chunk;

typedef struct writer {
    FILE *f;
    uint64_t seq;
    chunk events, meta;
} writer;

static void open_chunk(writer *w, chunk *c, uint16_t kind)
{
    memset(c->bytes, 0, sizeof c->bytes);
    c->h = (hs_log_chunk_header *)c->bytes;
    *c->h = (hs_log_chunk_header){HS_LOG_CHUNK_MAGIC, kind, 0, ++w->seq, 7, 0};
}

static int flush_chunk(writer *w, chunk *c)
{
    return fwrite(c->bytes, 1, sizeof c->bytes, w->f) == sizeof c->bytes ? 0 : -1;
}

/* Room for a record of `size` bytes in c (a full chunk is written out and a new one begun). */
static void *put(writer *w, chunk *c, uint16_t type, uint32_t size)
{
    if (sizeof(hs_log_chunk_header) + c->h->used + size > HS_LOG_CHUNK_BYTES) {
        if (flush_chunk(w, c) != 0) {
            perror("make_big_log");
            exit(1);
        }
        open_chunk(w, c, c->h->kind);
    }
    hs_log_record_header *r = (hs_log_record_header *)(c->bytes + sizeof(hs_log_chunk_header) + c->h->used);
    r->type = type;
    r->version = 1;
    r->size = size;
    c->h->used += size;
    return r;
}

static void named(writer *w, uint16_t type, uint32_t id, const char *name)
{
    uint32_t n = (uint32_t)strlen(name);
    if (type == HS_LOG_API_NAME) {
        hs_log_api_name *a = put(w, &w->meta, type, sizeof *a + n);
        a->api = (uint16_t)id;
        a->name_bytes = (uint16_t)n;
        memcpy(a + 1, name, n);
    } else {
        hs_log_kernel_name *k = put(w, &w->meta, type, sizeof *k + n);
        k->id = id;
        k->name_bytes = (uint16_t)n;
        memcpy(k + 1, name, n);
    }
}

static uint64_t count(int argc, char **argv, const char *name, uint64_t fallback)
{
    size_t len = strlen(name);
    for (int i = 3; i < argc; i++)
        if (!strncmp(argv[i], name, len) && argv[i][len] == '=')
            return strtoull(argv[i] + len + 1, NULL, 0);
    return fallback;
}

static uint64_t at_least_1(uint64_t n) { return n ? n : 1; }

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(
            stderr,
            "usage: make_big_log FILE EVENTS [findings=N] [streams=N] [modules=N] [stacks=N] [apis=N] [kernels=N]\n");
        return 2;
    }
    uint64_t events = strtoull(argv[2], NULL, 0);
    uint64_t findings = count(argc, argv, "findings", events / 20);
    uint64_t streams = at_least_1(count(argc, argv, "streams", events / 16));
    uint64_t modules = at_least_1(count(argc, argv, "modules", events / 50));
    uint64_t stacks = at_least_1(count(argc, argv, "stacks", events / 20));
    uint64_t apis = at_least_1(count(argc, argv, "apis", events / 100 < 60000 ? events / 100 : 60000));
    uint64_t kernels = at_least_1(count(argc, argv, "kernels", events / 100));
    if (apis > 65535) {
        fprintf(stderr, "make_big_log: at most 65535 API names\n");
        return 2;
    }
    static writer w;
    w.f = fopen(argv[1], "wb");
    if (!w.f) {
        perror(argv[1]);
        return 1;
    }
    static uint8_t header_bytes[HS_LOG_HEADER_BYTES];
    hs_log_file_header *h = (hs_log_file_header *)header_bytes;
    const uint64_t t0 = 1790000000000000000ull;
    h->magic = HS_LOG_MAGIC;
    h->format_version = HS_LOG_FORMAT_VERSION;
    h->header_bytes = sizeof *h;
    h->chunk_bytes = HS_LOG_CHUNK_BYTES;
    h->flags = HS_LOG_FLAG_FULL;
    h->ring_offset = HS_LOG_HEADER_BYTES;
    h->growing_offset = HS_LOG_HEADER_BYTES;
    h->start_time_ns = t0;
    h->pid = 4242;
    h->parent_pid = 1;
    h->rank = -1;
    h->runtime = 1;
    snprintf(h->host, sizeof h->host, "bench-host");
    snprintf(h->executable, sizeof h->executable, "/bench/bin/serve");
    snprintf(h->command_line, sizeof h->command_line, "/bench/bin/serve --events %llu", (unsigned long long)events);
    snprintf(h->options, sizeof h->options, "log=big.hslog:log_mode=full");
    fwrite(header_bytes, 1, sizeof header_bytes, w.f);
    open_chunk(&w, &w.events, HS_LOG_CHUNK_EVENTS);
    open_chunk(&w, &w.meta, HS_LOG_CHUNK_META);

    char name[128];
    const uint64_t bias0 = 0x7f0000000000ull, module_span = 0x100000;
    for (uint64_t m = 0; m < modules; m++) {
        snprintf(name, sizeof name, "/bench/lib/libpart%06llu.so", (unsigned long long)m);
        uint32_t n = (uint32_t)strlen(name);
        hs_log_module *mod = put(&w, &w.meta, HS_LOG_MODULE, sizeof *mod + sizeof(hs_log_segment) + n);
        mod->load_bias = bias0 + m * module_span;
        mod->generation = 1;
        mod->n_segments = 1;
        mod->path_bytes = (uint16_t)n;
        hs_log_segment seg = {mod->load_bias, module_span, 5, 0};
        memcpy(mod + 1, &seg, sizeof seg);
        memcpy((uint8_t *)(mod + 1) + sizeof seg, name, n);
    }
    for (uint64_t s = 1; s <= stacks; s++) {
        hs_log_stack *st = put(&w, &w.meta, HS_LOG_STACK, sizeof *st + 3 * 8);
        st->id = (uint32_t)s;
        st->n_frames = 3;
        for (int k = 0; k < 3; k++) {
            uint64_t pc = bias0 + ((s * 31 + (uint64_t)k * 7) % modules) * module_span +
                          (s * 16 + (uint64_t)k) % module_span;
            memcpy((uint8_t *)(st + 1) + k * 8, &pc, 8);
        }
    }
    for (uint64_t a = 0; a < apis; a++) {
        snprintf(name, sizeof name, "hipBenchApi%05llu", (unsigned long long)a);
        named(&w, HS_LOG_API_NAME, (uint32_t)a, name);
    }
    for (uint64_t k = 1; k <= kernels; k++) {
        snprintf(name, sizeof name, "void bench_kernel_%06llu<float>(float*, int)", (unsigned long long)k);
        named(&w, HS_LOG_KERNEL_NAME, (uint32_t)k, name);
    }

    /* a finding every `every` events; between them copies, launches, allocations, frees, syncs */
    uint64_t every = findings ? at_least_1(events / findings) : UINT64_MAX, seq = 0, next_id = 1;
    for (uint64_t i = 0; i < events; i++) {
        uint64_t t = t0 + i * 1000, stream = 0x1000 + (i * 7919) % streams * 16;
        uint16_t api = (uint16_t)(i % apis);
        uint32_t stack = (uint32_t)(1 + i % stacks);
        if (findings && i % every == every - 1 && seq < findings) {
            hs_log_finding *f = put(&w, &w.events, HS_LOG_FINDING, sizeof *f);
            f->time_ns = t;
            f->seq = (uint32_t)++seq;
            f->api = api;
            f->kind = (uint8_t)(seq % 3 ? 0 : 15); /* out-of-bounds, device-fault */
            f->severity = 2;
            f->direction = 2;
            f->stack = stack;
            f->alloc_stack = (uint32_t)(1 + (i + 1) % stacks);
            f->stream = stream;
            f->bytes = 4096;
            f->alloc_id = next_id;
            f->alloc_base = 0x7e0000000000ull;
            f->alloc_size = 2048;
            f->overrun = 2048;
            hs_log_gpu_fault *g = put(&w, &w.events, HS_LOG_GPU_FAULT, sizeof *g);
            g->time_ns = t;
            g->finding_seq = f->seq;
            g->address = 0x7e0000000800ull;
            g->where = HS_LOG_FAULT_PAST_END;
            g->alloc_id = next_id;
            hs_log_launch *l = put(&w, &w.events, HS_LOG_LAUNCH, sizeof *l);
            l->start_ns = t;
            l->end_ns = t + 500;
            l->api = api;
            l->kernel_ref = HS_LOG_KREF_STUB;
            l->stream = stream;
            l->grid[0] = l->grid[1] = l->grid[2] = 1;
            l->block[0] = l->block[1] = l->block[2] = 1;
            l->name = (uint32_t)(1 + i % kernels);
            l->first_finding = f->seq;
            continue;
        }
        switch (i % 8) {
        case 0:
        case 1:
        case 2: {
            hs_log_copy *c = put(&w, &w.events, HS_LOG_COPY, sizeof *c);
            c->start_ns = t;
            c->end_ns = t + 700;
            c->api = api;
            c->direction = (uint8_t)(1 + i % 3);
            c->stream = stream;
            c->dst = 0x7e0000000000ull;
            c->src = 0x600000;
            c->bytes = 4096 + i % 65536;
            c->dst_alloc = next_id;
            break;
        }
        case 3:
        case 4: {
            hs_log_launch *l = put(&w, &w.events, HS_LOG_LAUNCH, sizeof *l);
            l->start_ns = t;
            l->end_ns = t + 500;
            l->api = api;
            l->kernel_ref = HS_LOG_KREF_STUB;
            l->stream = stream;
            l->seq = i;
            l->grid[0] = 128, l->grid[1] = l->grid[2] = 1;
            l->block[0] = 256, l->block[1] = l->block[2] = 1;
            l->stack = stack;
            l->name = (uint32_t)(1 + i % kernels);
            break;
        }
        case 5: {
            hs_log_alloc *a = put(&w, &w.events, HS_LOG_ALLOC, sizeof *a);
            a->time_ns = t;
            a->api = api;
            a->mem_kind = 1;
            a->stack = stack;
            a->id = ++next_id;
            a->base = 0x7e0000000000ull + next_id * 0x10000;
            a->size = 0x10000;
            a->stream = stream;
            break;
        }
        case 6: {
            hs_log_free *fr = put(&w, &w.events, HS_LOG_FREE, sizeof *fr);
            fr->time_ns = t;
            fr->api = api;
            fr->stack = stack;
            fr->id = next_id;
            fr->base = 0x7e0000000000ull + next_id * 0x10000;
            break;
        }
        default: {
            hs_log_sync *y = put(&w, &w.events, HS_LOG_SYNC, sizeof *y);
            y->start_ns = t;
            y->end_ns = t + 300;
            y->api = api;
            y->stream = stream;
        }
        }
    }
    int rc = flush_chunk(&w, &w.events) | flush_chunk(&w, &w.meta) | fclose(w.f);
    if (rc)
        perror(argv[1]);
    return rc ? 1 : 0;
}
