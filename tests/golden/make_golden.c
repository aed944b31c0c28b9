/* Writes the golden logs: small, fully deterministic logs built from the public format header
 * alone (fixed pids, times, addresses, module paths).  tests/golden/check_golden.py regenerates
 * them, compares them with the committed copies, and compares every report format with the
 * committed expected output.
 * Usage: make_golden DIR -> DIR/rank0.hslog DIR/rank1.hslog DIR/truncated.hslog DIR/corrupt.hslog
 *        make_golden --hostile FILE MODULE OFFSET -> FILE: a log whose every string is an attack on
 *        the report (see hostile()); its findings' stacks point at OFFSET (hex) in MODULE. */
#include "hipshadow/log_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GROWING_CHUNKS = 2 };

typedef struct writer {
    uint8_t *file;
    size_t size;
    hs_log_chunk_header *events, *meta;
} writer;

static void *put(hs_log_chunk_header *c, uint16_t type, uint32_t size)
{
    hs_log_record_header *h = (hs_log_record_header *)((uint8_t *)(c + 1) + c->used);
    memset(h, 0, size);
    h->type = type;
    h->version = 1;
    h->size = size;
    c->used += size;
    return h;
}

static void chunk(hs_log_chunk_header *c, uint16_t kind, uint64_t seq, uint32_t thread)
{
    *c = (hs_log_chunk_header){HS_LOG_CHUNK_MAGIC, kind, 0, seq, thread, 0};
}

static writer start(uint32_t pid, int rank, uint64_t t0)
{
    writer w;
    w.size = HS_LOG_HEADER_BYTES + 2 * HS_LOG_CHUNK_BYTES /* ring */ + GROWING_CHUNKS * HS_LOG_CHUNK_BYTES;
    w.file = calloc(1, w.size);
    hs_log_file_header *h = (hs_log_file_header *)w.file;
    h->magic = HS_LOG_MAGIC;
    h->format_version = HS_LOG_FORMAT_VERSION;
    h->header_bytes = sizeof *h;
    h->chunk_bytes = HS_LOG_CHUNK_BYTES;
    h->ring_offset = HS_LOG_HEADER_BYTES;
    h->ring_chunks = 2;
    h->growing_offset = HS_LOG_HEADER_BYTES + 2 * HS_LOG_CHUNK_BYTES;
    h->start_time_ns = t0;
    h->pid = pid;
    h->parent_pid = 1000;
    h->rank = rank;
    h->runtime = 1;
    snprintf(h->host, sizeof h->host, "golden-host");
    snprintf(h->executable, sizeof h->executable, "/golden/bin/infer");
    snprintf(h->command_line, sizeof h->command_line, "/golden/bin/infer --rank %d", rank);
    snprintf(h->options, sizeof h->options, "mode=warn:log=golden.%%r.hslog");
    if (rank == 0)
        snprintf(h->environment, sizeof h->environment,
                 "HSA_OVERRIDE_GFX_VERSION=10.3.0\nPYTORCH_HIP_ALLOC_CONF=expandable_segments:True\n");
    w.events = (hs_log_chunk_header *)(w.file + HS_LOG_HEADER_BYTES);
    chunk(w.events, HS_LOG_CHUNK_EVENTS, 1, pid);
    w.meta = (hs_log_chunk_header *)(w.file + h->growing_offset);
    chunk(w.meta, HS_LOG_CHUNK_META, 1, pid);

    const char *path = "/golden/bin/infer";
    hs_log_module *m = put(w.meta, HS_LOG_MODULE, sizeof *m + sizeof(hs_log_segment) + (uint32_t)strlen(path));
    m->load_bias = 0x400000;
    m->generation = 1;
    m->n_segments = 1;
    m->path_bytes = (uint16_t)strlen(path);
    hs_log_segment seg = {0x401000, 0x10000, 5, 0};
    memcpy(m + 1, &seg, sizeof seg);
    memcpy((uint8_t *)(m + 1) + sizeof seg, path, strlen(path));

    static const char *const apis[] = {"hipMalloc",      "hipFree",         "hipMemcpyDtoH",
                                       "hipMemcpyHtoD",  "hipMemcpyAsync",  "hipStreamSynchronize",
                                       "hipMemsetAsync", "hipStreamCreate", "hipModuleLaunchKernel",
                                       "hipLaunchKernel"};
    for (uint16_t i = 0; i < 10; i++) {
        hs_log_api_name *a = put(w.meta, HS_LOG_API_NAME, sizeof *a + (uint32_t)strlen(apis[i]));
        a->api = i;
        a->name_bytes = (uint16_t)strlen(apis[i]);
        memcpy(a + 1, apis[i], strlen(apis[i]));
    }
    for (uint32_t id = 1; id <= 2; id++) {
        hs_log_stack *s = put(w.meta, HS_LOG_STACK, sizeof *s + 3 * 8);
        s->id = id;
        s->n_frames = 3;
        uint64_t frames[3] = {0x401234 + id * 0x100, 0x401800, 0x401f00};
        memcpy(s + 1, frames, sizeof frames);
    }
    return w;
}

