/* A dladdr preloaded in front of the loader's, for run_harden_case.py loader_calls_hold_signals:
 * called from hipshadow, it says so on stderr and raises SIGALRM, whose handler (installed here)
 * exits 3 when the signal came after the call returned and 4 when it came inside it.  Inside is
 * where the loader's own dladdr holds its lock, and where an exit() from the program's handler
 * would wait for that lock in _dl_fini for ever.  It answers every lookup "unknown". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t inside, armed;

static void on_alarm(int sig)
{
    (void)sig;
    _exit(inside ? 4 : 3);
}

__attribute__((constructor)) static void arm(void)
{
    signal(SIGALRM, on_alarm);
    armed = 1; /* a sanitizer's lookups before the constructors are answered, not signalled */
}

struct caller {
    uintptr_t pc;
    char name[256];
};

static int module_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct caller *c = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && c->pc >= lo && c->pc < lo + ph->p_memsz) {
            snprintf(c->name, sizeof c->name, "%s", info->dlpi_name);
            return 1;
        }
    }
    return 0;
}

int dladdr(const void *addr, Dl_info *info)
{
    (void)addr;
    (void)info;
    struct caller c = {.pc = (uintptr_t)__builtin_return_address(0)};
    dl_iterate_phdr(module_of, &c);
    if (!armed || !strstr(c.name, "libhipshadow"))
        return 0;
    char line[400];
    int n = snprintf(line, sizeof line, "loader_signal_shim: dladdr called from %s\n", c.name);
    if (write(2, line, (size_t)n) < 0)
        return 0;
    inside = 1;
    raise(SIGALRM);
    inside = 0;
    return 0;
}
