/* The kernel cache (see kernel_info.h): an open-addressing table of pointers, filled once per
 * kernel under a lock and read without one.  Entries are never freed (kernels live as long as
 * their modules, and a few hundred bytes each is what a process's kernels cost). */
#include "kernels/kernel_info.h"
#include "runtime/own_calls.h"
#include "process/hot_memory.h"
#include "process/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { SLOTS = 16384 };

typedef _Atomic(hs_kernel_info *) slot;
/* The table, made at the first kernel among the hot structures (hot_memory.h): an engine's
 * launches alternate kernels, and each reads a slot of it; 128 KiB of .bss would be a page walk
 * of its own at every launch.  NULL until then (or when no memory was left for it). */
HS_HOT_DATA static _Atomic(slot *) table;
static pthread_mutex_t fill_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned slot_of(const void *kernel) { return (unsigned)(((uintptr_t)kernel >> 4) * 2654435761u) % SLOTS; }

HS_HOT_PATH static hs_kernel_info *find(const void *kernel, unsigned *empty)
{
    slot *slots = atomic_load_explicit(&table, memory_order_acquire);
    *empty = slots ? slot_of(kernel) : SLOTS;
    for (unsigned i = 0, h = *empty; slots && i < SLOTS; i++, h = (h + 1) % SLOTS) {
        hs_kernel_info *k = atomic_load_explicit(&slots[h], memory_order_acquire);
        if (!k) {
            *empty = h;
            return NULL;
        }
        if (k->kernel == kernel)
            return k;
    }
    *empty = SLOTS;
    return NULL;
}

HS_TLS hs_kernel_info *hs_kernel_info_last;

HS_HOT_PATH bool hs_kernel_info_in_table(const void *kernel)
{
    unsigned empty;
    hs_kernel_info *k = find(kernel, &empty);
    if (k)
        hs_kernel_info_last = k; /* the launch asks again for its kernel: then a compare */
    return k != NULL;
}

/* A kernel not in the table: asked of the front-end once, under the lock. */
static hs_kernel_info *fill(const hs_call *c)
{
    unsigned empty;
    pthread_mutex_lock(&fill_lock);
    slot *slots = atomic_load_explicit(&table, memory_order_relaxed);
    if (!slots && (slots = hs_hot_memory(SLOTS * sizeof *slots) ?: calloc(SLOTS, sizeof *slots)))
        atomic_store_explicit(&table, slots, memory_order_release);
    hs_kernel_info *k = find(c->kernel, &empty); /* another thread may have filled it meanwhile */
    /* read at every launch of the kernel: with the other hot structures too */
    if (!k && empty < SLOTS && (k = hs_hot_memory(sizeof *k) ?: calloc(1, sizeof *k))) {
        const hs_layer *layer = hs_layer_of(c->api);
        k->kernel = c->kernel;
        k->ref = c->kernel_ref;
        k->name = hs_own_kernel_name(layer, c->kernel, c->kernel_ref, c->stream);
        k->n_params = hs_own_kernel_params(layer, c->kernel, c->kernel_ref, k->params, HS_KERNEL_MAX_PARAMS);
        atomic_store_explicit(&slots[empty], k, memory_order_release);
    }
    pthread_mutex_unlock(&fill_lock);
    return k;
}

/* Not the thread's last kernel (kernel_info.h checked it): the table, or the front-end once. */
HS_HOT_PATH const hs_kernel_info *hs_kernel_info_find(const hs_call *c)
{
    unsigned empty;
    hs_kernel_info *k = find(c->kernel, &empty);
    return hs_kernel_info_last = k ? k : fill(c);
}

void hs_kernel_info_after_fork(void) { pthread_mutex_init(&fill_lock, NULL); }
