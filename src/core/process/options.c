#define _GNU_SOURCE
#include "process/options.h"
#include "process/util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"warn", "block", "abort"};

const char *hs_mode_name(hs_mode m) { return (unsigned)m < 3 ? mode_names[m] : "?"; }

void hs_options_defaults(hs_options *o)
{
#define HS_OPTION(type, name, def, limits, help) o->name = (HS_OPT_CTYPE_##type)(def);
#include "process/options.inc"
#undef HS_OPTION
}

/* ---- options.inc as a table ---- */

typedef enum { T_BOOL, T_INT, T_SIZE, T_STRING, T_MODE } opt_type;

typedef struct {
    const char *name;
    opt_type type;
    const char *limits; /* "LO..HI", "a|b|c" or "" */
    size_t offset;      /* of the field in hs_options */
} opt_desc;

static const opt_desc table[] = {
#define HS_OPTION(type, name, def, limits, help) {#name, T_##type, limits, offsetof(hs_options, name)},
#include "process/options.inc"
#undef HS_OPTION
};
enum { N_OPTIONS = sizeof table / sizeof *table };

static const opt_desc *find(const char *key)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (!strcmp(key, table[i].name))
            return &table[i];
    return NULL;
}

const char *hs_option_limits(const char *name)
{
    const opt_desc *d = name ? find(name) : NULL;
    return d ? d->limits : NULL;
}

/* An enumerated option: MODE, or a STRING with values listed. */
static bool enumerated(const opt_desc *d) { return (d->type == T_MODE || d->type == T_STRING) && d->limits[0]; }

/* Is v one of the '|'-separated values of list? */
static bool in_list(const char *list, const char *v)
{
    size_t n = strlen(v);
    for (const char *s = list; *s;) {
        const char *bar = strchr(s, '|');
        size_t len = bar ? (size_t)(bar - s) : strlen(s);
        if (len == n && !strncmp(s, v, n))
            return true;
        if (!bar)
            break;
        s = bar + 1;
    }
    return false;
}

/* ---- one message line, built in a buffer and written at once ---- */

typedef struct {
    char buf[1024];
    size_t len;
} msg;

#define put(m, ...) hs_appendf((m)->buf, sizeof(m)->buf, &(m)->len, __VA_ARGS__)

/* Text from the user, len bytes of it: at most `show` characters, non-printable ones as \xNN,
 * "..." when cut.  Never a newline, so one problem stays one line. */
static void put_text(msg *m, const char *s, size_t len, size_t show)
{
    for (size_t i = 0; i < len && i < show; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            put(m, "%c", c);
        else
            put(m, "\\x%02x", c);
    }
    if (len > show)
        put(m, "...");
}

enum { SHOW_VALUE = 64, SHOW_LONG = 40 };

static void put_value(msg *m, const char *v)
{
    put(m, "'");
    put_text(m, v, strlen(v), SHOW_VALUE);
    put(m, "'");
}

/* The values of an enumerated option, "a, b, c". */
static void put_list(msg *m, const char *list)
{
    for (const char *s = list; *s; s++)
        put(m, *s == '|' ? ", " : "%c", *s);
}

static void put_size(msg *m, uint64_t v)
{
    static const char suffix[] = "gmk";
    for (int i = 0; i < 3; i++) {
        uint64_t unit = 1ull << (30 - 10 * i);
        if (v && v % unit == 0) {
            put(m, "%llu%c", (unsigned long long)(v / unit), suffix[i]);
            return;
        }
    }
    put(m, "%llu", (unsigned long long)v);
}

/* A field's value, as a message shows it. */
static void put_field(msg *m, opt_type t, const void *field)
{
    switch (t) {
    case T_BOOL: put(m, "%d", *(const bool *)field ? 1 : 0); break;
    case T_INT: put(m, "%ld", *(const long *)field); break;
    case T_SIZE: put_size(m, *(const uint64_t *)field); break;
    case T_MODE: put(m, "%s", hs_mode_name(*(const hs_mode *)field)); break;
    case T_STRING: {
        const char *s = *(char *const *)field;
        put(m, "\"");
        put_text(m, s, strlen(s), SHOW_VALUE);
        put(m, "\"");
        break;
    }
    }
}

static bool same_field(opt_type t, const void *a, const void *b)
{
    switch (t) {
    case T_BOOL: return *(const bool *)a == *(const bool *)b;
    case T_INT: return *(const long *)a == *(const long *)b;
    case T_SIZE: return *(const uint64_t *)a == *(const uint64_t *)b;
    case T_MODE: return *(const hs_mode *)a == *(const hs_mode *)b;
    case T_STRING: return !strcmp(*(char *const *)a, *(char *const *)b);
    }
    return false;
}

