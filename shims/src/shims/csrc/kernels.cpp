// The reference device's own kernels: storage, metadata and copies, which the boxed
// fallback (fallback.cpp) cannot serve by running a CPU kernel on host aliases.
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

#include "device_activity.h"
#include "ops.h"

namespace npu {

namespace {

c10::DeviceIndex index_of(c10::optional<c10::Device> d) {
  if (d && d->has_index()) return d->index();
  return current_device();
}

}  // namespace

at::Tensor empty_memory_format(at::IntArrayRef size, c10::optional<at::ScalarType> dtype, c10::optional<at::Layout>,
                               c10::optional<at::Device> d, c10::optional<bool>,
                               c10::optional<at::MemoryFormat> memory_format) {
  DeviceScope scope(index_of(d));
  return at::detail::empty_generic(size, allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout>, c10::optional<at::Device> d, c10::optional<bool>) {
  DeviceScope scope(index_of(d));
  return at::detail::empty_strided_generic(size, stride, allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

// Both sides are host memory: copy through CPU views of them. CPU's copy_ handles dtype
// conversion, broadcasting, and the conj/neg bits that the aliases carry.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  DeviceActivity activity("aten::_copy_from", on_device(dst) ? dst.device().index() : self.device().index());
  at::Tensor src_host = on_device(self) ? host_alias(self) : self;
  at::Tensor dst_host = on_device(dst) ? host_alias(dst) : dst;
  dst_host.copy_(src_host, non_blocking);
  return dst;
}

// Growing a tensor allocates its new storage through our allocator, which allocates on the
// current device: make that the tensor's, so that an npu:1 tensor stays on npu:1.
const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size, c10::optional<at::MemoryFormat> memory_format) {
  DeviceScope scope(self.device().index());
  return at::native::resize_(self, size, memory_format);
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) resize_(dst, self.sizes(), c10::nullopt);
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  DeviceActivity activity("aten::_local_scalar_dense", self.device().index());
  return at::native::_local_scalar_dense_cpu(host_alias(self));
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, allocator(), /*resizable=*/true);
  return at::native::set_storage_cpu_(self, storage, 0, {0}, {});
}

// native_dropout is the one seeded op without a Generator argument: its CPU kernel
// would draw from the CPU default generator. Same algorithm as CPU, but the mask is
// drawn on the device (bernoulli_ with the device generator).
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, c10::optional<bool> train) {
  if (input.numel() == 0) return std::make_tuple(input, at::empty_like(input, input.options()));
  if (train.has_value() && !*train) {
    return std::make_tuple(input.clone(), at::ones_like(input, input.options().dtype(at::kBool)));
  }
  double keep = 1. - p;
  double scale = keep == 0 ? 0. : 1. / keep;
  at::Tensor mask = at::empty_like(input, at::MemoryFormat::Contiguous);
  mask.bernoulli_(keep);
  return std::make_tuple(input.mul(mask).mul_(scale), mask);
}

// Before 2.5, pin_memory(device="npu") and is_pinned(device="npu") reach PrivateUse1
// kernels; later releases ask the hooks (getPinnedMemoryAllocator, isPinnedPtr).
at::Tensor pin_memory(const at::Tensor& self, c10::optional<at::Device>) {
  at::Tensor out = at::detail::empty_generic(self.sizes(), pinned_allocator(), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                             self.scalar_type(), c10::nullopt);
  return out.copy_(self);
}

bool is_pinned(const at::Tensor& self, c10::optional<at::Device>) {
  return self.storage().data() != nullptr && is_pinned_ptr(self.storage().data());
}

// `param.data = moved` (and so Module.to("npu") keeping tied parameters one tensor) asks
// whether the two tensors may share TensorImpl metadata. TensorImpl's own answer lists
// built-in dense backends only; a strided npu tensor is as dense as a CPU one.
namespace {

bool dense_host_memory(const at::Tensor& t) {
  auto type = t.device().type();
  return t.layout() == c10::kStrided && !t.is_quantized() && !t.is_nested() &&
         (type == kDeviceType || type == c10::DeviceType::CPU);
}

}  // namespace

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  return self.key_set() == from.key_set() || (dense_host_memory(self) && dense_host_memory(from));
}

// Memory is freed when the last tensor goes, and work is synchronous: no stream can still
// be using a block, so there is nothing to record.
void record_stream(at::Tensor&, c10::Stream) {}

}  // namespace npu
