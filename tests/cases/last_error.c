/* The thread's last error, row by row: every wrapped HIP entry point (src/hip/api.inc) called in
 * a failing form, then in a succeeding form, each followed by its return code and
 * hipPeekAtLastError, then hipGetLastError (last_error.h says why).  The per-thread forms come
 * from last_error_spt.c, the same kind of rows built with HIP_API_PER_THREAD_DEFAULT_STREAM.
 * Kernels: poke and scale of tests/cases/test_kernels.hip (their code object, embedded as
 * hs_test_kernels, carries the argument metadata hipshadow reads at a kernel's first launch), run
 * by the simulator as the host functions below.  The last rows fault the GPU: the sticky error. */
#include "common.h"
#include "last_error.h"
#include "sim_kernels.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

static int new_rule;         /* ROCm 7 on: only failures (not hipErrorNotReady) set the last error */
static hipError_t pending;   /* what hipPeekAtLastError must say, by the rule */
static hipError_t gpu_error; /* from ROCm 7, once the GPU is in error: every call's answer */
static int broken;           /* answers against the rule, and failing forms that did not fail */

static int failure(hipError_t e) { return e != hipSuccess && e != hipErrorNotReady; }

void le_row(const char *name)
{
    hipGetLastError();
    pending = hipSuccess;
    printf("%-32s", name);
}

hipError_t le_form(const char *what, hipError_t rc)
{
    hipError_t peek = hipPeekAtLastError();
    if (new_rule && gpu_error)
        pending = gpu_error;
    else if (!new_rule || failure(rc))
        pending = rc;
    printf(" %s %s peek %s", what, hipGetErrorName(rc), hipGetErrorName(peek));
    if (peek != pending) {
        printf(" (rule: %s)", hipGetErrorName(pending));
        broken++;
        pending = peek;
    }
    if (!strcmp(what, "fail") && !failure(rc)) {
        printf(" (did not fail)");
        broken++;
    }
    printf(";");
    return rc;
}

void le_end(void)
{
    hipError_t got = hipGetLastError();
    printf(" get %s", hipGetErrorName(got));
    if (got != pending) {
        printf(" (rule: %s)", hipGetErrorName(pending));
        broken++;
    }
    pending = new_rule ? gpu_error : hipSuccess;
    printf("\n");
    fflush(stdout);
}

/* ---- kernels, run on the host by the simulator (sim_kernels.h) ---- */

/* The host stubs hipcc would make for them. */
static void poke_stub(void) {}
static void scale_stub(void) {}

static int host_fn_calls;
static void host_fn(void *data)
{
    (void)data;
    host_fn_calls++;
}
static void callback(hipStream_t s, hipError_t status, void *data)
{
    (void)s;
    (void)status;
    (void)data;
    host_fn_calls++;
}

/* Not exported by Debian's libamdhip64 5.2 (hipExtModuleLaunchKernel only as a C++ name): found
 * at run time, as programs built against newer releases reach them. */
typedef hipError_t (*launch_host_func_t)(hipStream_t, void (*)(void *), void *);
typedef hipError_t (*get_proc_address_t)(const char *, void **, int, uint64_t, int *);
typedef hipError_t (*ext_module_launch_t)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                          size_t, hipStream_t, void **, void **, hipEvent_t, hipEvent_t, uint32_t);
typedef hipError_t (*module_launch_coop_t)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, hipStream_t, void **);

static void *found(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f) {
        fprintf(stderr, "%s: not found\n", name);
        exit(99);
    }
    return f;
}

static const dim3 one = {1, 1, 1}, none = {1, 0, 1};

