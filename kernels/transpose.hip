/* hipshadow's device code, one source for AMD (clang HIP) and NVIDIA (nvcc -x cu).
 *
 * hs_transpose_e{1,2,4,8,16}: out-of-place 2-D transpose of a rows x cols matrix of elements of
 *   that many bytes, with pitched rows on both sides.  A block of 32 x 8 threads moves one TW x TW
 *   tile through shared memory, so that reads along source rows and writes along destination
 *   rows are both coalesced; the +1 column of padding spreads column reads over the banks.  Tiles
 *   are wide (64 or 128 elements, 32 for 16-byte ones) so each thread keeps 8 to 16 loads in
 *   flight.  Full tiles skip the per-element bounds checks; edge tiles are masked.  Grid y is
 *   capped, so blocks loop over tile rows.
 * hs_transpose_e{1,2}_packed: the same for 1- and 2-byte elements moved as words in full tiles:
 *   4 bytes a 32-bit word, 4 halves a 64-bit word, so a warp moves a whole 128-element tile row
 *   at once; the host picks them when pointers and pitches are 4- (8-) byte aligned.
 * hs_copy16 / hs_copy1: a grid-stride copy of 16-byte vectors / of bytes (the staging path).
 *
 * Launch contract (src/core/gpu_kernels.c): transposes use blocks of 32 x 8 and a grid of
 * (ceil(cols / TW), min(row tiles, 65535)); copies use blocks of 256. */
#include "device.h"

typedef unsigned long long u64;
typedef unsigned int u32;
struct alignas(16) hs_v16 {
    u64 lo, hi;
};

/* W: the unit moved to and from global memory in full tiles, K = sizeof(W) / sizeof(T) elements. */
template <typename T, typename W, int TW>
__device__ void transpose_tiles(unsigned char *dst, u64 dpitch, const unsigned char *src, u64 spitch, u64 rows,
                                u64 cols, u64 row_tiles, unsigned grid_y)
{
    constexpr int K = sizeof(W) / sizeof(T);
    constexpr int ROWS = TW / 8;                 /* tile rows per thread */
    constexpr int WORDS = (TW / K + 31) / 32;    /* words per thread in a tile row */
    __shared__ T tile[TW][TW + 1];
    const unsigned tx = HS_TID_X, ty = HS_TID_Y;
    const u64 col0 = (u64)HS_BID_X * TW;
    for (u64 t = HS_BID_Y; t < row_tiles; t += grid_y) {
        const u64 row0 = t * TW;
        const bool full = row0 + TW <= rows && col0 + TW <= cols;
        if (full) {
            W v[ROWS][WORDS]; /* every load of the tile in flight before the first store */
#pragma unroll
            for (int i = 0; i < ROWS; i++)
#pragma unroll
                for (int k = 0; k < WORDS; k++) {
                    const unsigned r = ty + 8 * i, w = tx + 32 * k;
                    if (w < TW / K)
                        v[i][k] = ((const W *)(src + (row0 + r) * spitch + col0 * sizeof(T)))[w];
                }
#pragma unroll
            for (int i = 0; i < ROWS; i++)
#pragma unroll
                for (int k = 0; k < WORDS; k++) {
                    const unsigned r = ty + 8 * i, w = tx + 32 * k;
                    if (w < TW / K)
#pragma unroll
                        for (int j = 0; j < K; j++)
                            tile[r][w * K + j] = ((const T *)&v[i][k])[j];
                }
        } else {
            for (unsigned r = ty; r < TW; r += 8)
                if (row0 + r < rows)
                    for (unsigned c = tx; c < TW; c += 32)
                        if (col0 + c < cols)
                            tile[r][c] = *(const T *)(src + (row0 + r) * spitch + (col0 + c) * sizeof(T));
        }
        HS_SYNC();
        if (full) {
#pragma unroll
            for (int i = 0; i < ROWS; i++) { /* r: a source column = a destination row */
                const unsigned r = ty + 8 * i;
                W *line = (W *)(dst + (col0 + r) * dpitch + row0 * sizeof(T));
#pragma unroll
                for (int k = 0; k < WORDS; k++) {
                    const unsigned w = tx + 32 * k;
                    if (w < TW / K) {
                        W v;
#pragma unroll
                        for (int j = 0; j < K; j++)
                            ((T *)&v)[j] = tile[w * K + j][r];
                        line[w] = v;
                    }
                }
            }
        } else {
            for (unsigned r = ty; r < TW; r += 8)
                if (col0 + r < cols)
                    for (unsigned c = tx; c < TW; c += 32) /* c: a source row = a destination column */
                        if (row0 + c < rows)
                            *(T *)(dst + (col0 + r) * dpitch + (row0 + c) * sizeof(T)) = tile[c][r];
        }
        HS_SYNC();
    }
}

#define HS_TRANSPOSE_KERNEL(name, type, word, width)                                                            \
    extern "C" __global__ void name(unsigned char *dst, u64 dpitch, const unsigned char *src, u64 spitch,      \
                                    u64 rows, u64 cols, u64 row_tiles, unsigned grid_y)                          \
    {                                                                                                            \
        transpose_tiles<type, word, width>(dst, dpitch, src, spitch, rows, cols, row_tiles, grid_y);             \
    }

HS_TRANSPOSE_KERNEL(hs_transpose_e1, unsigned char, unsigned char, 128)
HS_TRANSPOSE_KERNEL(hs_transpose_e2, unsigned short, unsigned short, 128)
HS_TRANSPOSE_KERNEL(hs_transpose_e4, u32, u32, 64)
HS_TRANSPOSE_KERNEL(hs_transpose_e8, u64, u64, 64)
HS_TRANSPOSE_KERNEL(hs_transpose_e16, hs_v16, hs_v16, 32)
HS_TRANSPOSE_KERNEL(hs_transpose_e1_packed, unsigned char, u32, 128)
HS_TRANSPOSE_KERNEL(hs_transpose_e2_packed, unsigned short, u64, 128)

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
