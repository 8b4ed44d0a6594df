// Direct kernels: the hot elementwise and reduction ops without the boxed fallback.
//
// The fallback (fallback.cpp) serves every op the same way: it boxes the arguments onto a
// stack, wraps the device tensors in host aliases, redispatches to CPU, which unboxes them
// again, and adopts the results. For a 16-element add that round trip costs about as much
// as the add itself. The kernels here do the same work for one operator each, unboxed:
// the same HostCall (device checks, aliases, adoption of outputs) around the op's CPU
// kernel, called directly (at::cpu::*, the function the dispatcher's CPU entry calls), so
// results, errors and memory accounting are the fallback's. They are registered in
// registrations.cpp; benchmarks/device_ops.py measures what they save.
#include "npu.h"  // first: the version gates decide what else to include

#include <ATen/ATen.h>
#include <ATen/ops/add_cpu_dispatch.h>
#include <ATen/ops/addcdiv_cpu_dispatch.h>
#include <ATen/ops/addcmul_cpu_dispatch.h>
#include <ATen/ops/div_cpu_dispatch.h>
#include <ATen/ops/lerp_cpu_dispatch.h>
#include <ATen/ops/mean_cpu_dispatch.h>
#include <ATen/ops/mul_cpu_dispatch.h>
#include <ATen/ops/sqrt_cpu_dispatch.h>
#include <ATen/ops/sub_cpu_dispatch.h>
#include <ATen/ops/sum_cpu_dispatch.h>

#include "device_activity.h"
#include "ops.h"

namespace npu {

// Operator names as the fallback reports them in errors and to the profiler: the
// schema's name, no overload.

namespace {

// While the CPU kernel runs: the call's device is current, and the profiler sees one
// device event for the op, as for an op the fallback serves.
class Running {
 public:
  explicit Running(HostCall& call) : Running(call.op_name(), call.checked_index()) {}

 private:
  Running(const char* name, c10::DeviceIndex index) : scope_(index), activity_(name, index) {}

  DeviceScope scope_;
  DeviceActivity activity_;
};

}  // namespace

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  HostCall call("aten::add", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self), b = call.input(other);
  Running running(call);
  at::Tensor out = at::cpu::add(a, b, alpha);
  return call.to_device(out);
}

at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  HostCall call("aten::add_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(other);
  Running running(call);
  at::cpu::add_(a, b, alpha);
  call.write_back();
  return self;
}

at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  HostCall call("aten::sub", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self), b = call.input(other);
  Running running(call);
  at::Tensor out = at::cpu::sub(a, b, alpha);
  return call.to_device(out);
}

at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  HostCall call("aten::sub_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(other);
  Running running(call);
  at::cpu::sub_(a, b, alpha);
  call.write_back();
  return self;
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  HostCall call("aten::mul", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self), b = call.input(other);
  Running running(call);
  at::Tensor out = at::cpu::mul(a, b);
  return call.to_device(out);
}

at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  HostCall call("aten::mul_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(other);
  Running running(call);
  at::cpu::mul_(a, b);
  call.write_back();
  return self;
}

at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  HostCall call("aten::div", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self), b = call.input(other);
  Running running(call);
  at::Tensor out = at::cpu::div(a, b);
  return call.to_device(out);
}

at::Tensor& div_(at::Tensor& self, const at::Tensor& other) {
  HostCall call("aten::div_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(other);
  Running running(call);
  at::cpu::div_(a, b);
  call.write_back();
  return self;
}

at::Tensor sqrt(const at::Tensor& self) {
  HostCall call("aten::sqrt", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self);
  Running running(call);
  at::Tensor out = at::cpu::sqrt(a);
  return call.to_device(out);
}

// The optimizers' in-place updates (Adam, AdamW: lerp_, addcmul_, addcdiv_ per parameter).

at::Tensor& addcmul_(at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2, const at::Scalar& value) {
  HostCall call("aten::addcmul_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(tensor1), c = call.input(tensor2);
  Running running(call);
  at::cpu::addcmul_(a, b, c, value);
  call.write_back();
  return self;
}

at::Tensor& addcdiv_(at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2, const at::Scalar& value) {
  HostCall call("aten::addcdiv_", HostCall::Arguments::kBorrowed);
  at::Tensor a = call.input(self, /*writes=*/true), b = call.input(tensor1), c = call.input(tensor2);
  Running running(call);
  at::cpu::addcdiv_(a, b, c, value);
  call.write_back();
  return self;
}

at::Tensor& lerp_(at::Tensor& self, const at::Tensor& end, const at::Scalar& weight) {
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
