/* Kernel argument layouts from AMD code objects (see params.h).
 *
 * References: clang's ClangOffloadBundler.rst, "Bundled Binary File Layout" (the bundle), and
 * LLVM's AMDGPUUsage.rst: "Note Records" (the metadata note), "Code Object V3 Metadata" (the
 * MessagePack map: amdhsa.kernels, the kernel metadata map, the "Kernel Argument Metadata Map").
 * V4 to V6 only add keys and hidden_* value kinds to the V3 layout.
 *
 * Every read goes through a bounds check against the end of the buffer it belongs to: images
 * come from the program being checked and may be truncated or corrupt. */
#include "params.h"

#include <limits.h>
#include <string.h>

#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define BUNDLE_MAGIC_LEN 24
#define EM_AMDGPU 224
#define PT_NOTE 4
#define SHT_NOTE 7
#define SHT_NOBITS 8
#define NT_AMDGPU_METADATA 32  /* "Note Records": owner "AMDGPU", V3+; V2's type 10 YAML is not read */
#define MP_MAX_DEPTH 32        /* deeper nesting is not metadata, and must not exhaust the stack */
#define IMAGE_MAX (1ull << 32) /* hs_amd_image_size: a larger image is taken for a corrupt header */

/* A little-endian integer of n bytes (ELF and bundle fields); byte by byte, so any alignment. */
static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    while (n--)
        v = v << 8 | p[n];
    return v;
}

/* [off, off + len) lies inside a buffer of `size` bytes, without overflow. */
static bool within(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

/* Byte-wise prefix test stopping at the first mismatch: hs_amd_image_size has no size, so it
 * must not read further into an image than a mismatch allows. */
static bool starts_with(const uint8_t *p, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)lit[i])
            return false;
    return true;
}

/* ---- MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md), reading only ---- */

enum { MP_BAD, MP_MAP, MP_ARR, MP_STR, MP_UINT, MP_OTHER };

typedef struct mp {
    const uint8_t *p, *end;
} mp;

static const uint8_t *mp_take(mp *m, uint64_t n)
{
    if ((uint64_t)(m->end - m->p) < n)
        return NULL;
    const uint8_t *b = m->p;
    m->p += n;
    return b;
}

/* A big-endian integer of w bytes (MessagePack's byte order); *ok cleared when truncated. */
static uint64_t mp_be(mp *m, int w, bool *ok)
{
    const uint8_t *b = mp_take(m, (uint64_t)w);
    uint64_t v = 0;
    if (!b)
        *ok = false;
    else
        for (int i = 0; i < w; i++)
            v = v << 8 | b[i];
    return v;
}

/* Reads the head of the next object and returns its kind.  MP_MAP / MP_ARR: *n = pairs / items
 * (not read yet).  MP_STR: *s, *n = its bytes.  MP_UINT: *n = a non-negative integer of any
 * encoding.  MP_OTHER: a scalar consumed whole (nil, bool, negative int, float, bin, ext). */
