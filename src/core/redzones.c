/* Redzones (see redzones.h). */
#include "redzones.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { GRANULE = 256, MAX_TOUCHED = 1024, MAX_REDZONE = 1 << 20 };

static uint64_t redzone_bytes;
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
} rz = {.lock = PTHREAD_MUTEX_INITIALIZER};

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
        fprintf(stderr, "hipshadow: WARNING: an allocation with a redzone failed; asking again without one "
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
            fprintf(stderr, "hipshadow: WARNING: more than %d allocations with redzones were used between two "
                            "synchronisations; the others are not checked until the next\n", MAX_TOUCHED);
        }
    }
    pthread_mutex_unlock(&rz.lock);
}

int hs_redzones_verify(int (*read)(void *host, uintptr_t device, size_t n), uintptr_t only_base,
                       hs_redzone_damage *out, int max)
{
    static unsigned char buf[MAX_REDZONE + GRANULE]; /* under rz.lock */
    int found = 0;
    pthread_mutex_lock(&rz.lock);
    for (int i = 0; i < rz.n;) {
        touched t = rz.t[i];
        if (only_base && t.base != only_base) {
            i++;
            continue;
        }
        rz.t[i] = rz.t[--rz.n]; /* checked: out of the set */
        if (!read || read(buf, t.base + t.size, t.redzone) != 0)
            continue;
        int first = -1, last = -1;
        for (uint32_t b = 0; b < t.redzone; b++)
            if (buf[b] != HS_REDZONE_PATTERN) {
                if (first < 0)
                    first = (int)b;
                last = (int)b;
            }
        if (first >= 0 && found < max)
            out[found++] = (hs_redzone_damage){
                .alloc = {.base = t.base, .size = t.size, .id = t.id, .redzone = t.redzone}, .first = (uint32_t)first,
                .last = (uint32_t)last};
    }
    pthread_mutex_unlock(&rz.lock);
    return found;
}
