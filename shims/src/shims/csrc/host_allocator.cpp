// The device's host (pinned) allocator in torch's host-allocator registry (torch 2.8+).
//
// torch.accelerator.empty_host_cache() (2.12+) and generic host-memory code ask
// at::getHostAllocator(<accelerator>); with nothing registered for PrivateUse1 that is a
// null pointer, and the call crashed the process. The allocator registered here is the
// pinned allocator of device.cpp (page-locked memory is ordinary host memory on this
// device), so pin_memory() and the registry hand out the same, counted memory. Nothing is
// cached, so empty_cache() has nothing to release.
#include "npu.h"  // first: the version gates decide what else to include

#if ADAPTER_HOST_ALLOCATOR_REGISTRY
#include <ATen/core/CachingHostAllocator.h>
#endif

#include <type_traits>

namespace npu {

#if ADAPTER_HOST_ALLOCATOR_REGISTRY
namespace {

// at::HostStats changed its fields after 2.8 (2.8: allocation, segment, allocated_bytes,
// reserved_bytes; 2.13: allocations, active_requests, allocated_bytes, active_bytes,
// num_host_alloc/free). Fill those this torch has, found by name, not by release guesses.
#define ADAPTER_HAS_FIELD(field)                                                       \
  template <typename T, typename = void>                                               \
  struct has_##field : std::false_type {};                                             \
  template <typename T>                                                                \
  struct has_##field<T, std::void_t<decltype(std::declval<T&>().field)>> : std::true_type {};
ADAPTER_HAS_FIELD(allocation)
ADAPTER_HAS_FIELD(segment)
ADAPTER_HAS_FIELD(reserved_bytes)
ADAPTER_HAS_FIELD(allocations)
ADAPTER_HAS_FIELD(active_requests)
ADAPTER_HAS_FIELD(active_bytes)
ADAPTER_HAS_FIELD(num_host_alloc)
#undef ADAPTER_HAS_FIELD

template <typename Stat>
void fill(Stat& stat, int64_t current, int64_t peak, int64_t allocated, int64_t freed) {
  stat.current = current;
  stat.peak = peak;
  stat.allocated = allocated;
  stat.freed = freed;
}

// Every block is in use (nothing is cached), so counts of blocks, segments and requests
// agree, and so do allocated, reserved and active bytes.
template <typename Stats>
Stats host_stats(const MemoryStats& s) {
  Stats out;
  const int64_t freed_blocks = s.total_allocations - s.allocations;
  auto blocks = [&](auto& stat) { fill(stat, s.allocations, s.allocations, s.total_allocations, freed_blocks); };
  auto bytes = [&](auto& stat) {
    fill(stat, s.allocated_bytes, s.peak_allocated_bytes, s.total_allocated_bytes, s.total_freed_bytes);
  };
  bytes(out.allocated_bytes);
  if constexpr (has_allocation<Stats>::value) blocks(out.allocation);
  if constexpr (has_segment<Stats>::value) blocks(out.segment);
  if constexpr (has_allocations<Stats>::value) blocks(out.allocations);
  if constexpr (has_active_requests<Stats>::value) blocks(out.active_requests);
  if constexpr (has_reserved_bytes<Stats>::value) bytes(out.reserved_bytes);
  if constexpr (has_active_bytes<Stats>::value) bytes(out.active_bytes);
  if constexpr (has_num_host_alloc<Stats>::value) {
    out.num_host_alloc = s.total_allocations;
    out.num_host_free = freed_blocks;
  }
  return out;
}

struct HostAllocator final : public at::HostAllocator {
  c10::DataPtr allocate(size_t nbytes) override { return pinned_allocator()->allocate(nbytes); }
  c10::DeleterFnPtr raw_deleter() const override { return pinned_allocator()->raw_deleter(); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    pinned_allocator()->copy_data(dest, src, count);
  }
  // Work is synchronous: a block is free for reuse as soon as it is freed.
  bool record_event(void*, void*, c10::Stream) override { return true; }
  void empty_cache() override {}
  at::HostStats get_stats() override { return host_stats<at::HostStats>(pinned_memory_stats()); }
  void reset_accumulated_stats() override { reset_pinned_memory_stats(false, true); }
  void reset_peak_stats() override { reset_pinned_memory_stats(true, false); }
};

HostAllocator g_host_allocator;

}  // namespace

REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, &g_host_allocator)

bool host_allocator_registered() { return at::getHostAllocator(at::kPrivateUse1) == &g_host_allocator; }
#else
bool host_allocator_registered() { return false; }
#endif

}  // namespace npu
