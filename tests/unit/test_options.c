/* The options grammar: values, suffixes, quotes, bad values keep defaults and are named,
 * unknown keys are warned about, help lists every option.  Every numeric option is checked at
 * its bounds and one past each, every enumerated one lists its values, long keys and values are
 * refused (not cut), and a fuzz loop of random text never crashes the parser, never leaves an
 * option outside its limits, and never counts a problem it did not write a line for. */
#define _GNU_SOURCE
#include "process/options.h"
#include "process/stacks.h"
#include "unit.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int parse(hs_options *o, const char *text, char **messages)
{
    size_t len;
    FILE *f = open_memstream(messages, &len);
    hs_options_defaults(o);
    int problems = hs_options_parse(o, text, f);
    fclose(f);
    return problems;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* text parses with one problem, whose one line contains every needle. */
#define REFUSED(o, text, ...)                                                                                          \
    do {                                                                                                               \
        char *m_ = NULL;                                                                                               \
        int p_ = parse(o, text, &m_);                                                                                  \
        CHECK_EQ(p_, 1);                                                                                               \
        CHECK_EQ(lines(m_), 1);                                                                                        \
        const char *needles_[] = {__VA_ARGS__};                                                                        \
        for (size_t i_ = 0; i_ < sizeof needles_ / sizeof *needles_; i_++)                                             \
            if (!strstr(m_, needles_[i_])) {                                                                           \
                fprintf(stderr, "%s:%d: for '%.60s' expected '%s' in: %s", __FILE__, __LINE__, text, needles_[i_],     \
                        m_);                                                                                           \
                unit_failures++;                                                                                       \
            }                                                                                                          \
        free(m_);                                                                                                      \
    } while (0)

#define TAKEN(o, text)                                                                                                 \
    do {                                                                                                               \
        char *m_ = NULL;                                                                                               \
        int p_ = parse(o, text, &m_);                                                                                  \
        if (p_ != 0) {                                                                                                 \
            fprintf(stderr, "%s:%d: '%s' refused: %s", __FILE__, __LINE__, text, m_);                                  \
            unit_failures++;                                                                                           \
        }                                                                                                              \
        free(m_);                                                                                                      \
    } while (0)

static void grammar(void)
{
    hs_options o;
    char *msg = NULL;
    CHECK_EQ(parse(&o, "mode=block:exitcode=3:quarantine=1m,stack_depth=8 findings='/tmp/a:b.json'", &msg), 0);
    CHECK_EQ(o.mode, HS_MODE_BLOCK);
    CHECK_EQ(o.exitcode, 3);
    CHECK_EQ(o.quarantine, 1u << 20);
    CHECK_EQ(o.stack_depth, 8);
    CHECK(!strcmp(o.findings, "/tmp/a:b.json"));
    free(msg);

    CHECK_EQ(parse(&o, "mode=loud:exitcode=x:bogus=1:quarantine=5q", &msg), 4);
    CHECK_EQ(o.mode, HS_MODE_WARN); /* defaults kept */
    CHECK_EQ(o.exitcode, 0);
    CHECK(strstr(msg, "option 'mode': bad value 'loud'") != NULL);
    CHECK(strstr(msg, "option 'exitcode': bad value 'x'") != NULL);
    CHECK(strstr(msg, "unknown option 'bogus'") != NULL);
    CHECK(strstr(msg, "option 'quarantine': bad value '5q'") != NULL);
    CHECK_EQ(lines(msg), 4);
    free(msg);

    CHECK_EQ(parse(&o, "mode", &msg), 1);
    CHECK(strstr(msg, "'mode' has no value") != NULL);
    free(msg);

    /* a bad value after a good one keeps the good one, and says so */
    CHECK_EQ(parse(&o, "mode=block:mode=blok", &msg), 1);
    CHECK_EQ(o.mode, HS_MODE_BLOCK);
    CHECK(strstr(msg, "keeping the value set before (block)") != NULL);
    free(msg);
}

/* Every INT and SIZE option at both bounds and one past each. */
static void numeric_bounds(void)
{
    hs_options o, d;
    hs_options_defaults(&d);

    TAKEN(&o, "exitcode=0");
    CHECK_EQ(o.exitcode, 0);
    TAKEN(&o, "exitcode=255");
    CHECK_EQ(o.exitcode, 255);
    REFUSED(&o, "exitcode=-1", "hipshadow: option 'exitcode': -1 is out of range 0..255; keeping the default (0)");
    CHECK_EQ(o.exitcode, 0);
    REFUSED(&o, "exitcode=256", "hipshadow: option 'exitcode': 256 is out of range 0..255; keeping the default (0)");
    REFUSED(&o, "exitcode=300", "hipshadow: option 'exitcode': 300 is out of range 0..255; keeping the default (0)");
    CHECK_EQ(o.exitcode, 0);

    char text[64];
    TAKEN(&o, "stack_depth=0");
    CHECK_EQ(o.stack_depth, 0);
    snprintf(text, sizeof text, "stack_depth=%d", (int)HS_STACK_MAX_FRAMES);
    TAKEN(&o, text);
    CHECK_EQ(o.stack_depth, HS_STACK_MAX_FRAMES);
    snprintf(text, sizeof text, "0..%d", (int)HS_STACK_MAX_FRAMES); /* options.inc agrees with stacks.h */
    CHECK(!strcmp(hs_option_limits("stack_depth"), text));
    REFUSED(&o, "stack_depth=-1", "option 'stack_depth': -1 is out of range 0..64; keeping the default (24)");
    CHECK_EQ(o.stack_depth, 24);
    REFUSED(&o, "stack_depth=65", "option 'stack_depth': 65 is out of range 0..64; keeping the default (24)");
    REFUSED(&o, "stack_depth=4294967297",
            "option 'stack_depth': 4294967297 is out of range 0..64; keeping the default (24)");
    CHECK_EQ(o.stack_depth, 24);

    TAKEN(&o, "print_limit=0");
    CHECK_EQ(o.print_limit, 0);
    TAKEN(&o, "print_limit=2147483647");
    CHECK_EQ(o.print_limit, 2147483647);
    REFUSED(&o, "print_limit=-1", "option 'print_limit': -1 is out of range 0..2147483647; keeping the default (100)");
    REFUSED(&o, "print_limit=2147483648",
            "option 'print_limit': 2147483648 is out of range 0..2147483647; keeping the default (100)");
    CHECK_EQ(o.print_limit, 100);

    TAKEN(&o, "verbosity=0");
    TAKEN(&o, "verbosity=2");
    CHECK_EQ(o.verbosity, 2);
    REFUSED(&o, "verbosity=-1", "option 'verbosity': -1 is out of range 0..2; keeping the default (0)");
    REFUSED(&o, "verbosity=3", "option 'verbosity': 3 is out of range 0..2; keeping the default (0)");
    CHECK_EQ(o.verbosity, 0);

    /* log_size: two 64 KiB chunks at least (log.c's ring), 64 GiB at most */
    TAKEN(&o, "log_size=131072");
    CHECK_EQ(o.log_size, 131072);
    TAKEN(&o, "log_size=128k");
    CHECK_EQ(o.log_size, 131072);
    TAKEN(&o, "log_size=64g");
    CHECK_EQ(o.log_size, 64ull << 30);
    REFUSED(&o, "log_size=131071",
            "option 'log_size': 131071 is out of range 128k..64g (bytes; suffixes k, m, g); keeping the default (16m)");
    CHECK_EQ(o.log_size, d.log_size);
    REFUSED(&o, "log_size=68719476737", "option 'log_size': 68719476737 is out of range 128k..64g",
            "keeping the default (16m)");
    CHECK_EQ(o.log_size, d.log_size);

    TAKEN(&o, "quarantine=0");
    CHECK_EQ(o.quarantine, 0);
    TAKEN(&o, "quarantine=4096g");
    CHECK_EQ(o.quarantine, 4096ull << 30);
    REFUSED(&o, "quarantine=4398046511105",
            "option 'quarantine': 4398046511105 is out of range 0..4096g (bytes; suffixes k, m, g); keeping the "
            "default (16g)");
    REFUSED(&o, "quarantine=-1",
            "option 'quarantine': bad value '-1' (a size cannot be negative; a size in 0..4096g bytes expected, with "
            "an optional suffix k, m or g); keeping the default (16g)");
    CHECK_EQ(o.quarantine, d.quarantine);

    /* fallback_staging: 1 MiB at least (no longer clamped up silently in fallback.c) */
    TAKEN(&o, "fallback_staging=1m");
    CHECK_EQ(o.fallback_staging, 1u << 20);
    TAKEN(&o, "fallback_staging=16g");
    CHECK_EQ(o.fallback_staging, 16ull << 30);
    REFUSED(&o, "fallback_staging=1048575",
            "option 'fallback_staging': 1048575 is out of range 1m..16g (bytes; suffixes k, m, g); keeping the default "
            "(256m)");
    REFUSED(&o, "fallback_staging=17179869185", "option 'fallback_staging': 17179869185 is out of range 1m..16g");
    REFUSED(&o, "fallback_staging=1023k", "option 'fallback_staging': 1023k is out of range 1m..16g");
    CHECK_EQ(o.fallback_staging, d.fallback_staging);
}

static void bad_numbers(void)
{
    hs_options o;
    REFUSED(&o, "exitcode=99999999999999999999",
            "option 'exitcode': bad value '99999999999999999999' (the number overflows 64 bits; an integer in 0..255 "
            "expected); keeping the default (0)");
    REFUSED(&o, "stack_depth=-99999999999999999999",
            "option 'stack_depth': bad value '-99999999999999999999' (the number overflows 64 bits");
    CHECK_EQ(o.stack_depth, 24);
    REFUSED(&o, "quarantine=99999999999999999999",
            "option 'quarantine': bad value '99999999999999999999' (the number overflows 64 bits");
    REFUSED(&o, "quarantine=99999999999g", "bad value '99999999999g' (the number overflows 64 bits");
    REFUSED(&o, "log_size=-5", "option 'log_size': bad value '-5' (a size cannot be negative", "suffix k, m or g",
            "keeping the default (16m)");
    REFUSED(&o, "exitcode=10x",
            "option 'exitcode': bad value '10x' (trailing 'x' after the number; an integer in 0..255 expected); "
            "keeping the default (0)");
    CHECK_EQ(o.exitcode, 0);
    REFUSED(&o, "stack_depth=8.5", "option 'stack_depth': bad value '8.5' (trailing '.5' after the number");
    REFUSED(&o, "quarantine=10x",
            "option 'quarantine': bad value '10x' (unknown suffix 'x'; a size in 0..4096g bytes expected, with an "
            "optional suffix k, m or g)");
    REFUSED(&o, "quarantine=10kb", "option 'quarantine': bad value '10kb' (trailing 'b' after the number");
    REFUSED(&o, "quarantine=1 0",
            "hipshadow: option '0' has no value"); /* space separates: "quarantine=1" then a bare "0" */
    REFUSED(&o, "exitcode=' 5'", "option 'exitcode': bad value ' 5' (not a number");
    REFUSED(&o, "exitcode=x", "option 'exitcode': bad value 'x' (not a number; an integer in 0..255 expected)");
    REFUSED(&o, "exitcode=", "option 'exitcode': empty value (an integer in 0..255 expected); keeping the default (0)");
    REFUSED(&o, "quarantine=''",
            "option 'quarantine': empty value (a size in 0..4096g bytes expected, with an optional suffix k, m or g)");
    TAKEN(&o, "exitcode=+7");
    CHECK_EQ(o.exitcode, 7);
    TAKEN(&o, "quarantine=2G");
    CHECK_EQ(o.quarantine, 2ull << 30);
}

static void enums_and_bools(void)
{
    hs_options o;
    REFUSED(&o, "mode=blok",
            "hipshadow: option 'mode': bad value 'blok' (one of: warn, block, abort); keeping the default (warn)");
    CHECK_EQ(o.mode, HS_MODE_WARN);
    REFUSED(&o, "mode=", "option 'mode': empty value (one of: warn, block, abort); keeping the default (warn)");
    REFUSED(&o, "mode=WARN", "bad value 'WARN' (one of: warn, block, abort)");
    TAKEN(&o, "mode=abort");
    CHECK_EQ(o.mode, HS_MODE_ABORT);

    REFUSED(&o, "log_mode=fulll",
            "option 'log_mode': bad value 'fulll' (one of: ring, full); keeping the default (\"ring\")");
    CHECK(!strcmp(o.log_mode, "ring"));
    REFUSED(&o, "log_mode=", "option 'log_mode': empty value (one of: ring, full)");
    TAKEN(&o, "log_mode=full");
    CHECK(!strcmp(o.log_mode, "full"));

    REFUSED(&o, "fallback=on",
            "option 'fallback': bad value 'on' (one of: off, stage, transpose); keeping the default (\"off\")");
    CHECK(!strcmp(o.fallback, "off"));
    TAKEN(&o, "fallback=transpose");
    CHECK(!strcmp(o.fallback, "transpose"));

    REFUSED(&o, "notes=maybe",
            "option 'notes': bad value 'maybe' (one of: 1, 0, true, false, yes, no); keeping the default (0)");
    REFUSED(&o, "check_host=",
            "option 'check_host': empty value (one of: 1, 0, true, false, yes, no); keeping the default (1)");
    CHECK_EQ(o.check_host, 1);
    TAKEN(&o, "notes=yes:check_host=false");
    CHECK_EQ(o.notes, 1);
    CHECK_EQ(o.check_host, 0);

    /* free strings may be empty */
    TAKEN(&o, "findings=:report_path=stdout");
    CHECK(!strcmp(o.findings, ""));
}

static void long_keys_and_values(void)
{
    hs_options o;
    char *text = malloc(6000);

    /* a 4095-character value is taken whole */
    strcpy(text, "findings=");
    memset(text + 9, 'a', 4095);
    text[9 + 4095] = 0;
    TAKEN(&o, text);
    CHECK_EQ(strlen(o.findings), 4095);
    free(o.findings);

    /* 4096 characters: refused, not cut */
    memset(text + 9, 'a', 4096);
    text[9 + 4096] = 0;
    REFUSED(&o, text,
            "hipshadow: option 'findings': value too long (4096 characters, at most 4095): "
            "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'; keeping the default (\"\")");
    CHECK(!strcmp(o.findings, ""));

    /* quoted, so separators inside count too */
    strcpy(text, "log='");
    memset(text + 5, ':', 5000);
    strcpy(text + 5005, "'");
    REFUSED(&o, text, "option 'log': value too long (5000 characters, at most 4095)");
    CHECK(!strcmp(o.log, ""));

    /* a 100-character key: too long, its first 40 characters shown */
    memset(text, 'k', 100);
    strcpy(text + 100, "=1:mode=block");
    char *msg = NULL;
    CHECK_EQ(parse(&o, text, &msg), 1);
    CHECK(strstr(msg, "hipshadow: option key too long (100 characters, at most 63): "
                      "'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...'; ignored") != NULL);
    CHECK(strstr(msg, "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk") == NULL); /* 41 k: not shown */
    CHECK_EQ(o.mode, HS_MODE_BLOCK);                                         /* the rest still parsed */
    free(msg);
    text[100] = 0; /* with no value */
    REFUSED(&o, text, "option key too long (100 characters, at most 63)");

    /* a 63-character key is merely unknown */
    memset(text, 'k', 63);
    strcpy(text + 63, "=1");
    REFUSED(&o, text, "unknown option 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk'");

    /* other malformed text */
    REFUSED(&o, "=5", "a value with no option name before its '=' ('5'); ignored");
    REFUSED(&o, "findings='/tmp/x", "option 'findings': value '/tmp/x' has no closing quote (')");
    /* an unclosed quote is refused up to the next separator, and eats nothing after it (an
     * inherited HIPSHADOW_OPTIONS ending in one swallowed the launcher's flags) */
    REFUSED(&o, "findings='/tmp/x:log=y:exitcode=9",
            "option 'findings': value '/tmp/x' has no closing quote ('); keeping the default (\"\")");
    CHECK(!strcmp(o.findings, ""));
    CHECK(!strcmp(o.log, "y"));
    CHECK_EQ(o.exitcode, 9);
    free(o.log);
    msg = NULL;
    CHECK_EQ(parse(&o, "log=\"a b:mode=block", &msg), 2); /* then 'b' with no value, then mode=block */
    CHECK(strstr(msg, "option 'log': value 'a' has no closing quote (\")") != NULL);
    CHECK(strstr(msg, "option 'b' has no value") != NULL);
    CHECK_EQ(o.mode, HS_MODE_BLOCK);
    free(msg);
    REFUSED(&o, "mode=\"\x01\x7f\"", "bad value '\\x01\\x7f'"); /* control characters escaped: one line */
    free(text);
}

static void help_lists_limits(void)
{
    hs_options o;
    char *msg = NULL;
    size_t len;
    FILE *f = open_memstream(&msg, &len);
    hs_options_defaults(&o);
    hs_options_print_help(&o, f);
    fclose(f);
    const char *every[] = {
        "mode",         "findings", "report_path",  "exitcode",   "stack_depth",     "quarantine",      "print_limit",
        "suppressions", "notes",    "detect_leaks", "check_host", "query_runtime",   "verbosity",       "help",
        "log",          "log_size", "log_mode",     "fallback",   "fallback_always", "fallback_staging"};
    for (size_t i = 0; i < sizeof every / sizeof *every; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "  %s ", every[i]);
        CHECK(strstr(msg, needle) != NULL);
    }
    CHECK(strstr(msg, "  exitcode       default 0  (range 0..255)\n") != NULL);
    CHECK(strstr(msg, "  mode           default warn  (one of: warn, block, abort)\n") != NULL);
    CHECK(strstr(msg, "  log_size       default 16777216  (range 128k..64g bytes; suffixes k, m, g)\n") != NULL);
    CHECK(strstr(msg, "  fallback       default \"off\"  (one of: off, stage, transpose)\n") != NULL);
    CHECK(strstr(msg, "  notes          default 0  (1 or 0; also true/false, yes/no)\n") != NULL);
    CHECK(strstr(msg, "  findings       default \"\"\n") != NULL);
    free(msg);
}

