#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* stdio's writes go through here, so the first error's errno is kept for the message. */
static ssize_t write_all(void *cookie, const char *buf, size_t len)
{
    hsr_output *o = cookie;
    size_t done = 0;
    while (!o->error && done < len) {
        ssize_t n = write(o->fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            o->error = n < 0 ? errno : EIO;
        else
            done += (size_t)n;
    }
    return (ssize_t)done; /* short: stdio marks the stream in error */
}

static const char *where(const hsr_output *o) { return o->path ? o->path : "standard output"; }

static void refuse(const char *path, const char *why)
{
    fprintf(stderr, "hipshadow report: not writing '%s': %s\n", path, why);
}

/* A new file beside path (O_EXCL: never an existing file or link), with the mode of the file it
 * replaces, or else the mode a plain creation would give. */
static int create_beside(hsr_output *o, const char *path, const struct stat *replaced)
{
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    if (asprintf(&o->temp, "%.*s.%s.XXXXXX", dir_len, path, slash ? slash + 1 : path) < 0) {
        o->temp = NULL;
        return -1;
    }
    int fd = mkostemp(o->temp, O_CLOEXEC);
    if (fd < 0) {
        free(o->temp);
        o->temp = NULL;
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, replaced ? replaced->st_mode & 07777 : 0666 & ~mask);
    return fd;
}

bool hsr_output_open(hsr_output *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->fd = STDOUT_FILENO;
    struct stat st;
    bool exists = path && lstat(path, &st) == 0;
    if (!path) {
        /* standard output as given */
    } else if (!exists && errno != ENOENT) {
        refuse(path, strerror(errno));
        return false;
    } else if (!exists || S_ISREG(st.st_mode)) {
        if ((o->fd = create_beside(o, path, exists ? &st : NULL)) < 0) {
            fprintf(stderr, "hipshadow report: cannot create the report beside '%s': %s\n", path, strerror(errno));
            return false;
        }
    } else if (S_ISLNK(st.st_mode)) {
        refuse(path, "it is a symbolic link (name the file it points to, or remove the link)");
        return false;
    } else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        /* /dev/null, a named pipe: written as they are, never created or truncated */
        o->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (o->fd < 0 || fstat(o->fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
            refuse(path, o->fd < 0 ? strerror(errno) : "it changed while being opened");
            if (o->fd >= 0)
                close(o->fd);
            return false;
        }
    } else {
        refuse(path,
               S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file, a character device or a FIFO");
        return false;
    }
    o->f = fopencookie(o, "w", (cookie_io_functions_t){.write = write_all});
    if (!o->f) {
        fprintf(stderr, "hipshadow report: cannot write to %s: %s\n", where(o), strerror(errno));
        hsr_output_close(o);
        return false;
    }
    return true;
}

bool hsr_output_close(hsr_output *o)
{
    if (o->f && fclose(o->f) != 0 && !o->error)
        o->error = errno ? errno : EIO;
    o->f = NULL;
    if (o->path && close(o->fd) != 0 && !o->error) /* a file system may say only now that it is full */
        o->error = errno;
    if (o->error)
        fprintf(stderr, "hipshadow report: cannot write the report to %s%s%s: %s\n", o->path ? "'" : "", where(o),
                o->path ? "'" : "", strerror(o->error));
    if (o->temp && !o->error && rename(o->temp, o->path) != 0) {
        o->error = errno;
        fprintf(stderr, "hipshadow report: cannot put the report in place as '%s': %s\n", o->path, strerror(o->error));
    }
    if (o->temp && o->error)
        unlink(o->temp);
    free(o->temp);
    o->temp = NULL;
    return !o->error;
}