/* What the option takes, for a message or help=1. */
static void put_expected(msg *m, const opt_desc *d)
{
    switch (d->type) {
    case T_BOOL: put(m, "one of: 1, 0, true, false, yes, no"); break;
    case T_INT: put(m, "an integer in %s expected", d->limits); break;
    case T_SIZE: put(m, "a size in %s bytes expected, with an optional suffix k, m or g", d->limits); break;
    case T_MODE:
    case T_STRING:
        put(m, "one of: ");
        put_list(m, d->limits);
        break;
    }
}

/* ---- numbers: the whole text must be the number ---- */

typedef enum { NUM_OK, NUM_NOT_A_NUMBER, NUM_NEGATIVE, NUM_OVERFLOW, NUM_TRAILING, NUM_SUFFIX } num_status;

static num_status parse_int_text(const char *v, long long *out, const char **rest)
{
    const char *s = v + (*v == '+' || *v == '-');
    if (!isdigit((unsigned char)*s))
        return NUM_NOT_A_NUMBER;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    *rest = end;
    if (*end)
        return NUM_TRAILING;
    if (errno == ERANGE)
        return NUM_OVERFLOW;
    *out = x;
    return NUM_OK;
}

static num_status parse_size_text(const char *v, uint64_t *out, const char **rest)
{
    if (*v == '-')
        return NUM_NEGATIVE;
    if (!isdigit((unsigned char)*v))
        return NUM_NOT_A_NUMBER;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    bool overflow = errno == ERANGE;
    unsigned shift = 0;
    *rest = end;
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; break;
    case 'm': shift = 20; break;
    case 'g': shift = 30; break;
    case 0: break;
    default: return isalpha((unsigned char)end[0]) && !end[1] ? NUM_SUFFIX : NUM_TRAILING;
    }
    if (shift && end[1]) {
        *rest = end + 1;
        return NUM_TRAILING;
    }
    if (overflow || (shift && x > (UINT64_MAX >> shift)))
        return NUM_OVERFLOW;
    *out = (uint64_t)x << shift;
    return NUM_OK;
}

/* Splits "LO..HI" into its two texts; false when the option has no range. */
static bool split_range(const char *limits, char lo_text[64], const char **hi_text)
{
    const char *dots = strstr(limits, "..");
    if (!dots || (size_t)(dots - limits) >= 64)
        return false;
    memcpy(lo_text, limits, (size_t)(dots - limits));
    lo_text[dots - limits] = 0;
    *hi_text = dots + 2;
    return true;
}

/* The range of an INT or SIZE option; the widest range when there is none. */
static void int_range(const char *limits, long long *lo, long long *hi)
{
    char lo_text[64];
    const char *hi_text, *rest;
    if (!split_range(limits, lo_text, &hi_text) || parse_int_text(lo_text, lo, &rest) != NUM_OK ||
        parse_int_text(hi_text, hi, &rest) != NUM_OK) {
        *lo = LLONG_MIN;
        *hi = LLONG_MAX;
    }
}

static void size_range(const char *limits, uint64_t *lo, uint64_t *hi)
{
    char lo_text[64];
    const char *hi_text, *rest;
    if (!split_range(limits, lo_text, &hi_text) || parse_size_text(lo_text, lo, &rest) != NUM_OK ||
        parse_size_text(hi_text, hi, &rest) != NUM_OK) {
        *lo = 0;
        *hi = UINT64_MAX;
    }
}

/* Why a number was refused, into m: "bad value '...' (reason; what is expected)". */
static void put_bad_number(msg *m, const opt_desc *d, const char *v, num_status st, const char *rest)
{
    put(m, "bad value ");
    put_value(m, v);
    put(m, " (");
    switch (st) {
    case NUM_NOT_A_NUMBER: put(m, "not a number"); break;
    case NUM_NEGATIVE: put(m, "a size cannot be negative"); break;
    case NUM_OVERFLOW: put(m, "the number overflows 64 bits"); break;
    case NUM_SUFFIX: put(m, "unknown suffix '%c'", *rest); break;
    case NUM_TRAILING:
        put(m, "trailing ");
        put_value(m, rest);
        put(m, " after the number");
        break;
    case NUM_OK: break;
    }
    put(m, "; ");
    put_expected(m, d);
    put(m, ")");
}

/* Checks v against d; on success stores it in field (a STRING is copied) and returns true;
 * otherwise says why in m and leaves field as it was. */
