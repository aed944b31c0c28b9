/* Cold path: output helpers that every layer's report wording shares (the findings' text and
 * JSON Lines, the kernels' device-fault wording, the PyTorch block wording). */
#ifndef HS_PRINT_H
#define HS_PRINT_H

#include "process/util.h"

#include <stdint.h>
#include <stdio.h>

/* A bounded string builder for one JSON line: no FILE*, one write() per finding. */
typedef struct hs_jbuf {
    char data[16384];
    size_t n;
} hs_jbuf;

#define hs_jb(b, ...) hs_appendf((b)->data, sizeof(b)->data, &(b)->n, __VA_ARGS__)

/* s as a JSON string, quoted and escaped. */
void hs_jb_string(hs_jbuf *b, const char *s);

/* "1.5 MiB", "12 B": a size as a reader takes it in. */
void hs_print_human_size(FILE *f, uint64_t bytes);

#endif