/* ---- the limits column itself, and the fuzz loop ---- */

#define T_BOOL 0
#define T_INT 1
#define T_SIZE 2
#define T_STRING 3
#define T_MODE 4
static const struct {
    const char *name;
    int type;
    const char *limits;
} opts[] = {
#define HS_OPTION(type, name, def, limits, help) {#name, T_##type, limits},
#include "process/options.inc"
#undef HS_OPTION
};
enum { N_OPTS = sizeof opts / sizeof *opts };

static uint64_t size_of(const char *s)
{
    char *end;
    uint64_t x = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': return x << 10;
    case 'm': return x << 20;
    case 'g': return x << 30;
    }
    return x;
}

/* Is every option of o inside its limits? */
static bool limit_INT(long v, const char *lim)
{
    const char *dots = strstr(lim, "..");
    return dots && v >= strtol(lim, NULL, 10) && v <= strtol(dots + 2, NULL, 10);
}

static bool limit_SIZE(uint64_t v, const char *lim)
{
    const char *dots = strstr(lim, "..");
    return dots && v >= size_of(lim) && v <= size_of(dots + 2);
}

static bool limit_STRING(const char *v, const char *lim)
{
    if (!lim[0])
        return true;
    char padded[4200], needle[4200];
    snprintf(padded, sizeof padded, "|%s|", lim);
    snprintf(needle, sizeof needle, "|%s|", v);
    return v[0] && strstr(padded, needle) != NULL;
}

