/* The memo of recent launches' argument facts (path/arg_memo.c): a launch with the same kernel
 * and words at the same shadow map version is answered; two keys that share a set are both kept
 * (an engine's token makes a few hundred distinct launches, and two that evicted each other would
 * both be looked up at every token); a change of the map answers none; an argument that is not a
 * live allocation is never kept. */
#include "path/arg_memo.h"
#include "path/init.h"
#include "shadow/shadow.h"
#include "unit.h"

static const char kernel_a, kernel_b; /* two kernels' addresses */
static const uintptr_t DEV = (uintptr_t)0x7e0000000000;

static hs_arg_key key_of(const void *kernel, uintptr_t value)
{
    hs_arg_key k = {.kernel = kernel, .n = 1};
    k.w[0] = (hs_arg_word){.value = value, .index = 0, .how = HS_ARG_EXACT, .surely_pointer = true};
    return k;
}

/* What the gather found for the key's one word: a live allocation at DEV. */
static hs_facts facts_of(const hs_arg_key *k, hs_arg_state state)
{
    hs_facts f = {.n_args = 1};
    f.args[0] = (hs_launch_arg){.index = 0,
                                .state = state,
                                .value = k->w[0].value,
                                .alloc_id = 7,
                                .offset = (int64_t)(k->w[0].value - DEV),
                                .alloc_size = 1 << 20};
    return f;
}

static bool kept(hs_arg_key *k, hs_arg_state state)
{
    if (!hs_arg_memo_usable(k))
        return false;
    hs_facts f = facts_of(k, state);
    hs_arg_memo_keep(k, &f);
    return true;
}

static bool answered(hs_arg_key *k)
{
    hs_facts f = {0};
    return hs_arg_memo_usable(k) && hs_arg_memo_find(k, &f) && f.n_args == 1 && f.args[0].value == k->w[0].value &&
           f.args[0].alloc_id == 7 && f.args[0].offset == (int64_t)(k->w[0].value - DEV);
}

int main(void)
{
    hs_ensure_init();
    hs_arg_key a = key_of(&kernel_a, DEV + 64);
    CHECK(!answered(&a)); /* nothing kept yet */
    CHECK(kept(&a, HS_ARG_LIVE));
    CHECK(answered(&a));
    hs_arg_key other_kernel = key_of(&kernel_b, DEV + 64);
    CHECK(!answered(&other_kernel)); /* the kernel is part of the key */

    /* Every other key kept after a: whichever shares its set, a stays (it moves to the set's
     * second way).  A table of one way per set would lose a to one of these 4,000 keys. */
    int lost = 0;
    for (uintptr_t i = 1; i <= 4000; i++) {
        CHECK(kept(&a, HS_ARG_LIVE));
        hs_arg_key b = key_of(&kernel_b, DEV + 64 + 8 * i);
        CHECK(kept(&b, HS_ARG_LIVE));
        lost += !answered(&a);
        CHECK(answered(&b));
    }
    CHECK_EQ(lost, 0);

    /* A freed argument is looked up at every launch (its report needs the lookup): never kept. */
    hs_arg_key freed = key_of(&kernel_a, DEV + 4096);
    CHECK(kept(&freed, HS_ARG_FREED));
    CHECK(!answered(&freed));

    /* The shadow map changed: nothing kept before answers. */
    hs_span s = {.base = DEV, .size = 1 << 20, .kind = HS_MEM_DEVICE};
    CHECK_EQ(hs_shadow_add(&s), 0);
    CHECK(!answered(&a));
    CHECK(kept(&a, HS_ARG_LIVE));
    CHECK(answered(&a));
    return UNIT_DONE();
}
