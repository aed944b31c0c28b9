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
#include "dl.h"
#include "lookup.h"
#include "util.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdbool.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

static uint32_t gnu_hash(const char *s)
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
static const void *dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
    return (const void *)(p < info->dlpi_addr ? p + info->dlpi_addr : p);
}

static void *lookup_in(const struct dl_phdr_info *info, const char *name)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu = NULL;
    const ElfW(Half) *versym = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = dyn_ptr(info, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strtab = dyn_ptr(info, dyn->d_un.d_ptr); break;
        case DT_GNU_HASH: gnu = dyn_ptr(info, dyn->d_un.d_ptr); break;
        case DT_VERSYM: versym = dyn_ptr(info, dyn->d_un.d_ptr); break;
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
        if ((h | 1) == (h2 | 1) && s->st_value && !strcmp(strtab + s->st_name, name)) {
            void *p = (void *)(info->dlpi_addr + s->st_value);
            if (!versym || !(versym[i] & 0x8000))
                return p; /* the default version */
            any = p;
        }
        if (h2 & 1)
            break;
    }
    return any;
}

static int search_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    find_symbol *f = arg;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    bool libc = !strncmp(base, "libc.so.", 8) || !strncmp(base, "ld-musl", 7) || !strncmp(base, "libc.musl", 9);
    if (!libc && strncmp(base, "libdl.so.", 9))
        return 0;
    void *p = lookup_in(info, f->name);
    if (p)
        f->found = p;
    return p && libc; /* the C library's wins (glibc >= 2.34, musl); libdl's is older glibc's */
}

static void *libc_symbol(const char *name)
{
    find_symbol f = {name, NULL};
    dl_iterate_phdr(search_object, &f);
    return f.found;
}

static _Atomic(dlsym_fn) real_dlsym_ptr;
static _Atomic(dlvsym_fn) real_dlvsym_ptr;

static dlsym_fn real_dlsym(void)
{
    dlsym_fn f = atomic_load_explicit(&real_dlsym_ptr, memory_order_acquire);
    if (HS_UNLIKELY(!f)) {
        f = (dlsym_fn)libc_symbol("dlsym");
        atomic_store_explicit(&real_dlsym_ptr, f, memory_order_release);
    }
    return f;
}

static dlvsym_fn real_dlvsym(void)
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

void *hs_real_dlvsym(void *handle, const char *name, const char *version)
{
    dlvsym_fn f = real_dlvsym();
    return f ? f(handle, name, version) : NULL;
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

__attribute__((optimize("optimize-sibling-calls"))) HS_EXPORT void *dlsym(void *handle, const char *name)
{
    dlsym_fn real = real_dlsym();
    if (PSEUDO_HANDLE(handle) || HS_UNLIKELY(!real))
        return real ? real(handle, name) : NULL; /* a sibling call: the caller stays the program */
    return wrapped(real(handle, name), name);
}

__attribute__((optimize("optimize-sibling-calls"))) HS_EXPORT void *dlvsym(void *handle, const char *name,
                                                                       const char *version)
{
    dlvsym_fn real = real_dlvsym();
    if (PSEUDO_HANDLE(handle) || HS_UNLIKELY(!real))
        return real ? real(handle, name, version) : NULL;
    return wrapped(real(handle, name, version), name);
}
