// What the three operator files share: the boxed fallback (fallback.cpp), the device's own
// kernels (kernels.cpp) and the registrations that route operators to them (registrations.cpp).
#pragma once

#include "npu.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <tuple>

namespace npu {

inline bool on_device(const at::Tensor& t) { return t.defined() && t.device().type() == kDeviceType; }

// -- the boxed fallback: the CPU kernel on host aliases of the device tensors ---------------

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);
// Quantized npu tensors run QuantizedCPU's kernels the same way.
void quantized_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// -- kernels of our own: storage, metadata, copies ------------------------------------------

at::Tensor empty_memory_format(at::IntArrayRef size, c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
                               c10::optional<at::Device> d, c10::optional<bool> pin,
                               c10::optional<at::MemoryFormat> memory_format);
at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout> layout, c10::optional<at::Device> d, c10::optional<bool> pin);
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);
at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst);
at::Scalar local_scalar_dense(const at::Tensor& self);
at::Tensor& set_empty(at::Tensor& self);
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, c10::optional<bool> train);
at::Tensor pin_memory(const at::Tensor& self, c10::optional<at::Device> device);
bool is_pinned(const at::Tensor& self, c10::optional<at::Device> device);
bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from);
void record_stream(at::Tensor& self, c10::Stream stream);

}  // namespace npu
