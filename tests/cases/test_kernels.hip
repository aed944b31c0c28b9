// Device code of the kernel test programs, built by clang for AMD like kernels/transpose.hip.
// Only its code object's metadata is used (hipshadow reads which arguments are pointers); the
// simulated runtime runs the host versions in kernel_cases.c by name.
#include "../../kernels/device.h"

extern "C" __global__ void poke(int *p, long long offset, int value) { p[offset] = value; }

extern "C" __global__ void scale(float *out, const float *in, int n, float k)
{
    int i = HS_BID_X * 64 + HS_TID_X;
    if (i < n)
        out[i] = in[i] * k;
}

// scale with restrict pointers: the code object says out is write_only and in read_only (.actual_access)
extern "C" __global__ void scale_r(float *__restrict__ out, const float *__restrict__ in, int n, float k)
{
    int i = HS_BID_X * 64 + HS_TID_X;
    if (i < n)
        out[i] = in[i] * k;
}