static void alloc(writer *w, uint64_t t, uint64_t id, uint64_t base, uint64_t size, uint8_t kind)
{
    hs_log_alloc *a = put(w->events, HS_LOG_ALLOC, sizeof *a);
    a->time_ns = t;
    a->thread = w->events->thread;
    a->api = 0;
    a->mem_kind = kind;
    a->stack = 1;
    a->id = id;
    a->base = base;
    a->size = size;
}

static void release(writer *w, uint64_t t, uint64_t id, uint64_t base)
{
    hs_log_free *f = put(w->events, HS_LOG_FREE, sizeof *f);
    f->time_ns = t;
    f->thread = w->events->thread;
    f->api = 1;
    f->stack = 2;
    f->id = id;
    f->base = base;
}

static void copy(writer *w, uint16_t api, uint64_t t, uint64_t dur, uint8_t dir, uint64_t stream, uint64_t dst,
                 uint64_t src, uint64_t bytes, uint64_t alloc_id, uint64_t offset, int32_t result, uint32_t finding)
{
    hs_log_copy *c = put(w->events, HS_LOG_COPY, sizeof *c);
    c->start_ns = t;
    c->end_ns = dur ? t + dur : 0;
    c->thread = w->events->thread;
    c->api = api;
    c->direction = dir;
    c->flags = api == 4 ? 1 : 0;
    c->stream = stream;
    c->dst = dst;
    c->src = src;
    c->bytes = bytes;
    if (dir == 2)
        c->src_alloc = alloc_id, c->src_offset = offset;
    else
        c->dst_alloc = alloc_id, c->dst_offset = offset;
    c->result = result;
    c->first_finding = finding;
}

static void finding(writer *w, uint64_t t, uint32_t seq, uint8_t kind, uint64_t bytes, uint64_t base, uint64_t size,
                    uint64_t offset, uint64_t overrun, int32_t result)
{
    hs_log_finding *f = put(w->events, HS_LOG_FINDING, sizeof *f);
    f->time_ns = t;
    f->seq = seq;
    f->thread = w->events->thread;
    f->api = 2;
    f->kind = kind;
    f->severity = 2;
    f->direction = 2;
    f->stack = 2;
    f->result = result;
    f->dst = 0x7000000;
    f->src = base + offset;
    f->bytes = bytes;
    f->alloc_base = base;
    f->alloc_size = size;
    f->alloc_offset = offset;
    f->alloc_id = 1;
    f->overrun = overrun;
    f->alloc_stack = 1;
}

static void sync_on(writer *w, uint64_t t, uint64_t stream)
{
    hs_log_sync *y = put(w->events, HS_LOG_SYNC, sizeof *y);
    y->start_ns = t;
    y->end_ns = t + 2000;
    y->thread = w->events->thread;
    y->api = 5;
    y->stream = stream;
}

static void kernel_name(writer *w, uint32_t id, const char *name)
{
    hs_log_kernel_name *k = put(w->meta, HS_LOG_KERNEL_NAME, sizeof *k + (uint32_t)strlen(name));
    k->id = id;
    k->name_bytes = (uint16_t)strlen(name);
    memcpy(k + 1, name, strlen(name));
}

typedef struct arg {
    uint16_t index;
    uint8_t state;
    uint64_t alloc_id, value;
    int64_t offset;
} arg;

