// The one file of hipshadow that speaks PyTorch's C++: it attaches a trace tracker to the
// CUDA caching allocator (c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker, in
// PyTorch since 2.1) and turns each TraceEntry into a plain hipshadow_block_event.
//
// Why this hook: it is the allocator's own, public, stream-ordered account of every block
// (alloc, free requested, free completed once the streams that used it are done, segment
// alloc/free/map/unmap), with the size the caller asked for, for every pool, graph-private pools
// and expandable segments included.  It runs under the allocator's lock and must not call back
// into PyTorch nor take the GIL: the callback copies five fields and returns.
//
// Built against the installed torch's headers (src/torch/build.sh).  Fields that older versions
// lack (device_, mempool_) are read only where they exist.
#include "plugin.h"

#include <c10/cuda/CUDACachingAllocator.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <vector>
#include <sys/stat.h>

#ifndef HS_TORCH_VERSION
#define HS_TORCH_VERSION "?"
#endif

namespace CCA = c10::cuda::CUDACachingAllocator;

namespace {

#ifndef HS_TP_NO_HOOK
using Entry = CCA::TraceEntry;

template <class T> auto device_of(const T &e, int) -> decltype((int)e.device_) { return (int)e.device_; }
template <class T> int device_of(const T &, long) { return -1; }

template <class T> auto pool_of(const T &e, uint64_t out[2], int) -> decltype((void)e.mempool_.first)
{
    out[0] = (uint64_t)e.mempool_.first;
    out[1] = (uint64_t)e.mempool_.second;
}
template <class T> void pool_of(const T &, uint64_t out[2], long) { out[0] = out[1] = 0; }

uint32_t action_of(Entry::Action a)
{
    switch (a) {
    case Entry::ALLOC: return HIPSHADOW_BLOCK_ALLOC;
    case Entry::FREE_REQUESTED: return HIPSHADOW_BLOCK_FREE_REQUESTED;
    case Entry::FREE_COMPLETED: return HIPSHADOW_BLOCK_FREE_COMPLETED;
    case Entry::SEGMENT_ALLOC: return HIPSHADOW_BLOCK_SEGMENT_ALLOC;
    case Entry::SEGMENT_FREE: return HIPSHADOW_BLOCK_SEGMENT_FREE;
    case Entry::SEGMENT_MAP: return HIPSHADOW_BLOCK_SEGMENT_MAP;
    case Entry::SEGMENT_UNMAP: return HIPSHADOW_BLOCK_SEGMENT_UNMAP;
    case Entry::SNAPSHOT: return HIPSHADOW_BLOCK_SNAPSHOT;
    case Entry::OOM: return HIPSHADOW_BLOCK_OOM;
    default: return HIPSHADOW_BLOCK_ACTION_COUNT; // an action this plugin does not know: ignored
    }
}
#endif

std::string description;

#ifndef HS_TP_NO_HOOK
// python_stacks=alloc: the allocator gathers a context at each allocation and free, before it
// takes its lock (PyTorch's memory history takes the GIL there too); ours is the Python stack.
struct Context : c10::GatheredContext {
    uint32_t pystack, serial;
    Context(uint32_t p, uint32_t s) : pystack(p), serial(s) {}
};
std::atomic<uint32_t> serials{0};

std::shared_ptr<c10::GatheredContext> gather()
{
    uint32_t id = hs_tp_python_stack(1);
    if (!id)
        return nullptr;
    return std::make_shared<Context>(id, ++serials);
}

// recordHistory's parameters grew over the versions: the newest form this header has (none: no
// contexts, the frames are then taken only where the allocating thread holds the GIL).
struct oldest {};
struct older : oldest {};
struct newer : older {};
template <class A> bool record(A *, oldest) { return false; }
template <class A> auto record(A *a, newer) -> decltype(a->recordHistory(true, gather, 1, CCA::RecordContext::ALL, false,
                                                                          std::vector<std::string>{}), bool())
{
    // Kept entries: one; every action the allocator lets us skip, skipped (we only want contexts).
    a->recordHistory(true, gather, 1, CCA::RecordContext::ALL, false,
                     {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "snapshot", "oom"});
    return true;
}
template <class A> auto record(A *a, older) -> decltype(a->recordHistory(true, gather, 1, CCA::RecordContext::ALL), bool())
{
    a->recordHistory(true, gather, 1, CCA::RecordContext::ALL);
    return true;
}
#endif

} // namespace

