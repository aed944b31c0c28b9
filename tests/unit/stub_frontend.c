/* A front-end for unit tests: no runtime behind it. */
#include "../../src/core/frontend.h"

#include <stdio.h>

static const char *const names[] = {"testAlloc", "testCopy", "testFree"};
static const char *error_name(int code) { static char b[32]; snprintf(b, sizeof b, "error %d", code); return b; }
static bool is_failure(int code) { return code != 0; }
static const uintptr_t builtin[] = {0};

const hs_frontend hs_frontend_active = {
    .runtime = "TEST", .api_names = names, .n_apis = 3, .error_name = error_name, .is_failure = is_failure,
    .query_pointer = NULL, .builtin_streams = builtin, .n_builtin_streams = 1, .kernels = NULL,
};
