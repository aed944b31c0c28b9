#define _GNU_SOURCE
#include "wrapper_shape.h"

#include <dlfcn.h>

void *hs_resolve(const char *name, const char *const *sonames, void **handle)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (p)
        return p;
    for (const char *const *s = sonames; !*handle && *s; s++)
        *handle = dlopen(*s, RTLD_LAZY | RTLD_NOLOAD);
    return *handle ? dlsym(*handle, name) : NULL;
}
