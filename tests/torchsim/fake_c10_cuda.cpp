// A stand-in for PyTorch's libc10_cuda.so, for CI (no GPU, no PyTorch): a small caching
// allocator on the simulated CUDA runtime that keeps PyTorch's contract where hipshadow's plugin
// looks at it.  It is initialised at its first allocation (PyTorch initialises CUDA lazily), takes
// 2 MiB segments with cudaMalloc, hands out blocks rounded up to 512 bytes, gives a freed
// block's memory to the next request of the same rounded size, and reports every step to the
// attached trace trackers, with the size asked for, as PyTorch's allocator does:
// segment_alloc, alloc, free_requested, free_completed, segment_free (fake_torch_empty_cache).
// The C entry points stand for what a PyTorch program does (torch.empty, del, empty_cache).
#include <c10/cuda/CUDACachingAllocator.h>

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <vector>

namespace c10::cuda::CUDACachingAllocator {
std::atomic<CUDAAllocator *> allocator;
}

namespace {
using namespace c10::cuda::CUDACachingAllocator;

constexpr size_t kSegment = 2 << 20, kRound = 512;

class Fake : public CUDAAllocator {
public:
  bool initialized() override { return ready; }
  std::string name() override { return "native"; }
  void attachAllocatorTraceTracker(AllocatorTraceTracker t) override {
    std::lock_guard<std::recursive_mutex> g(lock);
    trackers.push_back(std::move(t));
  }
  void recordHistory(bool enabled, CreateContextFn recorder, size_t, RecordContext when, bool,
                     const std::vector<std::string> &) override {
    std::lock_guard<std::recursive_mutex> g(lock);
    context_recorder = enabled && when == RecordContext::ALL ? recorder : nullptr;
  }

  void *alloc(size_t n) {
    auto context = gather(); // before the lock, as PyTorch's malloc does (the recorder may take the GIL)
    std::lock_guard<std::recursive_mutex> g(lock);
    ready = true;
    size_t rounded = (n + kRound - 1) / kRound * kRound;
    char *p = nullptr;
    auto &spare = cached[rounded];
    if (!spare.empty()) {
      p = spare.back();
      spare.pop_back();
    } else {
      if (!segment || used + rounded > kSegment) {
        void *s = nullptr;
        if (cudaMalloc(&s, kSegment) != cudaSuccess) // hipshadow attaches its tracker in here
          return nullptr;
        segment = static_cast<char *>(s);
        used = 0;
        segments.push_back(segment);
        trace(TraceEntry::SEGMENT_ALLOC, segment, kSegment);
      }
      p = segment + used;
      used += rounded;
    }
    sizes[p] = n;
    contexts[p] = context;
    trace(TraceEntry::ALLOC, p, n, context);
    return p;
  }

  void release(void *ptr) {
    auto context = gather();
    std::lock_guard<std::recursive_mutex> g(lock);
    char *p = static_cast<char *>(ptr);
    size_t n = sizes[p];
    // PyTorch: "context ? context : block->context_when_allocated"
    trace(TraceEntry::FREE_REQUESTED, p, n, context ? context : contexts[p]);
    trace(TraceEntry::FREE_COMPLETED, p, n, context ? context : contexts[p]);
    contexts.erase(p);
    cached[(n + kRound - 1) / kRound * kRound].push_back(p);
    sizes.erase(p);
  }

  void empty_cache() {
    std::lock_guard<std::recursive_mutex> g(lock);
    if (!sizes.empty())
      return; // a segment with live blocks stays (PyTorch frees only unused segments)
    for (char *s : segments) {
      trace(TraceEntry::SEGMENT_FREE, s, kSegment);
      cudaFree(s);
    }
    segments.clear();
    cached.clear();
    segment = nullptr;
  }

private:
  std::shared_ptr<c10::GatheredContext> gather() {
    CreateContextFn r = context_recorder;
    return r ? r() : nullptr;
  }
  void trace(TraceEntry::Action a, void *p, size_t n, std::shared_ptr<c10::GatheredContext> context = nullptr) {
    TraceEntry e(a, 0, reinterpret_cast<size_t>(p), n, nullptr, {0, 0}, std::move(context));
    for (auto &t : trackers)
      t(e);
  }

  std::recursive_mutex lock;
  bool ready = false;
  std::vector<AllocatorTraceTracker> trackers;
  char *segment = nullptr;
  size_t used = 0;
  std::vector<char *> segments;
  std::map<size_t, std::vector<char *>> cached;
  std::map<char *, size_t> sizes;
  std::map<char *, std::shared_ptr<c10::GatheredContext>> contexts;
  std::atomic<CreateContextFn> context_recorder{nullptr};
};

Fake fake;
struct Install {
  Install() { allocator.store(&fake); }
} install;
} // namespace

extern "C" __attribute__((visibility("default"))) void *fake_torch_alloc(size_t n) { return fake.alloc(n); }
extern "C" __attribute__((visibility("default"))) void fake_torch_free(void *p) { fake.release(p); }
extern "C" __attribute__((visibility("default"))) void fake_torch_empty_cache(void) { fake.empty_cache(); }