static void memory_rows(const le_res *r)
{
    void *p = NULL, *q = NULL;
    size_t pitch = 0;
    const size_t huge = 1ull << 40; /* more than the device has */

    le_row("hipMalloc");
    FAIL(hipMalloc(&p, huge));
    OK(hipMalloc(&p, 4096));
    le_end();
    MUST(hipFree(p));

    le_row("hipExtMallocWithFlags");
    FAIL(hipExtMallocWithFlags(&p, huge, 0));
    OK(hipExtMallocWithFlags(&p, 4096, 0));
    le_end();
    MUST(hipFree(p));

    le_row("hipMallocManaged");
    FAIL(hipMallocManaged(&p, huge, hipMemAttachGlobal));
    OK(hipMallocManaged(&p, 4096, hipMemAttachGlobal));
    le_end();
    MUST(hipFree(p));

    le_row("hipMallocPitch");
    FAIL(hipMallocPitch(&p, &pitch, 1 << 20, 1 << 22));
    OK(hipMallocPitch(&p, &pitch, 64, 4));
    le_end();
    MUST(hipFree(p));

    le_row("hipMallocAsync");
    FAIL(hipMallocAsync(&p, huge, r->stream));
    OK(hipMallocAsync(&p, 4096, r->stream));
    le_end();

    le_row("hipFreeAsync");
    FAIL(hipFreeAsync(p, r->gone));
    OK(hipFreeAsync(p, r->stream));
    le_end();
    MUST(hipStreamSynchronize(r->stream));

    hipMemPool_t pool = NULL;
    hipMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    le_row("hipMemPoolCreate");
    FAIL(hipMemPoolCreate(NULL, &props));
    OK(hipMemPoolCreate(&pool, &props));
    le_end();

    le_row("hipMallocFromPoolAsync");
    FAIL(hipMallocFromPoolAsync(&p, 4096, NULL, r->stream));
    OK(hipMallocFromPoolAsync(&p, 4096, pool, r->stream));
    le_end();
    MUST(hipFreeAsync(p, r->stream));
    MUST(hipStreamSynchronize(r->stream));

    le_row("hipMemPoolTrimTo");
    FAIL(hipMemPoolTrimTo(NULL, 0));
    OK(hipMemPoolTrimTo(pool, 0));
    le_end();

    le_row("hipMemPoolDestroy");
    FAIL(hipMemPoolDestroy(NULL));
    OK(hipMemPoolDestroy(pool));
    le_end();

    le_row("hipHostMalloc");
    FAIL(hipHostMalloc(&p, 1ull << 50, 0));
    OK(hipHostMalloc(&p, 4096, 0));
    le_end();

    le_row("hipHostFree");
    FAIL(hipHostFree(r->host));
    OK(hipHostFree(p));
    le_end();

    le_row("hipMallocHost");
    FAIL(hipMallocHost(&p, 1ull << 50));
    OK(hipMallocHost(&p, 4096));
    le_end();

    le_row("hipFreeHost");
    FAIL(hipFreeHost(r->host));
    OK(hipFreeHost(p));
    le_end();

    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    le_row("hipHostRegister");
    FAIL(hipHostRegister(page, 0, 0));
    OK(hipHostRegister(page, 4096, 0));
    le_end();

    le_row("hipHostUnregister");
    FAIL(hipHostUnregister(r->host));
    OK(hipHostUnregister(page));
    le_end();
    munmap(page, 4096);

    MUST(hipMalloc(&q, 4096));
    le_row("hipFree");
    FAIL(hipFree((char *)q + 64)); /* not an allocation's base */
    OK(hipFree(q));
    le_end();
}

