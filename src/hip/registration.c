/* hipcc's registration calls (see registration.inc), forwarded untouched; what they register is
 * remembered in the module registry: a fat binary's handle stands for a module whose image is
 * the offload bundle inside the wrapper, and a host stub for a function of it. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>

#include "process/util.h"
#include "entry/frontend_shape.h"
#include "entry/wrapper_shape.h"
#include "modules.h"

#include <pthread.h>

/* clang's fat binary wrapper: "HIPF", a version, the offload bundle. */
typedef struct fat_binary_wrapper {
    unsigned int magic;
    unsigned int version;
    const void *binary;
    void *unused;
} fat_binary_wrapper;

enum { FAT_MAGIC = 0x48495046 };

#define HS_HIP_REG(name, ret, params, args) static ret(*real_##name) params;
#include "registration.inc"
#undef HS_HIP_REG

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    static const char *const sonames[] = HS_HIP_SONAMES;
    void *runtime = NULL;
#define HS_HIP_REG(name, ret, params, args) *(void **)&real_##name = hs_resolve(#name, sonames, &runtime);
#include "registration.inc"
#undef HS_HIP_REG
}

HS_EXPORT void **__hipRegisterFatBinary(const void *data)
{
    pthread_once(&once, resolve);
    void **modules = real___hipRegisterFatBinary ? real___hipRegisterFatBinary(data) : NULL;
    const fat_binary_wrapper *w = data;
    if (modules && w && w->magic == FAT_MAGIC && w->binary)
        hs_hip_module_loaded(modules, w->binary);
    return modules;
}

HS_EXPORT void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                                     const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
                                     void *blockDim, void *gridDim, int *wSize)
{
    pthread_once(&once, resolve);
    if (real___hipRegisterFunction)
        real___hipRegisterFunction(modules, hostFunction, deviceFunction, deviceName, threadLimit, tid, bid, blockDim,
                                   gridDim, wSize);
    if (modules && hostFunction && deviceName)
        hs_hip_function_found(hostFunction, modules, deviceName);
}

HS_EXPORT void __hipUnregisterFatBinary(void **modules)
{
    pthread_once(&once, resolve);
    if (real___hipUnregisterFatBinary)
        real___hipUnregisterFatBinary(modules);
}
