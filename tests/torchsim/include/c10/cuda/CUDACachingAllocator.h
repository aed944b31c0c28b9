// A stand-in for PyTorch's c10/cuda/CUDACachingAllocator.h: only what hipshadow's plugin
// (src/torch/tracker.cpp) uses, with PyTorch 2.11's names, types and layout of TraceEntry, so
// that the plugin is built and run in CI against tests/torchsim's fake allocator.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace c10
{
using DeviceIndex = int8_t;
using CaptureId_t = unsigned long long;
using MempoolId_t = std::pair<CaptureId_t, CaptureId_t>;

struct GatheredContext {
    virtual ~GatheredContext() = default;
};

namespace CachingDeviceAllocator
{
using CreateContextFn = std::shared_ptr<GatheredContext> (*)();
enum struct RecordContext { NEVER = 0, STATE = 1, ALLOC = 2, ALL = 3 };

struct TraceEntry {
    enum Action {
        ALLOC,
        FREE_REQUESTED,
        FREE_COMPLETED,
        SEGMENT_ALLOC,
        SEGMENT_FREE,
        SEGMENT_MAP,
        SEGMENT_UNMAP,
        SNAPSHOT,
        OOM
    };
    TraceEntry(Action action, DeviceIndex device, size_t addr, size_t size, void *stream, MempoolId_t mempool,
               std::shared_ptr<GatheredContext> context = nullptr)
        : action_(action), device_(device), addr_(addr), context_(std::move(context)), stream_(stream), size_(size),
          mempool_(mempool)
    {
    }
    Action action_;
    DeviceIndex device_;
    size_t addr_;
    std::shared_ptr<GatheredContext> context_;
    void *stream_{};
    size_t size_;
    MempoolId_t mempool_;
    std::string compile_context_;
    std::string user_metadata_;
};
using AllocatorTraceTracker = std::function<void(const TraceEntry &)>;
} // namespace CachingDeviceAllocator

namespace cuda::CUDACachingAllocator
{
using c10::CachingDeviceAllocator::AllocatorTraceTracker;
using c10::CachingDeviceAllocator::CreateContextFn;
using c10::CachingDeviceAllocator::RecordContext;
using c10::CachingDeviceAllocator::TraceEntry;

class CUDAAllocator
{
  public:
    virtual ~CUDAAllocator() = default;
    virtual bool initialized() = 0;
    virtual std::string name() = 0;
    virtual void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) = 0;
    virtual void recordHistory(bool enabled, CreateContextFn context_recorder, size_t alloc_trace_max_entries,
                               RecordContext when, bool clearHistory, const std::vector<std::string> &skip_actions) = 0;
};

extern std::atomic<CUDAAllocator *> allocator;
inline CUDAAllocator *get() { return allocator.load(); }
} // namespace cuda::CUDACachingAllocator
} // namespace c10
