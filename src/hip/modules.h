/* Which module image each HIP module function came from, so that a launch can read the
 * kernel's argument metadata from the code object (params.h). */
#ifndef HS_HIP_MODULES_H
#define HS_HIP_MODULES_H

#include <stddef.h>

void hs_hip_module_loaded(const void *module, const void *image);
void hs_hip_function_found(const void *function, const void *module, const char *name);
/* The image and kernel name of a module function; false when it was not seen. */
bool hs_hip_function_source(const void *function, const void **image, const char **name);

#endif
