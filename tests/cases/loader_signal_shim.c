/* dladdr and dl_iterate_phdr preloaded in front of the loader's, for run_harden_case.py
 * loader_calls_hold_signals.  LOADER_SHIM_CALL names the one that signals: at each call from
 * hipshadow's own code it says so on stderr and raises SIGALRM, whose handler (installed here)
 * exits 4 when the signal came inside the call, and otherwise lets the program go on.  Inside is
 * where the loader holds its lock, and where an exit() from a program's handler would wait for
 * that lock in _dl_fini for ever.  (libunwind holds the signals around its own calls.)  dladdr
 * answers every lookup "unknown"; dl_iterate_phdr is the loader's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t inside, armed;

static void on_alarm(int sig)
{
    (void)sig;
    if (inside)
        _exit(4);
}

__attribute__((constructor)) static void arm(void)
{
    signal(SIGALRM, on_alarm);
    armed = 1; /* a sanitizer's lookups before the constructors are answered, not signalled */
}

typedef int (*iterate_fn)(int (*)(struct dl_phdr_info *, size_t, void *), void *);

static iterate_fn next_iterate(void)
{
    static iterate_fn next;
    if (!next)
        next = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
    return next;
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

/* Raises SIGALRM as from inside `call` when it is the one chosen and its caller is hipshadow. */
static void signal_inside(const char *call, uintptr_t pc)
{
    const char *chosen = getenv("LOADER_SHIM_CALL");
    if (!armed || !chosen || strcmp(chosen, call) || !next_iterate())
        return;
    struct caller c = {.pc = pc};
    next_iterate()(module_of, &c);
    if (!strstr(c.name, "libhipshadow"))
        return;
    char line[400];
    int n = snprintf(line, sizeof line, "loader_signal_shim: %s called from %s\n", call, c.name);
    if (write(2, line, (size_t)n) < 0)
        return;
    inside = 1;
    raise(SIGALRM);
    inside = 0;
}

int dladdr(const void *addr, Dl_info *info)
{
    (void)addr;
    (void)info;
    signal_inside("dladdr", (uintptr_t)__builtin_return_address(0));
    return 0;
}

int dl_iterate_phdr(int (*fn)(struct dl_phdr_info *, size_t, void *), void *data)
{
    signal_inside("dl_iterate_phdr", (uintptr_t)__builtin_return_address(0));
    return next_iterate() ? next_iterate()(fn, data) : 0;
}