static bool limit_BOOL(bool v, const char *lim)
{
    (void)v;
    return !lim[0];
}
static bool limit_MODE(hs_mode v, const char *lim)
{
    (void)lim;
    return (unsigned)v <= HS_MODE_ABORT;
}

/* Every option's value inside the limits its table row gives (read from options.inc itself). */
static bool within_limits(const hs_options *o)
{
    bool ok = true;
    for (int i = 0; i < N_OPTS; i++) {
        const char *name = opts[i].name, *lim = opts[i].limits;
#define HS_OPTION(type, field, def, limits, help)                                                                      \
    if (!strcmp(name, #field))                                                                                         \
        ok &= limit_##type(o->field, limits);
#include "process/options.inc"
#undef HS_OPTION
        if (!ok) {
            fprintf(stderr, "option %s outside its limits %s\n", name, lim);
            return false;
        }
    }
    return ok && (unsigned)o->mode <= HS_MODE_ABORT;
}

static void limits_column(void)
{
    hs_options d;
    hs_options_defaults(&d);
    CHECK(within_limits(&d)); /* every default inside its own limits */
    for (int i = 0; i < N_OPTS; i++) {
        const char *lim = opts[i].limits;
        CHECK(hs_option_limits(opts[i].name) && !strcmp(hs_option_limits(opts[i].name), lim));
        if (opts[i].type == T_INT || opts[i].type == T_SIZE)
            CHECK(strstr(lim, "..") != NULL);
        if (opts[i].type == T_BOOL || opts[i].type == T_MODE)
            CHECK(opts[i].type == T_MODE ? !strcmp(lim, "warn|block|abort") : !lim[0]);
    }
    CHECK(hs_option_limits("nope") == NULL);
    CHECK(!strcmp(hs_option_limits("log_mode"), "ring|full"));
    CHECK(!strcmp(hs_option_limits("fallback"), "off|stage|transpose"));
}

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
static uint32_t below(uint32_t n) { return rnd() % n; }

typedef struct {
    char *buf;
    size_t len, cap;
} text_buf;

static void add(text_buf *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->buf = realloc(t->buf, t->cap);
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = 0;
}
static void adds(text_buf *t, const char *s) { add(t, s, strlen(s)); }

static void add_garbage(text_buf *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = (char)(1 + below(255)); /* any byte but NUL */
        add(t, &c, 1);
    }
}

static void add_value(text_buf *t, int opt)
{
    static const char *const numbers[] = {"0",
                                          "1",
                                          "-1",
                                          "255",
                                          "256",
                                          "64",
                                          "65",
                                          "2147483647",
                                          "2147483648",
                                          "4294967297",
                                          "99999999999999999999",
                                          "-99999999999999999999",
                                          "18446744073709551615",
                                          "18446744073709551616",
                                          "9223372036854775807",
                                          "-9223372036854775808",
                                          "10x",
                                          "1k",
                                          "128k",
                                          "127k",
                                          "1m",
                                          "16g",
                                          "17g",
                                          "4096g",
                                          "4097g",
                                          "99999999999g",
                                          "1t",
                                          "-5m",
                                          "+3",
                                          "--3",
                                          "0x10",
                                          "1e9",
                                          "",
                                          " 3",
                                          "3 ",
                                          "8.5"};
    static const char *const words[] = {"warn", "block", "abort", "ring", "full", "off",  "stage",  "transpose",
                                        "true", "false", "yes",   "no",   "WARN", "blok", "stderr", "/tmp/x.%p"};
    switch (below(7)) {
    case 0:
    case 1: adds(t, numbers[below(sizeof numbers / sizeof *numbers)]); break;
    case 2: adds(t, words[below(sizeof words / sizeof *words)]); break;
    case 3:
        if (opt >= 0 && opts[opt].limits[0])
            adds(t, opts[opt].limits);
        else
            add_garbage(t, below(8));
        break;
    case 4: { /* a long one: up to 10 KB, maybe past the 4095 limit */
        size_t n = below(4) == 0 ? 4090 + below(12) : below(10240);
        for (size_t i = 0; i < n; i++) {
            char c = (char)('a' + below(26));
            add(t, &c, 1);
        }
        break;
    }
    default: add_garbage(t, below(20)); break;
    }
}

static void fuzz(void)
{
    static const char *const seps[] = {":", ",", " ", "\t", "\n", "'", "\"", "=", "::", ", ", ""};
    uint64_t seed = 0x5eed0014c0ffeeull;
    const char *env = getenv("HS_FUZZ_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 0);
    fprintf(stderr, "fuzz seed: 0x%" PRIx64 " (HS_FUZZ_SEED=0x%" PRIx64 " repeats it)\n", seed, seed);
    rng_state = seed ? seed : 1;
    text_buf t = {0};
    long total_problems = 0;
    for (int iter = 0; iter < 2000; iter++) {
        t.len = 0;
        adds(&t, "");
        int tokens = (int)below(9);
        for (int k = 0; k < tokens; k++) {
            int opt = -1;
            switch (below(6)) {
            case 0: add_garbage(&t, below(6)); break;
            case 1: { /* a long key, past the 63-character buffer or near it */
                size_t n = 60 + below(60);
                for (size_t i = 0; i < n; i++)
                    add(&t, "k", 1);
                break;
            }
            default:
                opt = (int)below(N_OPTS);
                adds(&t, opts[opt].name);
                break;
            }
            if (below(8))
                adds(&t, "=");
            const char *quote = below(4) == 0 ? (below(2) ? "'" : "\"") : "";
            adds(&t, quote);
            add_value(&t, opt);
            if (below(4))
                adds(&t, quote); /* sometimes left open */
            adds(&t, seps[below(sizeof seps / sizeof *seps)]);
        }
        hs_options o;
        char *msg = NULL;
        int problems = parse(&o, t.buf, &msg);
        total_problems += problems;
        if (problems < 0 || lines(msg) < problems || !within_limits(&o)) {
            fprintf(stderr, "fuzz case %d (seed 0x%" PRIx64 "): %d problems, %d lines\n", iter, seed, problems,
                    lines(msg));
            unit_failures++;
        }
        free(msg);
        hs_options d;
        hs_options_defaults(&d);
        /* free what the parse copied (earlier copies of a key given twice are left: the parser never frees) */
        if (o.findings != d.findings)
            free(o.findings);
        if (o.log != d.log)
            free(o.log);
        if (o.log_mode != d.log_mode)
            free(o.log_mode);
        if (o.report_path != d.report_path)
            free(o.report_path);
        if (o.suppressions != d.suppressions)
            free(o.suppressions);
        if (o.fallback != d.fallback)
            free(o.fallback);
    }
    fprintf(stderr, "fuzz: 2000 strings, %ld problems named\n", total_problems);
    free(t.buf);
}

int main(void)
{
    grammar();
    numeric_bounds();
    bad_numbers();
    enums_and_bools();
    long_keys_and_values();
    help_lists_limits();
    limits_column();
    fuzz();
    return UNIT_DONE();
}
