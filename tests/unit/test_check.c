/* The rules, one fact pattern at a time, with seed 003's numbers where they apply. */
#include "rules/check.h"
#include "unit.h"

#include <string.h>

static hs_side device_side(uintptr_t base, size_t size, size_t offset, size_t extent)
{
    return (hs_side){.ptr = base + offset,
                     .extent = extent,
                     .where = HS_WHERE_LIVE,
                     .alloc = {.base = base, .size = size, .kind = HS_MEM_DEVICE, .id = 1}};
}

static hs_side host_side(uintptr_t p, size_t extent)
{
    return (hs_side){.ptr = p, .extent = extent, .where = HS_WHERE_NONE, .host_checked = true};
}

static int run(const hs_call *c, hs_facts *f, hs_finding *out)
{
    if (f->dir == 0 && c->op == HS_OP_COPY)
        f->dir = hs_effective_direction(c->dir, &f->dst, &f->src);
    return hs_check_memory_op(c, f, out, HS_MAX_FINDINGS_PER_CALL);
}

static void test_seed003_out_of_bounds(void)
{
    const size_t arena = 2519728128ull, offset = 1976131072ull, bytes = 544538624ull;
    hs_call c = {.op = HS_OP_COPY, .bytes = bytes, .dir = HS_DIR_D2H};
    hs_facts f = {.src = device_side(0x7fe70fe00000, arena, offset, bytes), .dst = host_side(0x1000, bytes)};
    hs_finding out[4];
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_OUT_OF_BOUNDS);
    CHECK_EQ(out[0].side, HS_SIDE_SRC);
    CHECK_EQ(out[0].overrun, 941568);
    CHECK_EQ(out[0].severity, HS_SEV_ERROR);
}

static void test_interior_in_bounds_is_clean(void)
{
    /* seed 000: 128 MiB chunks at interior offsets of a 1 GiB pool */
    hs_call c = {.op = HS_OP_COPY, .bytes = 128u << 20, .dir = HS_DIR_D2H};
    hs_facts f = {.src = device_side(0x7a127b000000, 1u << 30, 126656512, 128u << 20),
                  .dst = host_side(0x1000, 128u << 20)};
    hs_finding out[4];
    CHECK_EQ(run(&c, &f, out), 0);
    /* ending exactly at the end is fine too */
    f.src = device_side(0x7a127b000000, 1u << 30, (1u << 30) - 4096, 4096);
    c.bytes = 4096;
    f.dst.extent = 4096;
    CHECK_EQ(run(&c, &f, out), 0);
}

static void test_freed_unknown_null(void)
{
    hs_call c = {.op = HS_OP_COPY, .bytes = 64, .dir = HS_DIR_D2H};
    hs_facts f = {.src = device_side(0x5000, 4096, 0, 64), .dst = host_side(0x1000, 64)};
    f.src.where = HS_WHERE_FREED;
    hs_finding out[4];
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_USE_AFTER_FREE);

    f.src = (hs_side){.ptr = 0x5000, .extent = 64, .where = HS_WHERE_NONE};
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_UNKNOWN_POINTER);

    f.src.runtime_known = true; /* known to the runtime, in bounds: clean */
    f.src.alloc = (hs_span){.base = 0x5000, .size = 64, .kind = HS_MEM_EXTERNAL_DEVICE};
    CHECK_EQ(run(&c, &f, out), 0);

    f.src = (hs_side){0};
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_NULL_POINTER);
    CHECK_EQ(out[0].side, HS_SIDE_SRC);
}

