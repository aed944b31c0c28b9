/* The stream, free, result and leak rules, called directly with hand-made facts: no runtime,
 * no shadow map, no stream registry behind them. */
#include "rules/check.h"
#include "unit.h"

static hs_finding out[HS_MAX_FINDINGS_PER_CALL];

static hs_side device_side(uintptr_t base, size_t size, size_t offset, size_t extent)
{
    return (hs_side){.ptr = base + offset,
                     .extent = extent,
                     .where = HS_WHERE_LIVE,
                     .alloc = {.base = base, .size = size, .kind = HS_MEM_DEVICE, .id = 7}};
}

static hs_side pageable_host(uintptr_t p, size_t extent)
{
    return (hs_side){.ptr = p, .extent = extent, .where = HS_WHERE_NONE, .host_checked = true};
}

/* An async D2H into host memory, with the facts gathering would give it. */
static void async_d2h(hs_call *c, hs_facts *f)
{
    *c = (hs_call){
        .op = HS_OP_COPY, .bytes = 256, .dir = HS_DIR_D2H, .async = true, .has_stream = true, .stream = 0xa0};
    *f = (hs_facts){.dir = HS_DIR_D2H,
                    .src = device_side(0x10000, 4096, 0, 256),
                    .dst = pageable_host(0x1000, 256),
                    .has_pending = true,
                    .pending = {.host_lo = 0x1000, .host_hi = 0x1100, .host_write = true, .dir = HS_DIR_D2H}};
}