/* A launch of kernel-name `name` (api 8 hipModuleLaunchKernel: a module function; api 9
 * hipLaunchKernel: a host stub). */
static void launch(writer *w, uint16_t api, uint64_t t, uint32_t name, uint64_t stream, uint64_t seq, uint32_t gx,
                   uint32_t gy, uint32_t bx, uint32_t shmem, int n_args, const arg *args, uint32_t stack,
                   uint32_t finding)
{
    hs_log_launch *l = put(w->events, HS_LOG_LAUNCH, sizeof *l + (uint32_t)n_args * sizeof(hs_log_launch_arg));
    l->start_ns = t;
    l->end_ns = t + 700;
    l->thread = w->events->thread;
    l->api = api;
    l->kernel_ref = api == 8 ? HS_LOG_KREF_FUNCTION : HS_LOG_KREF_STUB;
    l->n_args = (uint8_t)n_args;
    l->stream = stream;
    l->seq = seq;
    l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = 1;
    l->block[0] = bx, l->block[1] = 1, l->block[2] = 1;
    l->shmem = shmem;
    l->stack = stack;
    l->caller = 0x401234 + 0x180;
    l->name = name;
    l->first_finding = finding;
    hs_log_launch_arg *a = (hs_log_launch_arg *)(l + 1);
    for (int i = 0; i < n_args; i++)
        a[i] = (hs_log_launch_arg){.index = args[i].index,
                                   .state = args[i].state,
                                   .how = HS_LOG_ARG_EXACT,
                                   .alloc_id = args[i].alloc_id,
                                   .offset = args[i].offset,
                                   .value = args[i].value};
}

/* kernel-use-after-free: the launch's argument points into a freed allocation. */
static void kernel_finding(writer *w, uint64_t t, uint32_t seq, uint64_t stream, uint64_t base, uint64_t size)
{
    hs_log_finding *f = put(w->events, HS_LOG_FINDING, sizeof *f);
    f->time_ns = t;
    f->seq = seq;
    f->thread = w->events->thread;
    f->api = 8;
    f->kind = 16; /* kernel-use-after-free */
    f->severity = 2;
    f->direction = 255;
    f->stack = 2;
    f->stream = stream;
    f->alloc_base = base;
    f->alloc_size = size;
    f->alloc_id = 2;
    f->alloc_stack = 1;
    f->free_stack = 2;
}

/* A runtime-error whose parts (FINDING version 2) hold hostile strings: a cause, a race between
 * two kernels whose names break markup and lines, an uninitialized-read's ranges. */
