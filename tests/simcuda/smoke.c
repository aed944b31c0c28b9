/* Smoke test of the simulated CUDA driver and runtime: the behaviour later tests rely on. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "simcuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                            \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)
#define CU(call, want)                                                                                                 \
    do {                                                                                                               \
        CUresult got_ = (call);                                                                                        \
        if (got_ != (want)) {                                                                                          \
            fprintf(stderr, "FAIL %s:%d: %s = %d, want %s\n", __FILE__, __LINE__, #call, (int)got_, #want);            \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static const size_t MiB = 1u << 20;

/* The driver's own definition of a symbol, whatever a preloaded library exports. */
static void *driver_symbol(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return h ? dlsym(h, name) : NULL;
}

/* Counts the "simcuda: <name>" trace lines that fn prints (SIMCUDA_TRACE=1). */
static int count_trace(const char *name, void (*fn)(void *), void *arg)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    char line[256], want[256];
    snprintf(want, sizeof want, "simcuda: %s\n", name);
    int n = 0;
    while (fgets(line, sizeof line, tmp))
        n += !strcmp(line, want);
    fclose(tmp);
    return n;
}

static void test_basic_copies(void)
{
    CUdeviceptr d = 0;
    unsigned char in[1000], out[1000];
    for (int i = 0; i < 1000; i++)
        in[i] = (unsigned char)(i * 7 + 1);
    CU(cuMemAlloc(&d, 1000), CUDA_SUCCESS);
    CU(cuMemcpyHtoD(d, in, 1000), CUDA_SUCCESS);
    memset(out, 0, sizeof out);
    CU(cuMemcpyDtoH(out, d, 1000), CUDA_SUCCESS);
    CHECK(!memcmp(in, out, 1000));

    /* 600 bytes from offset 500 run 100 bytes past the end: refused, nothing copied. */
    memset(out, 0xee, sizeof out);
    CU(cuMemcpyDtoH(out, d + 500, 600), CUDA_ERROR_INVALID_VALUE);
    CHECK(out[0] == 0xee && out[599] == 0xee);
    CU(cuMemcpyDtoH(out, d + 500, 500), CUDA_SUCCESS);
    CHECK(!memcmp(out, in + 500, 500));
    CU(cuMemcpyDtoH(NULL, d, 10), CUDA_ERROR_INVALID_VALUE);
    CU(cuMemcpyHtoD(0, in, 10), CUDA_ERROR_INVALID_VALUE);
    CU(cuMemcpyDtoH(out, (CUdeviceptr)(uintptr_t)in, 10), CUDA_ERROR_INVALID_VALUE); /* not device memory */

    /* memsets */
    CU(cuMemsetD32(d, 0x01020304u, 250), CUDA_SUCCESS);
    CU(cuMemcpyDtoH(out, d, 8), CUDA_SUCCESS);
    CHECK(*(unsigned *)out == 0x01020304u && *(unsigned *)(out + 4) == 0x01020304u);
    CU(cuMemsetD32(d + 2, 0, 1), CUDA_ERROR_INVALID_VALUE); /* misaligned */
    CU(cuMemsetD8(d + 990, 0xab, 11), CUDA_ERROR_INVALID_VALUE);

    /* Async work waits for a synchronisation point, then runs in order. */
    CUstream s;
    CU(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    unsigned char src[16];
    memset(src, 1, sizeof src);
    CU(cuMemcpyHtoDAsync(d, src, 16, s), CUDA_SUCCESS);
    memset(src, 2, sizeof src); /* still queued: the copy will read this */
    CU(cuMemsetD8Async(d + 16, 3, 16, s), CUDA_SUCCESS);
    CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    CU(cuMemcpyDtoH(out, d, 32), CUDA_SUCCESS);
    CHECK(out[0] == 2 && out[15] == 2 && out[16] == 3 && out[31] == 3);

    /* Events and queries */
    CUevent ev;
    CU(cuEventCreate(&ev, 0), CUDA_SUCCESS);
    CU(cuMemsetD8Async(d, 9, 4, s), CUDA_SUCCESS);
    CU(cuEventRecord(ev, s), CUDA_SUCCESS);
    CU(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
    CU(cuEventSynchronize(ev), CUDA_SUCCESS);
    CU(cuEventQuery(ev), CUDA_SUCCESS);
    CU(cuEventDestroy(ev), CUDA_SUCCESS);

    CU(cuStreamDestroy(s), CUDA_SUCCESS);
    CU(cuMemcpyHtoDAsync(d, src, 16, s), CUDA_ERROR_INVALID_HANDLE);
    CU(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
    CU(cuMemFree(d), CUDA_SUCCESS);
    CU(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
    CU(cuMemFree(0), CUDA_SUCCESS);
    CU(cuMemFreeHost(NULL), CUDA_SUCCESS);
    CU(cuMemAlloc(&d, 0), CUDA_ERROR_INVALID_VALUE);

    /* Pinned host memory is known to the driver: a copy past its end is refused too. */
    void *pinned = NULL;
    CU(cuMemAllocHost(&pinned, 256), CUDA_SUCCESS);
    CU(cuMemAlloc(&d, 512), CUDA_SUCCESS);
    CU(cuMemcpyDtoH(pinned, d, 512), CUDA_ERROR_INVALID_VALUE);
    CU(cuMemcpyDtoH(pinned, d, 256), CUDA_SUCCESS);
    CU(cuMemFreeHost(pinned), CUDA_SUCCESS);
    CU(cuMemFree(d), CUDA_SUCCESS);
}

static void count_up(void *arg) { ++*(int *)arg; }

static void test_2d_and_friends(void)
{
    CUdeviceptr d;
    size_t pitch = 0;
    CU(cuMemAllocPitch(&d, &pitch, 100, 4, 4), CUDA_SUCCESS);
    CHECK(pitch >= 100);
    unsigned char host[400], back[400];
    for (int i = 0; i < 400; i++)
        host[i] = (unsigned char)i;
    CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_HOST,
                       .srcHost = host,
                       .srcPitch = 100,
                       .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                       .dstDevice = d,
                       .dstPitch = pitch,
                       .WidthInBytes = 100,
                       .Height = 4};
    CU(cuMemcpy2D(&c), CUDA_SUCCESS);
    CUresult (*dtoh_ptds)(void *, CUdeviceptr, size_t) = NULL; /* the per-thread twin, cuMemcpyDtoH_v2_ptds */
    CU(cuGetProcAddress("cuMemcpyDtoH", (void **)&dtoh_ptds, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                        NULL),
       CUDA_SUCCESS);
    CU(dtoh_ptds(back, d + pitch, 100), CUDA_SUCCESS);
    CHECK(!memcmp(back, host + 100, 100));
    c.Height = 5; /* the fifth row lies past the allocation */
    CU(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
    c.Height = 4;
    c.WidthInBytes = pitch + 1;
    CU(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);

    /* A host function runs in stream order, at the synchronisation point. */
    int calls = 0;
    CU(cuLaunchHostFunc(NULL, count_up, &calls), CUDA_SUCCESS);
    CHECK(calls == 0);
    CU(cuStreamSynchronize(NULL), CUDA_SUCCESS);
    CHECK(calls == 1);
    CU(cuMemFree(d), CUDA_SUCCESS);
}

static void test_devices(CUcontext ctx0)
{
    int n = 0;
    CU(cuDeviceGetCount(&n), CUDA_SUCCESS);
    CHECK(n == 2);
    CUcontext ctx1;
    CUdevice dev = -1;
    CU(cuDevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
    CU(cuCtxSetCurrent(ctx1), CUDA_SUCCESS);
    CU(cuCtxGetDevice(&dev), CUDA_SUCCESS);
    CHECK(dev == 1);
    CUdeviceptr d1;
    int ordinal = -1;
    CU(cuMemAlloc(&d1, 64), CUDA_SUCCESS);
    CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d1), CUDA_SUCCESS);
    CHECK(ordinal == 1);
    CU(cuCtxSetCurrent(ctx0), CUDA_SUCCESS);
    unsigned type = 0;
    CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d1), CUDA_SUCCESS);
    CHECK(type == CU_MEMORYTYPE_DEVICE);
    CU(cuMemFree(d1), CUDA_SUCCESS);
    CU(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
}

static void test_vmm(void)
{
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED, .location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}};
    size_t gran = 0;
    CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
    CHECK(gran == 2 * MiB);
    CUdeviceptr va;
    CU(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0), CUDA_SUCCESS);
    CHECK(va % (2 * MiB) == 0);
    CUmemGenericAllocationHandle h1, h2;
    CU(cuMemCreate(&h1, 2 * MiB, &prop, 0), CUDA_SUCCESS);
    CU(cuMemCreate(&h2, 2 * MiB, &prop, 0), CUDA_SUCCESS);
    CU(cuMemMap(va, 2 * MiB, 0, h1, 0), CUDA_SUCCESS);
    CU(cuMemMap(va + 2 * MiB, 2 * MiB, 0, h2, 0), CUDA_SUCCESS);
    CU(cuMemMap(va, 2 * MiB, 0, h2, 0), CUDA_ERROR_INVALID_VALUE); /* already mapped */
    CUmemAccessDesc rw = {.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CU(cuMemSetAccess(va, 4 * MiB, &rw, 1), CUDA_SUCCESS);

    /* A copy across the boundary of two adjacent mappings works. */
    char in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (char)i;
    CU(cuMemcpyHtoD(va + 2 * MiB - 128, in, 256), CUDA_SUCCESS);
    CU(cuMemcpyDtoH(out, va + 2 * MiB - 128, 256), CUDA_SUCCESS);
    CHECK(!memcmp(in, out, 256));

    /* The address range is the one mapping; the pointer attribute range is the reservation. */
    CUdeviceptr base = 0;
    size_t size = 0;
    CU(cuMemGetAddressRange(&base, &size, va + 2 * MiB + 5), CUDA_SUCCESS);
    CHECK(base == va + 2 * MiB && size == 2 * MiB);
    CU(cuMemGetAddressRange(&base, &size, va + 4 * MiB + 5), CUDA_ERROR_NOT_FOUND);
    CUdeviceptr start = 0;
    size_t range = 0;
    CU(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + 3 * MiB), CUDA_SUCCESS);
    CU(cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, va + 3 * MiB), CUDA_SUCCESS);
    CHECK(start == va && range == 8 * MiB);

    /* Into reserved but unmapped space: refused. */
    CU(cuMemcpyHtoD(va + 4 * MiB - 128, in, 256), CUDA_ERROR_INVALID_VALUE);
    CU(cuMemcpyHtoD(va + 5 * MiB, in, 16), CUDA_ERROR_INVALID_VALUE);

    /* Physical memory mapped twice aliases. */
    CU(cuMemMap(va + 4 * MiB, 2 * MiB, 0, h1, 0), CUDA_SUCCESS);
    CU(cuMemSetAccess(va + 4 * MiB, 2 * MiB, &rw, 1), CUDA_SUCCESS);
    CU(cuMemcpyDtoH(out, va + 6 * MiB - 128, 128), CUDA_SUCCESS);
    CHECK(!memcmp(out, in, 128));

    CU(cuMemUnmap(va, 3 * MiB), CUDA_ERROR_INVALID_VALUE);       /* not whole mappings */
    CU(cuMemAddressFree(va, 8 * MiB), CUDA_ERROR_INVALID_VALUE); /* still mapped */
    CU(cuMemUnmap(va, 6 * MiB), CUDA_SUCCESS);
    CU(cuMemRelease(h1), CUDA_SUCCESS);
    CU(cuMemRelease(h2), CUDA_SUCCESS);
    CU(cuMemAddressFree(va, 8 * MiB), CUDA_SUCCESS);
}

