/* The "interpreter": not linked against HIP at all; dlopens the extension with RTLD_LOCAL. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    int (*entry)(void) = (int (*)(void))dlsym(h, "extension_entry");
    return entry ? entry() : 2;
}