static bool take_value(const opt_desc *d, void *field, const char *v, msg *m)
{
    if (!*v && !(d->type == T_STRING && !enumerated(d))) {
        put(m, "empty value (");
        put_expected(m, d);
        put(m, ")");
        return false;
    }
    const char *rest = v;
    num_status st;
    switch (d->type) {
    case T_BOOL:
        if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes")) {
            *(bool *)field = true;
            return true;
        }
        if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no")) {
            *(bool *)field = false;
            return true;
        }
        break;
    case T_INT: {
        long long x = 0, lo, hi;
        int_range(d->limits, &lo, &hi);
        if ((st = parse_int_text(v, &x, &rest)) != NUM_OK) {
            put_bad_number(m, d, v, st, rest);
            return false;
        }
        if (x < lo || x > hi || x < LONG_MIN || x > LONG_MAX) {
            put_text(m, v, strlen(v), SHOW_VALUE);
            put(m, " is out of range %s", d->limits);
            return false;
        }
        *(long *)field = (long)x;
        return true;
    }
    case T_SIZE: {
        uint64_t x = 0, lo, hi;
        size_range(d->limits, &lo, &hi);
        if ((st = parse_size_text(v, &x, &rest)) != NUM_OK) {
            put_bad_number(m, d, v, st, rest);
            return false;
        }
        if (x < lo || x > hi) {
            put_text(m, v, strlen(v), SHOW_VALUE);
            put(m, " is out of range %s (bytes; suffixes k, m, g)", d->limits);
            return false;
        }
        *(uint64_t *)field = x;
        return true;
    }
    case T_MODE:
        for (unsigned i = 0; i < 3; i++)
            if (in_list(d->limits, v) && !strcmp(v, mode_names[i])) {
                *(hs_mode *)field = (hs_mode)i;
                return true;
            }
        break;
    case T_STRING: {
        if (enumerated(d) && !in_list(d->limits, v))
            break;
        char *copy = strdup(v);
        if (!copy) {
            put(m, "cannot copy the value (out of memory)");
            return false;
        }
        *(char **)field =
            copy; /* options live for the whole process: the old value is not freed (it may be a literal) */
        return true;
    }
    }
    put(m, "bad value ");
    put_value(m, v);
    put(m, " (");
    put_expected(m, d);
    put(m, ")");
    return false;
}

/* Ends a refusal: "; keeping the default (X)", then writes the line. */
static void refuse(const hs_options *o, const opt_desc *d, msg *m, FILE *warn)
{
    hs_options defaults;
    hs_options_defaults(&defaults);
    const void *field = (const char *)o + d->offset, *def = (const char *)&defaults + d->offset;
    bool is_default = same_field(d->type, field, def);
    put(m, "; keeping %s (", is_default ? "the default" : "the value set before");
    put_field(m, d->type, field);
    put(m, ")");
    fprintf(warn, "%.*s\n", (int)m->len, m->buf);
}

static bool is_separator(char c) { return c == ':' || c == ',' || isspace((unsigned char)c); }

int hs_options_parse(hs_options *o, const char *text, FILE *warn)
{
    int problems = 0;
    const char *p = text ? text : "";
    char key[HS_OPTION_KEY_MAX + 1], value[HS_OPTION_VALUE_MAX + 1];
    if (!warn)
        warn = hs_stderr_stream();
    while (*p) {
        while (*p && is_separator(*p))
            p++;
        if (!*p)
            break;
        const char *k0 = p;
        while (*p && *p != '=' && !is_separator(*p))
            p++;
        size_t klen = (size_t)(p - k0);
        msg m = {.len = 0};
        if (*p != '=') {
            if (klen > HS_OPTION_KEY_MAX) {
                put(&m, "hipshadow: option key too long (%zu characters, at most %d): '", klen, HS_OPTION_KEY_MAX);
                put_text(&m, k0, klen, SHOW_LONG);
                put(&m, "'; ignored");
            } else {
                put(&m, "hipshadow: option '");
                put_text(&m, k0, klen, HS_OPTION_KEY_MAX);
                put(&m, "' has no value (expected ");
                put_text(&m, k0, klen, HS_OPTION_KEY_MAX);
                put(&m, "=VALUE)");
            }
            fprintf(warn, "%.*s\n", (int)m.len, m.buf);
            problems++;
            continue;
        }
        p++;
        char quote = (*p == '"' || *p == '\'') ? *p++ : 0;
        const char *v0 = p;
        while (*p && (quote ? *p != quote : !is_separator(*p)))
            p++;
        bool closed = !quote || *p == quote;
        if (quote && *p == quote)
            p++;
        if (!closed) { /* refused, and only up to the next separator: what follows (the launcher's
                        * own flags, after an inherited text) is parsed as it would be */
            for (p = v0; *p && !is_separator(*p); p++)
                ;
        }
        size_t vlen = (size_t)(p - v0) - (quote && closed);

        problems++; /* undone below when the value is taken */
        if (klen == 0) {
            put(&m, "hipshadow: a value with no option name before its '=' ('");
            put_text(&m, v0, vlen, SHOW_LONG);
            put(&m, "'); ignored");
            fprintf(warn, "%.*s\n", (int)m.len, m.buf);
            continue;
        }
        if (klen > HS_OPTION_KEY_MAX) {
            put(&m, "hipshadow: option key too long (%zu characters, at most %d): '", klen, HS_OPTION_KEY_MAX);
            put_text(&m, k0, klen, SHOW_LONG);
            put(&m, "'; ignored with its value");
            fprintf(warn, "%.*s\n", (int)m.len, m.buf);
            continue;
        }
        memcpy(key, k0, klen);
        key[klen] = 0;
        const opt_desc *d = find(key);
        if (!d) {
            put(&m, "hipshadow: unknown option '");
            put_text(&m, key, klen, HS_OPTION_KEY_MAX);
            put(&m, "' (ignored; help=1 lists the options)");
            fprintf(warn, "%.*s\n", (int)m.len, m.buf);
            continue;
        }
        put(&m, "hipshadow: option '%s': ", d->name);
        if (!closed) { /* the cause, before any "too long" it led to */
            put(&m, "value '");
            put_text(&m, v0, vlen, SHOW_LONG);
            put(&m, "' has no closing quote (%c)", quote);
            refuse(o, d, &m, warn);
            continue;
        }
        if (vlen > HS_OPTION_VALUE_MAX) {
            put(&m, "value too long (%zu characters, at most %d): '", vlen, HS_OPTION_VALUE_MAX);
            put_text(&m, v0, vlen, SHOW_LONG);
            put(&m, "'");
            refuse(o, d, &m, warn);
            continue;
        }
        memcpy(value, v0, vlen);
        value[vlen] = 0;
        if (!take_value(d, (char *)o + d->offset, value, &m)) {
            refuse(o, d, &m, warn);
            continue;
        }
        problems--;
    }
    return problems;
}

