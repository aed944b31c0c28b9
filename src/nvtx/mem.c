/* The memory extension's calls, NVTX in, hipshadow regions out (see mem.h).
 *
 *   nvtxMemHeapRegister (virtual addresses)  a pool: its handle is its base, as NVTX asks
 *   nvtxMemRegionsRegister / Resize          a region inside it (hipshadow_region_register's kind)
 *   nvtxMemRegionsUnregister, HeapReset,     the regions freed into the quarantine: a later use is
 *   HeapUnregister                           a use-after-free with this call's stack (a LAYOUT
 *                                            heap's memory stays usable: its regions are forgotten)
 *   nvtxMemRegionsName                       the name every report of the region gives
 *   nvtxMemPermissions*                      read-only and no-access regions (region_access.h),
 *                                            process-wide or bound to the calling thread
 *
 * A batch the program got wrong (a struct too small, a region outside its heap) is said once
 * and skipped: hipshadow never takes the program down for an annotation. */
#include "mem.h"
#include "abi.h"
#include "messages.h"
#include "path/init.h"
#include "shadow/region_access.h"
#include "shadow/regions.h"
#include "shadow/shadow.h"
#include "process/stacks.h"
#include "process/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <uthash.h>

typedef struct heap {
    uintptr_t base;
    size_t size;
    uint32_t usage;
    UT_hash_handle hh;
} heap;

static struct {
    pthread_mutex_t lock;
    heap *heaps;
    atomic_bool said[8];
} nm = {.lock = PTHREAD_MUTEX_INITIALIZER};

void hs_nvtx_mem_after_fork(void) { pthread_mutex_init(&nm.lock, NULL); }

/* A heap of a type hipshadow does not model: a handle of its own, with no regions. */
static const char other_heap;

enum { SAID_STRUCT, SAID_HEAP_TYPE, SAID_OUTSIDE, SAID_UNKNOWN_REGION, SAID_SCOPE, SAID_SETS, SAID_UNKNOWN_HEAP };

static void say_once(int which, const char *what)
{
    if (!atomic_exchange(&nm.said[which], true))
        hs_say("hipshadow: NVTX: %s (said once)\n", what);
}

/* A batch whose header is NVTX's memory extension as hipshadow knows it. */
static bool batch_ok(const void *desc, uint16_t compat, uint16_t struct_size, size_t min_size, size_t element_size,
                     size_t min_element)
{
    if (desc && compat == HS_NVTX_COMPAT_MEM && struct_size >= min_size && element_size >= min_element)
        return true;
    say_once(SAID_STRUCT, "a memory-extension call with a missing or unknown description was ignored");
    return false;
}

static const void *element(const void *elements, size_t element_size, size_t i)
{
    return (const char *)elements + i * element_size;
}

/* The heap a region refers to: its owner for regions.h, and whether freeing quarantines. */
static bool heap_of(const void *handle, uint64_t *owner, uintptr_t *lo, uintptr_t *hi, bool *quarantine)
{
    if (!handle) {
        *owner = HS_REGION_OWNER_NVTX_PROCESS;
        *lo = 0;
        *hi = UINTPTR_MAX;
        *quarantine = true;
        return true;
    }
    uintptr_t base = (uintptr_t)handle;
    pthread_mutex_lock(&nm.lock);
    heap *h = NULL;
    HASH_FIND(hh, nm.heaps, &base, sizeof base, h);
    if (h) {
        *owner = h->base;
        *lo = h->base;
        *hi = h->base + h->size;
        *quarantine = h->usage != HS_NVTX_HEAP_USAGE_LAYOUT;
    }
    pthread_mutex_unlock(&nm.lock);
    if (!h && handle != &other_heap)
        say_once(SAID_UNKNOWN_HEAP, "a heap handle hipshadow never returned was ignored");
    return h != NULL;
}

static bool quarantines(uint64_t owner)
{
    uintptr_t lo, hi;
    bool q = true;
    if (owner != HS_REGION_OWNER_NVTX_PROCESS)
        heap_of((const void *)(uintptr_t)owner, &owner, &lo, &hi, &q);
    return q;
}

