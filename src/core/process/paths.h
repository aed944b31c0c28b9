/* The files hipshadow writes (post-mortem log, findings, text report): their names from a
 * template, and their creation.  One expansion for all of them:
 *   %p  process id        %h  host name        %e  executable's base name
 *   %r  rank (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, LOCAL_RANK; "norank" when none): the
 *       first of them that is digits, or a name of up to HS_RANK_MAX letters, digits, '-' and '_'
 *       (another value is refused, said once: it must not lead the file out of its directory)
 *   %%  a percent sign */
#ifndef HS_PATHS_H
#define HS_PATHS_H

#include <stddef.h>

enum { HS_RANK_MAX = 31 };

/* Expands template into out; *rank gets the rank number (-1 when none, or a name). */
void hs_expand_path(const char *template, char *out, size_t len, int *rank);
/* Creates a new file for this process (O_EXCL|O_NOFOLLOW, mode 0600).  When the name is taken
 * (a program exec'd in the same process, a reused pid, a file left by an earlier run), "-1",
 * "-2", ... is put before the extension, so no process ever writes into another's file.
 * A name that is a directory, a symbolic link or a device is refused (EISDIR, ELOOP, ENODEV).
 * Returns the fd and the name used in `used`, or -1 with errno set. */
int hs_create_unique(const char *path, int flags, char *used, size_t used_len);

#endif
