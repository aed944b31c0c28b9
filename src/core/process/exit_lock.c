/* The per-thread marks of exit_lock.h. */
#include "process/exit_lock.h"

HS_TLS uint32_t hs_exit_locks_mine;
