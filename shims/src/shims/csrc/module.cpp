// The Python face of the C++ core: what the era shims and torch.npu call.
// The only file that includes pybind11 with torch's Python casters. Not torch/extension.h:
// that also pulls in the whole C++ frontend (torch/all.h: nn, optim, data), which doubled
// this unit's compile time (30 s -> 15 s of CPU; benchmarks/build_time.py) for nothing used here.
#include "npu.h"  // first: the version gates decide what else to include

#include <torch/csrc/Dtype.h>  // THPDtype: torch 2.1 does not reach it through pybind.h
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include <ATen/autocast_mode.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>


namespace py = pybind11;

namespace npu {

c10::intrusive_ptr<c10d::Work> done_work(std::vector<at::Tensor> result);  // distributed.cpp
c10::intrusive_ptr<c10d::Backend> gloo_backend(c10::intrusive_ptr<c10d::Backend> gloo);  // gloo_backend.cpp
void release_gloo(const c10::intrusive_ptr<c10d::Backend>& backend);                     // gloo_backend.cpp

std::map<std::string, bool> version_gates() {
  std::map<std::string, bool> gates;
#define ADAPTER_RECORD_GATE(name) gates[#name] = static_cast<bool>(name);
  ADAPTER_FOR_EACH_GATE(ADAPTER_RECORD_GATE)
#undef ADAPTER_RECORD_GATE
  return gates;
}

}  // namespace npu

namespace {

py::dict stats_dict(c10::DeviceIndex index) {
  npu::MemoryStats s = npu::memory_stats(index);
  py::dict d;
  d["allocated_bytes.all.current"] = s.allocated_bytes;
  d["allocated_bytes.all.peak"] = s.peak_allocated_bytes;
  d["allocated_bytes.all.allocated"] = s.total_allocated_bytes;
  d["allocated_bytes.all.freed"] = s.total_freed_bytes;
  d["allocation.all.current"] = s.allocations;
  d["allocation.all.allocated"] = s.total_allocations;
  return d;
}

py::object dtype_object(at::ScalarType t) { return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(torch::getTHPDtype(t))); }

at::ScalarType scalar_type_of(const py::object& dtype) {
  TORCH_CHECK(THPDtype_Check(dtype.ptr()), "expected a torch.dtype, got ", py::str(dtype).cast<std::string>());
  return reinterpret_cast<THPDtype*>(dtype.ptr())->scalar_type;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "C++ core of adapter-matrix's reference npu device";
  m.attr("TORCH_VERSION") = TORCH_VERSION;

  m.def("activate", [] {
    npu::register_hooks();
    py::dict out;
    out["mirrored_ops"] = npu::mirror_cpu_kernels();
    out["autocast_registered"] = npu::ensure_autocast_fallthrough();
    out["autograd_registered"] = npu::ensure_autograd_fallback();
    // Before finalization, not after (Py_AtExit): the autograd threads need the GIL (autograd_exit.cpp).
    py::module_::import("atexit").attr("register")(py::cpp_function([] {
      py::gil_scoped_release no_gil;
      npu::quiesce_autograd_threads();
    }));
    return out;
  }, "Register hooks and the registrations that depend on what torch already has.");
  m.def("version_gates", &npu::version_gates, "Which C++ version gates are on in this build.");

  m.def("device_count", [] { return static_cast<int>(npu::device_count()); });
  m.def("current_device", [] { return static_cast<int>(npu::current_device()); });
  m.def("set_device", [](int index) { npu::set_current_device(static_cast<c10::DeviceIndex>(index)); });

  m.def("done_work", &npu::done_work, "A finished collective's Work; its future holds `result`.");
  m.def("gloo_backend", &npu::gloo_backend, "A c10d Backend over `gloo` for npu (and CPU) tensors.");
  m.def("release_gloo", &npu::release_gloo, "Let a gloo_backend() drop its gloo (group shutdown).");
  m.def("host_alias", &npu::host_alias, "A CPU tensor over a device tensor's memory (no copy).");
  m.def("current_stream_id", [](int index) { return static_cast<int64_t>(npu::current_stream_id(static_cast<c10::DeviceIndex>(index))); });
  m.def("set_current_stream_id", [](int index, int64_t id) { npu::set_current_stream_id(static_cast<c10::DeviceIndex>(index), id); });
  m.def("new_stream_id", [] { return static_cast<int64_t>(npu::new_stream_id()); });
  m.def("device_type", [] { return static_cast<int>(npu::kDeviceType); }, "c10::DeviceType of the device (for torch.Stream).");

  m.def("memory_stats", [](int index) { return stats_dict(static_cast<c10::DeviceIndex>(index)); });
  m.def("reset_peak_memory_stats", [](int index) { npu::reset_peak_memory_stats(static_cast<c10::DeviceIndex>(index)); });
  m.def("reset_accumulated_memory_stats",
        [](int index) { npu::reset_accumulated_memory_stats(static_cast<c10::DeviceIndex>(index)); });

  m.def("host_memory_stats", [] {
    npu::MemoryStats s = npu::pinned_memory_stats();
    py::dict d;
    d["allocated_bytes.current"] = s.allocated_bytes;
    d["allocated_bytes.peak"] = s.peak_allocated_bytes;
    d["allocated_bytes.allocated"] = s.total_allocated_bytes;
    d["allocated_bytes.freed"] = s.total_freed_bytes;
    d["allocations.current"] = s.allocations;
    d["allocations.allocated"] = s.total_allocations;
    return d;
  }, "Counts of the pinned (host) allocator.");
  m.def("reset_host_memory_stats", &npu::reset_pinned_memory_stats, py::arg("peak"), py::arg("accumulated"));
  m.def("host_allocator_registered", &npu::host_allocator_registered,
        "Whether torch's host-allocator registry (2.8+) holds the pinned allocator for PrivateUse1.");

  m.def("default_generator", [](int index) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(npu::default_generator(static_cast<c10::DeviceIndex>(index))));
  }, "The default torch.Generator of npu:index (call once per index).");

  // The autocast state of the PrivateUse1 key. From 2.4 torch.autocast manages it
  // itself; before, torch.autocast("npu") asks the device module, which calls these.
#if ADAPTER_AUTOCAST_BY_DEVICE_TYPE
  m.def("is_autocast_enabled", [] { return at::autocast::is_autocast_enabled(at::kPrivateUse1); });
  m.def("set_autocast_enabled", [](bool on) { at::autocast::set_autocast_enabled(at::kPrivateUse1, on); });
  m.def("get_autocast_dtype", [] { return dtype_object(at::autocast::get_autocast_dtype(at::kPrivateUse1)); });
  m.def("set_autocast_dtype", [](const py::object& dtype) { at::autocast::set_autocast_dtype(at::kPrivateUse1, scalar_type_of(dtype)); });
#else
  m.def("is_autocast_enabled", [] { return at::autocast::is_privateuseone_enabled(); });
  m.def("set_autocast_enabled", [](bool on) { at::autocast::set_privateuseone_enabled(on); });
  m.def("get_autocast_dtype", [] { return dtype_object(at::autocast::get_autocast_privateuseone_dtype()); });
  m.def("set_autocast_dtype", [](const py::object& dtype) { at::autocast::set_autocast_privateuseone_dtype(scalar_type_of(dtype)); });
#endif
}