static void test_destroyed_stream(void)
{
    hs_call c = {.op = HS_OP_COPY, .has_stream = true, .stream = 0xa0};
    hs_facts f = {.stream_state = HS_STREAM_DESTROYED};
    CHECK_EQ(hs_check_stream_handle(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_INVALID_STREAM);
    CHECK_EQ(out[0].severity, HS_SEV_ERROR);
    f.stream_state = HS_STREAM_NEVER_CREATED;
    CHECK_EQ(hs_check_stream_handle(&c, &f, out, 4), 1);
    f.stream_state = HS_STREAM_OK;
    CHECK_EQ(hs_check_stream_handle(&c, &f, out, 4), 0);
    /* a call that names no stream cannot name a bad one */
    c.has_stream = false;
    f.stream_state = HS_STREAM_DESTROYED;
    CHECK_EQ(hs_check_stream_handle(&c, &f, out, 4), 0);
    /* destroying a destroyed stream: the model gave its state before the destroy */
    c = (hs_call){.op = HS_OP_STREAM_DESTROY, .has_stream = true, .stream = 0xa0};
    CHECK_EQ(hs_check_stream_handle(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_INVALID_STREAM);
}

static void test_async_overlap(void)
{
    hs_call c;
    hs_facts f;
    async_d2h(&c, &f);
    CHECK_EQ(hs_check_stream_work(&c, &f, out, 4), 0); /* nothing else pending: clean */
    f.conflict = (hs_conflict){.found = true, .stream = 0xb0, .op = {.host_lo = 0x1000, .host_hi = 0x1100}};
    CHECK_EQ(hs_check_stream_work(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_ASYNC_OVERLAP);
    CHECK_EQ(out[0].side, HS_SIDE_DST); /* this copy writes the host range */
    f.pending.host_write = false;       /* an H2D reads it */
    CHECK_EQ(hs_check_stream_work(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].side, HS_SIDE_SRC);
    /* a synchronous copy leaves nothing pending, so it overlaps nothing */
    f.has_pending = false;
    c.async = false;
    CHECK_EQ(hs_check_stream_work(&c, &f, out, 4), 0);
    /* hs_check_copy runs the range rules, then these */
    async_d2h(&c, &f);
    f.conflict.found = true;
    f.src.extent = 8192; /* and runs past its allocation */
    c.bytes = 8192;
    CHECK_EQ(hs_check_copy(&c, &f, out, 4), 2);
    CHECK_EQ(out[0].kind, HS_KIND_OUT_OF_BOUNDS);
    CHECK_EQ(out[1].kind, HS_KIND_ASYNC_OVERLAP);
    CHECK_EQ(hs_check_copy(&c, &f, out, 1), 1); /* and never write more than they are given room for */
}

static void test_capture_violation(void)
{
    hs_call sync = {.op = HS_OP_SYNC, .sync = HS_SYNC_STREAM, .has_stream = true, .stream = 0xa0};
    hs_facts f = {0};
    CHECK_EQ(hs_check_stream_work(&sync, &f, out, 4), 0);
    f.own_stream_capturing = true;
    f.capturing_stream = 0xa0;
    CHECK_EQ(hs_check_stream_work(&sync, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_CAPTURE_VIOLATION);
    /* a legacy-stream sync while another stream is captured */
    f.own_stream_capturing = false;
    f.capturing_stream = 0xb0;
    CHECK_EQ(hs_check_stream_work(&sync, &f, out, 4), 1);
    /* a synchronous copy during capture is one too; an async one is captured, not run */
    hs_call copy = {.op = HS_OP_COPY, .bytes = 64, .dir = HS_DIR_D2H};
    CHECK_EQ(hs_check_stream_work(&copy, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_CAPTURE_VIOLATION);
    copy.async = true;
    CHECK_EQ(hs_check_stream_work(&copy, &f, out, 4), 0);
    /* waiting for an event does not wait for a stream */
    hs_call event_sync = {.op = HS_OP_SYNC, .sync = HS_SYNC_EVENT};
    CHECK_EQ(hs_check_stream_work(&event_sync, &f, out, 4), 0);
}

static void test_pageable_async(void)
{
    hs_call c;
    hs_facts f;
    async_d2h(&c, &f);
    CHECK_EQ(hs_check_stream_work(&c, &f, out, 4), 0); /* notes are opt-in */
    f.want_notes = true;
    CHECK_EQ(hs_check_stream_work(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_PAGEABLE_ASYNC);
    CHECK_EQ(out[0].severity, HS_SEV_INFO);
    CHECK_EQ(out[0].side, HS_SIDE_DST);
    /* pinned memory (known to the shadow map, so never host-probed) is what it should be */
    f.dst = (hs_side){.ptr = 0x1000,
                      .extent = 256,
                      .where = HS_WHERE_LIVE,
                      .alloc = {.base = 0x1000, .size = 4096, .kind = HS_MEM_PINNED_HOST}};
    CHECK_EQ(hs_check_stream_work(&c, &f, out, 4), 0);
    /* an H2D from pageable memory is not this note */
    async_d2h(&c, &f);
    f.want_notes = true;
    f.dir = HS_DIR_H2D;
    CHECK_EQ(hs_check_stream_work(&c, &f, out, 4), 0);
}

static void test_free_while_pending(void)
{
    hs_call c = {.op = HS_OP_FREE, .free_ptr = 0x10000, .async = true, .has_stream = true, .stream = 0xa0};
    hs_facts f = {.release = HS_RELEASED, .dst = {.ptr = 0x10000}};
    CHECK_EQ(hs_check_free(&c, &f, out, 4), 0);
    f.conflict = (hs_conflict){.found = true, .stream = 0xb0};
    CHECK_EQ(hs_check_free(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_FREE_WHILE_PENDING);
    CHECK_EQ(out[0].side, HS_SIDE_DST);
}

static void test_invalid_free(void)
{
    hs_call c = {.op = HS_OP_FREE, .free_ptr = 0x10000};
    hs_facts f = {.release = HS_RELEASE_TWICE, .dst = device_side(0x10000, 4096, 0, 0)};
    f.dst.where = HS_WHERE_FREED;
    CHECK_EQ(hs_check_free(&c, &f, out, 4), 1); /* double free */
    CHECK_EQ(out[0].kind, HS_KIND_INVALID_FREE);
    f.release = HS_RELEASE_INTERIOR; /* not the base */
    CHECK_EQ(hs_check_free(&c, &f, out, 4), 1);
    CHECK_EQ(out[0].kind, HS_KIND_INVALID_FREE);
    f = (hs_facts){.release = HS_RELEASE_UNKNOWN, .dst = {.ptr = 0x10000}};
    CHECK_EQ(hs_check_free(&c, &f, out, 4), 1); /* never allocated */
    f.dst.runtime_known = true;                 /* ...through a wrapped call: the runtime knows it */
    CHECK_EQ(hs_check_free(&c, &f, out, 4), 0);
    c.free_ptr = 0; /* freeing NULL is a no-op */
    f = (hs_facts){.release = HS_RELEASE_UNKNOWN};
    CHECK_EQ(hs_check_free(&c, &f, out, 4), 0);
}

static void test_runtime_error(void)
{
    hs_call c = {.op = HS_OP_COPY, .bytes = 64, .dir = HS_DIR_D2H};
    hs_facts f = {0};
    hs_finding fi;
    CHECK_EQ(hs_check_result(&c, &f, false, NULL, 0, &fi), 1);
    CHECK_EQ(fi.kind, HS_KIND_RUNTIME_ERROR);
    CHECK_EQ(fi.severity, HS_SEV_ERROR);
    CHECK_EQ(fi.side, HS_SIDE_NONE);
    /* it points at the side the checks before forwarding blamed */
    hs_finding earlier[2] = {{.kind = HS_KIND_INVALID_STREAM}, {.kind = HS_KIND_OUT_OF_BOUNDS, .side = HS_SIDE_SRC}};
    CHECK_EQ(hs_check_result(&c, &f, false, earlier, 2, &fi), 1);
    CHECK_EQ(fi.side, HS_SIDE_SRC);
    /* rescued by the fallback: a warning about the source */
    CHECK_EQ(hs_check_result(&c, &f, true, NULL, 0, &fi), 1);
    CHECK_EQ(fi.kind, HS_KIND_RUNTIME_ERROR);
    CHECK_EQ(fi.severity, HS_SEV_WARNING);
    CHECK_EQ(fi.side, HS_SIDE_SRC);
    /* requests a program must expect to be refused: out of memory, an unsupported property, a
     * symbol this driver lacks (PyTorch retries cuMemCreate; runtimes probe for symbols) */
    hs_op refusable[] = {HS_OP_ALLOC, HS_OP_VMM_RESERVE, HS_OP_VMM_CREATE, HS_OP_POOL_CREATE, HS_OP_LOOKUP};
    for (unsigned i = 0; i < sizeof refusable / sizeof *refusable; i++) {
        hs_call a = {.op = refusable[i]};
        CHECK_EQ(hs_check_result(&a, &f, false, NULL, 0, &fi), 0);
        CHECK_EQ(hs_check_result(&a, &f, false, earlier, 2, &fi), 1); /* unless it explains a finding */
    }
    hs_call fr = {.op = HS_OP_FREE, .free_ptr = 0x1000};
    CHECK_EQ(hs_check_result(&fr, &f, false, NULL, 0, &fi), 1); /* a refused free is a finding */
}

static void test_leak(void)
{
    hs_facts f = {.dst = device_side(0x10000, 4096, 0, 0)};
    hs_finding fi = hs_check_leak(&f);
    CHECK_EQ(fi.kind, HS_KIND_LEAK);
    CHECK_EQ(fi.severity, HS_SEV_INFO);
    CHECK_EQ(fi.side, HS_SIDE_DST);
}

int main(void)
{
    test_destroyed_stream();
    test_async_overlap();
    test_capture_violation();
    test_pageable_async();
    test_free_while_pending();
    test_invalid_free();
    test_runtime_error();
    test_leak();
    return UNIT_DONE();
}
