// Devices, the device guard and the allocators of the reference device.
// Only c10 headers here: this file compiles in a few seconds.
#include "npu.h"  // first: the version gates decide what else to include

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>

#if ADAPTER_DEVICE_ALLOCATOR
#include <c10/core/CachingDeviceAllocator.h>
#endif

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace npu {

// -- devices ---------------------------------------------------------------------------

namespace {

constexpr int kMaxDevices = 16;

c10::DeviceIndex read_device_count() {
  const char* env = std::getenv("ADAPTER_MATRIX_DEVICE_COUNT");
  if (env == nullptr || *env == '\0') return 2;
  char* end = nullptr;
  long n = std::strtol(env, &end, 10);
  TORCH_CHECK(end != env && *end == '\0' && n >= 1 && n <= kMaxDevices,
              "ADAPTER_MATRIX_DEVICE_COUNT must be a number from 1 to ", kMaxDevices, ", got '", env, "'");
  return static_cast<c10::DeviceIndex>(n);
}

thread_local c10::DeviceIndex tls_current_device = 0;

}  // namespace

c10::DeviceIndex device_count() noexcept {
  static const c10::DeviceIndex count = [] {
    try {
      return read_device_count();
    } catch (...) {
      return static_cast<c10::DeviceIndex>(2);
    }
  }();
  return count;
}

void check_device_index(c10::DeviceIndex index) {
  TORCH_CHECK(index >= 0 && index < device_count(), "Invalid device index ", static_cast<int>(index),
              " for the npu device: there are ", static_cast<int>(device_count()),
              " devices (set ADAPTER_MATRIX_DEVICE_COUNT to change that)");
}

c10::DeviceIndex current_device() noexcept { return tls_current_device; }

void set_current_device(c10::DeviceIndex index) {
  check_device_index(index);
  tls_current_device = index;
}

c10::Device device(c10::DeviceIndex index) { return c10::Device(kDeviceType, index); }

// -- the device guard --------------------------------------------------------------------

namespace {

// Streams: work is synchronous, so every stream is complete at once and events are
// trivially reached. Streams still have identities (CUDA-style code creates them, makes
// them current and asks for the current one): id 0 is each device's default stream,
// new streams get fresh ids, and the current stream is per thread and device.
thread_local std::array<c10::StreamId, kMaxDevices> tls_current_streams{};
std::atomic<c10::StreamId> next_stream_id{1};

c10::Stream stream_of(c10::Device d, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, d.has_index() ? d : device(current_device()), id);
}

struct EventTime {
  int64_t ns = 0;  // steady_clock time of the last record()
};

struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDeviceType; }

  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kDeviceType, "expected an npu device, got ", d);
    c10::Device old = getDevice();
    if (d.index() != old.index()) set_current_device(d.index());
    return old;
  }
  c10::Device getDevice() const override { return device(current_device()); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kDeviceType, "expected an npu device, got ", d);
    set_current_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override { tls_current_device = d.index(); }

  // `noexcept` was dropped from these two in 2.7; a noexcept override compiles on both.
  c10::Stream getStream(c10::Device d) const noexcept override {
    return stream_of(d, current_stream_id(d.has_index() ? d.index() : current_device()));
  }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    c10::Stream old = getStream(s.device());
    set_current_stream_id(s.device_index(), s.id());
    return old;
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool = false) const override {
    return stream_of(d, new_stream_id());
  }
#if ADAPTER_GUARD_STREAM_EVENTS
  c10::Stream getNewStream(c10::Device d, int = 0) const override { return stream_of(d, new_stream_id()); }
  void synchronizeEvent(void*) const override {}
  // Milliseconds of host time between the two record() calls (work runs as it is issued).
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start != nullptr && end != nullptr, "Both events must be recorded before calculating elapsed time.");
    auto ns = static_cast<EventTime*>(end)->ns - static_cast<EventTime*>(start)->ns;
    return static_cast<double>(ns) / 1e6;
  }
#endif
#if ADAPTER_GUARD_SYNCHRONIZE_DEVICE
  void synchronizeDevice(const c10::DeviceIndex) const override {}
#endif
  c10::DeviceIndex deviceCount() const noexcept override { return device_count(); }

  // Every event is complete once recorded (work is synchronous); it holds the host time of
  // its last record(), so torch.Event(enable_timing=True).elapsed_time() measures real time.
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    if (*event == nullptr) *event = new EventTime();
    static_cast<EventTime*>(*event)->ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<EventTime*>(event);
  }
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

}  // namespace

c10::StreamId current_stream_id(c10::DeviceIndex index) noexcept {
  return index >= 0 && index < kMaxDevices ? tls_current_streams[index] : 0;
}

void set_current_stream_id(c10::DeviceIndex index, c10::StreamId id) noexcept {
  if (index >= 0 && index < kMaxDevices) tls_current_streams[index] = id;
}

