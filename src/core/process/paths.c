/* File names and creation (see paths.h). */
#define _GNU_SOURCE
#include "process/paths.h"
#include "process/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a rank can be: digits, or a short name of letters, digits, '-' and '_'.  Anything else
 * (a '/', "..") would put the file somewhere else than the template says. */
static bool rank_ok(const char *v)
{
    size_t n = strlen(v);
    if (n == 0 || n > HS_RANK_MAX)
        return false;
    for (const char *p = v; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
            return false;
    return true;
}

static bool all_digits(const char *v)
{
    for (; *v; v++)
        if (!isdigit((unsigned char)*v))
            return false;
    return true;
}

static const char *rank_string(char *buf, size_t len, int *rank)
{
    static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "LOCAL_RANK"};
    static atomic_bool refused_said;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = hs_getenv(vars[i]); /* a log opened from .preinit_array: see util.c */
        if (!v || !*v)
            continue;
        if (!rank_ok(v)) {
            if (!atomic_exchange(&refused_said, true))
                hs_say("hipshadow: %s='%.64s%s' is not a rank (digits, or up to %d letters, digits, '-' and '_'); "
                       "%%r does not take it\n",
                       vars[i], v, strlen(v) > 64 ? "..." : "", HS_RANK_MAX);
            continue;
        }
        *rank = all_digits(v) ? atoi(v) : -1;
        snprintf(buf, len, "%s", v);
        return buf;
    }
    *rank = -1;
    return "norank";
}

void hs_expand_path(const char *template, char *out, size_t len, int *rank)
{
    char host[64] = "host", exe[512] = "exe", rank_buf[HS_RANK_MAX + 1];
    int no_rank;
    gethostname(host, sizeof host - 1);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0)
        exe[n] = 0;
    const char *exe_base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    const char *rank_text = rank_string(rank_buf, sizeof rank_buf, rank ? rank : &no_rank);
    size_t o = 0;
    for (const char *p = template; *p && o + 1 < len; p++) {
        const char *sub = NULL;
        char pid[16];
        if (p[0] == '%' && p[1]) {
            switch (p[1]) {
            case 'p':
                snprintf(pid, sizeof pid, "%d", (int)getpid());
                sub = pid;
                break;
            case 'h': sub = host; break;
            case 'e': sub = exe_base; break;
            case 'r': sub = rank_text; break;
            case '%': sub = "%"; break;
            }
        }
        if (sub) {
            int w = snprintf(out + o, len - o, "%s", sub);
            o = w > 0 && (size_t)w < len - o ? o + (size_t)w : len - 1;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o < len ? o : len - 1] = 0;
}

/* path with "-n" before its extension (the last '.' after the last '/'). */
static void numbered(const char *path, int n, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
        snprintf(out, len, "%s-%d", path, n);
    else
        snprintf(out, len, "%.*s-%d%s", (int)(dot - path), path, n, dot);
}

int hs_create_unique(const char *path, int flags, char *used, size_t used_len)
{
    char name[4096];
    snprintf(name, sizeof name, "%s", path);
    for (int n = 1; n <= 1000; n++) {
        int fd = open(name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        struct stat st;
        if (fd < 0 && errno == EEXIST && n == 1 && lstat(name, &st) == 0 && !S_ISREG(st.st_mode))
            /* the name itself is a directory, a symbolic link or a device: not a taken file name */
            errno = S_ISDIR(st.st_mode) ? EISDIR : S_ISLNK(st.st_mode) ? ELOOP : ENODEV;
        if (fd >= 0 || errno != EEXIST) {
            if (used)
                snprintf(used, used_len, "%s", name);
            return fd;
        }
        numbered(path, n, name, sizeof name);
    }
    errno = EEXIST;
    return -1;
}
