// The device's Kineto activity profiler (torch 2.12+, gate ADAPTER_KINETO_PLUGIN): with
// `torch.profiler.profile(activities=[CPU, ProfilerActivity.PrivateUse1])`, every op the
// device runs becomes a device event ("aten::mm (npu)") linked to the CPU op that issued
// it, so key_averages() carries npu time and Chrome traces show an npu row.
//
// The device's "kernels" are the CPU kernels the fallback and the device's own kernels run
// on device memory (fallback.cpp, kernels.cpp); each is timed by a DeviceActivity
// (device_activity.h) while a session records. Before 2.12 torch offers a PrivateUse1
// backend no way into Kineto, and this file compiles to nothing.
#include "npu.h"  // first: the version gates decide what else to include

#if ADAPTER_KINETO_PLUGIN

// torch's own builds compile the profiler with USE_KINETO, and its plugin header declares
// the registry only then. Defined for this file alone: no other file of the core includes
// Kineto, so they see torch's headers as before.
#ifndef USE_KINETO
#define USE_KINETO 1
#endif

#include <c10/core/DeviceType.h>
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

// Kineto's headers, shipped in torch/include/kineto (the build puts it on the include path).
#include <GenericTraceActivity.h>
#include <IActivityProfiler.h>
#include <libkineto.h>  // CpuTraceBuffer, whose unique_ptr getTraceBuffer() returns
#include <output_base.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "device_activity.h"

namespace npu {
namespace activity {

std::atomic<bool> g_recording{false};

namespace {

struct Record {
  std::string op;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t correlation;  // 0: no CPU op was being profiled on the op's thread
  c10::DeviceIndex device;
  c10::StreamId stream;
};

// What the running session has collected. Ops of one session run on several threads
// (autograd runs a device's backward on a thread of its own), hence the lock; it is taken
// only while recording.
std::mutex g_mutex;
std::vector<Record> g_records;

// The correlation ids of the CPU ops being profiled on this thread, innermost last: the
// profiler pushes one to every session as an op starts and pops it as it ends.
thread_local std::vector<uint64_t> t_correlations;

// Kineto's time: c10::getTime(), the clock of the profiler's CPU events, in nanoseconds.
int64_t now_ns() noexcept { return c10::getTime(); }

// DeviceInfo and ResourceInfo have constructors in 2.12 and are aggregates from 2.13, with
// ResourceInfo's fields in another order than its 2.12 constructor: build either.
template <typename Info = libkineto::ResourceInfo>
Info resource_info(int64_t device, int64_t stream, std::string name) {
  if constexpr (std::is_aggregate_v<Info>) {
    return Info{/*id=*/stream, /*sortIndex=*/stream, /*deviceId=*/device, std::move(name)};
  } else {
    return Info(/*deviceId=*/device, /*id=*/stream, /*sortIndex=*/stream, std::move(name));
  }
}

// Above any process id, so the device rows sort below the CPU rows in a trace viewer.
constexpr int64_t kDeviceSortIndex = 1 << 24;

class Session final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      g_records.clear();
    }
    backend_ = c10::get_privateuse1_backend();
    g_recording.store(true, std::memory_order_relaxed);
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_recording.store(false, std::memory_order_relaxed);
    records_.swap(g_records);
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return {}; }

  void processTrace(libkineto::ActivityLogger& logger) override { log(logger, nullptr); }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked,
                    int64_t /*start*/, int64_t /*end*/) override {
    log(logger, linked);  // everything recorded lies between start() and stop()
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{/*id=*/0, kDeviceSortIndex, /*name=*/backend_, /*label=*/backend_ + " 0"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::set<std::pair<c10::DeviceIndex, c10::StreamId>> seen;
    std::vector<libkineto::ResourceInfo> out;
    for (const Record& r : records_) {
      if (seen.emplace(r.device, r.stream).second) {
        out.push_back(resource_info(r.device, r.stream, "stream " + std::to_string(r.stream)));
      }
    }
    return out;
  }

  // The events go to the logger in processTrace(); a buffer here would be taken for CPU events.
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return nullptr; }

  void pushCorrelationId(uint64_t id) override { t_correlations.push_back(id); }
  void popCorrelationId() override {
    if (!t_correlations.empty()) t_correlations.pop_back();
  }

 private:
  void log(libkineto::ActivityLogger& logger, const libkineto::getLinkedActivityCallback& linked) {
    int32_t id = 0;
    for (const Record& r : records_) {
      // No trace span: the logger keeps copies of the activities, which would outlive one.
      libkineto::GenericTraceActivity act;
      act.activityType = libkineto::ActivityType::CONCURRENT_KERNEL;
      act.activityName = r.op + " (" + backend_ + ")";
      act.startTime = r.start_ns;
      act.endTime = r.end_ns;
      act.id = ++id;
      act.device = r.device;
      act.resource = static_cast<int32_t>(r.stream);
      // The CPU op that issued this one: the profiler attributes the event's time to it
      // (device time in key_averages(), "External id" in the trace).
      if (linked && r.correlation != 0) act.linked = linked(static_cast<int32_t>(r.correlation));
      // Quoted metadata only: addMetadata() formats with fmt, whose library torch does not export.
      act.addMetadataQuoted("device", backend_ + ":" + std::to_string(r.device));
      logger.handleGenericActivity(act);  // the logger keeps a copy
    }
  }

  std::string backend_ = "npu";
  std::vector<Record> records_;
};

class Profiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<libkineto::ActivityType>& availableActivities() const override { return activities_; }

  // ProfilerActivity.PrivateUse1 asks Kineto for kernels (CONCURRENT_KERNEL) among others;
  // ProfilerActivity.CPU alone does not, and then no session records anything.
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<libkineto::ActivityType>& types,
                                                                 const libkineto::Config&) override {
    if (types.count(libkineto::ActivityType::CONCURRENT_KERNEL) == 0) return nullptr;
    return std::make_unique<Session>();
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t /*ts_ms*/, int64_t /*duration_ms*/,
                                                                 const std::set<libkineto::ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "adapter-matrix device";
  std::set<libkineto::ActivityType> activities_ = {libkineto::ActivityType::CONCURRENT_KERNEL};
};

}  // namespace

REGISTER_PRIVATEUSE1_PROFILER(Profiler);

}  // namespace activity

void DeviceActivity::begin(const char* name, c10::DeviceIndex device) noexcept {
  const auto& correlations = activity::t_correlations;
  correlation_ = correlations.empty() ? 0 : correlations.back();
  device_ = device;
  name_ = name;
  start_ns_ = activity::now_ns();
}

void DeviceActivity::end() noexcept {
  int64_t end_ns = activity::now_ns();
  try {
    std::lock_guard<std::mutex> lock(activity::g_mutex);
    if (!activity::g_recording.load(std::memory_order_relaxed)) return;  // the session stopped meanwhile
    activity::g_records.push_back({name_, start_ns_, end_ns, correlation_, device_, current_stream_id(device_)});
  } catch (...) {
    // Out of memory while profiling: lose this event, not the op's result.
  }
}

}  // namespace npu

#endif  // ADAPTER_KINETO_PLUGIN