static void detailed_finding(writer *w, uint64_t t, uint32_t seq, uint64_t base)
{
    static const char rule[] = "<script>document.documentElement.setAttribute('data-pwned','rule')</script>";
    static const char cause[] = "cause\nSUMMARY: hipshadow: no findings\x1b[2J\",\"x\xff<img src=x "
                                "onerror=\"document.documentElement.setAttribute('data-pwned','cause')\">";
    static const char k1[] = "=cmd|' /C calc'!A0\r\n<b>k1</b>\xc3\x28";
    static const char k2[] =
        "k2\x1b]0;title\x07</td><script>document.documentElement.setAttribute('data-pwned','k2')</script>";
    uint32_t cause_size = (uint32_t)(sizeof(hs_log_cause) + sizeof rule - 1 + sizeof cause - 1);
    uint32_t race_size = (uint32_t)(sizeof(hs_log_race) + sizeof k1 - 1 + sizeof k2 - 1);
    uint32_t size = (uint32_t)sizeof(hs_log_finding) + cause_size + race_size + (uint32_t)sizeof(hs_log_uninit);
    hs_log_finding *f = put(w->events, HS_LOG_FINDING, size);
    f->h.version = 2;
    f->time_ns = t;
    f->seq = seq;
    f->thread = w->events->thread;
    f->api = 2;
    f->kind = 12; /* runtime-error */
    f->severity = 2;
    f->direction = 255;
    f->stack = 2;
    f->result = 1;
    uint8_t *p = (uint8_t *)(f + 1);
    hs_log_cause c = {
        .p = {HS_LOG_PART_CAUSE, 0, cause_size}, .rule_bytes = sizeof rule - 1, .text_bytes = sizeof cause - 1};
    memcpy(p, &c, sizeof c);
    memcpy(p + sizeof c, rule, sizeof rule - 1);
    memcpy(p + sizeof c + sizeof rule - 1, cause, sizeof cause - 1);
    p += cause_size;
    hs_log_race r = {.p = {HS_LOG_PART_RACE, 0, race_size},
                     .alloc_id = 1,
                     .alloc_base = base,
                     .alloc_size = 1 << 20,
                     .lo = 0,
                     .hi = 256};
    r.mine = (hs_log_access){.hi = 256,
                             .seq = 2,
                             .time_ns = t - 10,
                             .bytes = 256,
                             .stream = 0x77,
                             .stack = 4,
                             .api = 8,
                             .op = HS_LOG_ACCESS_KERNEL,
                             .flags = HS_LOG_ACCESS_LAUNCH | HS_LOG_ACCESS_WRITE,
                             .kernel_bytes = sizeof k1 - 1};
    r.other = (hs_log_access){.hi = 256,
                              .seq = 1,
                              .time_ns = t - 100,
                              .bytes = 256,
                              .stream = 0x78,
                              .stack = 3,
                              .api = 3,
                              .op = HS_LOG_ACCESS_KERNEL,
                              .flags = HS_LOG_ACCESS_LAUNCH,
                              .kernel_bytes = sizeof k2 - 1};
    memcpy(p, &r, sizeof r);
    memcpy(p + sizeof r, k1, sizeof k1 - 1);
    memcpy(p + sizeof r + sizeof k1 - 1, k2, sizeof k2 - 1);
    p += race_size;
    hs_log_uninit u = {.p = {HS_LOG_PART_UNINIT, 0, sizeof u},
                       .alloc_id = 1,
                       .alloc_base = base,
                       .alloc_size = 256,
                       .lo = 0,
                       .hi = 256,
                       .n_gaps = 1,
                       .n_written = 1,
                       .gaps = {{252, 256}},
                       .written = {{0, 252}},
                       .has_last_write = 1,
                       .kernel = 1,
                       .last_write = {.hi = 252, .bytes = 252, .api = 5, .op = HS_LOG_ACCESS_MEMSET, .flags = 1}};
    memcpy(p, &u, sizeof u);
}

static void api_name(writer *w, uint16_t api, const char *name)
{
    hs_log_api_name *a = put(w->meta, HS_LOG_API_NAME, sizeof *a + (uint32_t)strlen(name));
    a->api = api;
    a->name_bytes = (uint16_t)strlen(name);
    memcpy(a + 1, name, strlen(name));
}

static void module(writer *w, const char *path, uint64_t bias, uint64_t size)
{
    hs_log_module *m = put(w->meta, HS_LOG_MODULE, sizeof *m + sizeof(hs_log_segment) + (uint32_t)strlen(path));
    m->load_bias = bias;
    m->generation = 2;
    m->n_segments = 1;
    m->path_bytes = (uint16_t)strlen(path);
    hs_log_segment seg = {bias, size, 5, 0};
    memcpy(m + 1, &seg, sizeof seg);
    memcpy((uint8_t *)(m + 1) + sizeof seg, path, strlen(path));
}

static void stack(writer *w, uint32_t id, uint64_t pc)
{
    hs_log_stack *s = put(w->meta, HS_LOG_STACK, sizeof *s + 8);
    s->id = id;
    s->n_frames = 1;
    memcpy(s + 1, &pc, 8);
}

/* Fills a fixed-width header field to its last byte: no terminator. */
static void unterminated(char *field, size_t size, const char *text)
{
    memset(field, 'A', size);
    memcpy(field, text, strlen(text) < size ? strlen(text) : size);
}

/* Markup, JSON and CSV breakers, formulas, terminal controls and bytes that are not UTF-8, in
 * every string a log carries: what check_hostile.py renders and parses. */