static void copy_rows(const le_res *r)
{
    const hipMemcpyKind bad_kind = (hipMemcpyKind)7;

    le_row("hipMemcpy");
    FAIL(hipMemcpy(r->dev, r->host, 64, bad_kind));
    OK(hipMemcpy(r->dev, r->host, 64, hipMemcpyHostToDevice));
    le_end();

    le_row("hipMemcpyWithStream");
    FAIL(hipMemcpyWithStream(r->dev, r->host, 64, bad_kind, r->stream));
    OK(hipMemcpyWithStream(r->dev, r->host, 64, hipMemcpyHostToDevice, r->stream));
    le_end();

    le_row("hipMemcpyAsync");
    FAIL(hipMemcpyAsync(r->dev, r->host, 64, bad_kind, r->stream));
    OK(hipMemcpyAsync(r->dev, r->host, 64, hipMemcpyHostToDevice, r->stream));
    le_end();

    /* The typed copies fail where they run past the end of the device allocation. */
    le_row("hipMemcpyDtoH");
    FAIL(hipMemcpyDtoH(r->host, r->dev, 8192));
    OK(hipMemcpyDtoH(r->host, r->dev, 4096));
    le_end();

    le_row("hipMemcpyDtoHAsync");
    FAIL(hipMemcpyDtoHAsync(r->pinned, r->dev, 8192, r->stream));
    OK(hipMemcpyDtoHAsync(r->pinned, r->dev, 4096, r->stream));
    le_end();

    le_row("hipMemcpyHtoD");
    FAIL(hipMemcpyHtoD(r->dev, r->host, 8192));
    OK(hipMemcpyHtoD(r->dev, r->host, 4096));
    le_end();

    le_row("hipMemcpyHtoDAsync");
    FAIL(hipMemcpyHtoDAsync(r->dev, r->pinned, 8192, r->stream));
    OK(hipMemcpyHtoDAsync(r->dev, r->pinned, 4096, r->stream));
    le_end();

    le_row("hipMemcpyDtoD");
    FAIL(hipMemcpyDtoD(r->dev2, r->dev, 8192));
    OK(hipMemcpyDtoD(r->dev2, r->dev, 4096));
    le_end();

    le_row("hipMemcpyDtoDAsync");
    FAIL(hipMemcpyDtoDAsync(r->dev2, r->dev, 8192, r->stream));
    OK(hipMemcpyDtoDAsync(r->dev2, r->dev, 4096, r->stream));
    le_end();

    le_row("hipMemcpy2D"); /* a row wider than its pitch */
    FAIL(hipMemcpy2D(r->dev, 32, r->host, 64, 64, 4, hipMemcpyHostToDevice));
    OK(hipMemcpy2D(r->dev, 64, r->host, 64, 64, 4, hipMemcpyHostToDevice));
    le_end();

    le_row("hipMemcpy2DAsync");
    FAIL(hipMemcpy2DAsync(r->dev, 32, r->pinned, 64, 64, 4, hipMemcpyHostToDevice, r->stream));
    OK(hipMemcpy2DAsync(r->dev, 64, r->pinned, 64, 64, 4, hipMemcpyHostToDevice, r->stream));
    le_end();

    le_row("hipMemcpyPeer"); /* a device that does not exist */
    FAIL(hipMemcpyPeer(r->dev2, 99, r->dev, 0, 64));
    OK(hipMemcpyPeer(r->dev2, 0, r->dev, 0, 64));
    le_end();

    le_row("hipMemcpyPeerAsync");
    FAIL(hipMemcpyPeerAsync(r->dev2, 99, r->dev, 0, 64, r->stream));
    OK(hipMemcpyPeerAsync(r->dev2, 0, r->dev, 0, 64, r->stream));
    le_end();
    MUST(hipStreamSynchronize(r->stream));
}

