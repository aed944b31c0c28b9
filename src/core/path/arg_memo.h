/* The facts of a launch's pointer-like argument words, kept per thread.  An engine launches the
 * same kernels on the same buffers token after token; while the shadow map has not changed, the
 * same words give the same lookups, so a launch whose kernel and words match one gathered since
 * the map last changed takes that launch's argument facts instead of looking each word up.  The
 * rules still run on every launch: only the lookups are kept.  Off while PyTorch blocks or NVTX
 * regions are tracked (their indexes change at every tensor and are read per argument too). */
#ifndef HS_ARG_MEMO_H
#define HS_ARG_MEMO_H

#include "call.h"

/* One word the gather would look up: a parameter that the platform says is a pointer, or any
 * word between the shadow map's floor and ceiling. */
typedef struct hs_arg_word {
    uintptr_t value;
    uint16_t index;
    uint8_t how;    /* hs_arg_how */
    uint8_t access; /* hs_param_access, for a parameter the platform describes */
    bool surely_pointer;
} hs_arg_word;

enum { HS_ARG_MEMO_WORDS = 8 }; /* a launch with more such words is looked up word by word */

typedef struct hs_arg_key {
    const void *kernel;
    uint64_t version; /* the shadow map's, read before the lookups */
    uint8_t n;
    hs_arg_word w[HS_ARG_MEMO_WORDS];
} hs_arg_key;

/* Whether the memo can answer now; fills the key's version. */
bool hs_arg_memo_usable(hs_arg_key *key);
/* A launch with this key gathered before, at the same version: its n_args and args into f. */
bool hs_arg_memo_find(const hs_arg_key *key, hs_facts *f);
/* After the lookups: what they gave, kept for the next launch with the key, unless the map
 * changed meanwhile or an argument is anything but a live allocation. */
void hs_arg_memo_keep(const hs_arg_key *key, const hs_facts *f);

#endif