/* ---- heaps ---- */

static const void *heap_register(const void *domain, const hs_nvtx_heap_desc *desc)
{
    (void)domain;
    hs_ensure_init();
    if (!batch_ok(desc, desc ? desc->compat_id : 0, desc ? desc->struct_size : 0, sizeof *desc, 1, 0))
        return &other_heap;
    const hs_nvtx_range *r = desc->type_desc;
    if (desc->type != HS_NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !r || desc->type_desc_size < sizeof *r) {
        say_once(SAID_HEAP_TYPE, "a heap that is not of virtual addresses is not checked");
        return &other_heap;
    }
    heap *h = calloc(1, sizeof *h);
    if (!h)
        return r->ptr;
    *h = (heap){.base = (uintptr_t)r->ptr, .size = r->size, .usage = desc->usage};
    pthread_mutex_lock(&nm.lock);
    heap *old = NULL;
    HASH_REPLACE(hh, nm.heaps, base, sizeof h->base, h, old);
    pthread_mutex_unlock(&nm.lock);
    free(old);
    /* The heap's message names the pool, unless the program named it otherwise. */
    char text[256], had[8];
    hs_span alloc;
    if (*hs_nvtx_text(desc->message_type, desc->message, text, sizeof text) &&
        hs_shadow_lookup(h->base, &alloc) == HS_WHERE_LIVE && !hs_alloc_name(alloc.id, had, sizeof had))
        hs_alloc_set_name(alloc.id, text);
    return r->ptr;
}

static void heap_free_regions(const void *handle, hs_region_end why)
{
    uint64_t owner;
    uintptr_t lo, hi;
    bool quarantine;
    if (heap_of(handle, &owner, &lo, &hi, &quarantine))
        hs_region_free_heap(owner, lo, hi, why, quarantine, quarantine ? hs_stack_capture() : 0, hs_thread_id());
}

static void heap_unregister(const void *domain, const void *handle)
{
    (void)domain;
    hs_ensure_init();
    if (!handle) /* the process-wide heap cannot be unregistered */
        return;
    heap_free_regions(handle, HS_REGION_END_HEAP_UNREGISTER);
    uintptr_t base = (uintptr_t)handle;
    pthread_mutex_lock(&nm.lock);
    heap *h = NULL;
    HASH_FIND(hh, nm.heaps, &base, sizeof base, h);
    if (h)
        HASH_DEL(nm.heaps, h);
    pthread_mutex_unlock(&nm.lock);
    free(h);
}

static void heap_reset(const void *domain, const void *handle)
{
    (void)domain;
    hs_ensure_init();
    heap_free_regions(handle, HS_REGION_END_HEAP_RESET);
}

/* ---- regions ---- */

static void regions_register(const void *domain, const hs_nvtx_regions_register *desc)
{
    (void)domain;
    hs_ensure_init();
    if (!batch_ok(desc, desc ? desc->compat_id : 0, desc ? desc->struct_size : 0, sizeof *desc,
                  desc ? desc->element_size : 0, sizeof(hs_nvtx_range)))
        return;
    uint64_t owner = 0;
    uintptr_t lo = 0, hi = 0;
    bool quarantine;
    bool known = desc->region_type == HS_NVTX_MEM_TYPE_VIRTUAL_ADDRESS &&
                 heap_of(desc->heap, &owner, &lo, &hi, &quarantine);
    for (size_t i = 0; i < desc->count; i++) {
        const hs_nvtx_range *r = element(desc->elements, desc->element_size, i);
        uintptr_t base = (uintptr_t)r->ptr;
        if (desc->handles_out)
            desc->handles_out[i] = r->ptr; /* a region's handle is its base: refs by pointer or handle agree */
        if (!known || !r->size)
            continue;
        if (base < lo || base >= hi || r->size > hi - base) {
            say_once(SAID_OUTSIDE, "a region that does not lie inside its heap was ignored");
            continue;
        }
        hs_region_add(base, r->size, owner, "");
    }
}