c10::StreamId new_stream_id() noexcept { return next_stream_id.fetch_add(1); }

// -- memory accounting -------------------------------------------------------------------

namespace {

struct Counters {
  std::mutex mutex;
  MemoryStats stats;
};

std::array<Counters, kMaxDevices>& counters() {
  static std::array<Counters, kMaxDevices> all;
  return all;
}

void count_alloc(c10::DeviceIndex index, size_t nbytes) {
  auto& c = counters()[index];
  std::lock_guard<std::mutex> lock(c.mutex);
  auto n = static_cast<int64_t>(nbytes);
  c.stats.allocated_bytes += n;
  c.stats.total_allocated_bytes += n;
  c.stats.allocations += 1;
  c.stats.total_allocations += 1;
  if (c.stats.allocated_bytes > c.stats.peak_allocated_bytes) c.stats.peak_allocated_bytes = c.stats.allocated_bytes;
}

void count_free(c10::DeviceIndex index, size_t nbytes) {
  auto& c = counters()[index];
  std::lock_guard<std::mutex> lock(c.mutex);
  auto n = static_cast<int64_t>(nbytes);
  c.stats.allocated_bytes -= n;
  c.stats.total_freed_bytes += n;
  c.stats.allocations -= 1;
}

// A block of device memory: either allocated by us, or adopted from another owner.
struct Block {
  void* data;
  size_t nbytes;
  c10::DeviceIndex index;
  c10::DataPtr owner;  // set for adopted memory; empty for our own allocations
};

// The profiler's memory view (profile(profile_memory=True)): every block is npu memory.
// An adopted block came from the CPU allocator, which reported it as CPU memory and will
// report its release as CPU memory too; the two CPU entries made here cancel those, so the
// block shows up once, as npu memory, for as long as it is a device block.
void report_to_profiler(const Block& block, bool allocated) {
  if (!c10::memoryProfilingEnabled()) return;
  auto n = static_cast<int64_t>(block.nbytes);
  MemoryStats s = memory_stats(block.index);
  auto total = static_cast<size_t>(s.allocated_bytes);
  if (block.owner && block.nbytes) {
    c10::reportMemoryUsageToProfiler(block.data, allocated ? -n : n, 0, 0, c10::Device(c10::DeviceType::CPU));
  }
  c10::reportMemoryUsageToProfiler(block.data, allocated ? n : -n, total, total, device(block.index));
}

void free_block(void* ctx) {
  auto* block = static_cast<Block*>(ctx);
  count_free(block->index, block->nbytes);
  report_to_profiler(*block, false);
  if (!block->owner) c10::free_cpu(block->data);
  delete block;  // an adopted block releases its memory through `owner` here
}

c10::DataPtr make_block(void* data, size_t nbytes, c10::DeviceIndex index, c10::DataPtr owner) {
  auto* block = new Block{data, nbytes, index, std::move(owner)};
  count_alloc(index, nbytes);
  report_to_profiler(*block, true);
  return c10::DataPtr(data, block, &free_block, device(index));
}

}  // namespace

MemoryStats memory_stats(c10::DeviceIndex index) {
  check_device_index(index);
  auto& c = counters()[index];
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

void reset_peak_memory_stats(c10::DeviceIndex index) {
  check_device_index(index);
  auto& c = counters()[index];
  std::lock_guard<std::mutex> lock(c.mutex);
  c.stats.peak_allocated_bytes = c.stats.allocated_bytes;
}

void reset_accumulated_memory_stats(c10::DeviceIndex index) {
  check_device_index(index);
  auto& c = counters()[index];
  std::lock_guard<std::mutex> lock(c.mutex);
  c.stats.total_allocated_bytes = 0;
  c.stats.total_freed_bytes = 0;
  c.stats.total_allocations = 0;
}

c10::DataPtr adopt(c10::DataPtr&& memory, size_t nbytes, c10::DeviceIndex index) {
  void* data = memory.get();
  return make_block(data, nbytes, index, std::move(memory));
}

// -- allocators --------------------------------------------------------------------------

namespace {

#if ADAPTER_DEVICE_ALLOCATOR
using AllocatorBase = c10::DeviceAllocator;
#else
using AllocatorBase = c10::Allocator;
#endif

#if ADAPTER_ALLOCATOR_NONCONST_ALLOCATE
#define ADAPTER_ALLOCATE_CONST
#else
#define ADAPTER_ALLOCATE_CONST const
#endif

struct DeviceAllocator final : public AllocatorBase {
  c10::DataPtr allocate(size_t nbytes) ADAPTER_ALLOCATE_CONST override {
    c10::DeviceIndex index = current_device();
    void* data = nbytes ? c10::alloc_cpu(nbytes) : nullptr;
    return make_block(data, nbytes, index, c10::DataPtr());
  }
#if ADAPTER_ALLOCATOR_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
#endif
#if ADAPTER_DEVICE_ALLOCATOR
  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t) override {}  // nothing is cached
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex index) override {
    MemoryStats s = memory_stats(index);
    c10::CachingDeviceAllocator::DeviceStats out;
    auto fill = [](c10::CachingAllocator::StatArray& array, int64_t current, int64_t peak, int64_t allocated,
                   int64_t freed) {
      auto& stat = array[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
      stat.current = current;
      stat.peak = peak;
      stat.allocated = allocated;
      stat.freed = freed;
    };
    fill(out.allocated_bytes, s.allocated_bytes, s.peak_allocated_bytes, s.total_allocated_bytes, s.total_freed_bytes);
    fill(out.reserved_bytes, s.allocated_bytes, s.peak_allocated_bytes, s.total_allocated_bytes, s.total_freed_bytes);
    fill(out.active_bytes, s.allocated_bytes, s.peak_allocated_bytes, s.total_allocated_bytes, s.total_freed_bytes);
    fill(out.requested_bytes, s.allocated_bytes, s.peak_allocated_bytes, s.total_allocated_bytes, s.total_freed_bytes);
    fill(out.allocation, s.allocations, s.allocations, s.total_allocations, s.total_allocations - s.allocations);
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex index) override { reset_accumulated_memory_stats(index); }
  void resetPeakStats(c10::DeviceIndex index) override { reset_peak_memory_stats(index); }
#endif
#if ADAPTER_DEVICE_ALLOCATOR_MEMORY_INFO
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex) override {
    auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return {page * static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)), page * static_cast<size_t>(sysconf(_SC_PHYS_PAGES))};
  }