static void memset_rows(const le_res *r)
{
    /* A memset fails on pageable host memory, which the device cannot reach. */
    le_row("hipMemset");
    FAIL(hipMemset(r->host, 0, 64));
    OK(hipMemset(r->dev, 0, 64));
    le_end();

    le_row("hipMemsetAsync");
    FAIL(hipMemsetAsync(r->host, 0, 64, r->stream));
    OK(hipMemsetAsync(r->dev, 0, 64, r->stream));
    le_end();

    le_row("hipMemsetD8");
    FAIL(hipMemsetD8(r->host, 0, 64));
    OK(hipMemsetD8(r->dev, 0, 64));
    le_end();

    le_row("hipMemsetD8Async");
    FAIL(hipMemsetD8Async(r->host, 0, 64, r->stream));
    OK(hipMemsetD8Async(r->dev, 0, 64, r->stream));
    le_end();

    le_row("hipMemsetD16");
    FAIL(hipMemsetD16(r->host, 0, 32));
    OK(hipMemsetD16(r->dev, 0, 32));
    le_end();

    le_row("hipMemsetD16Async");
    FAIL(hipMemsetD16Async(r->host, 0, 32, r->stream));
    OK(hipMemsetD16Async(r->dev, 0, 32, r->stream));
    le_end();

    le_row("hipMemsetD32");
    FAIL(hipMemsetD32(r->host, 0, 16));
    OK(hipMemsetD32(r->dev, 0, 16));
    le_end();

    le_row("hipMemsetD32Async");
    FAIL(hipMemsetD32Async(r->host, 0, 16, r->stream));
    OK(hipMemsetD32Async(r->dev, 0, 16, r->stream));
    le_end();
    MUST(hipStreamSynchronize(r->stream));
}

static void stream_rows(const le_res *r)
{
    hipStream_t s = NULL;
    le_row("hipStreamCreate");
    FAIL(hipStreamCreate(NULL));
    OK(hipStreamCreate(&s));
    le_end();
    MUST(hipStreamDestroy(s));

    le_row("hipStreamCreateWithFlags");
    FAIL(hipStreamCreateWithFlags(NULL, hipStreamNonBlocking));
    OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    le_end();
    MUST(hipStreamDestroy(s));

    le_row("hipStreamCreateWithPriority");
    FAIL(hipStreamCreateWithPriority(NULL, 0, 0));
    OK(hipStreamCreateWithPriority(&s, 0, 0));
    le_end();
    MUST(hipStreamDestroy(s));

    const uint32_t mask = 0xf;
    le_row("hipExtStreamCreateWithCUMask");
    FAIL(hipExtStreamCreateWithCUMask(NULL, 1, &mask));
    OK(hipExtStreamCreateWithCUMask(&s, 1, &mask));
    le_end();

    le_row("hipStreamDestroy"); /* gone: destroyed before */
    FAIL(hipStreamDestroy(r->gone));
    OK(hipStreamDestroy(s));
    le_end();

    le_row("hipStreamSynchronize");
    FAIL(hipStreamSynchronize(r->gone));
    OK(hipStreamSynchronize(r->stream));
    le_end();

    /* Work still queued is "running": the query says hipErrorNotReady, which is no failure. */
    le_row("hipStreamQuery");
    FAIL(hipStreamQuery(r->gone));
    MUST(hipMemcpyAsync(r->dev, r->pinned, 64, hipMemcpyHostToDevice, r->stream));
    le_form("busy", hipStreamQuery(r->stream));
    MUST(hipStreamSynchronize(r->stream));
    OK(hipStreamQuery(r->stream));
    le_end();

    /* Nothing may synchronise the device while a stream is captured. */
    hipStream_t cap;
    hipGraph_t graph;
    MUST(hipStreamCreateWithFlags(&cap, hipStreamNonBlocking));
    MUST(hipStreamBeginCapture(cap, hipStreamCaptureModeRelaxed));
    le_row("hipDeviceSynchronize");
    FAIL(hipDeviceSynchronize());
    MUST(hipStreamEndCapture(cap, &graph));
    OK(hipDeviceSynchronize());
    le_end();
    MUST(hipGraphDestroy(graph));
    MUST(hipStreamDestroy(cap));
}

