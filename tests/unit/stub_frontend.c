/* A front-end for unit tests: no runtime behind it. */
#include "runtime/frontend.h"

#include <stdio.h>

static const char *const names[] = {"testAlloc", "testCopy", "testFree"};
static const char *error_name(int code)
{
    static char b[32];
    snprintf(b, sizeof b, "error %d", code);
    return b;
}
static bool is_failure(int code) { return code != 0; }
static const uintptr_t builtin[] = {0};

static const hs_layer layer = {
    .name = "test", .first_api = 0, .n_apis = 3, .error_name = error_name, .is_failure = is_failure};
static const hs_layer *const layers[] = {&layer};

const hs_frontend hs_frontend_active = {
    .runtime = "TEST",
    .api_names = names,
    .n_apis = 3,
    .layers = layers,
    .n_layers = 1,
    .query_pointer = NULL,
    .builtin_streams = builtin,
    .n_builtin_streams = 1,
    .kernels = NULL,
};
