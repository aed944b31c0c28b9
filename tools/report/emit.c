#include "emit.h"

#include <string.h>

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD in UTF-8 */

/* The code point of the UTF-8 sequence at s, and its length; 0 when s does not start one (a
 * stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short). */
static int utf8_next(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    int n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, v = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, v = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, v = c & 0x07, min = 0x10000;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* the terminator stops here too */
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

/* The length of the run of printable ASCII at s that holds none of `special`: written as it is. */
static size_t plain(const unsigned char *s, const char *special)
{
    size_t n = 0;
    while (s[n] >= 0x20 && s[n] < 0x7f && !strchr(special, s[n]))
        n++;
    return n;
}

/* C0 and C1 controls and DEL. */
static int is_control(uint32_t cp) { return cp < 0x20 || (cp >= 0x7f && cp < 0xa0); }

void hsr_json_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    fputc('"', f);
    while (*s) {
        size_t run = plain(s, "\"\\");
        if (run) {
            fwrite(s, 1, run, f);
            s += run;
            continue;
        }
        uint32_t cp;
        int n = utf8_next(s, &cp);
        if (!n) {
            fputs("\\ufffd", f);
            s++;
            continue;
        }
        if (cp == '"' || cp == '\\')
            fprintf(f, "\\%c", (int)cp);
        else if (is_control(cp))
            fprintf(f, "\\u%04x", (unsigned)cp);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n;
    }
    fputc('"', f);
}

void hsr_xml_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    while (*s) {
        size_t run = plain(s, "<>&\"'");
        if (run) {
            fwrite(s, 1, run, f);
            s += run;
            continue;
        }
        uint32_t cp;
        int n = utf8_next(s, &cp);
        if (!n) {
            fputs(REPLACEMENT, f);
            s++;
            continue;
        }
        switch (cp) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            /* XML 1.0 has no way to write most controls, even as references */
            if ((is_control(cp) && cp != '\n' && cp != '\t') || cp == 0xfffe || cp == 0xffff)
                fputs(REPLACEMENT, f);
            else
                fwrite(s, 1, (size_t)n, f);
        }
        s += n;
    }
}

void hsr_csv_field(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    fputc('"', f);
    if (*s == '=' || *s == '+' || *s == '-' || *s == '@' || *s == '\t' || *s == '\r')
        fputc('\'', f);
    while (*s) {
        size_t run = plain(s, "\"");
        if (run) {
            fwrite(s, 1, run, f);
            s += run;
            continue;
        }
        uint32_t cp;
        int n = utf8_next(s, &cp);
        if (!n) {
            fputs(REPLACEMENT, f);
            s++;
            continue;
        }
        if (cp == '"')
            fputs("\"\"", f);
        else if (is_control(cp))
            fputc(' ', f);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n;
    }
    fputc('"', f);
}

/* Explicit direction marks and isolates: they reorder the text after them on screen. */
static int is_bidi_control(uint32_t cp) { return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069); }

int hsr_text_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    int written = 0;
    while (*s) {
        size_t run = plain(s, "");
        if (run) {
            fwrite(s, 1, run, f);
            written += (int)run;
            s += run;
            continue;
        }
        uint32_t cp;
        int n = utf8_next(s, &cp);
        if (n && !is_control(cp) && !is_bidi_control(cp)) {
            fwrite(s, 1, (size_t)n, f);
            written += n;
            s += n;
            continue;
        }
        for (int i = 0; i < (n ? n : 1); i++)
            written += fprintf(f, "\\x%02x", s[i]);
        s += n ? n : 1;
    }
    return written;
}

void hsr_uri_encode(const char *str, char *buf, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *s = (const unsigned char *)(str ? str : ""); *s && o + 4 <= len; s++) {
        unsigned char c = *s;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~' || c == '/') {
            buf[o++] = (char)c;
        } else {
            buf[o++] = '%';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        }
    }
    if (len)
        buf[o] = 0;
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
