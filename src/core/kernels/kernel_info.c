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

static _Atomic(hs_kernel_info *) slots[SLOTS];
static pthread_mutex_t fill_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned slot_of(const void *kernel) { return (unsigned)(((uintptr_t)kernel >> 4) * 2654435761u) % SLOTS; }

static hs_kernel_info *find(const void *kernel, unsigned *empty)
{
    for (unsigned i = 0, h = slot_of(kernel); i < SLOTS; i++, h = (h + 1) % SLOTS) {
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

bool hs_kernel_info_in_table(const void *kernel)
{
    unsigned empty;
    return find(kernel, &empty) != NULL;
}

/* Not the thread's last kernel (kernel_info.h checked it): the table, or the front-end once. */
const hs_kernel_info *hs_kernel_info_find(const hs_call *c)
{
    unsigned empty;
    hs_kernel_info *k = find(c->kernel, &empty);
    if (k)
        return hs_kernel_info_last = k;
    pthread_mutex_lock(&fill_lock);
    k = find(c->kernel, &empty); /* another thread may have filled it meanwhile */
    /* read at every launch of the kernel: with the other hot structures (hot_memory.h) */
    if (!k && empty < SLOTS && (k = hs_hot_memory(sizeof *k) ?: calloc(1, sizeof *k))) {
        const hs_layer *layer = hs_layer_of(c->api);
        k->kernel = c->kernel;
        k->ref = c->kernel_ref;
        k->name = hs_own_kernel_name(layer, c->kernel, c->kernel_ref, c->stream);
        k->n_params = hs_own_kernel_params(layer, c->kernel, c->kernel_ref, k->params, HS_KERNEL_MAX_PARAMS);
        atomic_store_explicit(&slots[empty], k, memory_order_release);
    }
    pthread_mutex_unlock(&fill_lock);
    return hs_kernel_info_last = k;
}

void hs_kernel_info_after_fork(void) { pthread_mutex_init(&fill_lock, NULL); }
