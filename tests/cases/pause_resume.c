/* hipshadow_pause()/hipshadow_resume(): the paused out-of-bounds copy is not reported, the one
 * after resume is.  Without the preload the calls are no-ops and the program still runs. */
#include "common.h"
#include "hipshadow/hipshadow.h"

int main(void)
{
    char *dev, *paused_alloc, host[256];
    MUST(hipMalloc((void **)&dev, 128));
    hipshadow_pause();
    TRY(hipMemcpyDtoH(host, dev, 200));          /* not reported */
    MUST(hipMalloc((void **)&paused_alloc, 64)); /* still tracked while paused */
    hipshadow_resume();
    TRY(hipMemcpyDtoH(host, dev, 256));          /* reported: overrun 128 */
    MUST(hipMemcpyDtoH(host, paused_alloc, 64)); /* known allocation: clean */
    MUST(hipFree(paused_alloc));
    MUST(hipFree(dev));
    puts("pause/resume done");
    return 0;
}
