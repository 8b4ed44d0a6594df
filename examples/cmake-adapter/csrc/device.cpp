// The device library: a PrivateUse1 device whose memory is host memory (an example, not a
// driver), and the torch it was compiled against, baked in at compile time.
#include <ATen/EmptyTensor.h>
#include <c10/core/Allocator.h>
#include <torch/library.h>
#include <torch/version.h>

#include <cstdlib>
#include <cstring>

#include "tiny_openreg.h"

namespace {

void release(void* data) { std::free(data); }

struct HostAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t bytes) override {
    void* data = bytes ? std::malloc(bytes) : nullptr;
    return {data, data, &release, c10::Device(c10::DeviceType::PrivateUse1, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dst, const void* src, std::size_t bytes) const override { std::memcpy(dst, src, bytes); }
};
HostAllocator allocator;

at::Tensor empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                 std::optional<at::Device>, std::optional<bool>, std::optional<at::MemoryFormat> format) {
  return at::detail::empty_generic(size, &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), format);
}

}  // namespace

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &allocator);
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("empty.memory_format", empty); }

extern "C" TINY_OPENREG_API void tiny_openreg_built_for(int* major, int* minor) {
  *major = TORCH_VERSION_MAJOR;
  *minor = TORCH_VERSION_MINOR;
}