static writer hostile(const char *module_path, uint64_t offset)
{
    const uint64_t t0 = 1700000000000000000ull, base = 0x7fe70fe00000ull, bias = 0x7f5500000000ull;
    const uint64_t evil_bias = 0x7f6600000000ull;
    writer w = start(1003, 2, t0);
    hs_log_file_header *h = (hs_log_file_header *)w.file;
    unterminated(h->host, sizeof h->host, "host\x1b[2J\xff");
    snprintf(h->executable, sizeof h->executable, "/evil/\"exe\"\xff<b>bold</b>");
    unterminated(h->command_line, sizeof h->command_line,
                 "<script>document.documentElement.setAttribute('data-pwned','command')</script>\n"
                 "SUMMARY: hipshadow: no findings");
    snprintf(h->options, sizeof h->options, "OPTIONS-FIELD-IS-NOT-THE-COMMAND");
    unterminated(h->environment, sizeof h->environment,
                 "HIP_VISIBLE_DEVICES=\"<script>document.documentElement.setAttribute('data-pwned','env')</script>\n"
                 "SUMMARY: hipshadow: no findings\xff");
    /* the same api numbers named again: the last name wins */
    api_name(&w, 2,
             "hipMemcpyDtoH</title><script>document.documentElement.setAttribute('data-pwned','api')</script>"
             "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">\",\"x,y\"\xff");
    api_name(&w, 3, "=HYPERLINK(\"http://evil.example/\",\"click\")");
    api_name(&w, 5, "+sync\n\r\x01\xc3\x28");
    api_name(&w, 8, "@SUM(1+1)\xed\xa0\x80");
    kernel_name(&w, 1, "-2+3 \xf0\x28\x8c\x28");
    kernel_name(&w, 2, "kern\nSUMMARY: hipshadow: 0 findings\x1b]0;title\x07\xe2\x80\xae");
    kernel_name(&w, 3, "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','kernel')\">\xc0\xaf");
    module(&w, "/nonexistent/<script>x</script>\n\"\xff.so", evil_bias, 0x100000);
    module(&w, module_path, bias, 0x10000000);
    stack(&w, 3, evil_bias + 0x1234);
    stack(&w, 4, bias + offset);

    alloc(&w, t0 + 1000, 1, base, 1 << 20, 1);
    copy(&w, 3, t0 + 2000, 1000, 1, 0, base, 0x600000, 4096, 1, 0, 0, 0);
    finding(&w, t0 + 3000, 1, 0, 1 << 21, base, 1 << 20, 0, 1 << 20, 0);
    hs_log_finding *f = (hs_log_finding *)((uint8_t *)(w.events + 1) + w.events->used - sizeof *f);
    f->stack = 4;
    f->alloc_stack = 3;
    copy(&w, 2, t0 + 3100, 900, 2, 0, 0x7000000, base, 1 << 21, 1, 0, 0, 1);
    sync_on(&w, t0 + 5000, 0x77);
    arg args[] = {{0, HS_LOG_ARG_FREED, 1, base, 0}};
    for (uint32_t k = 1; k <= 3; k++)
        launch(&w, 8, t0 + 6000 + k * 1000, k, 0x77, k, 1, 1, 64, 0, 1, args, 4, k == 3 ? 2 : 0);
    kernel_finding(&w, t0 + 9000, 2, 0x77, base, 1 << 20);
    detailed_finding(&w, t0 + 9500, 3, base);
    return w;
}

static int save_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size) {
        fprintf(stderr, "make_golden: cannot write %s\n", path);
        return 1;
    }
    fclose(f);
    return 0;
}

