/* The module registry (see modules.h): small, append-only, under one lock; read only the first
 * time a kernel is launched (the kernel cache keeps the answer). */
#include <stdbool.h>

#include "modules.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    const void *key;   /* a module, or a function */
    const void *value; /* the module's image, or the function's module */
    char *name;        /* functions: the kernel name */
} entry;

static struct {
    pthread_mutex_t lock;
    entry *items;
    size_t n, cap;
} reg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void add(const void *key, const void *value, const char *name)
{
    pthread_mutex_lock(&reg.lock);
    if (reg.n == reg.cap) {
        size_t cap = reg.cap ? 2 * reg.cap : 64;
        entry *grown = realloc(reg.items, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&reg.lock);
            return;
        }
        reg.items = grown;
        reg.cap = cap;
    }
    reg.items[reg.n++] = (entry){key, value, name ? strdup(name) : NULL};
    pthread_mutex_unlock(&reg.lock);
}

/* The newest entry for key (a handle may be reused after an unload). */
static const entry *find_locked(const void *key)
{
    for (size_t i = reg.n; i-- > 0;)
        if (reg.items[i].key == key)
            return &reg.items[i];
    return NULL;
}

void hs_hip_module_loaded(const void *module, const void *image) { add(module, image, NULL); }

void hs_hip_function_found(const void *function, const void *module, const char *name) { add(function, module, name); }

bool hs_hip_function_source(const void *function, const void **image, const char **name)
{
    pthread_mutex_lock(&reg.lock);
    const entry *f = find_locked(function);
    const entry *m = f && f->name ? find_locked(f->value) : NULL;
    if (m) {
        *image = m->value;
        *name = f->name;
    }
    pthread_mutex_unlock(&reg.lock);
    return m != NULL;
}
