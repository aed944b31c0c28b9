/* The launcher: runs a program with the hipshadow preload library and the given options.
 *
 *   hipshadow [--mode M] [--findings F] [--exitcode N] [--report-path P] [--option k=v]... [--] program args
 *   hipshadow report [--format F] [--output FILE] LOG...     (runs hipshadow-report)
 *   hipshadow --version | [--cuda] --print-lib
 *
 * It prepends the library to LD_PRELOAD, appends the options to HIPSHADOW_OPTIONS, makes the
 * library the NVTX injection (NVTX_INJECTION64_PATH, unless another tool has it), and execs
 * the program, so the exit status is the program's own.  A value with a separator of the options
 * grammar in it (':', ',', a space) is put in quotes, so it stays one value: a findings path with
 * a space, or one with ":exitcode=77" in it, is the path it says.
 *
 * The preload library is, in this order: --lib; $HIPSHADOW_LIB (HIP only); <dir>/HS_BINDIR_TO_LIBDIR
 * where <dir> is the launcher's own directory (an installed tree, wherever it was moved or
 * DESTDIR-installed to); <dir>/../src (the build tree); HS_INSTALLED_LIBDIR (the configured
 * <prefix>/<libdir>/hipshadow). */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef HS_VERSION
#define HS_VERSION "unknown"
#endif
#ifndef HS_INSTALLED_LIBDIR
#define HS_INSTALLED_LIBDIR "/usr/local/lib/hipshadow"
#endif
#ifndef HS_BINDIR_TO_LIBDIR
#define HS_BINDIR_TO_LIBDIR "../lib/hipshadow"
#endif

static void usage(FILE *f)
{
    fprintf(f, "usage: hipshadow [options] [--] program [args...]\n"
               "       hipshadow report [--format text|json|csv|perfetto|html|sarif|junit] [--output FILE] LOG...\n"
               "  --mode warn|block|abort   what to do about an error (default warn)\n"
               "  --findings PATH           JSON Lines findings file (%%p = pid)\n"
               "  --exitcode N              exit with N if an error was found\n"
               "  --report-path PATH        stderr, stdout or a file for the text report\n"
               "  --option key=value        any option (repeatable); --option help=1 lists them\n"
               "  --log PATH                post-mortem log (%%p pid, %%h host, %%e executable, %%r rank)\n"
               "  --cuda                    check the CUDA runtime (libhipshadow-cuda.so) instead of HIP\n"
               "  --lib PATH                the preload library to use\n"
               "  --print-lib               print the preload library's path (with --cuda the CUDA one), and exit\n"
               "  --version                 print hipshadow's version, and exit\n"
               "Environment: HIPSHADOW_OPTIONS is kept; these options are appended to it.\n");
}

static int die(const char *fmt, const char *what)
{
    fprintf(stderr, "hipshadow: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n");
    usage(stderr);
    return 2;
}

/* The preload library to use, or NULL; tried lists the places looked in (for the message). */
static const char *find_library(const char *explicit_lib, const char *name, char *buf, size_t len, char *tried,
                                size_t tried_len)
{
    if (explicit_lib)
        return explicit_lib;
    const char *env = getenv("HIPSHADOW_LIB");
    if (env && *env && !strstr(name, "cuda"))
        return env;
    tried[0] = 0;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        const char *dir = dirname(self);
        /* installed: <bindir>/hipshadow and <libdir>/hipshadow/, at the configured distance;
         * build tree: build/tools/hipshadow next to build/src/libhipshadow.so */
        const char *rel[] = {HS_BINDIR_TO_LIBDIR, "../src"};
        for (size_t i = 0; i < 2; i++) {
            snprintf(buf, len, "%s/%s/%s", dir, rel[i], name);
            if (access(buf, R_OK) == 0)
                return buf;
            size_t used = strlen(tried);
            snprintf(tried + used, tried_len - used, "%s/%s, ", dir, rel[i]);
        }
    }
    snprintf(buf, len, "%s/%s", HS_INSTALLED_LIBDIR, name);
    if (access(buf, R_OK) == 0)
        return buf;
    size_t used = strlen(tried);
    snprintf(tried + used, tried_len - used, "%s", HS_INSTALLED_LIBDIR);
    return NULL;
}