static void print_value_BOOL(FILE *f, bool v) { fprintf(f, "%d", v ? 1 : 0); }
static void print_value_INT(FILE *f, long v) { fprintf(f, "%ld", v); }
static void print_value_SIZE(FILE *f, uint64_t v) { fprintf(f, "%llu", (unsigned long long)v); }
static void print_value_STRING(FILE *f, const char *v) { fprintf(f, "\"%s\"", v); }
static void print_value_MODE(FILE *f, hs_mode v) { fprintf(f, "%s", hs_mode_name(v)); }

/* help=1: the limits next to the default. */
static void print_limits(FILE *out, const char *name)
{
    const opt_desc *d = find(name);
    msg m = {.len = 0};
    switch (d->type) {
    case T_BOOL: put(&m, "(1 or 0; also true/false, yes/no)"); break;
    case T_INT: put(&m, "(range %s)", d->limits); break;
    case T_SIZE: put(&m, "(range %s bytes; suffixes k, m, g)", d->limits); break;
    case T_MODE:
    case T_STRING:
        if (enumerated(d)) {
            put(&m, "(one of: ");
            put_list(&m, d->limits);
            put(&m, ")");
        }
        break;
    }
    if (m.len)
        fprintf(out, "  %.*s", (int)m.len, m.buf);
}

void hs_options_print_help(const hs_options *d, FILE *out)
{
    fprintf(out, "hipshadow options (HIPSHADOW_OPTIONS=key=value:key=value):\n");
#define HS_OPTION(type, name, def, limits, help)                                                                       \
    fprintf(out, "  %-14s default ", #name);                                                                           \
    print_value_##type(out, d->name);                                                                                  \
    print_limits(out, #name);                                                                                          \
    fprintf(out, "\n      %s\n", help);
#include "process/options.inc"
#undef HS_OPTION
}

void hs_options_print(const hs_options *o, FILE *out)
{
    fprintf(out, "hipshadow: options in force:");
#define HS_OPTION(type, name, def, limits, help)                                                                       \
    fprintf(out, " %s=", #name);                                                                                       \
    print_value_##type(out, o->name);
#include "process/options.inc"
#undef HS_OPTION
    fprintf(out, "\n");
}

void hs_options_format(const hs_options *o, char *buf, size_t len)
{
    FILE *f = fmemopen(buf, len, "w");
    if (!f) {
        if (len)
            buf[0] = 0;
        return;
    }
    const char *sep = "";
#define HS_OPTION(type, name, def, limits, help)                                                                       \
    fprintf(f, "%s%s=", sep, #name);                                                                                   \
    print_value_##type(f, o->name);                                                                                    \
    sep = ":";
#include "process/options.inc"
#undef HS_OPTION
    fclose(f);
    buf[len - 1] = 0;
}
