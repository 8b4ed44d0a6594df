// The device's work as the profiler sees it: one activity per op the device runs, handed to
// Kineto by the activity-profiler plugin (kineto_plugin.cpp, torch 2.12+) so that
// `torch.profiler.profile(activities=[..., ProfilerActivity.PrivateUse1])` shows npu events
// in key_averages() and in Chrome traces.
//
// An op's kernel runs where it is issued (memory is host memory), so its activity is the
// host time its kernel took. Wrap the kernel call in a DeviceActivity:
//
//     DeviceActivity activity(schema_name, device_index);
//     run_the_kernel();
//
// When no profiling session asked for the device's activities, the constructor is one
// relaxed atomic load and a not-taken branch; before torch 2.12 it is nothing at all.
#pragma once

#include <c10/core/Device.h>

#include "version_gates.h"

#if ADAPTER_KINETO_PLUGIN
#include <atomic>
#include <cstdint>
#endif

namespace npu {

#if ADAPTER_KINETO_PLUGIN
namespace activity {
// True while a profiling session records the device's activities (kineto_plugin.cpp).
extern std::atomic<bool> g_recording;
}  // namespace activity
#endif

// True while a profiling session records the device's activities.
inline bool recording_device_activities() noexcept {
#if ADAPTER_KINETO_PLUGIN
  return activity::g_recording.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

// The activity of one op on `device`, from construction to destruction (exceptions included).
// `name` is the op's name and must outlive the object (an operator schema's name does).
class DeviceActivity {
 public:
  DeviceActivity(const char* name, c10::DeviceIndex device) noexcept {
    if (recording_device_activities()) begin(name, device);
  }
  ~DeviceActivity() {
    if (name_ != nullptr) end();
  }
  DeviceActivity(const DeviceActivity&) = delete;
  DeviceActivity& operator=(const DeviceActivity&) = delete;

 private:
#if ADAPTER_KINETO_PLUGIN
  void begin(const char* name, c10::DeviceIndex device) noexcept;  // kineto_plugin.cpp
  void end() noexcept;
  int64_t start_ns_ = 0;
  uint64_t correlation_ = 0;  // the profiler's id of the CPU op that ran this one
  c10::DeviceIndex device_ = 0;
#else
  void begin(const char*, c10::DeviceIndex) noexcept {}
  void end() noexcept {}
#endif
  const char* name_ = nullptr;  // set by begin(): this activity is being recorded
};

}  // namespace npu
