/* hipshadow's own descriptors, guarded (see own_fd.h). */
#define _GNU_SOURCE /* fopencookie */
#include "process/own_fd.h"
#include "process/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* The lowest number a taken descriptor moves to: 1000 (programs that open fewer files than that
 * never reach it), or three quarters of the way up a lower descriptor limit. */
static int high_floor(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1024)
        return 1000;
    return (int)(rl.rlim_cur * 3 / 4);
}

int hs_own_fd_take(hs_own_fd *o, int fd)
{
    *o = HS_OWN_FD_NONE;
    if (fd < 0)
        return -1;
    int floor = high_floor();
    if (fd < floor) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
        if (high >= 0) { /* no free number up there: it stays where it is */
            close(fd);
            fd = high;
        }
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    *o = (hs_own_fd){.fd = fd, .dev = st.st_dev, .ino = st.st_ino};
    return fd;
}

bool hs_own_fd_ok(const hs_own_fd *o)
{
    struct stat st;
    return o->fd >= 0 && fstat(o->fd, &st) == 0 && st.st_dev == o->dev && st.st_ino == o->ino;
}

void hs_own_fd_release(hs_own_fd *o)
{
    if (hs_own_fd_ok(o))
        close(o->fd);
    *o = HS_OWN_FD_NONE;
}

/* ---- a stream over a guarded descriptor ---- */

typedef struct guarded_stream {
    hs_own_fd file;
    const char *what;
    bool warned;
} guarded_stream;

static ssize_t guarded_write(void *cookie, const char *buf, size_t size)
{
    guarded_stream *g = cookie;
    if (!hs_own_fd_ok(&g->file)) {
        if (!g->warned)
            hs_say("hipshadow: %s: the program closed its file descriptor; nothing more is written there\n", g->what);
        g->warned = true;
        errno = EBADF;
        return -1;
    }
    return hs_write_all(g->file.fd, buf, size);
}

static int guarded_close(void *cookie)
{
    guarded_stream *g = cookie;
    hs_own_fd_release(&g->file);
    free(g);
    return 0;
}

FILE *hs_own_fd_stream(int fd, const char *mode, const char *what)
{
    guarded_stream *g = calloc(1, sizeof *g);
    if (!g) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (hs_own_fd_take(&g->file, fd) < 0) { /* fd is closed (or was none) */
        free(g);
        return NULL;
    }
    g->what = what;
    FILE *f = fopencookie(g, mode, (cookie_io_functions_t){.write = guarded_write, .close = guarded_close});
    if (!f)
        guarded_close(g);
    return f;
}