static int mp_next(mp *m, uint64_t *n, const uint8_t **s)
{
    const uint8_t *b = mp_take(m, 1);
    if (!b)
        return MP_BAD;
    const unsigned t = *b;
    bool ok = true;
    uint64_t len = 0; /* bytes that follow the head, for strings and skipped scalars */
    int kind = MP_OTHER;
    if (t <= 0x7f) { /* positive fixint */
        *n = t;
        return MP_UINT;
    } else if (t <= 0x8f || (t >= 0xde && t <= 0xdf)) { /* fixmap, map16, map32 */
        *n = t <= 0x8f ? (t & 0xf) : mp_be(m, t == 0xde ? 2 : 4, &ok);
        return ok ? MP_MAP : MP_BAD;
    } else if (t <= 0x9f || (t >= 0xdc && t <= 0xdd)) { /* fixarray, array16, array32 */
        *n = t <= 0x9f ? (t & 0xf) : mp_be(m, t == 0xdc ? 2 : 4, &ok);
        return ok ? MP_ARR : MP_BAD;
    } else if (t <= 0xbf || (t >= 0xd9 && t <= 0xdb)) { /* fixstr, str8, str16, str32 */
        len = t <= 0xbf ? (t & 0x1f) : mp_be(m, 1 << (t - 0xd9), &ok);
        kind = MP_STR;
    } else if (t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) { /* negative fixint, nil, bools */
        return MP_OTHER;
    } else if (t >= 0xcc && t <= 0xd3) { /* uint8..64, int8..64 */
        const int w = 1 << ((t - 0xcc) & 3);
        const uint64_t v = mp_be(m, w, &ok);
        if (!ok)
            return MP_BAD;
        if (t >= 0xd0 && (v >> (8 * w - 1))) /* a negative signed integer */
            return MP_OTHER;
        *n = v;
        return MP_UINT;
    } else if (t >= 0xc4 && t <= 0xc6) { /* bin8/16/32 */
        len = mp_be(m, 1 << (t - 0xc4), &ok);
    } else if (t >= 0xc7 && t <= 0xc9) { /* ext8/16/32: length, then a type byte */
        len = mp_be(m, 1 << (t - 0xc7), &ok) + 1;
    } else if (t >= 0xd4 && t <= 0xd8) { /* fixext1..16: a type byte and 1..16 bytes */
        len = 1 + (1u << (t - 0xd4));
    } else if (t == 0xca || t == 0xcb) { /* float32, float64 */
        len = t == 0xca ? 4 : 8;
    } else { /* 0xc1: never used */
        return MP_BAD;
    }
    const uint8_t *body = ok ? mp_take(m, len) : NULL;
    if (!body)
        return MP_BAD;
    if (kind == MP_STR) {
        *s = body;
        *n = len;
    }
    return kind;
}

/* Skips one whole object.  Each object takes at least one byte, so even a huge declared count
 * ends at the buffer's end; the depth limit keeps the recursion bounded. */
static bool mp_skip(mp *m, int depth)
{
    uint64_t n;
    const uint8_t *s;
    const int kind = mp_next(m, &n, &s);
    if (kind == MP_BAD || depth > MP_MAX_DEPTH)
        return false;
    if (kind == MP_MAP)
        n *= 2; /* at most 2^32 - 1 pairs: no overflow */
    if (kind == MP_MAP || kind == MP_ARR)
        for (uint64_t i = 0; i < n; i++)
            if (!mp_skip(m, depth + 1))
                return false;
    return true;
}

/* Reads a map key.  Metadata keys are strings; any other scalar key matches nothing (*n = 0),
 * a container key is not metadata. */
static bool mp_key(mp *m, const uint8_t **s, uint64_t *n)
{
    const int kind = mp_next(m, n, s);
    if (kind == MP_STR)
        return true;
    *n = 0;
    return kind == MP_UINT || kind == MP_OTHER;
}

static bool mp_is(const uint8_t *s, uint64_t n, const char *lit) { return n == strlen(lit) && memcmp(s, lit, n) == 0; }

/* ---- the metadata ("Code Object V3 Metadata") ---- */

/* A kernel's ".args": the explicit arguments in order.  Value kinds "hidden_*" are set up by the
 * runtime after the explicit ones, not passed by the caller; of the rest only "global_buffer" is
 * a global address space pointer ("dynamic_shared_pointer" is an LDS address, "by_value" data). */
