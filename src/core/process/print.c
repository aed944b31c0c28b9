#include "process/print.h"

void hs_jb_string(hs_jbuf *b, const char *s)
{
    hs_jb(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            hs_jb(b, "\\%c", ch);
        else if (ch < 0x20)
            hs_jb(b, "\\u%04x", ch);
        else
            hs_jb(b, "%c", ch);
    }
    hs_jb(b, "\"");
}

void hs_print_human_size(FILE *f, uint64_t bytes)
{
    if (bytes >= (1ull << 30))
        fprintf(f, "%.1f GiB", bytes / 1073741824.0);
    else if (bytes >= (1ull << 20))
        fprintf(f, "%.1f MiB", bytes / 1048576.0);
    else if (bytes >= 1024)
        fprintf(f, "%.1f KiB", bytes / 1024.0);
    else
        fprintf(f, "%llu B", (unsigned long long)bytes);
}
