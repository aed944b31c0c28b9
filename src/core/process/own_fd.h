/* The files hipshadow keeps open inside the program (the post-mortem log, the findings and text
 * reports, the PyTorch trace), guarded against a program that closes descriptors it did not
 * open and opens its own.  Daemons do this (a loop closing every descriptor from 3, python-
 * daemon, closefrom()), and the kernel then hands the same numbers to the program's next files:
 * a write, mmap or close through hipshadow's stale number would land in the program's file.
 *
 * So a taken descriptor is moved to a high number, out of the way of the kernel's lowest-free
 * rule, and every later use first checks that the number still names the file hipshadow opened
 * (fstat: device and inode).  Not on any hot path: the users write findings, map log segments,
 * and flush at exit. */
#ifndef HS_OWN_FD_H
#define HS_OWN_FD_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct hs_own_fd {
    int fd; /* -1: none */
    dev_t dev;
    ino_t ino;
} hs_own_fd;

#define HS_OWN_FD_NONE ((hs_own_fd){.fd = -1})

/* Takes fd, which hipshadow just opened (-1: none), into *o: moved to a high free number when
 * there is one (close-on-exec either way).  Returns o->fd. */
int hs_own_fd_take(hs_own_fd *o, int fd);
/* Whether o->fd is set and still names the file hipshadow opened. */
bool hs_own_fd_ok(const hs_own_fd *o);
/* Closes o->fd if it is still hipshadow's, never the program's file; *o becomes none. */
void hs_own_fd_release(hs_own_fd *o);

/* A stdio stream (mode "w" or "a") over fd, which hipshadow just opened (taken as above), for a
 * file written through a buffer: each flush first checks the descriptor, and once the program
 * has closed it the stream's writes fail and "hipshadow: <what>: ..." is said once on stderr.
 * fclose closes the descriptor only while it is hipshadow's.  NULL (fd closed) when out of memory. */
FILE *hs_own_fd_stream(int fd, const char *mode, const char *what);

#endif
