// Direct kernels: the hot elementwise and reduction ops without the boxed fallback.
//
// The fallback (fallback.cpp) serves every op the same way: it boxes the arguments onto a
// stack, wraps the device tensors in host aliases, redispatches to CPU, which unboxes them
// again, and adopts the results. For a 16-element add that round trip costs about as much
// as the add itself. The kernels here serve one operator each, unboxed, in one of two ways:
//
// - On device tensors as they are (the common case: every operand an npu tensor of one
//   device and one dtype). The op's own structured implementation, the one CPU's kernel
//   runs (at::native::structured_*), builds its TensorIterator over the device tensors and
//   allocates the output on the device (OnDevice below); its DispatchStub then finds, for
//   PrivateUse1, the CPU kernel itself (register_cpu_stubs()). Since device memory is host
//   memory, the CPU kernel reads and writes the device's bytes: no aliases, no adoption.
//   The same dtype matters: CPU's TensorIterator casts mixed inputs into temporaries
//   before its kernels run, a device TensorIterator leaves casting to the kernel, and
//   CPU kernels cast nothing.
// - Otherwise (mixed dtypes, a CPU scalar, another device, a ZeroTensor), as the fallback
//   would: a HostCall (device checks, host aliases, adoption of outputs) around the op's
//   CPU kernel, called directly (at::cpu::*), so results, errors and memory accounting
//   are the fallback's.
//
// They are registered in registrations.cpp; benchmarks/device_ops.py measures what they save.

// A DispatchStub's CPU entry takes one kernel pointer per CPU capability torch was built
// with, so calling one from here needs torch's own capability macros: its x86-64 builds
// define these two (libtorch_cpu exports DispatchStubImpl::get_call_ptr(DeviceType, void*,
// void*, void*) on 2.1-2.15). Elsewhere the direct kernels always take the HostCall path.
#if defined(__x86_64__)
#define HAVE_AVX512_CPU_DEFINITION
#define HAVE_AVX2_CPU_DEFINITION
#define NPU_CPU_STUBS 1
#else
#define NPU_CPU_STUBS 0
#endif

#include "npu.h"  // first: the version gates decide what else to include

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Lerp.h>
#include <ATen/native/PointwiseOps.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/ops/add_cpu_dispatch.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/addcdiv_cpu_dispatch.h>
#include <ATen/ops/addcdiv_native.h>
#include <ATen/ops/addcmul_cpu_dispatch.h>
#include <ATen/ops/addcmul_native.h>
#include <ATen/ops/div_cpu_dispatch.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/lerp_cpu_dispatch.h>
#include <ATen/ops/lerp_native.h>
#include <ATen/ops/mean_cpu_dispatch.h>
#include <ATen/ops/mul_cpu_dispatch.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/sqrt_cpu_dispatch.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/sub_cpu_dispatch.h>
#include <ATen/ops/sub_native.h>
#include <ATen/ops/sum_cpu_dispatch.h>
#if ADAPTER_STRUCTURED_OUTPUT_NAMES
#include <ATen/NamedTensorUtils.h>
#endif

#include "device_activity.h"
#include "ops.h"

namespace npu {

// Operator names as the fallback reports them in errors and to the profiler: the
// schema's name, no overload.

namespace {

// While the CPU kernel runs: the call's device is current (the device allocator serves
// it), and the profiler sees one device event for the op, as for an op the fallback serves.
class Running {
 public:
  Running(const char* name, c10::DeviceIndex index) : scope_(index), activity_(name, index) {}
  explicit Running(HostCall& call) : Running(call.op_name(), call.checked_index()) {}

