/* Offline symbolization with elfutils' libdw, from the module map recorded in the log:
 * "function (file:line)" where debug information exists, "function+0xoff (module)" otherwise. */
#ifndef HSR_SYMBOLIZE_H
#define HSR_SYMBOLIZE_H

#include "reader.h"

typedef struct hsr_frame_info {
    char function[256]; /* "??" when unknown */
    char file[512];     /* "" when no line information */
    int line;
    char module[512]; /* the object's path, "" when no module holds the address */
    uint64_t offset;  /* pc - function start, or pc - module bias */
} hsr_frame_info;

void hsr_symbolize(hsr_log *log, uint64_t pc, hsr_frame_info *out);
/* "func (file:line)" / "func+0xoff (module)" / "0xPC" */
void hsr_frame_text(const hsr_frame_info *f, uint64_t pc, char *buf, size_t len);
void hsr_symbolizer_free(hsr_log *log);

#endif
