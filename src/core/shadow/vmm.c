/* Reservations and physical handles (see vmm.h).  Maps live in the shadow map itself. */
#include "shadow/vmm.h"
#include "shadow/span_index.h"

#include <stdlib.h>
#include <uthash.h>

typedef struct handle_record {
    uint64_t handle;
    size_t size;
    int device;
    UT_hash_handle hh;
} handle_record;

static struct {
    hs_span_index reservations;
    pthread_mutex_t lock; /* the handle table */
    handle_record *handles;
} vm = {.lock = PTHREAD_MUTEX_INITIALIZER};

int hs_vmm_init(void) { return hs_span_index_init(&vm.reservations); }

void hs_vmm_after_fork(void)
{
    pthread_mutex_init(&vm.lock, NULL);
    hs_span_index_after_fork(&vm.reservations);
}

void hs_vmm_reserved(uintptr_t base, size_t size, uint32_t stack, uint32_t thread, uint64_t now_ns)
{
    hs_span s = {.base = base, .size = size, .stack = stack, .thread = thread, .time_ns = now_ns};
    hs_span_lock(&vm.reservations);
    hs_span_insert_locked(&vm.reservations, &s, NULL);
    hs_span_unlock(&vm.reservations);
}

void hs_vmm_reservation_freed(uintptr_t base)
{
    hs_span_lock(&vm.reservations);
    hs_span_remove_locked(&vm.reservations, base, 0, NULL);
    hs_span_unlock(&vm.reservations);
}

bool hs_vmm_reservation_of(uintptr_t addr, hs_span *reservation)
{
    return hs_span_count(&vm.reservations) && hs_span_find(&vm.reservations, addr, reservation);
}

void hs_vmm_handle_created(uint64_t handle, size_t size, int device)
{
    handle_record *r = malloc(sizeof *r);
    if (!r)
        return; /* maps of this handle will take their size from the map call */
    *r = (handle_record){.handle = handle, .size = size, .device = device};
    pthread_mutex_lock(&vm.lock);
    handle_record *old = NULL;
    HASH_REPLACE(hh, vm.handles, handle, sizeof r->handle, r, old);
    pthread_mutex_unlock(&vm.lock);
    free(old);
}

void hs_vmm_handle_released(uint64_t handle)
{
    pthread_mutex_lock(&vm.lock);
    handle_record *r = NULL;
    HASH_FIND(hh, vm.handles, &handle, sizeof handle, r);
    if (r)
        HASH_DEL(vm.handles, r);
    pthread_mutex_unlock(&vm.lock);
    free(r);
}

bool hs_vmm_handle_info(uint64_t handle, size_t *size, int *device)
{
    pthread_mutex_lock(&vm.lock);
    handle_record *r = NULL;
    HASH_FIND(hh, vm.handles, &handle, sizeof handle, r);
    if (r) {
        *size = r->size;
        *device = r->device;
    }
    pthread_mutex_unlock(&vm.lock);
    return r != NULL;
}