static void test_direction_mismatch(void)
{
    hs_call c = {.op = HS_OP_COPY, .bytes = 64, .dir = HS_DIR_D2H};
    hs_facts f = {.src = device_side(0x5000, 4096, 0, 64), .dst = device_side(0x9000, 4096, 0, 64), .dir = HS_DIR_D2H};
    hs_finding out[4];
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_DIRECTION_MISMATCH);
    CHECK_EQ(out[0].side, HS_SIDE_DST);
    CHECK_EQ(out[0].severity, HS_SEV_ERROR);

    /* pinned host memory where device memory was stated: works on the GPU, so a warning */
    f.dst = host_side(0x1000, 64);
    f.src.alloc.kind = HS_MEM_PINNED_HOST;
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_DIRECTION_MISMATCH);
    CHECK_EQ(out[0].severity, HS_SEV_WARNING);

    /* a call that takes device memory by address (the CUDA driver's cuMemcpyDtoH: no kind to
     * state) takes pinned or registered host memory as the device memory it is mapped as (JAX) */
    c.dir_by_address = true;
    CHECK_EQ(run(&c, &f, out), 0);
    f.src.alloc.kind = HS_MEM_REGISTERED_HOST;
    CHECK_EQ(run(&c, &f, out), 0);
    /* but its host side is still no place for device memory */
    f.src.alloc.kind = HS_MEM_DEVICE;
    f.dst = device_side(0x9000, 4096, 0, 64);
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_DIRECTION_MISMATCH);
    CHECK_EQ(out[0].severity, HS_SEV_ERROR);
}

static void test_host_side(void)
{
    hs_call c = {.op = HS_OP_COPY, .bytes = 4096, .dir = HS_DIR_D2H};
    hs_facts f = {.src = device_side(0x5000, 8192, 0, 4096), .dst = host_side(0x1000, 4096), .dir = HS_DIR_D2H};
    f.dst.host.status = HS_HOST_NO_ACCESS;
    hs_finding out[4];
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_HOST_OUT_OF_BOUNDS);
    CHECK_EQ(out[0].side, HS_SIDE_DST);

    /* a pinned buffer too small for the copy */
    f.dst = (hs_side){.ptr = 0x700000,
                      .extent = 4096,
                      .where = HS_WHERE_LIVE,
                      .alloc = {.base = 0x700000, .size = 1024, .kind = HS_MEM_PINNED_HOST}};
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_HOST_OUT_OF_BOUNDS);
    CHECK_EQ(out[0].overrun, 3072);
}

static void test_default_direction_and_streams(void)
{
    hs_side dev = device_side(0x5000, 4096, 0, 64), host = host_side(0x1000, 64);
    CHECK_EQ(hs_effective_direction(HS_DIR_DEFAULT, &host, &dev), HS_DIR_D2H);
    CHECK_EQ(hs_effective_direction(HS_DIR_DEFAULT, &dev, &host), HS_DIR_H2D);
    CHECK_EQ(hs_effective_direction(HS_DIR_DEFAULT, &dev, &dev), HS_DIR_D2D);
    CHECK_EQ(hs_effective_direction(HS_DIR_DEFAULT, &host, &host), HS_DIR_H2H);
    CHECK_EQ(hs_effective_direction(HS_DIR_H2D, &host, &dev), HS_DIR_H2D); /* stated wins */

    hs_call c = {.op = HS_OP_COPY, .bytes = 0, .dir = HS_DIR_D2H};
    hs_facts f = {.src = dev, .dst = host};
    hs_finding out[4];
    f.src.where = HS_WHERE_FREED; /* zero bytes: nothing is touched, nothing is checked */
    CHECK_EQ(run(&c, &f, out), 0);
}

static void test_memset(void)
{
    hs_call c = {.op = HS_OP_MEMSET, .bytes = 5000};
    hs_facts f = {.dst = device_side(0x5000, 4096, 0, 5000)};
    hs_finding out[4];
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_OUT_OF_BOUNDS);
    CHECK_EQ(out[0].overrun, 904);
    f.dst.extent = 4096;
    c.bytes = 4096;
    CHECK_EQ(run(&c, &f, out), 0);
}

static void test_region_overrun(void)
{
    /* seed 000: token_embd.weight is a region of the pool; the read runs past it, not past the pool */
    hs_call c = {.op = HS_OP_COPY, .bytes = 5000, .dir = HS_DIR_D2H};
    hs_facts f = {.src = device_side(0x100000, 1 << 20, 8192, 5000), .dst = host_side(0x1000, 5000)};
    f.src.in_region = true;
    f.src.region = (hs_span){.base = 0x100000 + 8192, .size = 4096, .id = 3};
    hs_finding out[4];
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_REGION_OVERRUN);
    CHECK_EQ(out[0].overrun, 904);
    f.src.extent = 4096; /* exactly the region: clean */
    c.bytes = 4096;
    CHECK_EQ(run(&c, &f, out), 0);
    f.src = device_side(0x100000, 1 << 20, (1 << 20) - 100, 5000); /* past the pool too: out-of-bounds wins */
    f.src.in_region = true;
    f.src.region = (hs_span){.base = 0x100000 + (1 << 20) - 100, .size = 100};
    c.bytes = 5000;
    CHECK_EQ(run(&c, &f, out), 1);
    CHECK_EQ(out[0].kind, HS_KIND_OUT_OF_BOUNDS);
}

