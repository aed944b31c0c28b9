#define _GNU_SOURCE
#include "entry/wrapper_shape.h"
#include "entry/dl.h"

#include <dlfcn.h>

void *hs_resolve(const char *name, const char *const *sonames, void **handle)
{
    sigset_t saved;
    hs_loader_signals_hold(&saved); /* a wrapper's first call may come in the program's hot loop */
    void *p = hs_real_dlsym(RTLD_NEXT, name);
    for (const char *const *s = sonames; !p && !*handle && *s; s++)
        *handle = dlopen(*s, RTLD_LAZY | RTLD_NOLOAD);
    if (!p && *handle)
        p = hs_real_dlsym(*handle, name);
    hs_loader_signals_release(&saved);
    return p;
}