static void test_proc_address(void)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = -1;
    CU(cuGetProcAddress("cuMemAlloc", &fn, 12000, 0, &st), CUDA_SUCCESS);
    CHECK(st == CU_GET_PROC_ADDRESS_SUCCESS && fn && fn == driver_symbol("cuMemAlloc_v2"));
    CU(cuGetProcAddress("cuMemcpyDtoH", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st), CUDA_SUCCESS);
    CHECK(fn == driver_symbol("cuMemcpyDtoH_v2_ptds"));
    CU(cuGetProcAddress("cuMemcpyDtoH", &fn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st), CUDA_SUCCESS);
    CHECK(fn == driver_symbol("cuMemcpyDtoH_v2"));
    CU(cuGetProcAddress("cuCtxSynchronize", &fn, 13000, 0, &st), CUDA_SUCCESS);
    CHECK(fn == driver_symbol("cuCtxSynchronize_v2"));
    CU(cuGetProcAddress("cuCtxSynchronize", &fn, 12080, 0, &st), CUDA_SUCCESS);
    CHECK(fn == driver_symbol("cuCtxSynchronize"));
    CU(cuGetProcAddress("cuMemCreate", &fn, 10000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT && fn == NULL);
    CU(cuGetProcAddress("cuNoSuchFunction", &fn, 12000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && fn == NULL);
}

static void runtime_d2h(void *arg)
{
    void **a = arg;
    CHECK(cudaMemcpy(a[0], a[1], 4096, cudaMemcpyDeviceToHost) == cudaSuccess);
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n,
                            enum cudaMemcpyKind kind); /* not declared by default */

static void runtime_d2h_ptds(void *arg)
{
    void **a = arg;
    CHECK(cudaMemcpy_ptds(a[0], a[1], 4096, cudaMemcpyDeviceToHost) == cudaSuccess);
}

static void test_runtime(void)
{
    void *d = NULL;
    char in[4096], out[4096];
    for (int i = 0; i < 4096; i++)
        in[i] = (char)(i * 3);
    CHECK(cudaMalloc(&d, 4096) == cudaSuccess && d);
    CHECK(cudaMemcpy(d, in, 4096, cudaMemcpyHostToDevice) == cudaSuccess);
    void *args[] = {out, d};
    CHECK(count_trace("cuMemcpyDtoH_v2", runtime_d2h, args) == 1); /* the runtime reached the driver */
    CHECK(count_trace("cuMemcpyDtoH_v2_ptds", runtime_d2h_ptds, args) == 1);
    CHECK(!memcmp(in, out, 4096));
    CHECK(cudaMemcpy(out, (char *)d + 1, 4096, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue && cudaGetLastError() == cudaSuccess);
    CHECK(!strcmp(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress"));

    struct cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, (char *)d + 10) == cudaSuccess);
    CHECK(attr.type == cudaMemoryTypeDevice && attr.device == 0 && attr.devicePointer == (char *)d + 10);
    CHECK(cudaPointerGetAttributes(&attr, in) == cudaSuccess && attr.type == cudaMemoryTypeUnregistered);

    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult qr;
    CHECK(cudaGetDriverEntryPoint("cuMemcpyDtoH", &fn, cudaEnableDefault, &qr) == cudaSuccess);
    CHECK(qr == cudaDriverEntryPointSuccess && fn == driver_symbol("cuMemcpyDtoH_v2"));
    CHECK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 3000, cudaEnableDefault, &qr) == cudaErrorSymbolNotFound);
    CHECK(qr == cudaDriverEntryPointVersionNotSufficent);

    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaMemsetAsync(d, 0x5a, 4096, s) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(cudaMemcpy(out, d, 1, cudaMemcpyDeviceToHost) == cudaSuccess && out[0] == 0x5a);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    CHECK(cudaMemcpyAsync(out, d, 16, cudaMemcpyDeviceToHost, s) == cudaErrorInvalidResourceHandle);
    CHECK(cudaSetDevice(2) == cudaErrorInvalidDevice);
    CHECK(cudaFree(d) == cudaSuccess);
}