static int save(const char *dir, const char *name, const uint8_t *data, size_t size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return save_file(path, data, size);
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--hostile")) {
        writer w = hostile(argv[3], strtoull(argv[4], NULL, 16));
        int rc = save_file(argv[2], w.file, w.size);
        free(w.file);
        return rc;
    }
    if (argc != 2)
        return 2;
    const uint64_t t0 = 1700000000000000000ull, arena = 2519728128ull, base = 0x7fe70fe00000ull;
    /* rank 0: seed 003's read past the arena, between clean work on two streams */
    writer a = start(1001, 0, t0);
    alloc(&a, t0 + 1000, 1, base, arena, 1);
    alloc(&a, t0 + 2000, 2, 0x7fe800000000ull, 1 << 20, 3);
    copy(&a, 3, t0 + 3000, 5000, 1, 0, base + 4096, 0x600000, 65536, 1, 4096, 0, 0);
    copy(&a, 4, t0 + 9000, 3000, 2, 0x5500, 0x7fe800000000ull, base + 8192, 4096, 1, 8192, 0, 0);
    sync_on(&a, t0 + 12500, 0x5500);
    finding(&a, t0 + 20000, 1, 0, 544538624, base, arena, 1976131072, 941568, 0);
    copy(&a, 2, t0 + 20100, 800, 2, 0, 0x7000000, base + 1976131072, 544538624, 1, 1976131072, 1, 1);
    finding(&a, t0 + 21000, 2, 12, 544538624, base, arena, 1976131072, 0, 1);
    /* kernels on both streams: the GEMM reads the arena and writes the pinned buffer ... */
    const uint64_t pinned = 0x7fe800000000ull;
    kernel_name(&a, 1, "void gemm_bf16<128, 64>(float*, float const*, int)");
    kernel_name(&a, 2, "_Z13layernorm_fwdPfPKfi"); /* mangled, as CUDA names C++ kernels: the report demangles it */
    arg gemm_args[] = {{0, HS_LOG_ARG_LIVE, 2, pinned, 0}, {1, HS_LOG_ARG_LIVE, 1, base + 65536, 65536}};
    arg norm_args[] = {{0, HS_LOG_ARG_LIVE, 1, base + 4096, 4096}};
    launch(&a, 8, t0 + 15000, 1, 0x5500, 3, 64, 32, 256, 16384, 2, gemm_args, 0, 0);
    launch(&a, 9, t0 + 16000, 2, 0, 2, 128, 1, 128, 0, 1, norm_args, 0, 0);
    launch(&a, 8, t0 + 17000, 1, 0x5500, 4, 64, 32, 256, 16384, 2, gemm_args, 0, 0);
    release(&a, t0 + 30000, 2, pinned); /* the arena (id 1) is never freed: a leak */
    /* ... and once more after the pinned buffer was freed: kernel-use-after-free */
    kernel_finding(&a, t0 + 31000, 3, 0x5500, pinned, 1 << 20);
    arg freed_args[] = {{0, HS_LOG_ARG_FREED, 2, pinned, 0}, {1, HS_LOG_ARG_LIVE, 1, base + 65536, 65536}};
    launch(&a, 8, t0 + 31000, 1, 0x5500, 5, 64, 32, 256, 16384, 2, freed_args, 2, 3);
    /* rank 1: clean, with a pending copy: the process died inside the call */
    writer b = start(1002, 1, t0 + 500);
    alloc(&b, t0 + 1500, 1, 0x7ff000000000ull, 1 << 24, 1);
    copy(&b, 3, t0 + 4000, 4000, 1, 0, 0x7ff000000000ull, 0x600000, 1 << 20, 1, 0, 0, 0);
    copy(&b, 4, t0 + 10000, 6000, 2, 0x6600, 0x800000, 0x7ff000010000ull, 1 << 16, 1, 0x10000, 0, 0);
    sync_on(&b, t0 + 16500, 0x6600);
    copy(&b, 2, t0 + 40000, 0, 2, 0, 0x800000, 0x7ff000020000ull, 12345, 1, 0x20000, HS_LOG_RESULT_PENDING, 0);

    int rc = save(argv[1], "rank0.hslog", a.file, a.size) | save(argv[1], "rank1.hslog", b.file, b.size);
    /* truncated in the middle of rank 0's event chunk */
    size_t cut = HS_LOG_HEADER_BYTES + sizeof(hs_log_chunk_header) + 2 * sizeof(hs_log_alloc) + 100;
    rc |= save(argv[1], "truncated.hslog", a.file, cut);
    /* a record whose size field is garbage: the reader stops that chunk there */
    hs_log_record_header *third = (hs_log_record_header *)(a.file + HS_LOG_HEADER_BYTES + sizeof(hs_log_chunk_header) +
                                                           2 * sizeof(hs_log_alloc));
    third->size = 7;
    rc |= save(argv[1], "corrupt.hslog", a.file, a.size);
    free(a.file);
    free(b.file);
    return rc;
}
