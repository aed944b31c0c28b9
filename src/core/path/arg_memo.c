/* The argument facts of recent launches, per thread (see arg_memo.h).
 *
 * A table of 1024 entries per launching thread, in sets of two chosen by a hash of the kernel and
 * its words, mapped at the thread's first launch (no malloc) and never shared, so nothing is
 * locked.  Two ways, because an engine's token makes a few hundred distinct launches: one way
 * each, a few dozen of them share a slot with another and the two evict each other at every
 * token; two ways keep such pairs.  A new entry takes the first way and moves the one there, if
 * it is of the map's current version, to the second.
 * An entry holds its key whole and is used only when every word matches and the shadow map's
 * version is the one its lookups were made at; the map's writers change that version at every
 * insert, free and removal (a seqlock's counter), so an entry never outlives what it says.  Each
 * map's counter is 32 bits, as the page map's own per-thread answers use it: an entry could be
 * taken again only after exactly 2^31 changes of that map between two of its launches. */
#include "path/arg_memo.h"
#include "process/stats.h"
#include "process/util.h"
#include "shadow/regions.h"
#include "shadow/shadow.h"
#include "torch/blocks.h"

#include <sys/mman.h>

enum { MEMO_BITS = 10, MEMO_ENTRIES = 1 << MEMO_BITS }; /* in sets of two side by side */

/* What a lookup found for one argument; its word gives the rest (index, value, how, access).
 * Only live allocations outside PyTorch blocks and NVTX regions are kept. */
typedef struct memo_arg {
    uint64_t alloc_id, alloc_size;
    int64_t offset;
    uint32_t redzone;
    uint8_t word; /* which of the key's words */
    uint8_t kind;
} memo_arg;

/* The key's words and then the arguments they gave, packed: a hit with a few words reads the
 * entry's first lines only (one entry a launch, cold between tokens: its lines are its cost). */
typedef struct memo_entry {
    _Alignas(64) const void *kernel; /* NULL: empty */
    uint64_t version;
    uint8_t n_words, n_args;
    _Alignas(8) unsigned char packed[HS_ARG_MEMO_WORDS * sizeof(hs_arg_word) + HS_LAUNCH_MAX_ARGS * sizeof(memo_arg)];
} memo_entry;

static hs_arg_word *word_at(memo_entry *e, int i)
{
    return (hs_arg_word *)(void *)(e->packed + i * sizeof(hs_arg_word));
}
static memo_arg *arg_at(memo_entry *e, int i)
{
    return (memo_arg *)(void *)(e->packed + e->n_words * sizeof(hs_arg_word) + i * sizeof(memo_arg));
}

static HS_TLS memo_entry *table;
static HS_TLS bool table_failed;

static memo_entry *entries(void)
{
    if (HS_UNLIKELY(!table) && !table_failed) {
        void *p = mmap(NULL, sizeof(memo_entry) * MEMO_ENTRIES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                       0);
        table_failed = p == MAP_FAILED;
        table = table_failed ? NULL : p;
    }
    return table;
}

/* The key's set: its two entries. */
static memo_entry *set_of(memo_entry *t, const hs_arg_key *key)
{
    const uint64_t mul = 0x9e3779b97f4a7c15ull;
    uint64_t h = (uint64_t)(uintptr_t)key->kernel * mul;
    for (int i = 0; i < key->n; i++)
        h = (h ^ key->w[i].value ^ ((uint64_t)key->w[i].index << 48)) * mul;
    return &t[(h >> (64 - MEMO_BITS)) & ~(uint64_t)1];
}

static bool same_word(const hs_arg_word *a, const hs_arg_word *b)
{
    return a->value == b->value && a->index == b->index && a->how == b->how && a->access == b->access &&
           a->surely_pointer == b->surely_pointer;
}

HS_HOT bool hs_arg_memo_usable(hs_arg_key *key)
{
    if (HS_UNLIKELY(hs_blocks_any() || hs_regions_any()))
        return false; /* an argument's facts then depend on indexes with versions of their own */
    key->version = hs_shadow_version();
    return !(key->version & 1) && !(key->version & (1ull << 32)) && entries(); /* no writer active */
}

static bool holds(memo_entry *e, const hs_arg_key *key)
{
    if (e->kernel != key->kernel || e->version != key->version || e->n_words != key->n)
        return false;
    for (int i = 0; i < key->n; i++)
        if (!same_word(word_at(e, i), &key->w[i]))
            return false;
    return true;
}

HS_HOT bool hs_arg_memo_find(const hs_arg_key *key, hs_facts *f)
{
    memo_entry *e = set_of(table, key);
    if (!holds(e, key) && !holds(++e, key))
        return false;
    f->n_args = e->n_args;
    for (int i = 0; i < e->n_args; i++) {
        const memo_arg *m = arg_at(e, i);
        const hs_arg_word *w = &key->w[m->word];
        f->args[i] = (hs_launch_arg){.index = w->index,
                                     .state = HS_ARG_LIVE,
                                     .how = w->how,
                                     .kind = m->kind,
                                     .value = w->value,
                                     .alloc_id = m->alloc_id,
                                     .offset = m->offset,
                                     .alloc_size = m->alloc_size,
                                     .redzone = m->redzone,
                                     .access = w->access};
        f->arg_block_end[i] = 0;
    }
    hs_stat_count(HS_STAT_launch_memo);
    return true;
}

HS_HOT void hs_arg_memo_keep(const hs_arg_key *key, const hs_facts *f)
{
    if (hs_shadow_version() != key->version)
        return; /* the map changed during the lookups: they may mix two versions */
    uint8_t word_of[HS_LAUNCH_MAX_ARGS];
    int j = 0;
    for (int i = 0; i < f->n_args; i++) {
        const hs_launch_arg *a = &f->args[i];
        if (a->state != HS_ARG_LIVE || a->block_state != HS_BLOCK_NONE || a->region_freed)
            return; /* anything a finding or a report reads more of takes the lookups each time */
        while (j < key->n && (key->w[j].index != a->index || key->w[j].value != a->value)) /* in word order */
            j++;
        if (j == key->n)
            return;
        word_of[i] = (uint8_t)j++;
    }
    memo_entry *e = set_of(table, key);
    if (e->kernel && e->version == key->version)
        e[1] = e[0]; /* still good: it becomes the older of the two (one of an older version is dropped) */
    e->kernel = key->kernel;
    e->version = key->version;
    e->n_words = key->n;
    e->n_args = f->n_args;
    for (int i = 0; i < key->n; i++)
        *word_at(e, i) = key->w[i];
    for (int i = 0; i < f->n_args; i++) {
        const hs_launch_arg *a = &f->args[i];
        *arg_at(e, i) = (memo_arg){.alloc_id = a->alloc_id,
                                   .alloc_size = a->alloc_size,
                                   .offset = a->offset,
                                   .redzone = a->redzone,
                                   .word = word_of[i],
                                   .kind = a->kind};
    }
}