/* A kernel: out[i] = in[i] + 1 over n bytes, after asking the device whether it may touch them. */
static void add_one(void **params)
{
    unsigned char *out = *(unsigned char **)params[0];
    const unsigned char *in = *(const unsigned char **)params[1];
    size_t n = *(size_t *)params[2];
    if (!simcuda_device_range_ok(in, n, 0) || !simcuda_device_range_ok(out, n, 1))
        return;
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] + 1;
}

static void test_kernel(void)
{
    CUdeviceptr a, b;
    unsigned char host[64];
    memset(host, 41, sizeof host);
    CU(cuMemAlloc(&a, 64), CUDA_SUCCESS);
    CU(cuMemAlloc(&b, 64), CUDA_SUCCESS);
    CU(cuMemcpyHtoD(a, host, 64), CUDA_SUCCESS);
    CUfunction f = simcuda_function_from_host(add_one);
    size_t sizes[] = {sizeof(CUdeviceptr), sizeof(CUdeviceptr), sizeof(size_t)};
    CU(simcuda_function_set_param_sizes(f, 3, sizes), CUDA_SUCCESS);
    size_t n = 64;
    void *params[] = {&b, &a, &n};
    CU(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL), CUDA_SUCCESS);
    n = 1; /* copied at launch: the kernel still sees 64 */
    CU(cuCtxSynchronize(), CUDA_SUCCESS);
    CU(cuMemcpyDtoH(host, b, 64), CUDA_SUCCESS);
    CHECK(host[0] == 42 && host[63] == 42);
    CU(cuLaunchKernel(f, 0, 1, 1, 64, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    CU(cuMemFree(a), CUDA_SUCCESS);
    CU(cuMemFree(b), CUDA_SUCCESS);
}

/* Mapped but not made accessible: the copy engine faults. */
static int no_access_child(void)
{
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED, .location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}};
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    char buf[16] = {0};
    if (cuMemAddressReserve(&va, 2 * MiB, 0, 0, 0) || cuMemCreate(&h, 2 * MiB, &prop, 0) ||
        cuMemMap(va, 2 * MiB, 0, h, 0))
        return 2;
    return cuMemcpyHtoD(va, buf, 16) == CUDA_ERROR_ILLEGAL_ADDRESS && cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS
               ? 0
               : 3;
}

