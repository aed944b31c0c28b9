/* A downstream program built against an installed hipshadow with only
 * `pkg-config --cflags --libs hipshadow`: it uses the annotation API, which is a no-op (-1)
 * without the preload library and works (0) under the installed launcher. */
#include <hipshadow/hipshadow.h>
#include <hipshadow/log_format.h>

#include <stdio.h>

static char arena[1 << 16];

int main(void)
{
    hipshadow_pause();
    hipshadow_resume();
    int reg = hipshadow_region_register(arena + 4096, 8192, "token_embd.weight");
    int named = hipshadow_name_allocation(arena, "host arena"); /* not a GPU allocation: -1 either way */
    int unreg = hipshadow_region_unregister(arena + 4096);
    printf("api %d.%d log format %d: region_register=%d name_allocation=%d region_unregister=%d\n",
           HIPSHADOW_VERSION_MAJOR, HIPSHADOW_VERSION_MINOR, HS_LOG_FORMAT_VERSION, reg, named, unreg);
    return 0;
}
