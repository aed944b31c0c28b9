/* The AMD kernel-argument reader (src/hip/params.c).
 *
 * 1. The bundle kernels/ builds with clang (argv[1]): the explicit arguments of its kernels,
 *    as their C++ signatures in kernels/transpose.hip give them, in the bundle and in each of
 *    its code objects alone; the image sizes.
 * 2. Robustness: that bundle truncated and with bytes flipped (a fixed seed, printed; the
 *    environment's HS_FUZZ_SEED overrides it) never crashes the reader, which answers -1 or a
 *    sane list.  Each mutated image lies in a buffer of exactly its size, for ASan builds.
 * 3. Hand-built code objects: the other MessagePack forms (map16, array16, str8/16, wide and
 *    signed integers, skipped scalars), hidden and LDS arguments, keys in any order, segment and
 *    section notes, a bundle whose first code object lacks the kernel, what must give -1.
 *
 * Without argv[1] (no clang: kernels/ built no bundle) part 3 still runs, and then the test
 * says it was skipped (77) unless part 3 failed. */
#include "../../src/hip/params.h"
#include "unit.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct expect {
    const char *name;
    int n;
    hs_kernel_arg a[8];
} expect;

/* unsigned char * / hs_v16 *: a global_buffer of 8 bytes; u64: 8 bytes by value; unsigned: 4 */
#define P(o)                                                                                                           \
    {                                                                                                                  \
        o, 8, true, 0                                                                                                  \
    }
#define V(o, s)                                                                                                        \
    {                                                                                                                  \
        o, s, false, 0                                                                                                 \
    }
#define TRANSPOSE(name)                                                                                                \
    {                                                                                                                  \
        name, 8, { P(0), V(8, 8), P(16), V(24, 8), V(32, 8), V(40, 8), V(48, 8), V(56, 4) }                            \
    }
static const expect transpose_hip[] = {
    {"hs_copy16", 4, {P(0), P(8), V(16, 8), V(24, 8)}}, /* (hs_v16 *dst, const hs_v16 *src, u64 n, u64 stride) */
    {"hs_copy1", 4, {P(0), P(8), V(16, 8), V(24, 8)}},
    /* (unsigned char *dst, u64 dpitch, const unsigned char *src, u64 spitch, u64 rows, u64 cols,
     *  u64 row_tiles, unsigned grid_y) */
    TRANSPOSE("hs_transpose_e1"),
    TRANSPOSE("hs_transpose_e2"),
    TRANSPOSE("hs_transpose_e4"),
    TRANSPOSE("hs_transpose_e8"),
    TRANSPOSE("hs_transpose_e16"),
    TRANSPOSE("hs_transpose_e1_packed"),
    TRANSPOSE("hs_transpose_e2_packed"),
};
#define N_KERNELS (int)(sizeof transpose_hip / sizeof transpose_hip[0])

