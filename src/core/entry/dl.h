/* dlsym and dlvsym, wrapped (a lookup by handle of a wrapped name in a runtime's library gets
 * the wrapper), and the real dlsym for hipshadow's own use: hipshadow never calls dlsym by name,
 * which would be its own wrapper. */
#ifndef HS_DL_H
#define HS_DL_H

void *hs_real_dlsym(void *handle, const char *name);

#endif