static void regions_resize(const void *domain, const hs_nvtx_regions_resize *desc)
{
    (void)domain;
    hs_ensure_init();
    if (!batch_ok(desc, desc ? desc->compat_id : 0, desc ? desc->struct_size : 0, sizeof *desc,
                  desc ? desc->element_size : 0, sizeof(hs_nvtx_range)))
        return;
    for (size_t i = 0; i < desc->count; i++) {
        const hs_nvtx_range *r = element(desc->elements, desc->element_size, i);
        if (!hs_region_resize((uintptr_t)r->ptr, r->size))
            say_once(SAID_UNKNOWN_REGION,
                     "a region hipshadow does not know (or a resize into the next region) was ignored");
    }
}

static void regions_unregister(const void *domain, const hs_nvtx_regions_unregister *desc)
{
    (void)domain;
    hs_ensure_init();
    if (!batch_ok(desc, desc ? desc->compat_id : 0, desc ? desc->struct_size : 0, sizeof *desc,
                  desc ? desc->element_size : 0, sizeof(hs_nvtx_region_ref)))
        return;
    uint32_t stack = 0;
    for (size_t i = 0; i < desc->count; i++) {
        const hs_nvtx_region_ref *ref = element(desc->elements, desc->element_size, i);
        hs_span r;
        if (!hs_region_at((uintptr_t)ref->pointer, &r)) {
            say_once(SAID_UNKNOWN_REGION,
                     "a region hipshadow does not know (or a resize into the next region) was ignored");
            continue;
        }
        bool quarantine = quarantines(r.owner);
        if (quarantine && !stack)
            stack = hs_stack_capture(); /* once per batch: the frees share it */
        hs_region_free(r.base, HS_REGION_END_UNREGISTER, quarantine, stack, hs_thread_id());
    }
}

static void regions_name(const void *domain, const hs_nvtx_regions_name *desc)
{
    (void)domain;
    hs_ensure_init();
    if (!batch_ok(desc, desc ? desc->compat_id : 0, desc ? desc->struct_size : 0, sizeof *desc,
                  desc ? desc->element_size : 0, sizeof(hs_nvtx_region_name)))
        return;
    for (size_t i = 0; i < desc->count; i++) {
        const hs_nvtx_region_name *e = element(desc->elements, desc->element_size, i);
        char text[256];
        if (!hs_region_rename((uintptr_t)e->region.pointer, hs_nvtx_text(e->name_type, e->name, text, sizeof text)))
            say_once(SAID_UNKNOWN_REGION,
                     "a region hipshadow does not know (or a resize into the next region) was ignored");
    }
}

/* ---- permissions: handle NULL is the process-wide object, else one of region_access.h's ---- */

static const void *const no_tool = (const void *)(intptr_t)-1; /* NVTX_MEM_PERMISSIONS_HANDLE_NO_TOOL */

static unsigned set_of(const void *handle) { return (unsigned)(uintptr_t)handle; }

static const void *permissions_create(const void *domain, int32_t flags)
{
    (void)domain;
    hs_ensure_init();
    uint32_t exclude = (flags & HS_NVTX_EXCLUDE_GLOBAL_READ ? HS_REGION_READ : 0) |
                       (flags & HS_NVTX_EXCLUDE_GLOBAL_WRITE ? HS_REGION_WRITE : 0);
    unsigned set = hs_access_set_create(exclude);
    if (!set) { /* never NULL: that would be the process-wide object */
        say_once(SAID_SETS, "more permissions objects than hipshadow keeps (256); the others are not checked");
        return no_tool;
    }
    return (const void *)(uintptr_t)set;
}

static void permissions_destroy(const void *domain, const void *handle)
{
    (void)domain;
    if (handle && handle != no_tool)
        hs_access_set_destroy(set_of(handle));
}