#endif
};

// Pinned host memory: ordinary host memory, remembered so is_pinned() can answer.
struct PinnedAllocator final : public c10::Allocator {
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<uintptr_t, size_t>& blocks() {
    static std::map<uintptr_t, size_t> b;
    return b;
  }
  // Counted like the device: live and total blocks and bytes (the host allocator's stats).
  static MemoryStats& stats() {
    static MemoryStats s;
    return s;
  }
  static void release(void* data) {
    {
      std::lock_guard<std::mutex> lock(mutex());
      auto it = blocks().find(reinterpret_cast<uintptr_t>(data));
      if (it != blocks().end()) {
        auto n = static_cast<int64_t>(it->second);
        stats().allocated_bytes -= n;
        stats().total_freed_bytes += n;
        stats().allocations -= 1;
        blocks().erase(it);
      }
    }
    c10::free_cpu(data);
  }
  c10::DataPtr allocate(size_t nbytes) ADAPTER_ALLOCATE_CONST override {
    void* data = c10::alloc_cpu(nbytes ? nbytes : 1);  // a pinned pointer is never null
    {
      std::lock_guard<std::mutex> lock(mutex());
      blocks()[reinterpret_cast<uintptr_t>(data)] = nbytes;
      auto& s = stats();
      s.allocated_bytes += static_cast<int64_t>(nbytes);
      s.total_allocated_bytes += static_cast<int64_t>(nbytes);
      s.allocations += 1;
      s.total_allocations += 1;
      s.peak_allocated_bytes = std::max(s.peak_allocated_bytes, s.allocated_bytes);
    }
    return c10::DataPtr(data, data, &release, c10::Device(c10::DeviceType::CPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
#if ADAPTER_ALLOCATOR_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
#endif
};

DeviceAllocator g_device_allocator;
PinnedAllocator g_pinned_allocator;

}  // namespace

// Registered for the PrivateUse1 device type: empty tensors, storages and
// torch.UntypedStorage(n, device="npu") all allocate through it.
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_device_allocator);

c10::Allocator* allocator() { return &g_device_allocator; }
c10::Allocator* pinned_allocator() { return &g_pinned_allocator; }

MemoryStats pinned_memory_stats() {
  std::lock_guard<std::mutex> lock(PinnedAllocator::mutex());
  return PinnedAllocator::stats();
}

void reset_pinned_memory_stats(bool peak, bool accumulated) {
  std::lock_guard<std::mutex> lock(PinnedAllocator::mutex());
  auto& s = PinnedAllocator::stats();
  if (peak) s.peak_allocated_bytes = s.allocated_bytes;
  if (accumulated) {
    s.total_allocated_bytes = 0;
    s.total_freed_bytes = 0;
    s.total_allocations = 0;
  }
}

bool is_pinned_ptr(const void* ptr) {
  auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(PinnedAllocator::mutex());
  auto& blocks = PinnedAllocator::blocks();
  auto it = blocks.upper_bound(address);
  if (it == blocks.begin()) return false;
  --it;
  return address >= it->first && address < it->first + std::max<size_t>(it->second, 1);
}

}  // namespace npu
