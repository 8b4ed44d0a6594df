// The device's profiler stubs (torch 2.1+): what the profiler calls around every op when
// it profiles PrivateUse1 (`profile(use_device="npu")`). Without them torch's defaults
// print "PrivateUse1 used in profiler but not enabled." once per op and record nothing.
//
// Work on this device runs on the host as it is issued, so a device event is a host
// timestamp, two events are as far apart as their timestamps, and there is nothing to
// synchronize. Memory is reported to the profiler by the allocator (device.cpp).
#include "npu.h"  // first: the version gates decide what else to include

#include <torch/csrc/profiler/stubs/base.h>

#include <time.h>

#include <chrono>

namespace npu {
namespace {

using torch::profiler::impl::ProfilerVoidEventStub;

// record()'s device out-parameter is `int*` in 2.1 and `c10::DeviceIndex*` by 2.4: take
// whatever this torch's declaration says, so the override needs no version gate.
template <typename Method>
struct FirstParameter;
template <typename R, typename C, typename First, typename... Rest>
struct FirstParameter<R (C::*)(First, Rest...) const> {
  using type = First;
};
using DeviceOut = FirstParameter<decltype(&torch::profiler::impl::ProfilerStubs::record)>::type;

// The clock of the profiler's CPU events (c10::getTime(): CLOCK_REALTIME), read directly
// because its header moved (torch/csrc/profiler/util.h in 2.1, c10/util/ApproximateClock.h later).
int64_t profiler_clock_ns() {
  struct timespec t {};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + static_cast<int64_t>(t.tv_nsec);
}

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct ProfilerStubs final : public torch::profiler::impl::ProfilerStubs {
  void record(DeviceOut device, ProfilerVoidEventStub* event, int64_t* cpu_ns) const override {
    if (device != nullptr) *device = current_device();
    if (event != nullptr) *event = std::make_shared<int64_t>(steady_ns());
    if (cpu_ns != nullptr) *cpu_ns = profiler_clock_ns();
  }
  // Microseconds between two events, as the CUDA stubs answer.
  float elapsed(const ProfilerVoidEventStub* start, const ProfilerVoidEventStub* end) const override {
    auto from = *static_cast<const int64_t*>(start->get());
    auto to = *static_cast<const int64_t*>(end->get());
    return static_cast<float>(to - from) / 1000.0f;
  }
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }
  void onEachDevice(std::function<void(int)> op) const override {
    DeviceScope keep(current_device());
    for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
      set_current_device(i);
      op(i);
    }
  }
  void synchronize() const override {}  // nothing is ever pending
};

ProfilerStubs g_profiler_stubs;

struct RegisterStubs {
  RegisterStubs() { torch::profiler::impl::registerPrivateUse1Methods(&g_profiler_stubs); }
};
RegisterStubs g_register_stubs;

}  // namespace
}  // namespace npu
