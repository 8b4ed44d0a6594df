// tiny-accel's compiled core: a PrivateUse1 device "tiny" whose memory is host memory, and the
// torch this extension was compiled against, baked in at compile time (a build for 2.13 loaded
// by 2.14 is the bug adapter-matrix exists for; tests/test_built_for.py compares the two).
#include <Python.h>

#include <ATen/EmptyTensor.h>
#include <c10/core/Allocator.h>
#include <torch/library.h>
#include <torch/version.h>

#include <cstdlib>
#include <cstring>

namespace {

void release(void* data) { std::free(data); }

// The device's allocator: host memory, tagged with the device so tensors report `tiny:0`.
struct TinyAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t bytes) override {
    void* data = bytes ? std::malloc(bytes) : nullptr;
    return {data, data, &release, c10::Device(c10::DeviceType::PrivateUse1, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dst, const void* src, std::size_t bytes) const override { std::memcpy(dst, src, bytes); }
};
TinyAllocator allocator;

at::Tensor empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                 std::optional<at::Device>, std::optional<bool>, std::optional<at::MemoryFormat> format) {
  return at::detail::empty_generic(size, &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), format);
}

PyObject* built_for(PyObject*, PyObject*) { return Py_BuildValue("(ii)", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR); }

PyMethodDef methods[] = {
    {"built_for", built_for, METH_NOARGS, "(major, minor) of the torch this was compiled against"},
    {nullptr, nullptr, 0, nullptr}};
PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, methods};

}  // namespace

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &allocator);
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("empty.memory_format", empty); }

PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&module); }
