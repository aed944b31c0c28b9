/* The few device-side names the kernels need, for both vendors, so one source builds with nvcc
 * (NVIDIA) and with clang's HIP mode without any ROCm headers (AMD, -nogpuinc -nogpulib). */
#ifndef HS_KERNELS_DEVICE_H
#define HS_KERNELS_DEVICE_H

#if defined(__CUDACC__)
#define HS_TID_X threadIdx.x
#define HS_TID_Y threadIdx.y
#define HS_BID_X blockIdx.x
#define HS_BID_Y blockIdx.y
#define HS_SYNC() __syncthreads()
#else
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define HS_TID_X __builtin_amdgcn_workitem_id_x()
#define HS_TID_Y __builtin_amdgcn_workitem_id_y()
#define HS_BID_X __builtin_amdgcn_workgroup_id_x()
#define HS_BID_Y __builtin_amdgcn_workgroup_id_y()
#define HS_SYNC()                                                                                                      \
    do {                                                                                                               \
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");                                                         \
        __builtin_amdgcn_s_barrier();                                                                                  \
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");                                                         \
    } while (0)
#endif

#endif
