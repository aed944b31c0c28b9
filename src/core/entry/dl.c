/* dlsym and dlvsym, wrapped (see dl.h).
 *
 * The real functions are found without calling dlsym: by reading the dynamic symbol table of
 * the C library (glibc >= 2.34 defines them in libc.so.6, older ones in libdl.so.2) through
 * its GNU hash table, as the dynamic linker itself would.
 *
 * RTLD_NEXT and RTLD_DEFAULT lookups depend on who calls: glibc takes the caller from the
 * return address.  Those are passed on as sibling calls (a jump, not a call), so the real dlsym
 * sees the program's return address, not hipshadow's. */
#define _GNU_SOURCE
#include "entry/dl.h"
#include "entry/lookup.h"
#include "process/util.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdbool.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

/* Sanitizer runtimes resolve their interceptors with dlsym(RTLD_NEXT, ...) while they start, before
 * their shadow memory exists: in a sanitized build (tests/sanitizers.sh) that dlsym is this one.
 * So the path it takes until the real function is found is not instrumented, and calls nothing
 * that a sanitizer intercepts (strcmp, strrchr, dl_iterate_phdr: not yet resolved, they jump to 0). */
#if defined(__has_attribute) && __has_attribute(no_sanitize)
#define HS_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))
#else
#define HS_NO_SANITIZE
#endif

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

/* glibc's loader's list of loaded objects (weak: musl has none, and dl_iterate_phdr serves). */
extern struct r_debug _r_debug __attribute__((weak));

HS_NO_SANITIZE static bool same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

HS_NO_SANITIZE static bool starts(const char *s, const char *prefix)
{
    while (*prefix && *s == *prefix)
        s++, prefix++;
    return !*prefix;
}

HS_NO_SANITIZE static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

typedef struct find_symbol {
    const char *name;
    void *found;
} find_symbol;

/* Dynamic-section addresses are relocated in place by glibc's loader, but not everywhere. */
HS_NO_SANITIZE static const void *dyn_ptr(ElfW(Addr) base, ElfW(Addr) p)
{
    return (const void *)(p < base ? p + base : p);
}

/* name's address in the object loaded at base whose dynamic section is dyn, or NULL. */
HS_NO_SANITIZE static void *lookup_in(ElfW(Addr) base, const ElfW(Dyn) * dyn, const char *name)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu = NULL;
    const ElfW(Half) *versym = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = dyn_ptr(base, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strtab = dyn_ptr(base, dyn->d_un.d_ptr); break;
        case DT_GNU_HASH: gnu = dyn_ptr(base, dyn->d_un.d_ptr); break;
        case DT_VERSYM: versym = dyn_ptr(base, dyn->d_un.d_ptr); break;
        default: break;
        }
    }
    if (!symtab || !strtab || !gnu)
        return NULL;
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t h = gnu_hash(name);
    void *any = NULL;
    for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
        uint32_t h2 = chain[i - symoffset];
        const ElfW(Sym) *s = &symtab[i];
        if ((h | 1) == (h2 | 1) && s->st_value && same(strtab + s->st_name, name)) {
            void *p = (void *)(base + s->st_value);
            if (!versym || !(versym[i] & 0x8000))
                return p; /* the default version */
            any = p;
        }
        if (h2 & 1)
            break;
    }
    return any;
}

/* One loaded object: looked in if it is the C library or libdl.  True when the search is over. */
HS_NO_SANITIZE static bool search_in(find_symbol *f, ElfW(Addr) base, const char *path, const ElfW(Dyn) * dyn)
{
    const char *file = path ? path : "";
    for (const char *c = file; *c; c++)
        if (*c == '/')
            file = c + 1;
    bool libc = starts(file, "libc.so.") || starts(file, "ld-musl") || starts(file, "libc.musl");
    if ((!libc && !starts(file, "libdl.so.")) || !dyn)
        return false;
    void *p = lookup_in(base, dyn, f->name);
    if (p)
        f->found = p;
    return p && libc; /* the C library's wins (glibc >= 2.34, musl); libdl's is older glibc's */
}

HS_NO_SANITIZE static int search_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return search_in(arg, info->dlpi_addr, info->dlpi_name, dyn);
}

/* glibc: the loader's own list, up to the C library (loaded at start, never unloaded, before
 * anything dlopen appends), because sanitizers intercept dl_iterate_phdr; else dl_iterate_phdr.
 * Not inlined: its local, whose address is taken, would keep gcc from making dlsym's call to the
 * real one a sibling call (it does not, under ASan). */
HS_NO_SANITIZE __attribute__((noinline)) static void *libc_symbol(const char *name)
{
    find_symbol f = {name, NULL};
    if (&_r_debug)
        for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next)
            if (search_in(&f, m->l_addr, m->l_name, m->l_ld))
                return f.found;
    if (!f.found)
        dl_iterate_phdr(search_object, &f);
    return f.found;
}

static _Atomic(dlsym_fn) real_dlsym_ptr;
static _Atomic(dlvsym_fn) real_dlvsym_ptr;

HS_NO_SANITIZE static dlsym_fn real_dlsym(void)
{
    dlsym_fn f = atomic_load_explicit(&real_dlsym_ptr, memory_order_acquire);
    if (HS_UNLIKELY(!f)) {
        f = (dlsym_fn)libc_symbol("dlsym");
        atomic_store_explicit(&real_dlsym_ptr, f, memory_order_release);
    }
    return f;
}

HS_NO_SANITIZE static dlvsym_fn real_dlvsym(void)
{
    dlvsym_fn f = atomic_load_explicit(&real_dlvsym_ptr, memory_order_acquire);
    if (HS_UNLIKELY(!f)) {
        f = (dlvsym_fn)libc_symbol("dlvsym");
        atomic_store_explicit(&real_dlvsym_ptr, f, memory_order_release);
    }
    return f;
}

void *hs_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = real_dlsym();
    return f ? f(handle, name) : NULL;
}

/* A library handle's answer: the wrapper, when it is a wrapped runtime function. */
static void *wrapped(void *found, const char *name)
{
    if (!found || !hs_lookup_is_wrapped(name))
        return found;
    void *w = hs_lookup_wrapper_for(found);
    return w ? w : found;
}

#define PSEUDO_HANDLE(h) ((h) == RTLD_NEXT || (h) == RTLD_DEFAULT)

__attribute__((optimize("optimize-sibling-calls"))) HS_NO_SANITIZE HS_EXPORT void *dlsym(void *handle, const char *name)
{
    dlsym_fn real = real_dlsym();
    if (PSEUDO_HANDLE(handle) || HS_UNLIKELY(!real))
        return real ? real(handle, name) : NULL; /* a sibling call: the caller stays the program */
    return wrapped(real(handle, name), name);
}

__attribute__((optimize("optimize-sibling-calls"))) HS_NO_SANITIZE HS_EXPORT void *dlvsym(void *handle,
                                                                                          const char *name,
                                                                                          const char *version)
{
    dlvsym_fn real = real_dlvsym();
    if (PSEUDO_HANDLE(handle) || HS_UNLIKELY(!real))
        return real ? real(handle, name, version) : NULL;
    return wrapped(real(handle, name, version), name);
}
