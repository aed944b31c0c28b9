/* A copy that says device-to-host with its pointers swapped: the "source" is a host buffer, the
 * "destination" a device buffer.  One bug, so one finding: a direction-mismatch that says both. */
#include "common.h"

int main(void)
{
    static char host[4096];
    char *dev;
    MUST(hipMalloc((void **)&dev, sizeof host));
    TRY(hipMemcpy(dev, host, sizeof host, hipMemcpyDeviceToHost)); /* meant: host <- dev */
    MUST(hipFree(dev));
    return 0;
}
