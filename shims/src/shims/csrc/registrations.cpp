// Which kernel serves each operator on the reference device: the boxed fallback
// (fallback.cpp) for every op, direct kernels (direct.cpp) for the hot elementwise and
// reduction ops, the device's own kernels (kernels.cpp) for storage, metadata and copies,
// and the registrations made at activation.
#include "npu.h"  // first: the version gates decide what else to include

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/quantized/QTensorImpl.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <memory>
#include <string>
#include <unordered_set>
#include <utility>

#include "ops.h"

namespace npu {

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>()); }

// A bool op with no gradient: registered for the autograd key too, since torch 2.1 has no
// autograd fallback that would pass it on to the PrivateUse1 kernel.
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(has_compatible_shallow_copy_type));
}

TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&quantized_cpu_fallback>());
}

TORCH_LIBRARY_IMPL(aten, QuantizedPrivateUse1, m) {
  m.impl("_copy_from", TORCH_FN(copy_from));  // q.cpu(), q.to("npu"): both sides are quantized aliases
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("set_.source_Storage", TORCH_FN(at::native::set_));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(at::native::set_storage_cpu_));
  m.impl("set_.source_Tensor", TORCH_FN(at::native::set_tensor_));
  m.impl("set_", TORCH_FN(set_empty));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  m.impl("native_dropout", TORCH_FN(native_dropout));
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(has_compatible_shallow_copy_type));
  m.impl("record_stream", TORCH_FN(record_stream));
#if !ADAPTER_HOOKS_PINNED_MEMORY
  m.impl("_pin_memory", TORCH_FN(pin_memory));
  m.impl("is_pinned", TORCH_FN(is_pinned));
#endif
}

// The fallback's work for one op each, unboxed (direct.cpp): what small ops cost is mostly
// the fallback's boxing and redispatch, and these are the ops training loops and optimizer
// steps call most.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", TORCH_FN(add));
  m.impl("add_.Tensor", TORCH_FN(add_));
  m.impl("sub.Tensor", TORCH_FN(sub));
  m.impl("sub_.Tensor", TORCH_FN(sub_));
  m.impl("mul.Tensor", TORCH_FN(mul));
  m.impl("mul_.Tensor", TORCH_FN(mul_));
  m.impl("div.Tensor", TORCH_FN(div));
  m.impl("div_.Tensor", TORCH_FN(div_));
  m.impl("sqrt", TORCH_FN(sqrt));
  m.impl("addcmul_", TORCH_FN(addcmul_));
  m.impl("addcdiv_", TORCH_FN(addcdiv_));
  m.impl("lerp_.Scalar", TORCH_FN(lerp_));
  m.impl("sum.dim_IntList", TORCH_FN(sum));
  m.impl("mean.dim", TORCH_FN(mean));
}

// -- registrations made at activation, where they depend on what is already there ----------

namespace {

std::vector<std::unique_ptr<torch::Library>>& libraries() {
  static std::vector<std::unique_ptr<torch::Library>> libs;  // registrations live as long as these
  return libs;
}

torch::Library& new_library(const char* ns, c10::DispatchKey key) {
  libraries().push_back(std::make_unique<torch::Library>(torch::Library::IMPL, ns, key, __FILE__, __LINE__));
  return *libraries().back();
}

// Ops that must keep their composite kernels: they move data between devices.
const std::unordered_set<std::string>& never_mirrored() {
  static const std::unordered_set<std::string> names = {
      "aten::copy_", "aten::_to_copy", "aten::to", "aten::_copy_from", "aten::_copy_from_and_resize",
      "aten::lift", "aten::lift_fresh", "aten::_pin_memory", "aten::pin_memory", "aten::is_pinned",
  };
  return names;
}

// Composite ops that choose an implementation by device type and have none for an
// unknown device: run their CPU path on the aliases instead. (name, overload):
// - convolution, convolution_backward end in "convolution_overrideable not implemented";
// - linalg_eigvals.out (torch 2.1) computes on CPU and writes complex eigenvalues into
//   the device output with complex_out, mixing devices (found by the OpInfo sweep).
constexpr std::pair<const char*, const char*> kDeviceDispatchingComposites[] = {
    {"convolution", ""}, {"convolution_backward", ""}, {"linalg_eigvals", "out"}};

}  // namespace

