/* Linked against the static runtime archive, as plain nvcc links libcudart_static: no
 * libcudart.so and no libcuda.so among its NEEDED entries (check_static.py verifies that); it
 * reaches the driver only through dlopen("libcuda.so.1") and cuGetProcAddress. */
#include <cuda_runtime_api.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    char in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (char)(255 - i);
    void *d = NULL;
    int version = 0;
    if (cudaMalloc(&d, sizeof in) != cudaSuccess ||
        cudaMemcpy(d, in, sizeof in, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost) != cudaSuccess || memcmp(in, out, sizeof in)) {
        fprintf(stderr, "static runtime: copy round trip failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    if (cudaMemcpy(out, (char *)d + 1, sizeof out, cudaMemcpyDeviceToHost) != cudaErrorInvalidValue ||
        cudaDriverGetVersion(&version) != cudaSuccess || version != 13000 || cudaFree(d) != cudaSuccess) {
        fprintf(stderr, "static runtime: unexpected result\n");
        return 1;
    }
    printf("static runtime: ok\n");
    return 0;
}