extern "C" const char *hs_tp_description(void)
{
    if (description.empty())
        description = std::string("PyTorch ") + HS_TORCH_VERSION + " (native caching allocator)";
    return description.c_str();
}

extern "C" int hs_tp_check(char *why, size_t len)
{
#ifdef HS_TORCH_C10_CUDA
    // The library the allocator lives in must be the one the headers came with: the trace
    // entry's layout is PyTorch's, version by version.
    Dl_info info;
    if (!dladdr((const void *)&CCA::allocator, &info) || !info.dli_fname) {
        snprintf(why, len, "cannot tell which libc10_cuda.so this process loaded");
        return -1;
    }
    char here[PATH_MAX], built[PATH_MAX];
    if (!realpath(info.dli_fname, here) || !realpath(HS_TORCH_C10_CUDA, built) || std::string(here) != built) {
        snprintf(why, len, "it was built against PyTorch %s (%s), and this process loaded %s", HS_TORCH_VERSION,
                 HS_TORCH_C10_CUDA, info.dli_fname);
        return -1;
    }
#if defined(HS_TORCH_C10_CUDA_SIZE)
    struct stat st;
    if (stat(here, &st) != 0 || (long long)st.st_size != (long long)HS_TORCH_C10_CUDA_SIZE) {
        snprintf(why, len, "%s changed since the plugin was built against PyTorch %s (rebuild it)", here,
                 HS_TORCH_VERSION);
        return -1;
    }
#endif
#else
    (void)why;
    (void)len;
#endif
    return 0;
}

extern "C" int hs_tp_attach(hs_tp_emit_fn emit, int with_context, char *why, size_t len)
{
#ifdef HS_TP_NO_HOOK
    (void)emit;
    (void)with_context;
    snprintf(why, len, "PyTorch %s has no allocator trace hook (attachAllocatorTraceTracker, PyTorch 2.1 and later)",
             HS_TORCH_VERSION);
    return -1;
#else
    try {
        CCA::CUDAAllocator *a = CCA::get();
        if (!a || !a->initialized())
            return 0; // CUDA is not initialised yet: ask again at the next segment
        std::string name = a->name();
        if (name != "native") {
            snprintf(why, len, "the CUDA allocator backend is '%s' (PYTORCH_CUDA_ALLOC_CONF), not the native caching allocator",
                     name.c_str());
            return -1;
        }
        a->attachAllocatorTraceTracker([emit](const Entry &e) {
            hipshadow_block_event ev = {};
            ev.action = action_of(e.action_);
            if (ev.action >= HIPSHADOW_BLOCK_ACTION_COUNT)
                return;
            ev.device = device_of(e, 0);
            ev.addr = (uint64_t)e.addr_;
            ev.size = (uint64_t)e.size_;
            ev.stream = (uint64_t)(uintptr_t)e.stream_;
            pool_of(e, ev.pool, 0);
            if (e.context_)
                if (const Context *c = dynamic_cast<const Context *>(e.context_.get())) {
                    ev.pystack = c->pystack;
                    ev.context = c->serial;
                }
            emit(&ev);
        });
        if (with_context)
            record(a, newer{});
        return 1;
    } catch (const std::exception &ex) {
        snprintf(why, len, "attaching to the caching allocator failed: %s", ex.what());
    } catch (...) {
        snprintf(why, len, "attaching to the caching allocator failed");
    }
    return -1;
#endif
}