int64_t mirror_cpu_kernels() {
  static int64_t mirrored = -1;
  if (mirrored >= 0) return mirrored;
  mirrored = 0;
  auto& dispatcher = c10::Dispatcher::singleton();
  torch::Library& lib = new_library("aten", c10::DispatchKey::PrivateUse1);
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (name.name.compare(0, 6, "aten::") != 0 || never_mirrored().count(name.name)) continue;
    auto op = dispatcher.findOp(name);
    if (!op || !op->hasKernelForDispatchKey(c10::DispatchKey::CPU) ||
        op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1) ||
        op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) {
      continue;
    }
    if (!op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) &&
        !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional)) {
      continue;  // the backend fallback reaches the CPU kernel already
    }
    std::string qualified = name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
    lib.impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
    ++mirrored;
  }
  for (const auto& [name, overload] : kDeviceDispatchingComposites) {
    auto op = dispatcher.findOp(c10::OperatorName(std::string("aten::") + name, overload));
    if (op && !op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) {
      std::string qualified = std::string(name) + (*overload ? std::string(".") + overload : "");
      // A backend kernel hides a CompositeImplicitAutograd kernel from AutogradPrivateUse1
      // too; an out= variant records no graph either way, so autograd falls through.
      if (op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) && std::string(overload) == "out") {
        new_library("aten", c10::DispatchKey::AutogradPrivateUse1).impl(qualified.c_str(), torch::CppFunction::makeFallthrough());
      }
      lib.impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
      ++mirrored;
    }
  }
  return mirrored;
}

// A third party's operator without an autograd kernel (torchvision::nms) reaches the
// backend fallback through the AutogradPrivateUse1 key only if that key has a fallback.
// torch registers one for the autograd key of each of its own backends, but for
// PrivateUse1 only from 2.10 (pytorch#165315); before, it is the extension's to register
// ("Could not run 'torchvision::nms' with arguments from the 'Autogradnpu' backend").
// Register the kernel torch gives AutogradCPU in those releases: the forward runs, and a
// backward through an operator without a derivative raises instead of losing the gradient.
bool ensure_autograd_fallback() {
  auto& dispatcher = c10::Dispatcher::singleton();
  if (dispatcher.hasBackendFallbackForDispatchKey(c10::DispatchKey::AutogradPrivateUse1)) return false;
  new_library("_", c10::DispatchKey::AutogradPrivateUse1).fallback(torch::autograd::basicAutogradNotImplementedFallback());
  return true;
}

bool ensure_autocast_fallthrough() {
  auto& dispatcher = c10::Dispatcher::singleton();
  bool registered = false;
  if (!dispatcher.hasBackendFallbackForDispatchKey(c10::DispatchKey::AutocastPrivateUse1)) {
    new_library("_", c10::DispatchKey::AutocastPrivateUse1).fallback(torch::CppFunction::makeFallthrough());
    registered = true;
  }
  // Lower-precision casts, as CUDA autocast does for its matmul/conv family.
  auto linear = dispatcher.findOp(c10::OperatorName("aten::linear", ""));
  if (linear && !linear->hasKernelForDispatchKey(c10::DispatchKey::AutocastPrivateUse1)) {
    torch::Library& m = new_library("aten", c10::DispatchKey::AutocastPrivateUse1);
#if ADAPTER_AUTOCAST_VARIADIC_KERNEL
#define ADAPTER_KERNEL_OVERLOAD(OP, OVERLOAD, POLICY) KERNEL_PRIVATEUSEONE(OP, OVERLOAD, POLICY)
#else
#define ADAPTER_KERNEL_OVERLOAD(OP, OVERLOAD, POLICY) KERNEL_PRIVATEUSEONE2(OP, OVERLOAD, POLICY)
#endif
    KERNEL_PRIVATEUSEONE(conv1d, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(conv2d, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(conv3d, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(convolution, lower_precision_fp)
    ADAPTER_KERNEL_OVERLOAD(conv_transpose2d, input, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(linear, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(matmul, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(mm, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(mv, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(addmm, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(addmv, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(bmm, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(baddbmm, lower_precision_fp)
    KERNEL_PRIVATEUSEONE(addbmm, lower_precision_fp)
#undef ADAPTER_KERNEL_OVERLOAD
    registered = true;
  }
  // Conjugate/negative views reach _copy_from with their bits set (the aliases carry
  // them); otherwise materializing the view calls _copy_from again, forever.
  for (auto key : {c10::DispatchKey::Conjugate, c10::DispatchKey::Negative}) {
    for (const char* name : {"aten::_copy_from", "aten::_copy_from_and_resize"}) {
      auto op = dispatcher.findOp(c10::OperatorName(name, ""));
      if (op && !op->hasKernelForDispatchKey(key)) {
        new_library("aten", key).impl(name + 6, torch::CppFunction::makeFallthrough());
      }
    }
  }
  return registered;
}

}  // namespace npu
