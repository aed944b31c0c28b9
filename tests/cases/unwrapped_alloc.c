/* Device memory allocated through a path hipshadow does not wrap: a module's __device__ global,
 * which the runtime allocated when it loaded the module and the program reaches through
 * hipModuleGetGlobal.  hipshadow asks the runtime before calling it unknown: an in-bounds copy
 * is clean, an overrun is out-of-bounds against the runtime's range. */
#include "common.h"

int main(void)
{
    static const char image[64] = "__CLANG_OFFLOAD_BUNDLE__"; /* the simulator takes any bundle */
    hipModule_t module;
    hipDeviceptr_t global;
    size_t size = 0;
    if (hipModuleLoadData(&module, image) != hipSuccess ||
        hipModuleGetGlobal(&global, &size, module, "table") != hipSuccess || size != 4096)
        return 99;
    char *dev = (char *)global, host[8192];
    MUST(hipMemcpyDtoH(host, dev + 1024, 1024)); /* clean */
    TRY(hipMemcpyDtoH(host, dev + 1024, 4000));  /* 928 bytes past the end */
    return 0;
}