static int parse_args(mp *m, hs_kernel_arg *out, int max)
{
    uint64_t n, fields, kn, kind_len = 0;
    const uint8_t *k, *kind;
    if (mp_next(m, &n, &k) != MP_ARR)
        return -1;
    int count = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (mp_next(m, &fields, &k) != MP_MAP)
            return -1;
        uint64_t offset = UINT64_MAX, size = UINT64_MAX;
        uint8_t access = 0, actual_access = 0;
        kind = NULL;
        for (uint64_t f = 0; f < fields; f++) {
            if (!mp_key(m, &k, &kn))
                return -1;
            if (mp_is(k, kn, ".offset") || mp_is(k, kn, ".size")) {
                if (mp_next(m, kn == 7 ? &offset : &size, &k) != MP_UINT)
                    return -1;
            } else if (mp_is(k, kn, ".value_kind")) {
                if (mp_next(m, &kind_len, &kind) != MP_STR)
                    return -1;
            } else if (mp_is(k, kn, ".access") || mp_is(k, kn, ".actual_access")) {
                uint64_t an;
                const uint8_t *a;
                if (mp_next(m, &an, &a) != MP_STR)
                    return -1;
                uint8_t v = mp_is(a, an, "read_only")    ? 1
                            : mp_is(a, an, "write_only") ? 2
                            : mp_is(a, an, "read_write") ? 3
                                                         : 0;
                *(kn == 7 ? &access : &actual_access) = v;
            } else if (!mp_skip(m, 0)) {
                return -1;
            }
        }
        /* all three are Required in the argument map; an argument must fit the kernarg segment */
        if (!kind || offset > UINT32_MAX || size > UINT32_MAX - offset)
            return -1;
        if (kind_len >= 7 && memcmp(kind, "hidden_", 7) == 0)
            continue;
        if (count == INT_MAX)
            return -1;
        if (count < max)
            out[count] = (hs_kernel_arg){(uint32_t)offset, (uint32_t)size, mp_is(kind, kind_len, "global_buffer"),
                                         actual_access ? actual_access : access};
        count++;
    }
    return count;
}

/* One kernel's map: 1 when it is `name` (its ".name", or its ".symbol", the kernel descriptor's
 * name + ".kd"), 0 when another kernel, -1 when malformed.  Keys come in any order (LLVM sorts
 * ".args" first), so the position of ".args" is kept in *args (args->p NULL: none, no arguments). */
static int kernel_is(mp *m, const char *name, mp *args)
{
    uint64_t n, kn, vn;
    const uint8_t *k, *v;
    const size_t name_len = strlen(name);
    bool match = false;
    if (mp_next(m, &n, &k) != MP_MAP)
        return -1;
    args->p = NULL;
    for (uint64_t i = 0; i < n; i++) {
        if (!mp_key(m, &k, &kn))
            return -1;
        if (mp_is(k, kn, ".args")) {
            *args = *m;
            if (!mp_skip(m, 0))
                return -1;
        } else if (mp_is(k, kn, ".name") || mp_is(k, kn, ".symbol")) {
            const bool symbol = kn == 7;
            if (mp_next(m, &vn, &v) != MP_STR)
                return -1;
            if ((symbol ? vn == name_len + 3 && memcmp(v + name_len, ".kd", 3) == 0 : vn == name_len) &&
                memcmp(v, name, name_len) == 0)
                match = true;
        } else if (!mp_skip(m, 0)) {
            return -1;
        }
    }
    return match;
}

/* The metadata document: a map whose "amdhsa.kernels" is an array of kernel maps. */
static int parse_metadata(const uint8_t *doc, uint64_t len, const char *name, hs_kernel_arg *out, int max)
{
    mp m = {doc, doc + len}, args;
    uint64_t n, kn, kernels;
    const uint8_t *k;
    if (mp_next(&m, &n, &k) != MP_MAP)
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        if (!mp_key(&m, &k, &kn))
            return -1;
        if (!mp_is(k, kn, "amdhsa.kernels")) {
            if (!mp_skip(&m, 0))
                return -1;
            continue;
        }
        if (mp_next(&m, &kernels, &k) != MP_ARR)
            return -1;
        for (uint64_t j = 0; j < kernels; j++) {
            const int r = kernel_is(&m, name, &args);
            if (r < 0)
                return -1;
            if (r)
                return args.p ? parse_args(&args, out, max) : 0;
        }
        return -1; /* not in this code object */
    }
    return -1;
}

