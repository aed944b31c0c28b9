#define _GNU_SOURCE
#include "entry/wrapper_shape.h"
#include "entry/dl.h"

#include <dlfcn.h>

void *hs_resolve(const char *name, const char *const *sonames, void **handle)
{
    void *p = hs_real_dlsym(RTLD_NEXT, name);
    if (p)
        return p;
    for (const char *const *s = sonames; !*handle && *s; s++)
        *handle = dlopen(*s, RTLD_LAZY | RTLD_NOLOAD);
    return *handle ? hs_real_dlsym(*handle, name) : NULL;
}
