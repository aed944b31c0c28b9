/* hipshadow's device code, one source for AMD (clang HIP) and NVIDIA (nvcc -x cu).
 *
 * hs_transpose_e{1,2,4,8,16}: out-of-place 2-D transpose of a rows x cols matrix of elements of
 *   that many bytes, with pitched rows on both sides.  A block of 32 x 8 threads moves one tile
 *   through shared memory: reads along source rows and writes along destination rows are both
 *   coalesced.  Tiles are 32 elements wide, and 64 or 128 for 2- and 1-byte elements so that each
 *   tile row is at least 128 bytes; the +1 column of padding keeps the column reads free of bank
 *   conflicts.  Any shape works (edges are masked); grid y is capped, blocks loop over tile rows.
 * hs_copy16 / hs_copy1: a grid-stride copy of 16-byte vectors / of bytes (the staging path).
 *
 * Launch contract (host code in src/hip/kernels.c and src/cuda/kernels.c): transposes use blocks
 * of 32 x 8 and a grid of (ceil(cols / TW), min(row tiles, 65535)); copies use blocks of 256. */
#include "device.h"

typedef unsigned long long u64;
struct alignas(16) hs_v16 {
    u64 lo, hi;
};

template <typename T, int TW>
__device__ void transpose_tiles(unsigned char *dst, u64 dpitch, const unsigned char *src, u64 spitch, u64 rows,
                                u64 cols, u64 row_tiles, unsigned grid_y)
{
    __shared__ T tile[TW][TW + 1];
    const unsigned tx = HS_TID_X, ty = HS_TID_Y;
    const u64 col0 = (u64)HS_BID_X * TW;
    for (u64 t = HS_BID_Y; t < row_tiles; t += grid_y) {
        const u64 row0 = t * TW;
        for (unsigned r = ty; r < TW; r += 8) {
            const u64 gr = row0 + r;
            if (gr < rows)
                for (unsigned c = tx; c < TW; c += 32)
                    if (col0 + c < cols)
                        tile[r][c] = *(const T *)(src + gr * spitch + (col0 + c) * sizeof(T));
        }
        HS_SYNC();
        for (unsigned r = ty; r < TW; r += 8) { /* r: a source column = a destination row */
            const u64 dr = col0 + r;
            if (dr < cols)
                for (unsigned c = tx; c < TW; c += 32) /* c: a source row = a destination column */
                    if (row0 + c < rows)
                        *(T *)(dst + dr * dpitch + (row0 + c) * sizeof(T)) = tile[c][r];
        }
        HS_SYNC();
    }
}

#define HS_TRANSPOSE_KERNEL(bytes, type, width)                                                                  \
    extern "C" __global__ void hs_transpose_e##bytes(unsigned char *dst, u64 dpitch, const unsigned char *src,  \
                                                      u64 spitch, u64 rows, u64 cols, u64 row_tiles, unsigned grid_y) \
    {                                                                                                            \
        transpose_tiles<type, width>(dst, dpitch, src, spitch, rows, cols, row_tiles, grid_y);                   \
    }

HS_TRANSPOSE_KERNEL(1, unsigned char, 128)
HS_TRANSPOSE_KERNEL(2, unsigned short, 64)
HS_TRANSPOSE_KERNEL(4, unsigned int, 32)
HS_TRANSPOSE_KERNEL(8, u64, 32)
HS_TRANSPOSE_KERNEL(16, hs_v16, 32)

extern "C" __global__ void hs_copy16(hs_v16 *dst, const hs_v16 *src, u64 n, u64 stride)
{
    for (u64 i = (u64)HS_BID_X * 256 + HS_TID_X; i < n; i += stride)
        dst[i] = src[i];
}

extern "C" __global__ void hs_copy1(unsigned char *dst, const unsigned char *src, u64 n, u64 stride)
{
    for (u64 i = (u64)HS_BID_X * 256 + HS_TID_X; i < n; i += stride)
        dst[i] = src[i];
}