/* ---- ELF: the metadata note ---- */

/* Walks the notes in [off, off + len) of an image of `size` bytes for the NT_AMDGPU_METADATA
 * note.  Names and descriptors are padded to 4 bytes ("Note Records"), or 8 where the segment
 * or section says so (as the generic ELF readers do). */
static bool find_note(const uint8_t *e, uint64_t size, uint64_t off, uint64_t len, uint64_t align, const uint8_t **desc,
                      uint64_t *desc_len)
{
    if (!within(off, len, size))
        return false;
    const uint64_t a = align == 8 ? 8 : 4, end = off + len;
    while (end - off >= 12) {
        const uint64_t name_len = le(e + off, 4), dlen = le(e + off + 4, 4), type = le(e + off + 8, 4);
        const uint64_t d = off + 12 + ((name_len + a - 1) & ~(a - 1));
        if (d > end || dlen > end - d)
            return false;
        if (type == NT_AMDGPU_METADATA && name_len == 7 && memcmp(e + off + 12, "AMDGPU", 7) == 0) {
            *desc = e + d;
            *desc_len = dlen;
            return true;
        }
        const uint64_t next = d + ((dlen + a - 1) & ~(a - 1));
        if (next > end)
            return false;
        off = next;
    }
    return false;
}

/* A 64-bit little-endian EM_AMDGPU ELF header (AMDGPUUsage, "ELF Header"): where its program
 * and section header tables are.  The caller knows 64 bytes are there, or that it is an ELF. */
typedef struct elf_tables {
    uint64_t phoff, phent, phnum, shoff, shent, shnum;
} elf_tables;

static bool elf_header(const uint8_t *e, elf_tables *t)
{
    if (!starts_with(e, "\177ELF", 4) || e[4] != 2 /* ELFCLASS64 */ || e[5] != 1 /* LSB */ ||
        le(e + 18, 2) != EM_AMDGPU)
        return false;
    *t = (elf_tables){le(e + 32, 8), le(e + 54, 2), le(e + 56, 2), le(e + 40, 8), le(e + 58, 2), le(e + 60, 2)};
    return (!t->phnum || t->phent >= 56) && (!t->shnum || t->shent >= 64);
}

/* An ELF of `size` bytes: its metadata note, looked for in the PT_NOTE segments, then in the
 * SHT_NOTE sections (an unlinked object has no segments). */
static bool elf_metadata(const uint8_t *e, uint64_t size, const uint8_t **desc, uint64_t *len)
{
    elf_tables t;
    if (size < 64 || !elf_header(e, &t))
        return false;
    if (within(t.phoff, t.phnum * t.phent, size))
        for (uint64_t i = 0; i < t.phnum; i++) {
            const uint8_t *h = e + t.phoff + i * t.phent;
            if (le(h, 4) == PT_NOTE && find_note(e, size, le(h + 8, 8), le(h + 32, 8), le(h + 48, 8), desc, len))
                return true;
        }
    if (within(t.shoff, t.shnum * t.shent, size))
        for (uint64_t i = 0; i < t.shnum; i++) {
            const uint8_t *h = e + t.shoff + i * t.shent;
            if (le(h + 4, 4) == SHT_NOTE && find_note(e, size, le(h + 24, 8), le(h + 32, 8), le(h + 48, 8), desc, len))
                return true;
        }
    return false;
}

static int elf_args(const uint8_t *e, uint64_t size, const char *name, hs_kernel_arg *out, int max)
{
    const uint8_t *doc;
    uint64_t len;
    return elf_metadata(e, size, &doc, &len) ? parse_metadata(doc, len, name, out, max) : -1;
}

