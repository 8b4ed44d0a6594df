// The reference device: a PrivateUse1 backend whose memory is host memory.
// Declarations shared by the translation units of the C++ core.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>
#include <c10/core/Storage.h>
#include <c10/core/Stream.h>
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>

#include "version_gates.h"

namespace npu {

constexpr c10::DeviceType kDeviceType = c10::DeviceType::PrivateUse1;

// -- devices (device.cpp) ----------------------------------------------------------------

// Number of devices: $ADAPTER_MATRIX_DEVICE_COUNT, default 2 (so npu:1 is real).
c10::DeviceIndex device_count() noexcept;
c10::DeviceIndex current_device() noexcept;
void set_current_device(c10::DeviceIndex index);
// Throws a clear error for an index outside [0, device_count()).
void check_device_index(c10::DeviceIndex index);
c10::Device device(c10::DeviceIndex index);

// Makes `index` the current device for a scope. Setting and restoring are skipped when
// the device is current already (the common case: every op runs its kernels in one).
class DeviceScope {
 public:
  explicit DeviceScope(c10::DeviceIndex index) : previous_(current_device()) {
    if (index != previous_) set_current_device(index);
  }
  ~DeviceScope() {
    if (current_device() != previous_) set_current_device(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  c10::DeviceIndex previous_;
};

// Streams (device.cpp): identities only, since work is synchronous. 0 is the default stream.
c10::StreamId current_stream_id(c10::DeviceIndex index) noexcept;
void set_current_stream_id(c10::DeviceIndex index, c10::StreamId id) noexcept;
c10::StreamId new_stream_id() noexcept;

// -- memory (device.cpp) -----------------------------------------------------------------

// The device allocator: 64-byte aligned host memory, counted per device.
c10::Allocator* allocator();
// Page-locked host memory stand-in: host memory whose pointers are remembered.
c10::Allocator* pinned_allocator();
bool is_pinned_ptr(const void* ptr);
// True when the pinned allocator is torch's host allocator for PrivateUse1 (host_allocator.cpp, 2.8+).
bool host_allocator_registered();

// Makes `memory` (host memory owned by some other DataPtr, e.g. a CPU kernel's output)
// device memory of `index` without copying: the result owns `memory` and counts its
// `nbytes` in the device statistics until freed.
c10::DataPtr adopt(c10::DataPtr&& memory, size_t nbytes, c10::DeviceIndex index);

struct MemoryStats {
  int64_t allocated_bytes = 0;      // currently allocated
  int64_t peak_allocated_bytes = 0; // since start or the last reset
  int64_t total_allocated_bytes = 0;
  int64_t total_freed_bytes = 0;
  int64_t allocations = 0;          // live blocks
  int64_t total_allocations = 0;
};
MemoryStats memory_stats(c10::DeviceIndex index);
// The pinned allocator's counts (host memory handed out for npu copies).
MemoryStats pinned_memory_stats();
void reset_pinned_memory_stats(bool peak, bool accumulated);
void reset_peak_memory_stats(c10::DeviceIndex index);
void reset_accumulated_memory_stats(c10::DeviceIndex index);

// -- generators and hooks (hooks.cpp) ----------------------------------------------------

void register_hooks();
const at::Generator& default_generator(c10::DeviceIndex index);
// The CPU generator that carries an npu generator's state ("twin"). Random ops run
// their CPU kernel with it, so seeding npu reproduces CPU results exactly.
// nullopt for a generator of another device.
c10::optional<at::Generator> twin_of(const at::Generator& generator);

// -- operators (fallback.cpp, registrations.cpp; their shared declarations: ops.h) --------

// A CPU tensor over the same memory as the device tensor `t` (no copy); `t` itself when it
// is not a device tensor. The caller keeps `t` alive while it uses the alias.
at::Tensor host_alias(const at::Tensor& t);

// Route every op that has its own CPU kernel (and no PrivateUse1 kernel) to it, instead
// of a generic composite kernel that would differ from CPU in the last bits.
// Returns the number of ops routed.
int64_t mirror_cpu_kernels();
// Register a fallthrough for the AutocastPrivateUse1 key if nobody did yet.
bool ensure_autocast_fallthrough();
// Register torch's autograd fallback for the AutogradPrivateUse1 key if torch has none (< 2.10).
bool ensure_autograd_fallback();

// -- interpreter exit (autograd_exit.cpp) -----------------------------------------------

// Waits until torch's autograd device threads hold no GraphTask of an earlier backward
// (whose Python objects they would free during interpreter finalization and abort).
// Call without the GIL, before finalization (an atexit handler).
void quiesce_autograd_threads();

// -- build facts (module.cpp) ------------------------------------------------------------
std::map<std::string, bool> version_gates();

}  // namespace npu