/* HIPSHADOW_OPTIONS as it grows: the inherited text, then the flags' key=value pairs.  No size
 * limit of its own (before, 64 KiB; the rest was dropped without a word). */
static char *opts;
static size_t opts_len;

static int is_separator(char c) { return c == ':' || c == ',' || c == ' ' || (c >= '\t' && c <= '\r'); }

/* The quote that keeps value whole in the options grammar (options.c): none when it needs none,
 * else one it does not contain; -1 when it holds both quotes and needs one (it cannot be said). */
static int quote_for(const char *value)
{
    int needs = value[0] == '\'' || value[0] == '"';
    for (const char *p = value; *p && !needs; p++)
        needs = is_separator(*p);
    if (!needs)
        return 0;
    return !strchr(value, '\'') ? '\'' : !strchr(value, '"') ? '"' : -1;
}

/* Whether value is already one quoted value: "..." or '...' with no other such quote inside. */
static int quoted_whole(const char *value)
{
    size_t n = strlen(value);
    char q = value[0];
    return n >= 2 && (q == '\'' || q == '"') && value[n - 1] == q && !memchr(value + 1, q, n - 2);
}

/* Appends key=value (value quoted as needed); key NULL: value is "key=value" from --option. */
static int append(const char *key, const char *value)
{
    const char *eq = key ? NULL : strchr(value, '=');
    size_t klen = key ? strlen(key) : (size_t)(eq - value);
    if (!key) {
        key = value;
        value = eq + 1;
    }
    int q = quoted_whole(value) ? 0 : quote_for(value);
    if (q < 0)
        return -1;
    char quote[2] = {(char)q, 0}; /* "" when none */
    size_t need = opts_len + 1 + klen + 1 + strlen(value) + 2 + 1;
    char *grown = realloc(opts, need);
    if (!grown)
        return -2;
    opts = grown;
    int w = snprintf(opts + opts_len, need - opts_len, "%s%.*s=%s%s%s", opts_len ? ":" : "", (int)klen, key, quote,
                     value, quote);
    if (w < 0)
        return -2;
    opts_len += (size_t)w;
    return 0;
}

/* A path LD_PRELOAD can hold: the loader splits its list at spaces and colons, so a library in
 * "/tmp/sp ace/" would be looked for as "/tmp/sp" and "ace/...", not found, and the program would
 * run unchecked with no word said. */
static int preloadable(const char *path) { return !strpbrk(path, " \t\n:"); }

/* NVTX v3 hands a program's annotations (nvToolsExtMem.h) to the one library that
 * NVTX_INJECTION64_PATH names: the preload library, unless the user chose another tool; then
 * hipshadow cannot see them, and says so. */