static void event_rows(const le_res *r)
{
    hipEvent_t e = NULL;
    le_row("hipEventCreate");
    FAIL(hipEventCreate(NULL));
    OK(hipEventCreate(&e));
    le_end();
    MUST(hipEventDestroy(e));

    le_row("hipEventCreateWithFlags");
    FAIL(hipEventCreateWithFlags(NULL, hipEventDisableTiming));
    OK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
    le_end();

    le_row("hipEventRecord");
    FAIL(hipEventRecord(NULL, r->stream));
    OK(hipEventRecord(e, r->stream));
    le_end();

    le_row("hipStreamWaitEvent");
    FAIL(hipStreamWaitEvent(r->stream, NULL, 0));
    OK(hipStreamWaitEvent(r->stream, e, 0));
    le_end();

    le_row("hipEventSynchronize");
    FAIL(hipEventSynchronize(NULL));
    OK(hipEventSynchronize(e));
    le_end();

    le_row("hipEventQuery");
    FAIL(hipEventQuery(NULL));
    OK(hipEventQuery(e));
    le_end();

    le_row("hipEventDestroy");
    FAIL(hipEventDestroy(NULL));
    OK(hipEventDestroy(e));
    le_end();
}

static hipGraph_t capture_rows(const le_res *r)
{
    hipStream_t cap;
    hipStreamCaptureStatus status;
    hipGraph_t graph = NULL;
    MUST(hipStreamCreateWithFlags(&cap, hipStreamNonBlocking));

    le_row("hipStreamBeginCapture"); /* the null stream cannot be captured */
    FAIL(hipStreamBeginCapture(NULL, hipStreamCaptureModeRelaxed));
    OK(hipStreamBeginCapture(cap, hipStreamCaptureModeRelaxed));
    le_end();

    le_row("hipStreamIsCapturing");
    FAIL(hipStreamIsCapturing(cap, NULL));
    OK(hipStreamIsCapturing(cap, &status));
    le_end();

    MUST(hipMemsetAsync(r->dev, 0, 64, cap));
    le_row("hipStreamEndCapture"); /* a stream that is not capturing */
    FAIL(hipStreamEndCapture(r->stream, &graph));
    OK(hipStreamEndCapture(cap, &graph));
    le_end();
    MUST(hipStreamDestroy(cap));
    return graph;
}

static void lookup_rows(void)
{
    get_proc_address_t get_proc_address = (get_proc_address_t)found("hipGetProcAddress");
    void *fn = NULL;
    int status = 0;
    le_row("hipGetProcAddress"); /* ROCm 6.1 on: before, hipErrorNotSupported either way */
    FAIL(get_proc_address("hipNoSuchFunction", &fn, 60100000, 0, &status));
    OK(get_proc_address("hipMalloc", &fn, 60100000, 0, &status));
    le_end();
}

static void vmm_rows(const le_res *r)
{
    const size_t size = 2u << 20;
    hipMemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    void *va = NULL;
    hipMemGenericAllocationHandle_t h = NULL;

    le_row("hipMemAddressReserve");
    FAIL(hipMemAddressReserve(&va, 0, 0, NULL, 0));
    OK(hipMemAddressReserve(&va, size, 0, NULL, 0));
    le_end();

    le_row("hipMemCreate"); /* not a multiple of the granularity */
    FAIL(hipMemCreate(&h, 4096, &prop, 0));
    OK(hipMemCreate(&h, size, &prop, 0));
    le_end();

    le_row("hipMemMap"); /* not reserved space */
    FAIL(hipMemMap(r->dev, size, 0, h, 0));
    OK(hipMemMap(va, size, 0, h, 0));
    le_end();

    hipMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.location = prop.location;
    desc.flags = hipMemAccessFlagsProtReadWrite;
    le_row("hipMemSetAccess");
    FAIL(hipMemSetAccess(va, size, &desc, 0));
    OK(hipMemSetAccess(va, size, &desc, 1));
    le_end();

    le_row("hipMemUnmap");
    FAIL(hipMemUnmap(r->dev, size));
    OK(hipMemUnmap(va, size));
    le_end();

    le_row("hipMemRelease");
    FAIL(hipMemRelease(NULL));
    OK(hipMemRelease(h));
    le_end();

    le_row("hipMemAddressFree");
    FAIL(hipMemAddressFree(r->dev, size));
    OK(hipMemAddressFree(va, size));
    le_end();
}