static void check_kernel(const void *image, size_t size, const expect *e)
{
    hs_kernel_arg out[16];
    memset(out, 0xa5, sizeof out);
    const int r = hs_amd_kernel_args(image, size, e->name, out, 16);
    CHECK_EQ(r, e->n);
    for (int i = 0; i < e->n && i < r; i++) {
        if (out[i].offset != e->a[i].offset || out[i].size != e->a[i].size || out[i].pointer != e->a[i].pointer)
            fprintf(stderr, "%s arg %d: got {%u, %u, %d}\n", e->name, i, out[i].offset, out[i].size, out[i].pointer);
        CHECK_EQ(out[i].offset, e->a[i].offset);
        CHECK_EQ(out[i].size, e->a[i].size);
        CHECK_EQ(out[i].pointer, e->a[i].pointer);
    }
    /* fewer slots than arguments: the count still, and nothing written past max */
    hs_kernel_arg two[3];
    memset(two, 0xa5, sizeof two);
    CHECK_EQ(hs_amd_kernel_args(image, size, e->name, two, 2), e->n);
    CHECK(two[2].offset == 0xa5a5a5a5u && two[2].size == 0xa5a5a5a5u);
    CHECK_EQ(hs_amd_kernel_args(image, size, e->name, NULL, 0), e->n);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static const void *find(const uint8_t *hay, size_t n, const char *needle)
{
    const size_t l = strlen(needle);
    for (size_t i = 0; i + l <= n; i++)
        if (memcmp(hay + i, needle, l) == 0)
            return hay + i;
    return NULL;
}

/* ---- 1. the real bundle ---- */

typedef struct entry {
    uint64_t off, size;
    char id[128];
} entry;

static int bundle_entries(const uint8_t *b, size_t size, entry *out, int max)
{
    if (size < 32 || memcmp(b, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0)
        return -1;
    uint64_t n = le64(b + 24), p = 32;
    int k = 0;
    for (uint64_t i = 0; i < n && k < max; i++, k++) {
        out[k].off = le64(b + p);
        out[k].size = le64(b + p + 8);
        uint64_t l = le64(b + p + 16);
        snprintf(out[k].id, sizeof out[k].id, "%.*s", (int)l, (const char *)b + p + 24);
        p += 24 + l;
    }
    return k;
}

static void test_real_bundle(const uint8_t *b, size_t size)
{
    CHECK_EQ(hs_amd_image_size(b), size);
    for (int k = 0; k < N_KERNELS; k++)
        check_kernel(b, size, &transpose_hip[k]);
    hs_kernel_arg out[16];
    CHECK_EQ(hs_amd_kernel_args(b, size, "hs_no_such_kernel", out, 16), -1);
    CHECK_EQ(hs_amd_kernel_args(b, size, "hs_copy", out, 16), -1);      /* a prefix of a name */
    CHECK_EQ(hs_amd_kernel_args(b, size, "hs_copy16.kd", out, 16), -1); /* the descriptor's name */
    CHECK_EQ(hs_amd_kernel_args(b, size, "", out, 16), -1);

    /* each code object alone, copied to a buffer of its exact size */
    entry e[16];
    int n = bundle_entries(b, size, e, 16), amdgcn = 0;
    CHECK(n >= 2);
    for (int i = 0; i < n; i++) {
        if (!strstr(e[i].id, "amdgcn-") || e[i].off > size || e[i].size > size - e[i].off)
            continue;
        uint8_t *elf = malloc(e[i].size);
        memcpy(elf, b + e[i].off, e[i].size);
        fprintf(stderr, "code object %s: %" PRIu64 " bytes\n", e[i].id, e[i].size);
        CHECK_EQ(hs_amd_image_size(elf), e[i].size);
        for (int k = 0; k < N_KERNELS; k++)
            check_kernel(elf, e[i].size, &transpose_hip[k]);
        CHECK_EQ(hs_amd_kernel_args(elf, e[i].size, "hs_no_such_kernel", out, 16), -1);
        free(elf);
        amdgcn++;
    }
    CHECK(amdgcn >= 1);
}

/* ---- 2. robustness ---- */

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static int fuzz_same, fuzz_failed, fuzz_other;

/* Reads `image` (exactly `size` bytes) for three names; each answer is -1 or a sane list, and
 * the same when asked twice; with `strict` (a truncated image), -1 or the intact image's answer. */
static void fuzz_one(const uint8_t *image, size_t size, const int *want, bool strict)
{
    static const char *const names[] = {"hs_copy16", "hs_transpose_e4", "hs_no_such_kernel"};
    for (int k = 0; k < 3; k++) {
        hs_kernel_arg out[16], again[16];
        const int r = hs_amd_kernel_args(image, size, names[k], out, 16);
        CHECK(r >= -1 && r <= 4096);
        for (int i = 0; i < r && i < 16; i++)
            CHECK((uint64_t)out[i].offset + out[i].size <= UINT32_MAX);
        CHECK_EQ(hs_amd_kernel_args(image, size, names[k], again, 16), r);
        if (strict)
            CHECK(r == -1 || r == want[k]);
        for (int i = 0; i < r && i < 16; i++) /* field by field: the struct has padding */
            CHECK(out[i].offset == again[i].offset && out[i].size == again[i].size &&
                  out[i].pointer == again[i].pointer);
        if (r == want[k])
            fuzz_same++;
        else if (r < 0)
            fuzz_failed++;
        else
            fuzz_other++;
    }
}

/* `truncs` truncations and `mutants` copies with 1 to 8 bytes flipped, half of them in the
 * metadata, a quarter in headers and header tables, a quarter anywhere. */
static void mutate(const char *what, const uint8_t *b, size_t size, int truncs, int mutants)
{
    const int want[3] = {4, 8, -1};
    const uint8_t *meta[16]; /* the metadata notes: where flips matter most */
    int n_meta = 0;
    for (const uint8_t *p = b; n_meta < 16 && (p = find(p, size - (size_t)(p - b), "amdhsa.kernels")); p++)
        meta[n_meta++] = p;
    CHECK(n_meta >= 1);
    if (n_meta < 1)
        return;

    fuzz_same = fuzz_failed = fuzz_other = 0;
    for (int t = 0; t < truncs; t++) {
        const size_t len = (size_t)(rnd() % size);
        uint8_t *c = malloc(len ? len : 1);
        memcpy(c, b, len);
        fuzz_one(c, len, want, true);
        free(c);
    }
    fprintf(stderr, "%s, %d truncations: %d answers as intact, %d -1, %d other\n", what, truncs, fuzz_same, fuzz_failed,
            fuzz_other);
    fuzz_same = fuzz_failed = fuzz_other = 0;
    for (int t = 0; t < mutants; t++) {
        uint8_t *c = malloc(size);
        memcpy(c, b, size);
        for (int flips = 1 + (int)(rnd() % 8); flips--;) {
            size_t at;
            switch (rnd() % 4) {
            case 0: /* anywhere */ at = (size_t)(rnd() % size); break;
            case 1: /* a bundle's header, an ELF's header and program headers, section headers */
                at = (size_t)(rnd() % 0x300);
                if (rnd() & 1)
                    at += 0x1000 * (size_t)(1 + rnd() % 16);
                else if (rnd() & 1)
                    at = size - 1 - at;
                break;
            default: /* the metadata */
                at = (size_t)(meta[rnd() % (uint64_t)n_meta] - b) - 64 + (size_t)(rnd() % 0x1600);
            }
            if (at < size)
                c[at] ^= (uint8_t)(1 + rnd() % 255);
        }
        fuzz_one(c, size, want, false);
        free(c);
    }
    fprintf(stderr, "%s, %d mutants: %d answers as intact, %d -1, %d other lists\n", what, mutants, fuzz_same,
            fuzz_failed, fuzz_other);
}

/* The bundle, then its first code object alone (where a corrupt note cannot fall back on another
 * target's).  HS_FUZZ_ROUNDS multiplies the counts, for longer runs under ASan. */
static void test_robustness(const uint8_t *b, size_t size)
{
    uint64_t seed = 0x5eed0f1a2b3c4d5eull;
    const char *env = getenv("HS_FUZZ_SEED"), *rounds_env = getenv("HS_FUZZ_ROUNDS");
    const int rounds = rounds_env && atoi(rounds_env) > 0 ? atoi(rounds_env) : 1;
    if (env)
        seed = strtoull(env, NULL, 0);
    fprintf(stderr, "robustness: seed 0x%" PRIx64 " (HS_FUZZ_SEED to change), %d round(s)\n", seed, rounds);
    rng = seed ? seed : 1;
    mutate("bundle", b, size, 200 * rounds, 500 * rounds);
    entry e[16];
    const int n = bundle_entries(b, size, e, 16);
    for (int i = 0; i < n; i++)
        if (strstr(e[i].id, "amdgcn-") && e[i].off <= size && e[i].size <= size - e[i].off) {
            mutate(e[i].id, b + e[i].off, e[i].size, 100 * rounds, 500 * rounds);
            break;
        }
}

/* ---- 3. hand-built code objects ---- */

typedef struct buf {
    uint8_t b[1 << 18];
    size_t n;
} buf;

static void u8(buf *w, unsigned v) { w->b[w->n++] = (uint8_t)v; }
static void be(buf *w, uint64_t v, int bytes)
{
    while (bytes--)
        u8(w, (unsigned)(v >> (8 * bytes)) & 0xff);
}
static void lev(buf *w, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        u8(w, (unsigned)(v >> (8 * i)) & 0xff);
}
static void raw(buf *w, const void *p, size_t n)
{
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void pad(buf *w, size_t a)
{
    while (w->n % a)
        u8(w, 0);
}
static void fixstr(buf *w, const char *s) { u8(w, 0xa0 | (unsigned)strlen(s)), raw(w, s, strlen(s)); }
static void str8(buf *w, const char *s) { u8(w, 0xd9), u8(w, (unsigned)strlen(s)), raw(w, s, strlen(s)); }
static void str16(buf *w, const char *s) { u8(w, 0xda), be(w, strlen(s), 2), raw(w, s, strlen(s)); }
static void map16(buf *w, unsigned n) { u8(w, 0xde), be(w, n, 2); }
static void arr16(buf *w, unsigned n) { u8(w, 0xdc), be(w, n, 2); }

/* One argument map: ".offset" and ".size" in the given encodings (a head byte, then big-endian). */
static void arg(buf *w, unsigned off_head, uint64_t off, unsigned size_head, uint64_t size, const char *kind,
                bool kind_first)
{
    static const int widths[256] = {
        [0xcc] = 1, [0xcd] = 2, [0xce] = 4, [0xcf] = 8, [0xd0] = 1, [0xd1] = 2, [0xd2] = 4, [0xd3] = 8};
    map16(w, 4);
    if (kind_first)
        str8(w, ".value_kind"), str8(w, kind);
    fixstr(w, ".offset");
    if (off_head)
        u8(w, off_head), be(w, off, widths[off_head]);
    else
        u8(w, (unsigned)off); /* positive fixint */
    str8(w, ".size");
    u8(w, size_head), be(w, size, widths[size_head]);
    fixstr(w, ".address_space"), fixstr(w, "global");
    if (!kind_first)
        str8(w, ".value_kind"), str16(w, kind);
}

/* A metadata document; with_main: kernel "k_main" is in it. */
static void metadata(buf *w, bool with_main)
{
    map16(w, 4);
    str8(w, "amdhsa.version"), arr16(w, 2), u8(w, 0xcc), u8(w, 1), u8(w, 0xcd), be(w, 2, 2);
    /* scalars of every other form, to be skipped */
    fixstr(w, "x.skip"), u8(w, 0x8a);
    fixstr(w, "f32"), u8(w, 0xca), be(w, 0x3f800000, 4);
    fixstr(w, "f64"), u8(w, 0xcb), be(w, 0x3ff0000000000000ull, 8);
    fixstr(w, "bin"), u8(w, 0xc4), u8(w, 3), raw(w, "\x01\x02\x03", 3);
    fixstr(w, "ext"), u8(w, 0xd6), u8(w, 7), be(w, 0xdeadbeef, 4);
    fixstr(w, "ext8"), u8(w, 0xc7), u8(w, 2), u8(w, 9), be(w, 0xffff, 2);
    fixstr(w, "neg"), u8(w, 0xff);
    fixstr(w, "i8"), u8(w, 0xd0), u8(w, 0xfb);
    fixstr(w, "nil"), u8(w, 0xc0);
    fixstr(w, "t"), u8(w, 0xc3);
    fixstr(w, "a32"), u8(w, 0xdd), be(w, 2, 4), u8(w, 0x90), u8(w, 0x80);
    u8(w, 0x07), u8(w, 0xc2); /* an integer key, at the top level */
    str8(w, "amdhsa.kernels"), arr16(w, with_main ? 3 : 1);
    /* no arguments at all */
    map16(w, 3), str8(w, ".args"), arr16(w, 0), fixstr(w, ".name"), str8(w, "k_empty"), fixstr(w, ".symbol"),
        str8(w, "k_empty.kd");
    if (!with_main)
        return;
    /* k_main: only its .symbol, keys after .args, every integer form */
    map16(w, 4);
    str8(w, ".args"), arr16(w, 6);
    arg(w, 0xcd, 0, 0xcc, 8, "global_buffer", true);
    arg(w, 0xd0, 8, 0xce, 4, "by_value", false);
    arg(w, 0, 12, 0xd1, 4, "dynamic_shared_pointer", true);
    arg(w, 0xce, 16, 0xcc, 8, "hidden_global_offset_x", false);
    arg(w, 0xcf, 24, 0xd3, 8, "global_buffer", false);
    arg(w, 0xd2, 32, 0xcf, 8, "hidden_hostcall_buffer", true);
    fixstr(w, "x.bin"), u8(w, 0xc5), be(w, 2, 2), u8(w, 0), u8(w, 0);
    str8(w, ".symbol"), str8(w, "k_main.kd");
    str8(w, ".vgpr_count"), u8(w, 0xcd), be(w, 300, 2);
    /* k_noargs: no .args key */
    map16(w, 1), fixstr(w, ".name"), fixstr(w, "k_noargs");
}

/* An EM_AMDGPU ELF with the note `desc` (owner, type) after a foreign note, in a PT_NOTE segment
 * (segment) or else an SHT_NOTE section. */
static void elf(buf *w, const uint8_t *desc, size_t len, const char *owner, unsigned type, bool segment,
                unsigned machine)
{
    w->n = 0;
    raw(w, "\177ELF\2\1\1", 7), pad(w, 16);
    lev(w, 3, 2), lev(w, machine, 2), lev(w, 1, 4), lev(w, 0, 8); /* type, machine, version, entry */
    lev(w, segment ? 64 : 0, 8);                                  /* phoff */
    const size_t shoff_at = w->n;
    lev(w, 0, 8), lev(w, 0, 4), lev(w, 64, 2); /* shoff (later), flags, ehsize */
    lev(w, 56, 2), lev(w, segment, 2), lev(w, 64, 2), lev(w, segment ? 0 : 2, 2), lev(w, 0, 2);
    const size_t ph = w->n;
    if (segment)
        w->n += 56;
    const size_t notes = w->n;
    lev(w, 4, 4), lev(w, 5, 4), lev(w, type, 4), raw(w, "XYZ", 4), raw(w, "\1\2\3\4\5", 5), pad(w, 4);
    lev(w, strlen(owner) + 1, 4), lev(w, len, 4), lev(w, type, 4), raw(w, owner, strlen(owner) + 1), pad(w, 4);
    raw(w, desc, len), pad(w, 4);
    const size_t notes_len = w->n - notes;
    if (segment) {
        buf *h = w;
        size_t save = h->n;
        h->n = ph;
        lev(h, 4, 4), lev(h, 4, 4), lev(h, notes, 8), lev(h, notes, 8), lev(h, notes, 8);
        lev(h, notes_len, 8), lev(h, notes_len, 8), lev(h, 4, 8);
        h->n = save;
    } else {
        pad(w, 8);
        const size_t shoff = w->n;
        memset(w->b + w->n, 0, 64), w->n += 64; /* section 0 */
        lev(w, 0, 4), lev(w, 7, 4), lev(w, 2, 8), lev(w, 0, 8), lev(w, notes, 8);
        lev(w, notes_len, 8), lev(w, 0, 4), lev(w, 0, 4), lev(w, 4, 8), lev(w, 0, 8);
        size_t save = w->n;
        w->n = shoff_at, lev(w, shoff, 8), w->n = save;
    }
}

static void bundle_entry(buf *w, size_t *at, uint64_t off, uint64_t size, const char *id)
{
    size_t save = w->n;
    w->n = *at;
    lev(w, off, 8), lev(w, size, 8), lev(w, strlen(id), 8), raw(w, id, strlen(id));
    *at = w->n;
    w->n = save;
}

static int args_of(const buf *w, const char *name, hs_kernel_arg *out)
{
    uint8_t *c = malloc(w->n); /* exactly its size, for ASan */
    memcpy(c, w->b, w->n);
    int r = hs_amd_kernel_args(c, w->n, name, out, 8);
    free(c);
    return r;
}

static void test_hand_built(void)
{
    static buf doc, other, e, e2, b;
    hs_kernel_arg out[8];
    metadata(&doc, true);
    metadata(&other, false);
    const expect k_main = {"k_main", 4, {P(0), V(8, 4), V(12, 4), P(24)}}; /* LDS and hidden_* left out */
    for (int segment = 0; segment < 2; segment++) {
        elf(&e, doc.b, doc.n, "AMDGPU", 32, segment, 224);
        check_kernel(e.b, e.n, &k_main);
        CHECK_EQ(args_of(&e, "k_main", out), 4);
        CHECK_EQ(args_of(&e, "k_empty", out), 0);
        CHECK_EQ(args_of(&e, "k_noargs", out), 0);
        CHECK_EQ(args_of(&e, "k_mai", out), -1);
        CHECK_EQ(args_of(&e, "k_main.kd", out), -1);
        CHECK_EQ(hs_amd_image_size(e.b), e.n);
        for (size_t len = 0; len < e.n; len++) { /* every truncation */
            buf *t = &e2;
            memcpy(t->b, e.b, len), t->n = len;
            int r = args_of(t, "k_main", out);
            CHECK(r == -1 || r == 4);
        }
    }
    /* code object V2 (type 10, owner "AMD"), another machine: not understood */
    elf(&e, doc.b, doc.n, "AMD", 10, true, 224);
    CHECK_EQ(args_of(&e, "k_main", out), -1);
    elf(&e, doc.b, doc.n, "AMDGPU", 32, true, 62);
    CHECK_EQ(args_of(&e, "k_main", out), -1);
    CHECK_EQ(hs_amd_image_size(e.b), 0);

    /* a bundle: host, a code object without k_main, one with it */
    elf(&e, other.b, other.n, "AMDGPU", 32, false, 224);
    elf(&e2, doc.b, doc.n, "AMDGPU", 32, true, 224);
    b.n = 0;
    raw(&b, "__CLANG_OFFLOAD_BUNDLE__", 24), lev(&b, 3, 8);
    size_t table = b.n;
    b.n += 3 * 24 + strlen("host-x86_64-unknown-linux") + 2 * strlen("hipv4-amdgcn-amd-amdhsa--gfx900");
    pad(&b, 16);
    bundle_entry(&b, &table, b.n, 0, "host-x86_64-unknown-linux");
    bundle_entry(&b, &table, b.n, e.n, "hipv4-amdgcn-amd-amdhsa--gfx900");
    raw(&b, e.b, e.n), pad(&b, 16);
    bundle_entry(&b, &table, b.n, e2.n, "hipv4-amdgcn-amd-amdhsa--gfx942");
    raw(&b, e2.b, e2.n);
    check_kernel(b.b, b.n, &k_main);
    CHECK_EQ(args_of(&b, "k_empty", out), 0);
    CHECK_EQ(hs_amd_image_size(b.b), b.n);

    /* a compressed bundle; garbage */
    memcpy(b.b, "CCOB\2\0\1\0", 8), memset(b.b + 8, 0, 56), b.n = 64;
    CHECK_EQ(args_of(&b, "k_main", out), -1);
    CHECK_EQ(hs_amd_image_size(b.b), 0);
    memset(b.b, 0x42, 64);
    CHECK_EQ(args_of(&b, "k_main", out), -1);
    CHECK_EQ(hs_amd_image_size(b.b), 0);
    CHECK_EQ(hs_amd_image_size(NULL), 0);
    CHECK_EQ(hs_amd_kernel_args(NULL, 0, "k_main", out, 8), -1);

    /* hostile documents: deep nesting, counts far past the bytes */
    doc.n = 0;
    map16(&doc, 2), fixstr(&doc, "deep");
    for (int i = 0; i < 100000; i++)
        u8(&doc, 0x91);
    u8(&doc, 0), str8(&doc, "amdhsa.kernels"), arr16(&doc, 0);
    elf(&e, doc.b, doc.n, "AMDGPU", 32, true, 224);
    CHECK_EQ(args_of(&e, "k_main", out), -1);
    doc.n = 0;
    map16(&doc, 1), str8(&doc, "amdhsa.kernels"), u8(&doc, 0xdd), be(&doc, 0xffffffff, 4), u8(&doc, 0xdf),
        be(&doc, 0xffffffff, 4);
    elf(&e, doc.b, doc.n, "AMDGPU", 32, true, 224);
    CHECK_EQ(args_of(&e, "k_main", out), -1);
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    *size = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    test_hand_built();
    if (argc < 2 || strcmp(argv[1], "-") == 0) {
        fprintf(stderr, "no AMD bundle (kernels/ built none: no clang?): the real-bundle checks skipped\n");
        return unit_failures ? UNIT_DONE() : 77;
    }
    size_t size = 0;
    uint8_t *b = read_file(argv[1], &size);
    CHECK(b != NULL && size > 0);
    if (b && size) {
        test_real_bundle(b, size);
        test_robustness(b, size);
    }
    free(b);
    return UNIT_DONE();
}
