// tiny-fused's op library: a fused op of its own namespace, `tiny_fused::add_relu(a, b, alpha)`
// = relu(a + alpha * b), with a CPU kernel and a PrivateUse1 kernel for tiny-openreg's device.
// The device kernel allocates its output with the adapter's own allocator (tiny_openreg.h,
// libtiny_openreg.so, both shipped in the adapter's wheel), as torchvision_npu's kernels use
// torch_npu's: this library is compiled against one torch and one adapter release.
#include <ATen/EmptyTensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/from_blob.h>
#include <torch/library.h>

#include "tiny_openreg.h"

namespace {

at::Tensor add_relu_cpu(const at::Tensor& a, const at::Tensor& b, double alpha) {
  return at::clamp_min(at::add(a, b, alpha), 0);
}

// tinyreg's memory is host memory: its tensors are read as CPU tensors over the same bytes
at::Tensor on_host(const at::Tensor& t) {
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(c10::kCPU));
}

at::Tensor add_relu_device(const at::Tensor& a, const at::Tensor& b, double alpha) {
  TORCH_CHECK(a.device() == b.device(), "tiny_fused::add_relu: a and b must be on one device");
  const at::Tensor result = add_relu_cpu(on_host(a), on_host(b), alpha);
  at::Tensor out = at::detail::empty_generic(result.sizes(), tiny_openreg::allocator(),
                                             c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                             result.scalar_type(), c10::MemoryFormat::Contiguous);
  on_host(out).copy_(result);
  return out;
}

}  // namespace

TORCH_LIBRARY(tiny_fused, m) { m.def("add_relu(Tensor a, Tensor b, float alpha=1) -> Tensor"); }
TORCH_LIBRARY_IMPL(tiny_fused, CPU, m) { m.impl("add_relu", add_relu_cpu); }
TORCH_LIBRARY_IMPL(tiny_fused, PrivateUse1, m) { m.impl("add_relu", add_relu_device); }