 private:
  DeviceScope scope_;
  DeviceActivity activity_;
};

// -- structured implementations on device tensors ----------------------------------------

// Whether an op's structured implementation can take these tensors as they are: strided
// npu tensors of the first one's device and dtype, none a ZeroTensor (its kernels see
// zeros instead of memory).
template <typename... Rest>
bool on_device_as_is(const at::Tensor& first, const Rest&... rest) {
  if (!NPU_CPU_STUBS) return false;
  const c10::Device where = first.device();
  const c10::ScalarType dtype = first.scalar_type();
  auto fits = [&](const at::Tensor& t) {
    return t.device() == where && t.scalar_type() == dtype && t.layout() == c10::kStrided && !t._is_zerotensor();
  };
  return where.type() == kDeviceType && fits(first) && (fits(rest) && ...);
}

#if ADAPTER_STRUCTURED_OUTPUT_NAMES
#define NPU_OUTPUT_NAMES_PARAM , at::DimnameList names
#define NPU_OUTPUT_NAMES_ARG , names
#else
#define NPU_OUTPUT_NAMES_PARAM
#define NPU_OUTPUT_NAMES_ARG
#endif

// A structured implementation (at::native::structured_*) whose output is a fresh device
// tensor: what RegisterCPU.cpp's functional wrapper does for CPU, with the device allocator.
template <class Implementation>
class OnDevice final : public Implementation {
 public:
  void set_output_raw_strided(int64_t index, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options NPU_OUTPUT_NAMES_PARAM) override {
    const c10::ScalarType dtype = c10::typeMetaToScalarType(options.dtype());
    const c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
    output = strides.empty() ? at::detail::empty_generic(sizes, allocator(), keys, dtype, options.memory_format_opt())
                             : at::detail::empty_strided_generic(sizes, strides, allocator(), keys, dtype);
#if ADAPTER_STRUCTURED_OUTPUT_NAMES
    if (!names.empty()) at::namedinference::propagate_names(output, names);
#endif
    Implementation::set_output_raw_strided(index, sizes, strides, options NPU_OUTPUT_NAMES_ARG);
  }
  const at::Tensor& maybe_get_output(int64_t) override { return output; }

  at::Tensor output;
};

// The same writing into `self` (an in-place op), with RegisterCPU.cpp's in-place checks.
template <class Implementation>
class InPlaceOnDevice final : public Implementation {
 public:
  explicit InPlaceOnDevice(const at::Tensor& self) : self_(self) {}
  void set_output_raw_strided(int64_t index, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options NPU_OUTPUT_NAMES_PARAM) override {
    TORCH_CHECK(options.dtype() == self_.dtype(), "Bad in-place call: input tensor dtype ", self_.dtype(),
                " and output tensor dtype ", options.dtype(), " should match");
    TORCH_CHECK(options.device() == self_.device(), "Bad in-place call: input tensor device ", self_.device(),
                " and output tensor device ", options.device(), " should match");
    TORCH_CHECK(sizes == self_.sizes(), "Bad in-place call: input tensor size ", self_.sizes(),
                " and output tensor size ", sizes, " should match");
#if ADAPTER_STRUCTURED_OUTPUT_NAMES
    if (!names.empty()) at::namedinference::propagate_names(self_, names);
#endif
    Implementation::set_output_raw_strided(index, sizes, strides, options NPU_OUTPUT_NAMES_ARG);
  }
  const at::Tensor& maybe_get_output(int64_t) override { return self_; }

