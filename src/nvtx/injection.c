/* hipshadow as an NVTX v3 injection library: the two entry points NVTX looks up in the library
 * named by NVTX_INJECTION64_PATH (the launcher sets it to the preload library, which dlopen
 * then finds already loaded), and their Preinject forms for programs built to look in the
 * process's own symbols (NVTX_SUPPORT_ALREADY_INJECTED_LIBRARY).
 *
 *   InitializeInjectionNvtx2(getExportTable)      the core API, at the program's first NVTX call
 *                                                 (and before any extension): hipshadow serves
 *                                                 string registration, so registered names work
 *   InitializeInjectionNvtxExtension(moduleInfo)  each extension, at its first call: for the
 *                                                 memory extension hipshadow writes its
 *                                                 functions into the module's slots (mem.c)
 *
 * NVTX turns every slot left empty into a no-op, so what hipshadow does not serve costs the
 * program nothing. */
#include "abi.h"
#include "mem.h"
#include "messages.h"
#include "path/init.h"
#include "process/util.h"

#include <pthread.h>
#include <stdatomic.h>

/* A fork child may have inherited the front-end's locks held by a thread it does not have. */
static void child_after_fork(void)
{
    hs_nvtx_mem_after_fork();
    hs_nvtx_messages_after_fork();
}

static void start(void)
{
    hs_ensure_init();
    pthread_atfork(NULL, NULL, child_after_fork);
}

static pthread_once_t started = PTHREAD_ONCE_INIT;

static void attach_core(hs_nvtx_get_export_table get)
{
    const hs_nvtx_callbacks *cb = get(HS_NVTX_ETID_CALLBACKS);
    hs_nvtx_fn **table = NULL;
    unsigned size = 0;
    if (!cb || cb->struct_size < sizeof *cb || !cb->get_module_function_table ||
        !cb->get_module_function_table(HS_NVTX_CB_MODULE_CORE2, &table, &size) || !table)
        return;
    if (size >= HS_NVTX_CBID_CORE2_REGISTER_STRING_A && table[HS_NVTX_CBID_CORE2_REGISTER_STRING_A])
        *table[HS_NVTX_CBID_CORE2_REGISTER_STRING_A] = (hs_nvtx_fn)hs_nvtx_register_string_a;
    if (size >= HS_NVTX_CBID_CORE2_REGISTER_STRING_W && table[HS_NVTX_CBID_CORE2_REGISTER_STRING_W])
        *table[HS_NVTX_CBID_CORE2_REGISTER_STRING_W] = (hs_nvtx_fn)hs_nvtx_register_string_w;
}

HS_EXPORT int InitializeInjectionNvtx2(hs_nvtx_get_export_table get)
{
    pthread_once(&started, start);
    if (!get)
        return 0;
    attach_core(get);
    const hs_nvtx_version_info *v = get(HS_NVTX_ETID_VERSIONINFO);
    if (v && v->struct_size >= sizeof *v && v->set_injection_nvtx_version)
        v->set_injection_nvtx_version(3);
    return 1;
}

HS_EXPORT int InitializeInjectionNvtxExtension(hs_nvtx_ext_module *m)
{
    pthread_once(&started, start);
    if (!m || m->struct_size < sizeof *m || m->module_id != HS_NVTX_MODULE_MEM)
        return 1; /* another extension: nothing attached, and nothing wrong */
    if (m->compat_id != HS_NVTX_COMPAT_MEM) {
        static atomic_bool said;
        if (!atomic_exchange(&said, true))
            hs_say("hipshadow: NVTX: the memory extension's version 0x%04x is not the one hipshadow knows (0x%04x); "
                   "its calls are not checked\n",
                   m->compat_id, HS_NVTX_COMPAT_MEM);
        return 1;
    }
    for (size_t i = 0; i < m->segments_count; i++)
        if (m->segments[i].segment_id == 1 && m->segments[i].function_slots)
            hs_nvtx_mem_attach(m->segments[i].function_slots, m->segments[i].slot_count);
    return 1;
}

HS_EXPORT int InitializeInjectionNvtx2Preinject(hs_nvtx_get_export_table get)
    __attribute__((alias("InitializeInjectionNvtx2")));
HS_EXPORT int InitializeInjectionNvtxExtensionPreinject(hs_nvtx_ext_module *m)
    __attribute__((alias("InitializeInjectionNvtxExtension")));