static void run_child(const char *what, int (*fn)(void))
{
    pid_t child = fork();
    if (child == 0)
        _exit(fn());
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "FAIL: %s (child status %#x)\n", what, status);
        failures++;
    }
}

/* A synchronous copy from freed device memory faults at once; sticky from then on. */
static int sticky_sync_child(void)
{
    CUdeviceptr d;
    char buf[16];
    if (cuMemAlloc(&d, 4096) || cuMemFree(d))
        return 2;
    if (cuMemcpyDtoH(buf, d, 16) != CUDA_ERROR_ILLEGAL_ADDRESS)
        return 3;
    if (cuMemAlloc(&d, 16) != CUDA_ERROR_ILLEGAL_ADDRESS || cuCtxSynchronize() != CUDA_ERROR_ILLEGAL_ADDRESS)
        return 4;
    void *p;
    if (cudaMalloc(&p, 16) != cudaErrorIllegalAddress)
        return 5;
    return 0;
}

/* A queued copy from freed memory is accepted, and faults when the stream runs. */
static void test_sticky_async(void)
{
    CUdeviceptr d;
    CUstream s;
    char buf[16];
    CU(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
    CU(cuStreamCreate(&s, 0), CUDA_SUCCESS);
    CU(cuMemFree(d), CUDA_SUCCESS);
    CU(cuMemcpyDtoHAsync(buf, d, 16, s), CUDA_SUCCESS);
    CU(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU(cuMemAlloc(&d, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU(cuStreamQuery(s), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    const char *name = NULL;
    CU(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &name), CUDA_SUCCESS);
    CHECK(name && !strcmp(name, "CUDA_ERROR_ILLEGAL_ADDRESS"));
}

int main(void)
{
    setenv("SIMCUDA_TRACE", "1", 1);
    CUdeviceptr d;
    CUcontext ctx0;
    CU(cuMemAlloc(&d, 16), CUDA_ERROR_NOT_INITIALIZED);
    CU(cuInit(0), CUDA_SUCCESS);
    CU(cuMemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
    CU(cuDevicePrimaryCtxRetain(&ctx0, 0), CUDA_SUCCESS);
    CU(cuCtxSetCurrent(ctx0), CUDA_SUCCESS);
    int version = 0;
    CU(cuDriverGetVersion(&version), CUDA_SUCCESS);
    CHECK(version == 13000);

    test_basic_copies();
    test_2d_and_friends();
    test_devices(ctx0);
    test_vmm();
    test_proc_address();
    test_runtime();
    test_kernel();

    run_child("a synchronous copy from freed memory is the sticky fault", sticky_sync_child);
    run_child("a copy into a mapping without access is the sticky fault", no_access_child);
    test_sticky_async();

    if (failures)
        fprintf(stderr, "simcuda smoke: %d failure(s)\n", failures);
    else
        printf("simcuda smoke: ok\n");
    return failures != 0;
}