 private:
  const at::Tensor& self_;
};

#undef NPU_OUTPUT_NAMES_PARAM
#undef NPU_OUTPUT_NAMES_ARG

// Runs `op` (an OnDevice or InPlaceOnDevice) on its arguments: meta (shapes, dtypes, the
// output), then the implementation. False, having run nothing but meta, if the iterator
// would have to cast (meta's type promotion gave another dtype than the operands'); the
// caller's fallback then runs the op, and only that run is a device event for the profiler.
template <class Op, typename... Args>
bool run_on_device(const char* name, c10::DeviceIndex index, c10::ScalarType dtype, Op& op, const Args&... args) {
  DeviceScope scope(index);  // meta allocates the output with the device allocator
  op.meta(args...);
  for (int i = 0; i < op.ntensors(); ++i) {
    if (op.dtype(i) != dtype) return false;
  }
  DeviceActivity activity(name, index);
  op.impl(args..., op.maybe_get_output(0));
  return true;
}

// For PrivateUse1, the DispatchStubs of the ops below call the CPU kernels: a device
// TensorIterator reaches them with pointers into host memory, as a CPU one would. Set when
// the core loads, with its kernel registrations (REGISTER_PRIVATEUSE1_DISPATCH's way).
void register_cpu_stubs() {
#if NPU_CPU_STUBS
  using at::native::add_stub;
  using at::native::addcdiv_stub;
  using at::native::addcmul_stub;
  using at::native::div_true_stub;
  using at::native::lerp_kernel_scalar_weight;
  using at::native::mul_stub;
  using at::native::sqrt_stub;
  constexpr auto kCpu = c10::DeviceType::CPU;
  add_stub.set_privateuse1_dispatch_ptr(
      [](at::TensorIteratorBase& iter, const c10::Scalar& alpha) { add_stub(kCpu, iter, alpha); });
  mul_stub.set_privateuse1_dispatch_ptr([](at::TensorIteratorBase& iter) { mul_stub(kCpu, iter); });
  div_true_stub.set_privateuse1_dispatch_ptr([](at::TensorIteratorBase& iter) { div_true_stub(kCpu, iter); });
  sqrt_stub.set_privateuse1_dispatch_ptr([](at::TensorIteratorBase& iter) { sqrt_stub(kCpu, iter); });
  addcmul_stub.set_privateuse1_dispatch_ptr(
      [](at::TensorIteratorBase& iter, const c10::Scalar& value) { addcmul_stub(kCpu, iter, value); });
  addcdiv_stub.set_privateuse1_dispatch_ptr(
      [](at::TensorIteratorBase& iter, const c10::Scalar& value) { addcdiv_stub(kCpu, iter, value); });
  lerp_kernel_scalar_weight.set_privateuse1_dispatch_ptr(
      [](at::TensorIteratorBase& iter, const c10::Scalar& weight) { lerp_kernel_scalar_weight(kCpu, iter, weight); });
#endif
}
const bool cpu_stubs_registered = (register_cpu_stubs(), true);

}  // namespace

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (on_device_as_is(self, other)) {
    OnDevice<at::native::structured_ufunc_add_CPU> op;
    if (run_on_device("aten::add", self.device().index(), self.scalar_type(), op, self, other, alpha)) return std::move(op.output);
  }
  HostCall call("aten::add", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self), b = call.input(other);
  Running running(call);
  at::Tensor out = at::cpu::add(a, b, alpha);
  return call.to_device(out);
}

at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (on_device_as_is(self, other)) {
    InPlaceOnDevice<at::native::structured_ufunc_add_CPU> op(self);
    if (run_on_device("aten::add_", self.device().index(), self.scalar_type(), op, self, other, alpha)) return self;
  }
  HostCall call("aten::add_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(other);
  Running running(call);
  at::cpu::add_(a, b, alpha);
  call.write_back();
  return self;
}

at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (on_device_as_is(self, other)) {
    OnDevice<at::native::structured_sub_out> op;
    if (run_on_device("aten::sub", self.device().index(), self.scalar_type(), op, self, other, alpha)) return std::move(op.output);
  }
  HostCall call("aten::sub", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self), b = call.input(other);
  Running running(call);
  at::Tensor out = at::cpu::sub(a, b, alpha);
  return call.to_device(out);
}

at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (on_device_as_is(self, other)) {
    InPlaceOnDevice<at::native::structured_sub_out> op(self);
    if (run_on_device("aten::sub_", self.device().index(), self.scalar_type(), op, self, other, alpha)) return self;
  }
  HostCall call("aten::sub_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(other);
  Running running(call);
  at::cpu::sub_(a, b, alpha);
  call.write_back();
  return self;
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  if (on_device_as_is(self, other)) {
    OnDevice<at::native::structured_mul_out> op;
    if (run_on_device("aten::mul", self.device().index(), self.scalar_type(), op, self, other)) return std::move(op.output);
  }
  HostCall call("aten::mul", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self), b = call.input(other);
  Running running(call);
  at::Tensor out = at::cpu::mul(a, b);
  return call.to_device(out);
}

