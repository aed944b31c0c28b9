/* hipshadow's redzone kernels (redzones=N), one source for AMD and NVIDIA like transpose.hip.
 *
 * hs_redzone_fill: n bytes at dst get the pattern, by a grid-stride loop (blocks of 256).
 * hs_redzone_verify: one block of 256 threads per redzone: desc holds (address, length) pairs;
 *   out[2b], out[2b + 1] become the first and last byte offsets of redzone b that differ from the
 *   pattern (0xffffffff and 0 when none did).  One launch checks every redzone of a check. */
#include "device.h"

extern "C" __global__ void hs_redzone_fill(unsigned char *dst, unsigned long long n, unsigned int pattern,
                                           unsigned long long stride)
{
    for (unsigned long long i = (unsigned long long)HS_BID_X * 256 + HS_TID_X; i < n; i += stride)
        dst[i] = (unsigned char)pattern;
}

extern "C" __global__ void hs_redzone_verify(const unsigned long long *desc, unsigned int pattern, unsigned int *out)
{
    __shared__ unsigned int lo[256], hi[256];
    const unsigned int t = HS_TID_X, b = HS_BID_X;
    const unsigned char *p = (const unsigned char *)desc[2 * b];
    const unsigned long long len = desc[2 * b + 1];
    unsigned int first = 0xffffffffu, last = 0;
    for (unsigned long long i = t; i < len; i += 256)
        if (p[i] != (unsigned char)pattern) {
            if (first == 0xffffffffu)
                first = (unsigned int)i;
            last = (unsigned int)i;
        }
    lo[t] = first;
    hi[t] = last;
    HS_SYNC();
    for (unsigned int s = 128; s > 0; s >>= 1) {
        if (t < s) {
            if (lo[t + s] < lo[t])
                lo[t] = lo[t + s];
            if (hi[t + s] > hi[t])
                hi[t] = hi[t + s];
        }
        HS_SYNC();
    }
    if (t == 0) {
        out[2 * b] = lo[0];
        out[2 * b + 1] = hi[0];
    }
}
