#include "emit.h"

void hsr_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void hsr_xml_string(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

const char *hsr_human_bytes(uint64_t bytes, char *buf, size_t len)
{
    if (bytes >= (1ull << 30))
        snprintf(buf, len, "%.1f GiB", bytes / 1073741824.0);
    else if (bytes >= (1ull << 20))
        snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
    else if (bytes >= 1024)
        snprintf(buf, len, "%.1f KiB", bytes / 1024.0);
    else
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    return buf;
}
