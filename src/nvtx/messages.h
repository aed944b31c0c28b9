/* NVTX's strings as text: a message is ASCII, wide, or a handle that nvtxDomainRegisterStringA/W
 * returned; hipshadow serves that registration, so a registered name is as good as a literal. */
#ifndef HS_NVTX_MESSAGES_H
#define HS_NVTX_MESSAGES_H

#include "abi.h"

/* The message's text in buf (UTF-8; "" for an unknown type or handle); returns buf. */
const char *hs_nvtx_text(uint32_t type, hs_nvtx_message m, char *buf, size_t len);

/* nvtxDomainRegisterStringA/W (callback ids 10, 11 of the core module): a handle for the
 * process's lifetime, the same one for the same text. */
const void *hs_nvtx_register_string_a(const void *domain, const char *text);
const void *hs_nvtx_register_string_w(const void *domain, const wchar_t *text);

void hs_nvtx_messages_after_fork(void);

#endif
