/* Where the report goes: standard output, or the file named with --output, replaced without
 * following a link or writing through one; every write error is caught and said. */
#ifndef HSR_OUTPUT_H
#define HSR_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

typedef struct hsr_output {
    FILE *f;          /* what the formats write to */
    const char *path; /* NULL: standard output */
    char *temp;       /* the new file, renamed onto path once complete; NULL: written in place */
    int fd;
    int error; /* the first write's errno, 0 while none failed */
} hsr_output;

/* Opens the destination: path NULL for standard output.  An existing regular file is replaced
 * only once the report is complete (a new file, renamed over it); a character device or FIFO
 * (/dev/null) is written in place; a symbolic link, a directory or anything else is refused.
 * False, with a message naming the file, when it cannot be opened. */
bool hsr_output_open(hsr_output *o, const char *path);
/* Flushes and closes.  False, with a message, when any of the report could not be written: a
 * file named with --output is then left as it was. */
bool hsr_output_close(hsr_output *o);

#endif