/* The fast path's brief rule against the full rules, over every direction and every pair of
 * sides it can be given: whenever it says clean, the full rules on the same facts find nothing;
 * and it does say clean for the common copies (else the fast path would never run). */
static hs_side side_from_brief(const hs_brief_side *b, uintptr_t p, bool probed)
{
    if (b->live)
        return (hs_side){.ptr = p,
                         .extent = 32,
                         .where = HS_WHERE_LIVE,
                         .alloc = {.base = p - 8, .size = 64, .kind = b->kind, .id = 1}};
    return (hs_side){.ptr = p,
                     .extent = 32,
                     .where = HS_WHERE_NONE,
                     .host_checked = probed,
                     .host = {.status = b->host_ok ? HS_HOST_OK : HS_HOST_UNMAPPED}};
}

static void test_brief_rule_agrees(void)
{
    hs_brief_side briefs[10];
    int n = 0;
    for (uint32_t kind = HS_MEM_DEVICE; kind <= HS_MEM_MAPPED; kind++)
        briefs[n++] = (hs_brief_side){.live = true, .kind = kind};
    briefs[n++] = (hs_brief_side){.host_ok = true};
    briefs[n++] = (hs_brief_side){.host_ok = false};
    int clean = 0;
    for (int dir = HS_DIR_H2H; dir <= HS_DIR_DEFAULT; dir++)
        for (int d = 0; d < n; d++)
            for (int s = 0; s < n; s++)
                for (int probed = 0; probed < 2; probed++) {
                    if (!probed && !briefs[d].host_ok && !briefs[s].host_ok)
                        continue; /* check_host=0: the fast path says host_ok */
                    if (!hs_check_copy_brief_clean(dir, &briefs[d], &briefs[s]))
                        continue;
                    clean++;
                    hs_call c = {.op = HS_OP_COPY, .dst = 0x10008, .src = 0x20008, .bytes = 32, .dir = dir};
                    hs_facts f = {.dst = side_from_brief(&briefs[d], c.dst, probed),
                                  .src = side_from_brief(&briefs[s], c.src, probed)};
                    hs_finding out[4];
                    f.dir = hs_effective_direction(dir, &f.dst, &f.src);
                    CHECK_EQ(hs_check_copy(&c, &f, out, 4), 0);
                }
    hs_brief_side device = {.live = true, .kind = HS_MEM_DEVICE}, host = {.host_ok = true},
                  pinned = {.live = true, .kind = HS_MEM_PINNED_HOST}, bad_host = {.host_ok = false};
    CHECK(hs_check_copy_brief_clean(HS_DIR_D2H, &host, &device));
    CHECK(hs_check_copy_brief_clean(HS_DIR_H2D, &device, &host));
    CHECK(hs_check_copy_brief_clean(HS_DIR_D2H, &pinned, &device));
    CHECK(hs_check_copy_brief_clean(HS_DIR_D2D, &device, &device));
    CHECK(!hs_check_copy_brief_clean(HS_DIR_D2H, &bad_host, &device));
    CHECK(!hs_check_copy_brief_clean(HS_DIR_D2H, &device, &host)); /* reversed */
    CHECK(clean > 10);
}

int main(void)
{
    test_brief_rule_agrees();
    test_region_overrun();
    CHECK(!strcmp(hs_kind_name(HS_KIND_OUT_OF_BOUNDS), "out-of-bounds"));
    CHECK(!strcmp(hs_kind_name(HS_KIND_RUNTIME_ERROR), "runtime-error"));
    test_seed003_out_of_bounds();
    test_interior_in_bounds_is_clean();
    test_freed_unknown_null();
    test_direction_mismatch();
    test_host_side();
    test_default_direction_and_streams();
    test_memset();
    return UNIT_DONE();
}
