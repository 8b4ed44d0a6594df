// What the operator files share: the boxed fallback (fallback.cpp), the direct kernels
// (direct.cpp), the device's own kernels (kernels.cpp) and the registrations that route
// operators to them (registrations.cpp).
#pragma once

#include "npu.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/MaybeOwned.h>
#include <c10/util/SmallVector.h>

#include <tuple>
#include <utility>

namespace npu {

inline bool on_device(const at::Tensor& t) { return t.defined() && t.device().type() == kDeviceType; }

// -- one CPU kernel call on host aliases (fallback.cpp) ---------------------------------------

// What runs around a CPU kernel that computes on device memory, for the boxed fallback and
// the direct kernels alike, so that both check devices, alias memory and adopt results the
// same way. Arguments go through input() left to right (the first device seen is the one
// the call runs on), then checked_index(), the kernel on the host tensors, write_back(),
// and to_device() for each result.
class HostCall {
 public:
  // Whether the caller's tensors outlive the call. The boxed fallback replaces them on its
  // stack, so the call keeps them (kOwned). A direct kernel's arguments are the caller's
  // references (kBorrowed): not copying them matters, since taking a reference to a tensor
  // that Python holds takes the GIL (torch 2.13's TensorImpl::incref_pyobject).
  enum class Arguments { kOwned, kBorrowed };

  explicit HostCall(const char* op_name, Arguments arguments = Arguments::kOwned)
      : op_name_(op_name), borrow_(arguments == Arguments::kBorrowed) {}
  // Hands the recyclable host aliases back to the thread's pool (fallback.cpp).
  ~HostCall();
  HostCall(const HostCall&) = delete;
  HostCall& operator=(const HostCall&) = delete;

  // The tensor the CPU kernel sees for the argument `t`: a host alias of a device tensor (one
  // host storage per device storage, so that overlap checks see real aliasing); any other
  // tensor as is. A direct kernel's aliases (kBorrowed) come from a per-thread pool and go
  // back to it after the call when nothing else holds them: making and freeing a CPU tensor
  // and its storage costs as much as a 16-element add. Only C++ CPU kernels (at::cpu::*),
  // which neither keep nor expose their arguments, see pooled aliases.
  // A CPU tensor that is not 0-dim (0-dim ones are scalars, as on CUDA) is refused by
  // checked_index() if any device tensor comes with it.
  at::Tensor input(const at::Tensor& t, bool writes = false) {
    if (on_device(t)) return to_host(t, writes);
    note_cpu(t);
    return t;
  }
  at::Tensor to_host(const at::Tensor& t, bool writes);
  void note_cpu(const at::Tensor& t) {
    if (t.defined() && t.dim() > 0) {
      saw_cpu_tensor_ = true;
      cpu_seen_ = t.device();
    }
  }
  // A device argument (factories): the call runs on it unless a tensor came first.
  void note_device_index(c10::DeviceIndex index) {
    if (index_ < 0) index_ = index;
  }
  // After the arguments: the device the kernel runs on (the current one if no argument
  // named one). Throws if CPU tensors came with device tensors.
  c10::DeviceIndex checked_index();
  // After the kernel: memory a CPU kernel reallocated (an out= resize) becomes the device
  // storage's memory, and mutated arguments take the kernel's sizes and strides.
  void write_back();
  // A result of the kernel as the caller sees it: the caller's own tensor for a host
  // argument (in-place, out=), a device view of an aliased storage, or a fresh output
  // adopted as device memory without a copy. Non-CPU tensors pass as they are.
  at::Tensor to_device(const at::Tensor& h);

  const char* op_name() const { return op_name_; }

 private:
  struct Alias {
    c10::Storage device;  // the device storage
    c10::Storage host;    // its CPU alias
    const void* data;     // the bytes it aliased
    size_t nbytes;
    at::Tensor pooled;    // the pool's tensor over `host`, if it came from the pool
  };
  struct Argument {
    c10::MaybeOwned<at::Tensor> device;  // the caller's tensor
    at::Tensor host;    // what the CPU kernel saw
    bool mutable_;
  };

  void note_device(const at::Tensor& t);
  const c10::Storage& host_for(const at::Tensor& t);
  at::Tensor pooled_alias(const at::Tensor& t);
  void return_to_pool(Alias& a);
  c10::StorageImpl* alias_of(const at::Tensor& device_tensor);
  c10::Storage device_storage_for(const c10::Storage& host);
  static bool sole_owner(const at::Tensor& h);
  at::Tensor become_device_tensor(const at::Tensor& h);

  c10::SmallVector<Alias, 4> aliases_;
  c10::SmallVector<Argument, 6> arguments_;
  c10::SmallVector<std::pair<c10::StorageImpl*, c10::Storage>, 2> adopted_;  // fresh host storage -> device
  c10::DeviceIndex index_ = -1;
  const char* op_name_;
  bool borrow_;
  bool saw_cpu_tensor_ = false;
  c10::Device cpu_seen_{c10::DeviceType::CPU};
};

// -- the boxed fallback: the CPU kernel on host aliases of the device tensors ---------------

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);
// Quantized npu tensors run QuantizedCPU's kernels the same way.
void quantized_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// -- direct kernels (direct.cpp): the hot elementwise and reduction ops, unboxed ---------------
//
// Each is the boxed fallback for one operator, without boxing its arguments and
// redispatching: a HostCall around the op's CPU kernel, called directly (at::cpu::*).

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
at::Tensor mul(const at::Tensor& self, const at::Tensor& other);
at::Tensor& mul_(at::Tensor& self, const at::Tensor& other);
at::Tensor div(const at::Tensor& self, const at::Tensor& other);
at::Tensor& div_(at::Tensor& self, const at::Tensor& other);
at::Tensor sqrt(const at::Tensor& self);
at::Tensor& addcmul_(at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2, const at::Scalar& value);
at::Tensor& addcdiv_(at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2, const at::Scalar& value);
at::Tensor& lerp_(at::Tensor& self, const at::Tensor& end, const at::Scalar& weight);
at::Tensor sum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, c10::optional<at::ScalarType> dtype);
at::Tensor mean(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, c10::optional<at::ScalarType> dtype);

// -- kernels of our own: storage, metadata, copies ------------------------------------------

at::Tensor empty_memory_format(at::IntArrayRef size, c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
                               c10::optional<at::Device> d, c10::optional<bool> pin,
                               c10::optional<at::MemoryFormat> memory_format);
at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout> layout, c10::optional<at::Device> d, c10::optional<bool> pin);
const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size, c10::optional<at::MemoryFormat> memory_format);
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