static void permissions_reset(const void *domain, const void *handle)
{
    (void)domain;
    hs_ensure_init();
    if (!handle)
        hs_region_reset_access();
    else if (handle != no_tool)
        hs_access_set_reset(set_of(handle));
}

static void permissions_assign(const void *domain, const hs_nvtx_permissions_assign *desc)
{
    (void)domain;
    hs_ensure_init();
    if (!batch_ok(desc, desc ? desc->compat_id : 0, desc ? desc->struct_size : 0, sizeof *desc,
                  desc ? desc->element_size : 0, sizeof(hs_nvtx_permissions_region)) ||
        desc->permissions == no_tool)
        return;
    for (size_t i = 0; i < desc->count; i++) {
        const hs_nvtx_permissions_region *e = element(desc->elements, desc->element_size, i);
        uint32_t access = (e->flags & HS_NVTX_ACCESS_READ ? HS_REGION_READ : 0) |
                          (e->flags & HS_NVTX_ACCESS_WRITE ? HS_REGION_WRITE : 0);
        bool reset = e->flags & HS_NVTX_ACCESS_RESET;
        hs_span r;
        bool ok = hs_region_at((uintptr_t)e->region.pointer, &r);
        if (ok)
            ok = desc->permissions ? hs_access_set_assign(set_of(desc->permissions), &r, access, reset)
                                   : hs_region_set_access(r.base, access, reset);
        if (!ok)
            say_once(SAID_UNKNOWN_REGION,
                     "a region hipshadow does not know (or a resize into the next region) was ignored");
    }
}

static void permissions_bind(const void *domain, const void *handle, uint32_t scope, uint32_t flags)
{
    (void)domain;
    hs_ensure_init();
    if (scope != HS_NVTX_BIND_SCOPE_CPU_THREAD) {
        say_once(SAID_SCOPE, "permissions bound to a scope other than a CPU thread are not checked");
        return;
    }
    if (handle && handle != no_tool)
        hs_access_bind(set_of(handle), (flags & HS_NVTX_BIND_STRICT_READ ? HS_REGION_READ : 0) |
                                           (flags & HS_NVTX_BIND_STRICT_WRITE ? HS_REGION_WRITE : 0));
}

static void permissions_unbind(const void *domain, uint32_t scope)
{
    (void)domain;
    if (scope == HS_NVTX_BIND_SCOPE_CPU_THREAD)
        hs_access_unbind();
}

void hs_nvtx_mem_attach(intptr_t *slots, size_t n)
{
    const intptr_t served[HS_NVTX_MEM_SERVED] = {
        [HS_NVTX_MEM_HEAP_REGISTER] = (intptr_t)heap_register,
        [HS_NVTX_MEM_HEAP_UNREGISTER] = (intptr_t)heap_unregister,
        [HS_NVTX_MEM_HEAP_RESET] = (intptr_t)heap_reset,
        [HS_NVTX_MEM_REGIONS_REGISTER] = (intptr_t)regions_register,
        [HS_NVTX_MEM_REGIONS_RESIZE] = (intptr_t)regions_resize,
        [HS_NVTX_MEM_REGIONS_UNREGISTER] = (intptr_t)regions_unregister,
        [HS_NVTX_MEM_REGIONS_NAME] = (intptr_t)regions_name,
        [HS_NVTX_MEM_PERMISSIONS_ASSIGN] = (intptr_t)permissions_assign,
        [HS_NVTX_MEM_PERMISSIONS_CREATE] = (intptr_t)permissions_create,
        [HS_NVTX_MEM_PERMISSIONS_DESTROY] = (intptr_t)permissions_destroy,
        [HS_NVTX_MEM_PERMISSIONS_RESET] = (intptr_t)permissions_reset,
        [HS_NVTX_MEM_PERMISSIONS_BIND] = (intptr_t)permissions_bind,
        [HS_NVTX_MEM_PERMISSIONS_UNBIND] = (intptr_t)permissions_unbind,
    };
    for (size_t i = 0; i < n && i < HS_NVTX_MEM_SERVED; i++)
        slots[i] = served[i];
}
