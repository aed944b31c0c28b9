#include "process/depot.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct hs_depot_entry {
    uint64_t hash; /* key */
    uint32_t id;
    uint32_t bytes;
    hs_depot_entry *next_same_hash;
    UT_hash_handle hh;
    _Alignas(8) unsigned char data[];
};

uint64_t hs_depot_hash(const void *data, size_t bytes)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over 32-bit words, then the bytes left */
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 4 <= bytes; i += 4) {
        uint32_t w;
        memcpy(&w, p + i, sizeof w);
        h ^= w;
        h *= 1099511628211ULL;
    }
    for (; i < bytes; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h ^ (uint64_t)bytes;
}

uint32_t hs_depot_find(const hs_depot *d, const void *data, size_t bytes, uint64_t hash)
{
    hs_depot_entry *head = NULL;
    HASH_FIND(hh, d->by_hash, &hash, sizeof hash, head);
    for (const hs_depot_entry *e = head; e; e = e->next_same_hash)
        if (e->bytes == bytes && !memcmp(e->data, data, bytes))
            return e->id;
    return 0;
}

uint32_t hs_depot_add(hs_depot *d, const void *data, size_t bytes, uint64_t hash)
{
    if (d->count >= UINT32_MAX - 1 || bytes > UINT32_MAX)
        return 0;
    if (d->count == d->capacity) {
        uint32_t cap = d->capacity ? d->capacity * 2 : 1024;
        hs_depot_entry **grown = realloc(d->by_id, cap * sizeof *grown);
        if (!grown)
            return 0;
        d->by_id = grown;
        d->capacity = cap;
    }
    hs_depot_entry *e = calloc(1, sizeof *e + bytes);
    if (!e)
        return 0;
    memcpy(e->data, data, bytes);
    e->hash = hash;
    e->bytes = (uint32_t)bytes;
    e->id = ++d->count;
    d->by_id[e->id - 1] = e;
    hs_depot_entry *head = NULL;
    HASH_FIND(hh, d->by_hash, &hash, sizeof hash, head);
    if (head) { /* uthash keeps one entry per key: the others chain behind it */
        e->next_same_hash = head->next_same_hash;
        head->next_same_hash = e;
    } else {
        HASH_ADD(hh, d->by_hash, hash, sizeof e->hash, e);
    }
    return e->id;
}

const void *hs_depot_get(const hs_depot *d, uint32_t id, size_t *bytes)
{
    if (id < 1 || id > d->count)
        return NULL;
    const hs_depot_entry *e = d->by_id[id - 1];
    *bytes = e->bytes;
    return e->data;
}

size_t hs_depot_entry_cost(size_t bytes) { return sizeof(hs_depot_entry) + bytes + sizeof(hs_depot_entry *) + 16; }