static bool contains(const uint8_t *s, uint64_t n, const char *lit)
{
    const size_t l = strlen(lit);
    for (uint64_t i = 0; i + l <= n; i++)
        if (memcmp(s + i, lit, l) == 0)
            return true;
    return false;
}

int hs_amd_kernel_args(const void *image, size_t size, const char *name, hs_kernel_arg *out, int max)
{
    const uint8_t *b = image;
    if (!b || !name)
        return -1;
    /* A compressed bundle (clang --offload-compress; ClangOffloadBundler.rst, "Compression and
     * Decompression") would need zlib/zstd to read: not supported. */
    if (size >= 4 && memcmp(b, "CCOB", 4) == 0)
        return -1;
    if (size < BUNDLE_MAGIC_LEN || memcmp(b, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN) != 0)
        return elf_args(b, size, name, out, max);
    /* Entries: offset, size, id length (uint64 each), id.  Each entry's code object is tried
     * in turn: every target's code object has the same argument layout. */
    if (size < BUNDLE_MAGIC_LEN + 8)
        return -1;
    const uint64_t n = le(b + BUNDLE_MAGIC_LEN, 8);
    uint64_t p = BUNDLE_MAGIC_LEN + 8;
    for (uint64_t i = 0; i < n; i++) {
        if (!within(p, 24, size))
            return -1;
        const uint64_t off = le(b + p, 8), len = le(b + p + 8, 8), id_len = le(b + p + 16, 8);
        p += 24;
        if (!within(p, id_len, size))
            return -1;
        const bool amdgcn = contains(b + p, id_len, "amdgcn-"); /* e.g. hipv4-amdgcn-amd-amdhsa--gfx90a */
        p += id_len;
        if (amdgcn && within(off, len, size)) {
            const int r = elf_args(b + off, len, name, out, max);
            if (r >= 0)
                return r;
        }
    }
    return -1;
}

/* *end = max(*end, off + len); false on overflow. */
static bool extend(uint64_t *end, uint64_t off, uint64_t len)
{
    if (len > UINT64_MAX - off)
        return false;
    if (off + len > *end)
        *end = off + len;
    return true;
}

size_t hs_amd_image_size(const void *image)
{
    const uint8_t *b = image;
    uint64_t end = 0;
    if (!b)
        return 0;
    if (starts_with(b, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN)) {
        /* The entry table, then the farthest entry.  The counts are capped so that a corrupt
         * header cannot send the walk far into memory that is not the table. */
        const uint64_t n = le(b + BUNDLE_MAGIC_LEN, 8);
        uint64_t p = BUNDLE_MAGIC_LEN + 8;
        if (n > 1024)
            return 0;
        for (uint64_t i = 0; i < n; i++) {
            const uint64_t id_len = le(b + p + 16, 8);
            if (id_len > 1024 || !extend(&end, le(b + p, 8), le(b + p + 8, 8)))
                return 0;
            p += 24 + id_len;
        }
        return extend(&end, 0, p) && end <= IMAGE_MAX ? (size_t)end : 0;
    }
    /* The header, both header tables and everything they point at (SHT_NOBITS takes no bytes). */
    elf_tables t;
    if (!elf_header(b, &t) || !extend(&end, 0, 64) || !extend(&end, t.phoff, t.phnum * t.phent) ||
        !extend(&end, t.shoff, t.shnum * t.shent) || end > IMAGE_MAX)
        return 0;
    for (uint64_t i = 0; i < t.phnum; i++) {
        const uint8_t *h = b + t.phoff + i * t.phent;
        if (!extend(&end, le(h + 8, 8), le(h + 32, 8)))
            return 0;
    }
    for (uint64_t i = 0; i < t.shnum; i++) {
        const uint8_t *h = b + t.shoff + i * t.shent;
        if (le(h + 4, 4) != SHT_NOBITS && !extend(&end, le(h + 24, 8), le(h + 32, 8)))
            return 0;
    }
    return end <= IMAGE_MAX ? (size_t)end : 0;
}
