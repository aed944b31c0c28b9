/* The fast path of a clean copy (fast_copy.c): it takes the copies that are clean and common
 * (synchronous ones on the legacy stream, async ones between device allocations on a stream),
 * and leaves every other one to the full path: an overrun, freed memory, an unknown device
 * pointer, a bad host range, a reversed direction, hipMemcpyDefault, an async copy with a host
 * side or on an unknown stream, 2-D copies, a range leaving its chunk in a large allocation, a
 * pause, an annotated region, and a legacy stream with work pending.  An async copy it takes is
 * pending on its stream afterwards, with its allocations, as the full path leaves it. */
#include "path/core.h"
#include "path/fast_copy.h"
#include "path/init.h"
#include "streams/ordering.h"
#include "shadow/regions.h"
#include "shadow/shadow.h"
#include "streams/streams.h"
#include "unit.h"

#include <stdlib.h>

static const uintptr_t DEV = (uintptr_t)0x7e0000000000, BIG = (uintptr_t)0x7e1000000000;

static hs_call copy(uintptr_t dst, uintptr_t src, size_t bytes, int dir)
{
    return (hs_call){.api = 1, .op = HS_OP_COPY, .dst = dst, .src = src, .bytes = bytes, .dir = dir};
}

static hs_fast_copy fc;

static bool clean(const hs_call *c)
{
    hs_copy_args a = HS_COPY_ARGS(*c); /* what the wrapper passes */
    return hs_fast_copy_clean(&a, &fc);
}

static hs_call async_copy(uintptr_t dst, uintptr_t src, size_t bytes, int dir, uintptr_t stream)
{
    hs_call c = copy(dst, src, bytes, dir);
    c.async = c.has_stream = true;
    c.stream = stream;
    return c;
}

static uint64_t add(uintptr_t base, size_t size, uint32_t kind)
{
    hs_span s = {.base = base, .size = size, .kind = kind};
    CHECK_EQ(hs_shadow_add(&s), 0);
    return s.id;
}

