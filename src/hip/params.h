/* Kernel argument layouts read from AMD code objects, so that a launch check knows which
 * explicit kernel arguments are device pointers.  Pure parsing: no allocation, no global state,
 * every read bounds-checked (images may be malformed). */
#ifndef HS_HIP_PARAMS_H
#define HS_HIP_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One explicit kernel argument, from the code object's metadata.  `pointer`: its value kind is
 * "global_buffer" (a global address space pointer); "dynamic_shared_pointer" (LDS) is not. */
typedef struct hs_kernel_arg {
    uint32_t offset, size;
    bool pointer;
    uint8_t access; /* ".actual_access", else ".access": 0 not said, 1 read_only, 2 write_only, 3 read_write */
} hs_kernel_arg;

/* Finds kernel `name` in a code-object image (a clang offload bundle "__CLANG_OFFLOAD_BUNDLE__"
 * holding one or more amdgcn code objects, or a bare ELF code object) and fills up to `max`
 * explicit arguments (hidden_* arguments excluded) in order.  Returns the number of explicit
 * arguments (may exceed max), or -1 when the image or the kernel is not understood (compressed
 * "CCOB" bundles and code object V2 included); `out` may then have been partly written.  Reads
 * only [image, image + size). */
int hs_amd_kernel_args(const void *image, size_t size, const char *name, hs_kernel_arg *out, int max);

/* The size of an offload bundle or AMDGPU ELF image starting at `image` when the caller does not
 * know it (hipModuleLoadData takes no size): from the bundle's entry table, or from the ELF's
 * header, program and section headers.  0 when not recognised (compressed bundles included).
 * Reads only the structures it parses, as their own headers describe them. */
size_t hs_amd_image_size(const void *image);

#endif
