/* Lookups (see lookup.h).  The identity test is by address, not by name: a name can be defined
 * by several libraries, but only the runtime's own function (or the address its
 * get-proc-address gives for it) is replaced. */
#include "entry/lookup.h"
#include "runtime/frontend.h"

#include <pthread.h>
#include <string.h>

/* Every layer's entries in name order, built once (no allocation: the tables are small). */
enum { MAX_ENTRIES = 2048 };
static const hs_lookup_entry *by_name[MAX_ENTRIES];
static int n_sorted;
static pthread_once_t sort_once = PTHREAD_ONCE_INIT;

static void sort_by_name(void)
{
    for (int l = 0; l < hs_frontend_active.n_layers; l++) {
        const hs_layer *layer = hs_frontend_active.layers[l];
        for (int i = 0; i < layer->n_lookup && n_sorted < MAX_ENTRIES; i++) {
            const hs_lookup_entry *e = &layer->lookup[i]; /* insertion sort: a few hundred names, once */
            int j = n_sorted++;
            while (j > 0 && strcmp(by_name[j - 1]->name, e->name) > 0) {
                by_name[j] = by_name[j - 1];
                j--;
            }
            by_name[j] = e;
        }
    }
}

static void resolve_layers(void)
{
    for (int i = 0; i < hs_frontend_active.n_layers; i++)
        if (hs_frontend_active.layers[i]->resolve)
            hs_frontend_active.layers[i]->resolve();
}

bool hs_lookup_is_wrapped(const char *name)
{
    pthread_once(&sort_once, sort_by_name);
    int lo = 0, hi = n_sorted - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(name, by_name[mid]->name);
        if (!c)
            return true;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return false;
}

void *hs_lookup_wrapper_for(const void *fn)
{
    if (!fn)
        return NULL;
    resolve_layers(); /* a library loaded since (the CUDA driver, by the runtime) */
    for (int l = 0; l < hs_frontend_active.n_layers; l++) {
        const hs_layer *layer = hs_frontend_active.layers[l];
        for (int i = 0; i < layer->n_lookup; i++) {
            const hs_lookup_entry *e = &layer->lookup[i];
            if (*e->real == fn || (e->alias && *e->alias == fn))
                return e->wrapper;
        }
    }
    return NULL;
}

void hs_lookup_redirect(void **result)
{
    if (!result || !*result)
        return;
    void *w = hs_lookup_wrapper_for(*result);
    if (w)
        *result = w;
}
