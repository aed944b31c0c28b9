#define _GNU_SOURCE
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"warn", "block", "abort"};

const char *hs_mode_name(hs_mode m) { return (unsigned)m < 3 ? mode_names[m] : "?"; }

void hs_options_defaults(hs_options *o)
{
#define HS_OPTION(type, name, def, help) o->name = (HS_OPT_CTYPE_##type)(def);
#include "options.inc"
#undef HS_OPTION
}

/* Value parsers: true on success. */
static bool parse_BOOL(const char *v, bool *out)
{
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes")) { *out = true; return true; }
    if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no")) { *out = false; return true; }
    return false;
}

static bool parse_INT(const char *v, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end)
        return false;
    *out = x;
    return true;
}

static bool parse_SIZE(const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*v == '-')
        return false;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || end == v)
        return false;
    unsigned shift = 0;
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    case 0: break;
    default: return false;
    }
    if (*end || (shift && x > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)x << shift;
    return true;
}

static bool parse_STRING(const char *v, char **out)
{
    char *copy = strdup(v);
    if (!copy)
        return false;
    *out = copy; /* options live for the whole process: the old value is not freed (it may be a literal) */
    return true;
}

static bool parse_MODE(const char *v, hs_mode *out)
{
    for (unsigned i = 0; i < 3; i++)
        if (!strcmp(v, mode_names[i])) { *out = (hs_mode)i; return true; }
    return false;
}

static int set_option(hs_options *o, const char *key, const char *value, FILE *warn)
{
#define HS_OPTION(type, name, def, help)                                                         \
    if (!strcmp(key, #name)) {                                                                   \
        if (!parse_##type(value, &o->name)) {                                                    \
            fprintf(warn, "hipshadow: option '%s': bad value '%s' (%s expected); keeping the default\n", \
                    key, value, #type);                                                          \
            return 1;                                                                            \
        }                                                                                        \
        return 0;                                                                                \
    }
#include "options.inc"
#undef HS_OPTION
    fprintf(warn, "hipshadow: unknown option '%s' (ignored; help=1 lists the options)\n", key);
    return 1;
}

static bool is_separator(char c) { return c == ':' || c == ',' || isspace((unsigned char)c); }

int hs_options_parse(hs_options *o, const char *text, FILE *warn)
{
    int problems = 0;
    const char *p = text ? text : "";
    char key[64], value[4096];
    while (*p) {
        while (*p && is_separator(*p))
            p++;
        if (!*p)
            break;
        size_t k = 0;
        while (*p && *p != '=' && !is_separator(*p)) {
            if (k + 1 < sizeof key)
                key[k++] = *p;
            p++;
        }
        key[k] = 0;
        if (*p != '=') {
            fprintf(warn, "hipshadow: option '%s' has no value (expected %s=VALUE)\n", key, key);
            problems++;
            continue;
        }
        p++;
        size_t v = 0;
        char quote = (*p == '"' || *p == '\'') ? *p++ : 0;
        while (*p && (quote ? *p != quote : !is_separator(*p))) {
            if (v + 1 < sizeof value)
                value[v++] = *p;
            p++;
        }
        if (quote && *p == quote)
            p++;
        value[v] = 0;
        problems += set_option(o, key, value, warn);
    }
    return problems;
}

static void print_value_BOOL(FILE *f, bool v) { fprintf(f, "%d", v ? 1 : 0); }
static void print_value_INT(FILE *f, long v) { fprintf(f, "%ld", v); }
static void print_value_SIZE(FILE *f, uint64_t v) { fprintf(f, "%llu", (unsigned long long)v); }
static void print_value_STRING(FILE *f, const char *v) { fprintf(f, "\"%s\"", v); }
static void print_value_MODE(FILE *f, hs_mode v) { fprintf(f, "%s", hs_mode_name(v)); }

void hs_options_print_help(const hs_options *d, FILE *out)
{
    fprintf(out, "hipshadow options (HIPSHADOW_OPTIONS=key=value:key=value):\n");
#define HS_OPTION(type, name, def, help)                  \
    fprintf(out, "  %-14s default ", #name);              \
    print_value_##type(out, d->name);                     \
    fprintf(out, "\n      %s\n", help);
#include "options.inc"
#undef HS_OPTION
}

void hs_options_print(const hs_options *o, FILE *out)
{
    fprintf(out, "hipshadow: options in force:");
#define HS_OPTION(type, name, def, help) \
    fprintf(out, " %s=", #name);         \
    print_value_##type(out, o->name);
#include "options.inc"
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
#define HS_OPTION(type, name, def, help) \
    fprintf(f, "%s%s=", sep, #name);      \
    print_value_##type(f, o->name);       \
    sep = ":";
#include "options.inc"
#undef HS_OPTION
    fclose(f);
    buf[len - 1] = 0;
}
