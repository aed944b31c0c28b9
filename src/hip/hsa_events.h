/* AMD GPU memory faults from ROCr's system events (hsa_events.c). */
#ifndef HS_HIP_HSA_EVENTS_H
#define HS_HIP_HSA_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

/* Registers hipshadow's HSA system event handler; `api` names the event in reports.  true:
 * settled (registered, or given up with one note); false: HSA is not ready, ask again later. */
bool hs_hsa_events_arm(uint16_t api);

#endif