static void route_nvtx(const char *lib)
{
    const char *set = getenv("NVTX_INJECTION64_PATH");
    struct stat a, b;
    if (!set || !*set)
        setenv("NVTX_INJECTION64_PATH", lib, 1);
    else if (stat(set, &a) != 0 || stat(lib, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        fprintf(stderr,
                "hipshadow: NVTX_INJECTION64_PATH names another tool (%s): the program's NVTX annotations "
                "go there, and hipshadow does not see its NVTX heaps and regions\n",
                set);
}

static int is_integer(const char *s)
{
    char *end;
    errno = 0;
    strtol(s, &end, 10);
    return *s && !*end && !errno;
}

/* `hipshadow report ...`: the reader lives beside the launcher (build tree: report/). */
static int run_report(char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *dir = dirname(self);
        const char *candidates[] = {"report/hipshadow-report", "hipshadow-report"};
        for (size_t i = 0; i < 2; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, candidates[i]);
            if (access(path, X_OK) == 0) {
                argv[0] = path;
                execv(path, argv);
            }
        }
    }
    argv[0] = "hipshadow-report";
    execvp(argv[0], argv);
    fprintf(stderr, "hipshadow: cannot run hipshadow-report: %s\n", strerror(errno));
    return 127;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "report"))
        return run_report(argv + 1);
    const char *existing = getenv("HIPSHADOW_OPTIONS");
    opts = strdup(existing ? existing : "");
    if (!opts)
        return 2;
    opts_len = strlen(opts);
    const char *lib_arg = NULL, *lib_name = "libhipshadow.so";
    int print_lib = 0;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            printf("hipshadow %s\n", HS_VERSION);
            return 0;
        }
        if (!strcmp(a, "--print-lib")) {
            print_lib = 1;
            continue;
        }
        if (a[0] != '-')
            break;
        if (!strcmp(a, "--cuda")) {
            lib_name = "libhipshadow-cuda.so";
            continue;
        }
        if (i + 1 >= argc)
            return die("'%s' needs a value", a);
        const char *v = argv[++i];
        int rc = 0;
        if (!strcmp(a, "--mode")) {
            if (strcmp(v, "warn") && strcmp(v, "block") && strcmp(v, "abort"))
                return die("--mode: '%s' is not one of warn, block, abort", v);
            rc = append("mode", v);
        } else if (!strcmp(a, "--findings")) {
            rc = append("findings", v);
        } else if (!strcmp(a, "--exitcode")) {
            if (!is_integer(v))
                return die("--exitcode: '%s' is not an integer", v);
            rc = append("exitcode", v);
        } else if (!strcmp(a, "--log")) {
            rc = append("log", v);
        } else if (!strcmp(a, "--report-path")) {
            rc = append("report_path", v);
        } else if (!strcmp(a, "--option")) {
            const char *eq = strchr(v, '=');
            int key_ok = eq && eq > v;
            for (const char *p = v; key_ok && p < eq; p++)
                key_ok = !is_separator(*p) && *p != '\'' && *p != '"';
            if (!key_ok)
                return die("--option: '%s' is not key=value", v);
            rc = append(NULL, v);
        } else if (!strcmp(a, "--lib")) {
            lib_arg = v;
        } else {
            return die("unknown argument '%s'", a);
        }
        if (rc == -1)
            return die("%s: the value needs quotes (it has ':', ',' or a space, or starts with a quote) and holds "
                       "both quote characters; the options grammar cannot hold it",
                       a);
        if (rc)
            return die("%s: out of memory", a);
    }
    if (i >= argc && !print_lib)
        return die("%s", "no program to run");

    char libbuf[PATH_MAX + 64], tried[3 * PATH_MAX + 64];
    const char *lib = find_library(lib_arg, lib_name, libbuf, sizeof libbuf, tried, sizeof tried);
    if (!lib) {
        fprintf(stderr, "hipshadow: preload library '%s' not found in %s (set HIPSHADOW_LIB or --lib)\n", lib_name,
                tried);
        return 2;
    }
    if (access(lib, R_OK) != 0) {
        fprintf(stderr, "hipshadow: preload library '%s' not found (set HIPSHADOW_LIB or --lib)\n", lib);
        return 2;
    }
    char resolved[PATH_MAX];
    /* resolved, unless only the resolved path has what LD_PRELOAD cannot hold (a link to it) */
    if (realpath(lib, resolved) && (preloadable(resolved) || !preloadable(lib) || lib[0] != '/'))
        lib = resolved;
    if (print_lib) {
        printf("%s\n", lib);
        return 0;
    }
    if (!preloadable(lib)) {
        fprintf(stderr,
                "hipshadow: the preload library's path '%s' has a space or a colon, and LD_PRELOAD splits "
                "its list there: the program would run unchecked. Install hipshadow under a path without "
                "them, or give --lib a copy of the library, or a link to it, whose path has none\n",
                lib);
        return 2;
    }
    const char *old = getenv("LD_PRELOAD");
    /* A sanitized build (meson -Db_sanitize=address or thread, tests/sanitizers.sh): the library
     * needs its sanitizer's runtime loaded before everything else, also in programs that are not
     * instrumented (bash, python): ASan refuses to start otherwise, and TSan must see every thread. */
#ifdef HS_SANITIZER_RUNTIME
    const char *first = HS_SANITIZER_RUNTIME ":";
#else
    const char *first = "";
#endif
    size_t need = strlen(first) + strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *preload = malloc(need);
    if (!preload)
        return 2;
    snprintf(preload, need, "%s%s%s%s", first, lib, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    setenv("HIPSHADOW_OPTIONS", opts, 1);
    route_nvtx(lib);
    execvp(argv[i], &argv[i]);
    fprintf(stderr, "hipshadow: cannot run '%s': %s\n", argv[i], strerror(errno));
    return 127;
}
