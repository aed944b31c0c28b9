/* Redzones (see redzones.h). */
#include "kernels/redzones.h"
#include "kernels/gpu_kernels.h"
#include "runtime/own_calls.h"
#include "process/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum { GRANULE = 256, MAX_TOUCHED = HS_GPU_REDZONE_MAX, MAX_REDZONE = 1 << 20 };

HS_HOT_DATA static uint64_t redzone_bytes;
static HS_TLS const hs_call *outer, *padded;
static HS_TLS bool retrying;

typedef struct touched {
    uintptr_t base;
    size_t size;
    uint32_t redzone;
    uint64_t id;
} touched;

static struct {
    pthread_mutex_t lock;
    touched t[MAX_TOUCHED];
    int n;
    bool warned_full, warned_retry;
    /* hipshadow's verification kernel reads every redzone from one device: it is used only while
     * every allocation with a redzone is on the same device, from a thread whose current device
     * it is (a kernel reading another GPU's memory without peer access would fault the program). */
    atomic_int device; /* -1: none yet */
    atomic_bool several_devices;
} rz = {.lock = PTHREAD_MUTEX_INITIALIZER, .device = -1};

void hs_redzone_allocated_on(int device)
{
    int none = -1;
    if (!atomic_compare_exchange_strong(&rz.device, &none, device) && none != device)
        atomic_store(&rz.several_devices, true);
}

void hs_redzones_init(uint64_t bytes) { redzone_bytes = bytes > MAX_REDZONE ? MAX_REDZONE : bytes; }
bool hs_redzones_on(void) { return redzone_bytes != 0; }
void hs_redzones_after_fork(void) { pthread_mutex_init(&rz.lock, NULL); }

void hs_redzone_enter(const hs_call *c)
{
    outer = c;
    padded = NULL;
    retrying = false;
}

void hs_redzone_leave(void) { outer = padded = NULL; }

static size_t with_redzone(size_t size) { return (size + redzone_bytes + GRANULE - 1) / GRANULE * GRANULE; }

size_t hs_redzone_padded(const hs_call *c, size_t size)
{
    if (!redzone_bytes || c != outer || retrying || size == 0 || size > SIZE_MAX / 2)
        return size;
    padded = c;
    return with_redzone(size);
}

bool hs_redzone_retry(const hs_call *c, int failed)
{
    if (!failed || padded != c || retrying)
        return false;
    retrying = true;
    padded = NULL;
    if (!rz.warned_retry) {
        rz.warned_retry = true;
        hs_say("hipshadow: WARNING: an allocation with a redzone failed; asking again without one "
               "(allocations that fail so get no redzone)\n");
    }
    return true;
}

uint32_t hs_redzone_of(const hs_call *c, size_t size)
{
    return padded == c && c ? (uint32_t)(with_redzone(size) - size) : 0;
}

void hs_redzone_touch(uintptr_t base, size_t size, uint32_t redzone, uint64_t id)
{
    pthread_mutex_lock(&rz.lock);
    int i = 0;
    while (i < rz.n && rz.t[i].id != id)
        i++;
    if (i == rz.n) {
        if (rz.n < MAX_TOUCHED)
            rz.t[rz.n++] = (touched){base, size, redzone, id};
        else if (!rz.warned_full) {
            rz.warned_full = true;
            hs_say("hipshadow: WARNING: more than %d allocations with redzones were used between two "
                   "synchronisations; the others are not checked until the next\n",
                   MAX_TOUCHED);
        }
    }
    pthread_mutex_unlock(&rz.lock);
}

int hs_redzones_verify(const hs_layer *layer, int current_device, uintptr_t only_base, hs_redzone_damage *out, int max)
{
    /* under rz.lock: */
    static unsigned char buf[MAX_REDZONE + GRANULE];
    static touched batch[MAX_TOUCHED];
    static uintptr_t addr[MAX_TOUCHED];
    static uint32_t len[MAX_TOUCHED], first[MAX_TOUCHED], last[MAX_TOUCHED];
    int found = 0, n = 0;
    pthread_mutex_lock(&rz.lock);
    for (int i = 0; i < rz.n;) {
        if (only_base && rz.t[i].base != only_base) {
            i++;
            continue;
        }
        batch[n] = rz.t[i];
        addr[n] = batch[n].base + batch[n].size;
        len[n] = batch[n].redzone;
        n++;
        rz.t[i] = rz.t[--rz.n]; /* checked: out of the set */
    }
    /* One launch of hipshadow's verification kernel checks them all; where the runtime cannot
     * run it, each redzone is read back with a copy. */
    bool one_device = !atomic_load(&rz.several_devices) && current_device == atomic_load(&rz.device);
    bool on_gpu = n && one_device && hs_gpu_redzone_verify(addr, len, n, HS_REDZONE_PATTERN, first, last) == 0;
    for (int j = 0; j < n; j++) {
        const touched *t = &batch[j];
        if (!on_gpu) {
            if (!layer->read || hs_own_read(layer, buf, addr[j], t->redzone) != 0)
                continue;
            first[j] = UINT32_MAX;
            for (uint32_t b = 0; b < t->redzone; b++)
                if (buf[b] != HS_REDZONE_PATTERN) {
                    if (first[j] == UINT32_MAX)
                        first[j] = b;
                    last[j] = b;
                }
        }
        if (first[j] != UINT32_MAX && found < max)
            out[found++] = (hs_redzone_damage){
                .alloc = {.base = t->base, .size = t->size, .id = t->id, .redzone = t->redzone},
                .first = first[j],
                .last = last[j],
                .by_kernel = on_gpu};
    }
    pthread_mutex_unlock(&rz.lock);
    return found;
}