static void launch_rows(const le_res *r, hipGraph_t graph)
{
    static const char not_an_image[64] = "not a code object";
    hipModule_t module = NULL;
    hipFunction_t poke = NULL, scale = NULL;
    int *p = (int *)r->dev;
    long long offset = 1;
    int value = 7, n = 16;
    float k = 2.0f, *out = (float *)r->dev2, *in = (float *)r->dev;
    void *poke_args[] = {&p, &offset, &value}, *scale_args[] = {&out, &in, &n, &k};

    le_row("hipModuleLoadData");
    FAIL(hipModuleLoadData(&module, not_an_image));
    OK(hipModuleLoadData(&module, hs_test_kernels));
    le_end();

    le_row("hipModuleGetFunction");
    FAIL(hipModuleGetFunction(&poke, module, "no_such_kernel"));
    OK(hipModuleGetFunction(&poke, module, "poke"));
    le_end();
    MUST(hipModuleGetFunction(&scale, module, "scale"));

    /* The failing forms have a block of no threads. */
    le_row("hipModuleLaunchKernel");
    FAIL(hipModuleLaunchKernel(poke, 1, 1, 1, 0, 1, 1, 0, r->stream, poke_args, NULL));
    OK(hipModuleLaunchKernel(poke, 1, 1, 1, 1, 1, 1, 0, r->stream, poke_args, NULL));
    le_end();

    ext_module_launch_t ext_module_launch = (ext_module_launch_t)found("hipExtModuleLaunchKernel");
    le_row("hipExtModuleLaunchKernel");
    FAIL(ext_module_launch(poke, 1, 1, 1, 0, 1, 1, 0, r->stream, poke_args, NULL, NULL, NULL, 0));
    OK(ext_module_launch(poke, 1, 1, 1, 1, 1, 1, 0, r->stream, poke_args, NULL, NULL, NULL, 0));
    le_end();

    module_launch_coop_t module_launch_coop = (module_launch_coop_t)found("hipModuleLaunchCooperativeKernel");
    le_row("hipModuleLaunchCooperativeKernel"); /* scale's first launch */
    FAIL(module_launch_coop(scale, 1, 1, 1, 0, 1, 1, 0, r->stream, scale_args));
    OK(module_launch_coop(scale, 1, 1, 1, 16, 1, 1, 0, r->stream, scale_args));
    le_end();

    le_row("hipLaunchKernel"); /* the poke stub's first launch */
    FAIL(hipLaunchKernel(r->stub, one, none, poke_args, 0, r->stream));
    OK(hipLaunchKernel(r->stub, one, one, poke_args, 0, r->stream));
    le_end();

    le_row("hipExtLaunchKernel"); /* the scale stub's first launch */
    FAIL(hipExtLaunchKernel((const void *)scale_stub, one, none, scale_args, 0, r->stream, NULL, NULL, 0));
    OK(hipExtLaunchKernel((const void *)scale_stub, one, one, scale_args, 0, r->stream, NULL, NULL, 0));
    le_end();

    le_row("hipLaunchCooperativeKernel");
    FAIL(hipLaunchCooperativeKernel(r->stub, one, none, poke_args, 0, r->stream));
    OK(hipLaunchCooperativeKernel(r->stub, one, one, poke_args, 0, r->stream));
    le_end();

    hipGraphExec_t exec = NULL;
    MUST(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    le_row("hipGraphLaunch");
    FAIL(hipGraphLaunch(NULL, r->stream));
    OK(hipGraphLaunch(exec, r->stream));
    le_end();
    MUST(hipGraphExecDestroy(exec));
    MUST(hipGraphDestroy(graph));

    launch_host_func_t launch_host_func = (launch_host_func_t)found("hipLaunchHostFunc");
    le_row("hipLaunchHostFunc");
    FAIL(launch_host_func(r->stream, NULL, NULL));
    OK(launch_host_func(r->stream, host_fn, NULL));
    le_end();

    le_row("hipStreamAddCallback"); /* flags must be 0 */
    FAIL(hipStreamAddCallback(r->stream, callback, NULL, 1));
    OK(hipStreamAddCallback(r->stream, callback, NULL, 0));
    le_end();
    MUST(hipStreamSynchronize(r->stream));
    printf("host functions and callbacks: %d calls\n", host_fn_calls);
}

/* A kernel writes 1 GiB past its buffer: the GPU is in error from then on.  Before ROCm 7 only
 * the calls that meet the fault return it; from 7, every call returns it and hipGetLastError
 * keeps it.  The simulator runs a kernel at its launch: the GPU is in error as the launch
 * returns (on a GPU, some time after). */
static void sticky_rows(const le_res *r)
{
    int *p = (int *)r->dev, d = 0, value = 7;
    long long offset = 1ll << 28;
    void *args[] = {&p, &offset, &value};
    le_row("sticky fault");
    gpu_error = hipErrorIllegalAddress;
    le_form("launch", hipLaunchKernel(r->stub, one, one, args, 0, r->stream));
    le_form("sync", hipDeviceSynchronize());
    le_form("call", hipGetDevice(&d));
    le_end();
    le_row("sticky fault, later");
    le_form("call", hipGetDevice(&d));
    le_end();
}

int main(void)
{
    void **(*reg_fatbin)(const void *) = (void **(*)(const void *))dlsym(RTLD_DEFAULT, "__hipRegisterFatBinary");
    void (*reg_fn)(void **, const void *, char *, const char *, unsigned, void *, void *, void *, void *,
                   int *) = (void (*)(void **, const void *, char *, const char *, unsigned, void *, void *, void *,
                                      void *, int *))dlsym(RTLD_DEFAULT, "__hipRegisterFunction");
    if (!reg_fatbin || !reg_fn || !sim_kernels_register())
        return 77; /* not the simulator, or no AMD code object was built */
    /* What hipcc's generated constructor does. */
    static struct {
        unsigned magic, version;
        const void *binary;
        void *unused;
    } wrapper = {0x48495046, 1, NULL, NULL};
    wrapper.binary = hs_test_kernels;
    void **modules = reg_fatbin(&wrapper);
    reg_fn(modules, (const void *)poke_stub, (char *)"poke", "poke", 0, NULL, NULL, NULL, NULL, NULL);
    reg_fn(modules, (const void *)scale_stub, (char *)"scale", "scale", 0, NULL, NULL, NULL, NULL, NULL);

    int version = 0;
    MUST(hipRuntimeGetVersion(&version));
    new_rule = version >= 70000000;
    printf("HIP runtime %d: %s\n", version,
           new_rule ? "only failures set the last error" : "every call sets the last error");

    le_res r = {.stub = (const void *)poke_stub};
    MUST(hipMalloc((void **)&r.dev, 4096));
    MUST(hipMalloc((void **)&r.dev2, 4096));
    MUST(hipHostMalloc((void **)&r.pinned, 4096, 0));
    r.host = calloc(1, 8192);
    MUST(hipStreamCreate(&r.stream));
    MUST(hipStreamCreate(&r.gone));
    MUST(hipStreamDestroy(r.gone));
    MUST(hipEventCreate(&r.event));
    MUST(hipEventRecord(r.event, r.stream));

    memory_rows(&r);
    copy_rows(&r);
    memset_rows(&r);
    stream_rows(&r);
    event_rows(&r);
    hipGraph_t graph = capture_rows(&r);
    lookup_rows();
    vmm_rows(&r);
    launch_rows(&r, graph);
    le_rows_per_thread(&r);
    sticky_rows(&r);
    printf("last error: %d answers against the rule\n", broken);
    return broken ? 1 : 0;
}
