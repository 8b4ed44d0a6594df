// The device library: a PrivateUse1 device whose memory is host memory (an example, not a
// driver), and the torch it was compiled against, baked in at compile time. Its allocator and
// allocation counter are exported (tiny_openreg.h) for plugins that add kernels to the device.
#include <ATen/EmptyTensor.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>
#include <torch/version.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "tiny_openreg.h"

namespace {

std::atomic<std::uint64_t> made{0};

void release(void* data) { std::free(data); }

struct HostAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t bytes) override {
    void* data = bytes ? std::malloc(bytes) : nullptr;
    if (bytes) {
      ++made;
    }
    return {data, data, &release, c10::Device(c10::DeviceType::PrivateUse1, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dst, const void* src, std::size_t bytes) const override { std::memcpy(dst, src, bytes); }
};
HostAllocator host_allocator;

constexpr auto kDevice = c10::DispatchKey::PrivateUse1;

// One device, index 0, no streams: what torch's device guards need to move tensors to it.
struct Guard final : c10::impl::NoOpDeviceGuardImpl<c10::DeviceType::PrivateUse1> {
  c10::Device exchangeDevice(c10::Device) const override { return getDevice(); }
  c10::Device getDevice() const override { return c10::Device(c10::DeviceType::PrivateUse1, 0); }
};

at::Tensor empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                 std::optional<at::Device>, std::optional<bool>, std::optional<at::MemoryFormat> format) {
  return at::detail::empty_generic(size, &host_allocator, c10::DispatchKeySet(kDevice), c10::dtype_or_default(dtype),
                                   format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, &host_allocator, c10::DispatchKeySet(kDevice),
                                           c10::dtype_or_default(dtype));
}

// The device's memory is host memory: a tensor on either side is viewed as a CPU tensor over
// the same bytes, and the CPU copy does the work (strides, dtype conversion) for every direction.
at::Tensor host_view(const at::Tensor& t) {
  if (t.is_cpu()) {
    return t;
  }
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(c10::kCPU));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool) {
  host_view(dst).copy_(host_view(self));
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  TORCH_CHECK(dst.sizes() == self.sizes(), "tinyreg: _copy_from_and_resize cannot resize");
  return copy_from(self, dst, false);
}

}  // namespace

namespace tiny_openreg {
c10::Allocator* allocator() { return &host_allocator; }
std::uint64_t allocations() { return made.load(); }
}  // namespace tiny_openreg

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &host_allocator);
C10_REGISTER_GUARD_IMPL(PrivateUse1, Guard);
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty);
  m.impl("empty_strided", empty_strided);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}

extern "C" TINY_OPENREG_API void tiny_openreg_built_for(int* major, int* minor) {
  *major = TORCH_VERSION_MAJOR;
  *minor = TORCH_VERSION_MINOR;
}

extern "C" TINY_OPENREG_API unsigned long long tiny_openreg_allocations(void) { return tiny_openreg::allocations(); }
