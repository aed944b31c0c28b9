/* The argument facts of recent launches, per thread (see arg_memo.h).
 *
 * A table of 1024 entries per launching thread, direct-mapped by a hash of the kernel and its
 * words, mapped at the thread's first launch (no malloc) and never shared, so nothing is locked.
 * An entry holds its key whole and is used only when every word matches and the shadow map's
 * version is the one its lookups were made at; the map's writers change that version at every
 * insert, free and removal (a seqlock's counter), so an entry never outlives what it says. */
#include "path/arg_memo.h"
#include "process/stats.h"
#include "process/util.h"
#include "shadow/regions.h"
#include "shadow/shadow.h"
#include "torch/blocks.h"

#include <sys/mman.h>

enum { MEMO_BITS = 10, MEMO_ENTRIES = 1 << MEMO_BITS };

typedef struct memo_entry {
    const void *kernel; /* NULL: empty */
    uint64_t version;
    uint8_t n_words, n_args;
    hs_arg_word w[HS_ARG_MEMO_WORDS];
    hs_launch_arg args[HS_LAUNCH_MAX_ARGS];
} memo_entry;

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

static memo_entry *slot_of(memo_entry *t, const hs_arg_key *key)
{
    const uint64_t mul = 0x9e3779b97f4a7c15ull;
    uint64_t h = (uint64_t)(uintptr_t)key->kernel * mul;
    for (int i = 0; i < key->n; i++)
        h = (h ^ key->w[i].value ^ ((uint64_t)key->w[i].index << 48)) * mul;
    return &t[h >> (64 - MEMO_BITS)];
}

static bool same_word(const hs_arg_word *a, const hs_arg_word *b)
{
    return a->value == b->value && a->index == b->index && a->how == b->how && a->access == b->access &&
           a->surely_pointer == b->surely_pointer;
}

bool hs_arg_memo_usable(hs_arg_key *key)
{
    if (HS_UNLIKELY(hs_blocks_any() || hs_regions_any()))
        return false; /* an argument's facts then depend on indexes with versions of their own */
    key->version = hs_shadow_version();
    return !(key->version & 1) && !(key->version & (1ull << 32)) && entries(); /* no writer active */
}

bool hs_arg_memo_find(const hs_arg_key *key, hs_facts *f)
{
    const memo_entry *e = slot_of(table, key);
    if (e->kernel != key->kernel || e->version != key->version || e->n_words != key->n)
        return false;
    for (int i = 0; i < key->n; i++)
        if (!same_word(&e->w[i], &key->w[i]))
            return false;
    f->n_args = e->n_args;
    for (int i = 0; i < e->n_args; i++) {
        f->args[i] = e->args[i];
        f->arg_block_end[i] = 0;
    }
    hs_stat_count(HS_STAT_launch_memo);
    return true;
}

void hs_arg_memo_keep(const hs_arg_key *key, const hs_facts *f)
{
    if (hs_shadow_version() != key->version)
        return; /* the map changed during the lookups: they may mix two versions */
    for (int i = 0; i < f->n_args; i++)
        if (f->args[i].state != HS_ARG_LIVE || f->args[i].block_state != HS_BLOCK_NONE || f->args[i].region_freed)
            return; /* anything a finding or a report reads more of takes the lookups each time */
    memo_entry *e = slot_of(table, key);
    e->kernel = key->kernel;
    e->version = key->version;
    e->n_words = key->n;
    e->n_args = f->n_args;
    for (int i = 0; i < key->n; i++)
        e->w[i] = key->w[i];
    for (int i = 0; i < f->n_args; i++)
        e->args[i] = f->args[i];
}