at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  if (on_device_as_is(self, other)) {
    InPlaceOnDevice<at::native::structured_mul_out> op(self);
    if (run_on_device("aten::mul_", self.device().index(), self.scalar_type(), op, self, other)) return self;
  }
  HostCall call("aten::mul_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(other);
  Running running(call);
  at::cpu::mul_(a, b);
  call.write_back();
  return self;
}

at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  if (on_device_as_is(self, other)) {
    OnDevice<at::native::structured_div_out> op;
    if (run_on_device("aten::div", self.device().index(), self.scalar_type(), op, self, other)) return std::move(op.output);
  }
  HostCall call("aten::div", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self), b = call.input(other);
  Running running(call);
  at::Tensor out = at::cpu::div(a, b);
  return call.to_device(out);
}

at::Tensor& div_(at::Tensor& self, const at::Tensor& other) {
  if (on_device_as_is(self, other)) {
    InPlaceOnDevice<at::native::structured_div_out> op(self);
    if (run_on_device("aten::div_", self.device().index(), self.scalar_type(), op, self, other)) return self;
  }
  HostCall call("aten::div_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(other);
  Running running(call);
  at::cpu::div_(a, b);
  call.write_back();
  return self;
}

at::Tensor sqrt(const at::Tensor& self) {
  if (on_device_as_is(self)) {
    OnDevice<at::native::structured_sqrt_out> op;
    if (run_on_device("aten::sqrt", self.device().index(), self.scalar_type(), op, self)) return std::move(op.output);
  }
  HostCall call("aten::sqrt", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self);
  Running running(call);
  at::Tensor out = at::cpu::sqrt(a);
  return call.to_device(out);
}

// The optimizers' in-place updates (Adam, AdamW: lerp_, addcmul_, addcdiv_ per parameter).

at::Tensor& addcmul_(at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2, const at::Scalar& value) {
  if (on_device_as_is(self, tensor1, tensor2)) {
    InPlaceOnDevice<at::native::structured_addcmul_out> op(self);
    if (run_on_device("aten::addcmul_", self.device().index(), self.scalar_type(), op, self, tensor1, tensor2, value)) return self;
  }
  HostCall call("aten::addcmul_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(tensor1), c = call.input(tensor2);
  Running running(call);
  at::cpu::addcmul_(a, b, c, value);
  call.write_back();
  return self;
}

at::Tensor& addcdiv_(at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2, const at::Scalar& value) {
  if (on_device_as_is(self, tensor1, tensor2)) {
    InPlaceOnDevice<at::native::structured_addcdiv_out> op(self);
    if (run_on_device("aten::addcdiv_", self.device().index(), self.scalar_type(), op, self, tensor1, tensor2, value)) return self;
  }
  HostCall call("aten::addcdiv_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(tensor1), c = call.input(tensor2);
  Running running(call);
  at::cpu::addcdiv_(a, b, c, value);
  call.write_back();
  return self;
}

at::Tensor& lerp_(at::Tensor& self, const at::Tensor& end, const at::Scalar& weight) {
  if (on_device_as_is(self, end)) {
    InPlaceOnDevice<at::native::structured_lerp_Scalar> op(self);
    if (run_on_device("aten::lerp_", self.device().index(), self.scalar_type(), op, self, end, weight)) return self;
  }
  HostCall call("aten::lerp_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(end);
  Running running(call);
  at::cpu::lerp_(a, b, weight);
  call.write_back();
  return self;
}

// Reductions (sum.dim_IntList, mean.dim; x.sum() and x.mean() reach them through their
// composite kernels).

at::Tensor sum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, c10::optional<at::ScalarType> dtype) {
  HostCall call("aten::sum", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self);
  Running running(call);
  at::Tensor out = at::cpu::sum(a, dim, keepdim, dtype);
  return call.to_device(out);
}

at::Tensor mean(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, c10::optional<at::ScalarType> dtype) {
  HostCall call("aten::mean", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self);
  Running running(call);
  at::Tensor out = at::cpu::mean(a, dim, keepdim, dtype);
  return call.to_device(out);
}

}  // namespace npu