int main(void)
{
    hs_ensure_init();
    char host[256];
    uintptr_t h = (uintptr_t)host;
    char *pinned = malloc(4096);
    uint64_t dev_id = add(DEV, 256, HS_MEM_DEVICE);
    add(DEV + 4096, 256, HS_MEM_MANAGED);
    add(BIG, 32u << 20, HS_MEM_DEVICE);
    add((uintptr_t)pinned, 4096, HS_MEM_PINNED_HOST);

    /* taken: the common clean copies */
    hs_call c = copy(h, DEV + 16, 64, HS_DIR_D2H);
    CHECK(clean(&c));
    c = copy(DEV, h, 256, HS_DIR_H2D);
    CHECK(clean(&c));
    c = copy(DEV, BIG + (5u << 20), 128, HS_DIR_D2D);
    CHECK(clean(&c));
    c = copy((uintptr_t)pinned, DEV, 256, HS_DIR_D2H);
    CHECK(clean(&c));
    c = copy(h, DEV + 4096, 64, HS_DIR_D2H); /* managed memory is device memory */
    CHECK(clean(&c));

    /* left to the full path */
    c = copy(h, DEV + 200, 64, HS_DIR_D2H); /* 8 bytes past the end */
    CHECK(!clean(&c));
    c = copy(h, DEV + 8192, 16, HS_DIR_D2H); /* in no allocation */
    CHECK(!clean(&c));
    c = copy(DEV, h, 64, HS_DIR_D2H); /* reversed */
    CHECK(!clean(&c));
    c = copy(0x1000, DEV, 64, HS_DIR_D2H); /* an unmapped host page */
    CHECK(!clean(&c));
    c = copy(h, (uintptr_t)pinned, 64, HS_DIR_D2H); /* pinned host memory named as device memory */
    CHECK(!clean(&c));
    c = copy(0, DEV, 64, HS_DIR_D2H);
    CHECK(!clean(&c));
    c = copy(h, DEV, 64, HS_DIR_DEFAULT);
    CHECK(!clean(&c));
    c = copy(h, DEV, 64, HS_DIR_D2H);
    c.async = true;
    CHECK(!clean(&c));
    c = copy(h, DEV, 64, HS_DIR_D2H);
    c.src_extent = 200; /* 2-D */
    CHECK(!clean(&c));
    c = copy(h, BIG + (64u << 10) - 32, 64, HS_DIR_D2H); /* leaves its 64 KiB chunk */
    CHECK(!clean(&c));

    /* conditions of the process */
    c = copy(h, DEV, 64, HS_DIR_D2H);
    hs_pause_push();
    CHECK(!clean(&c));
    hs_pause_pop();
    CHECK(clean(&c));
    CHECK_EQ(hs_region_register(DEV, 32, "tensor"), 0);
    CHECK(!clean(&c));
    CHECK(hs_region_unregister(DEV));
    CHECK(clean(&c));
    uint64_t seq = hs_order_enqueue(hs_stream_null()); /* a launch on the legacy stream, not waited for */
    CHECK(!clean(&c));
    CHECK(hs_fast_copy_done(c.api, &fc, 0)); /* a synchronous copy drains the legacy stream */
    CHECK(atomic_load(&hs_stream_null()->done) >= seq);
    CHECK(clean(&c));

    /* async copies between device allocations, on the legacy stream (handle 0) */
    hs_call a = async_copy(BIG + 4096, DEV, 256, HS_DIR_D2D, 0);
    CHECK(clean(&a));
    CHECK(fc.stream == hs_stream_null());
    hs_conflict user;
    hs_order_find_user(NULL, dev_id, 0, 0, &user);
    CHECK(!user.found); /* not forwarded yet: pending nowhere */
    CHECK(hs_fast_copy_done(a.api, &fc, 0));
    hs_order_find_user(NULL, dev_id, 0, 0, &user);
    CHECK(user.found); /* pending on the legacy stream: a free of DEV now is checked against it */
    CHECK_EQ(user.op.alloc_ids[1], dev_id);
    CHECK(!clean(&c));                                        /* and a synchronous copy waits for it: the full path */
    a = async_copy(BIG + 4096, DEV + 64, 256, HS_DIR_D2D, 0); /* 64 bytes past DEV's end */
    CHECK(!clean(&a));
    a = async_copy(h, DEV, 64, HS_DIR_D2H, 0); /* a host side */
    CHECK(!clean(&a));
    a = async_copy(BIG, DEV, 64, HS_DIR_DEFAULT, 0);
    CHECK(!clean(&a));
    a = async_copy(BIG, (uintptr_t)pinned, 64, HS_DIR_D2D, 0); /* pinned host memory named as device memory */
    CHECK(!clean(&a));
    a = async_copy(BIG, DEV, 64, HS_DIR_D2D, 0x5eed); /* a stream never made */
    CHECK(!clean(&a));
    a = async_copy(BIG, DEV, 64, HS_DIR_D2D, 0);
    a.has_stream = false; /* an async call that takes no stream: the legacy one */
    CHECK(clean(&a));
    CHECK(fc.stream == hs_stream_null());
    CHECK(hs_fast_copy_done(c.api, &(hs_fast_copy){0}, 0)); /* a synchronous copy: all of it done */
    hs_order_find_user(NULL, dev_id, 0, 0, &user);
    CHECK(!user.found);

    /* a refusal goes to the full path, which explains it and returns it unchanged */
    CHECK(!hs_fast_copy_done(c.api, &fc, 7));
    CHECK_EQ(hs_after_refused_fast(&c, 0, 7), 7);

    /* freed memory: the full path reports the use after free */
    hs_span gone;
    CHECK_EQ(hs_shadow_release(DEV, 0, 1, 1, &gone), HS_RELEASED);
    CHECK(!clean(&c));
    a = async_copy(BIG, DEV, 64, HS_DIR_D2D, 0);
    CHECK(!clean(&a));
    free(pinned);
    return UNIT_DONE();
}
