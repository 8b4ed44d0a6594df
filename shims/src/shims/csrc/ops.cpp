// Operators of the reference device.
//
// Device memory is host memory, so almost every op runs its CPU kernel directly on the
// device's bytes: the boxed fallback below wraps each device tensor in a CPU tensor
// that aliases the same memory (no copy), runs the CPU kernel, and turns the results
// back into device tensors (views stay views of the device storage, fresh outputs are
// adopted without a copy). Storage and metadata ops get kernels of their own.
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


namespace npu {

namespace {

const c10::Device kCpu(c10::DeviceType::CPU);

bool on_device(const at::Tensor& t) { return t.defined() && t.device().type() == kDeviceType; }

// -- host views of device memory ----------------------------------------------------------

// A tensor of backend `key` (CPU or PrivateUse1) with the same sizes, strides, offset,
// conj/neg bits, ZeroTensor-ness and quantizer as `like`, over `storage`.
at::Tensor tensor_over(c10::Storage storage, c10::DispatchKey key, const at::Tensor& like) {
  at::Tensor out;
  if (like.is_quantized()) {
    auto quantized = key == c10::DispatchKey::CPU ? c10::DispatchKey::QuantizedCPU : c10::DispatchKey::QuantizedPrivateUse1;
    out = at::detail::make_tensor<at::QTensorImpl>(std::move(storage), c10::DispatchKeySet(quantized), like.dtype(),
                                                   at::get_qtensorimpl(like)->quantizer());
  } else {
    c10::DispatchKeySet keys(key);
    if (like._is_zerotensor()) keys = keys.add(c10::DispatchKey::ZeroTensor);
    out = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), keys, like.dtype());
  }
  out.unsafeGetTensorImpl()->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  if (like.is_conj()) out._set_conj(true);
  if (like.is_neg()) out._set_neg(true);
  return out;
}

// A CPU storage aliasing a device storage's bytes. It is resizable with the CPU
// allocator, so an out= kernel may grow it; the fallback then adopts the new memory.
c10::Storage host_storage(const c10::Storage& device_storage) {
  const c10::StorageImpl* impl = device_storage.unsafeGetStorageImpl();
  return c10::Storage(c10::make_intrusive<c10::StorageImpl>(
      c10::StorageImpl::use_byte_size_t(), impl->nbytes(), c10::DataPtr(const_cast<void*>(impl->data()), kCpu),
      c10::GetAllocator(c10::DeviceType::CPU), /*resizable=*/true));
}


}  // namespace

at::Tensor host_alias(const at::Tensor& t) {
  TORCH_CHECK(t.layout() == c10::kStrided, "npu: only strided tensors are supported, got ", t.layout());
  if (t.device().type() != kDeviceType) return t;
  return tensor_over(host_storage(t.storage()), c10::DispatchKey::CPU, t);
}

namespace {

// Device storage that takes over `host`'s memory: without a copy when nobody else holds
// the host storage, else with one.
c10::Storage adopt_storage(const c10::Storage& host, c10::DeviceIndex index) {
  c10::StorageImpl* impl = host.unsafeGetStorageImpl();
  size_t nbytes = impl->nbytes();
  c10::DataPtr memory;
  if (host.use_count() == 1 && impl->data_ptr().device().type() == c10::DeviceType::CPU) {
    memory = adopt(impl->set_data_ptr(c10::DataPtr(nullptr, kCpu)), nbytes, index);
  } else {
    DeviceScope scope(index);
    memory = allocator()->allocate(nbytes);
    if (nbytes) std::memcpy(memory.get(), impl->data(), nbytes);
  }
  return c10::Storage(c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), nbytes,
                                                            std::move(memory), allocator(), /*resizable=*/true));
}

// A device ZeroTensor shaped like the CPU ZeroTensor `h` (what _efficientzerotensor
// returns, e.g. the gradient of sgn): like CPU's, it owns no memory, and its ZeroTensor
// key makes every op see zeros instead of reading it.
at::Tensor zero_tensor_like(const at::Tensor& h, c10::DeviceIndex index) {
  c10::Storage storage(c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), h.storage().nbytes(),
                                                             c10::DataPtr(nullptr, device(index)), nullptr,
                                                             /*resizable=*/false));
  return tensor_over(std::move(storage), c10::DispatchKey::PrivateUse1, h);
}

// -- the zero-copy fallback ----------------------------------------------------------------

// The state of one fallback call: which device storages were aliased, and how.
struct Call {
  struct Alias {
    c10::Storage device;  // the device storage
    c10::Storage host;    // its CPU alias
    const void* data;          // the bytes it aliased
    size_t nbytes;
  };
  struct Argument {
    at::Tensor device;  // the caller's tensor
    at::Tensor host;    // what the CPU kernel saw
    bool mutable_;
  };
  c10::SmallVector<Alias, 4> aliases;
  c10::SmallVector<Argument, 6> arguments;
  c10::SmallVector<std::pair<c10::StorageImpl*, c10::Storage>, 2> adopted;  // fresh host storage -> device
  c10::DeviceIndex index = -1;
  const char* op_name = "";

  void note_device(const at::Tensor& t) {
    c10::DeviceIndex i = t.device().index();
    if (index < 0) {
      index = i;
    } else {
      TORCH_CHECK(i == index, "Expected all tensors to be on the same device, but found at least two devices, ",
                  device(index), " and ", t.device(), "! (when checking arguments of ", op_name, ")");
    }
  }

  // One host alias per device storage, so that overlap checks see real aliasing.
  const c10::Storage& host_for(const at::Tensor& t) {
    c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
    for (auto& a : aliases) {
      if (a.device.unsafeGetStorageImpl() == impl) return a.host;
    }
    aliases.push_back(Alias{t.storage(), host_storage(t.storage()), impl->data(), impl->nbytes()});
    return aliases.back().host;
  }

  at::Tensor to_host(const at::Tensor& t, bool mutable_) {
    note_device(t);
    TORCH_CHECK(t.layout() == c10::kStrided, "npu: ", op_name, " got a ", t.layout(), " tensor; only strided tensors are supported");
    at::Tensor host = tensor_over(host_for(t), c10::DispatchKey::CPU, t);
    arguments.push_back(Argument{t, host, mutable_});
    return host;
  }

  // After the kernel: memory a CPU kernel reallocated (an out= resize) becomes the
  // device storage's memory, and mutated arguments take the kernel's sizes and strides.
  void write_back() {
    for (auto& a : aliases) {
      c10::StorageImpl* host = a.host.unsafeGetStorageImpl();
      if (host->data() != a.data || host->nbytes() != a.nbytes) {
        size_t nbytes = host->nbytes();
        c10::StorageImpl* dev = a.device.unsafeGetStorageImpl();
        dev->set_data_ptr_noswap(adopt(host->set_data_ptr(c10::DataPtr(nullptr, kCpu)), nbytes, index));
        dev->set_nbytes(nbytes);
      }
    }
    for (auto& arg : arguments) {
      if (!arg.mutable_) continue;
      c10::TensorImpl* d = arg.device.unsafeGetTensorImpl();
      const at::Tensor& h = arg.host;
      if (h.storage().unsafeGetStorageImpl() != alias_of(arg.device)) {
        d->set_storage_keep_dtype(device_storage_for(h.storage()));  // the kernel swapped storage (set_)
      }
      if (d->sizes() != h.sizes() || d->strides() != h.strides() || d->storage_offset() != h.storage_offset()) {
        d->set_sizes_and_strides(h.sizes(), h.strides(), h.storage_offset());
      }
    }
  }

  c10::StorageImpl* alias_of(const at::Tensor& device_tensor) {
    c10::StorageImpl* impl = device_tensor.storage().unsafeGetStorageImpl();
    for (auto& a : aliases) {
      if (a.device.unsafeGetStorageImpl() == impl) return a.host.unsafeGetStorageImpl();
    }
    return nullptr;
  }

  // The device storage behind a host storage: the aliased one, or a fresh one adopted once.
  c10::Storage device_storage_for(const c10::Storage& host) {
    c10::StorageImpl* impl = host.unsafeGetStorageImpl();
    for (auto& a : aliases) {
      if (a.host.unsafeGetStorageImpl() == impl) return a.device;
    }
    for (auto& f : adopted) {
      if (f.first == impl) return f.second;
    }
    adopted.emplace_back(impl, adopt_storage(host, index));
    return adopted.back().second;
  }

  c10::IValue to_device(const at::Tensor& h) {
    if (!h.defined() || h.device().type() != c10::DeviceType::CPU) return h;
    for (auto& arg : arguments) {
      if (arg.host.unsafeGetTensorImpl() == h.unsafeGetTensorImpl()) return arg.device;  // in-place / out=
    }
    // A CPU kernel that makes a sparse (or mkldnn) tensor from device inputs: the device
    // holds strided tensors only, and handing back the CPU tensor would move the result
    // off the device without a word (to_sparse() on npu returned a CPU tensor).
    TORCH_CHECK_NOT_IMPLEMENTED(h.layout() == c10::kStrided, "npu: ", op_name, " returns a ", h.layout(),
                                " tensor; the npu device supports strided tensors only");
    if (h._is_zerotensor()) return zero_tensor_like(h, index);  // no memory behind it to adopt
    return tensor_over(device_storage_for(h.storage()), c10::DispatchKey::PrivateUse1, h);
  }
};

bool is_optional_generator(const c10::Argument& arg) {
  const auto* opt = arg.type()->castRaw<c10::OptionalType>();
  return opt != nullptr && opt->getElementType()->kind() == c10::TypeKind::GeneratorType;
}

bool is_optional_tensor_list(const c10::Argument& arg) {
  const auto* list = arg.type()->castRaw<c10::ListType>();
  if (list == nullptr) return false;
  const auto* opt = list->getElementType()->castRaw<c10::OptionalType>();
  return opt != nullptr && opt->getElementType()->kind() == c10::TypeKind::TensorType;
}

bool is_write(const c10::Argument& arg) { return arg.alias_info() != nullptr && arg.alias_info()->isWrite(); }

bool serves_cpu(const c10::OperatorHandle& op) {
  for (auto key : {c10::DispatchKey::CPU, c10::DispatchKey::CompositeExplicitAutograd,
                   c10::DispatchKey::CompositeExplicitAutogradNonFunctional, c10::DispatchKey::CompositeImplicitAutograd}) {
    if (op.hasKernelForDispatchKey(key)) return true;
  }
  return false;
}

// Runs `op` with CPU's kernel for `cpu_keys` on host aliases of its device tensors.
void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack, c10::DispatchKeySet cpu_keys) {
  const auto& schema = op.schema();
  const auto& params = schema.arguments();
  const size_t num_args = params.size();
  const size_t first = stack->size() - num_args;
  Call call;
  call.op_name = schema.name().c_str();
  c10::SmallVector<size_t, 2> default_generators;
  bool saw_cpu_tensor = false;
  bool results_on_cpu = false;  // the op was asked for CPU results
  c10::Device cpu_seen = kCpu;

  for (size_t i = 0; i < num_args; ++i) {
    c10::IValue& value = (*stack)[first + i];
    const bool writes = is_write(params[i]);
    if (value.isTensor()) {
      const at::Tensor& t = value.toTensor();
      if (on_device(t)) {
        value = call.to_host(t, writes);
      } else if (t.defined() && t.dim() > 0) {  // 0-dim CPU tensors are scalars, as on CUDA
        saw_cpu_tensor = true;
        cpu_seen = t.device();
      }
    } else if (value.isTensorList()) {
      auto list = value.toTensorList();
      c10::List<at::Tensor> host;
      host.reserve(list.size());
      for (const at::Tensor& t : list) {
        if (on_device(t)) {
          host.push_back(call.to_host(t, writes));
        } else {
          if (t.defined() && t.dim() > 0) saw_cpu_tensor = true;
          host.push_back(t);
        }
      }
      value = host;
    } else if (value.isList() && is_optional_tensor_list(params[i])) {
      // Tensor?[] (index lists): CPU index tensors are allowed, as on CUDA.
      auto list = value.toList();
      c10::impl::GenericList host(list.elementType());
      for (const c10::IValue& item : list) {
        host.push_back(item.isTensor() && on_device(item.toTensor()) ? c10::IValue(call.to_host(item.toTensor(), false)) : item);
      }
      value = host;
    } else if (value.isDevice() && value.toDevice().type() == kDeviceType) {
      c10::Device d = value.toDevice();
      c10::DeviceIndex idx = d.has_index() ? d.index() : current_device();
      check_device_index(idx);
      if (call.index < 0) call.index = idx;
      value = c10::IValue(kCpu);  // factories build on CPU; the result is adopted below
    } else if (value.isDevice() && value.toDevice().type() == c10::DeviceType::CPU) {
      results_on_cpu = true;  // e.g. empty_quantized(like=npu tensor, device=cpu) from q.cpu()
    } else if (value.isGenerator()) {
      const at::Generator& g = value.toGenerator();
      auto twin = twin_of(g);
      if (twin) {
        value = c10::IValue(*twin);
      } else {
        TORCH_CHECK(g.device().type() == kDeviceType, "Expected a '", c10::DeviceTypeName(kDeviceType, true),
                    "' device type for generator but found '", g.device().type(), "' (in ", schema.name(), ")");
      }
    } else if (value.isNone() && is_optional_generator(params[i])) {
      default_generators.push_back(first + i);
    }
  }
  if (call.index < 0) call.index = current_device();
  TORCH_CHECK(!saw_cpu_tensor || call.arguments.empty(),
              "Expected all tensors to be on the same device, but found at least two devices, ", device(call.index),
              " and ", cpu_seen, "! (when checking arguments of ", schema.name(), ")");
  for (size_t position : default_generators) {
    (*stack)[position] = c10::IValue(*twin_of(default_generator(call.index)));
  }

  {
    DeviceScope scope(call.index);
    try {
      op.redispatchBoxed(cpu_keys, stack);
    } catch (const c10::NotImplementedError& e) {
      TORCH_CHECK_NOT_IMPLEMENTED(serves_cpu(op), "The operator '", schema.operator_name(),
                                  "' is not implemented for the npu device: it has no CPU kernel to fall back to. "
                                  "Move the inputs to CPU for this op, or implement it for PrivateUse1.");
      throw;
    }
  }

  call.write_back();
  if (results_on_cpu) return;
  const size_t num_returns = schema.returns().size();
  for (size_t i = stack->size() - num_returns; i < stack->size(); ++i) {
    c10::IValue& value = (*stack)[i];
    if (value.isTensor()) {
      value = call.to_device(value.toTensor());
    } else if (value.isTensorList()) {
      auto list = value.toTensorList();
      c10::List<at::Tensor> out;
      out.reserve(list.size());
      for (const at::Tensor& t : list) out.push_back(call.to_device(t).toTensor());
      value = out;
    }
  }
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKeySet(c10::DispatchKey::CPU));
}

// Quantized npu tensors (QuantizedPrivateUse1) run QuantizedCPU's kernels the same way:
// their host aliases are quantized CPU tensors with the same quantizer.
void quantized_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKeySet(c10::DispatchKey::CPU) | c10::DispatchKeySet(c10::DispatchKey::QuantizedCPU));
}

// -- kernels of our own --------------------------------------------------------------------

c10::DeviceIndex index_of(c10::optional<c10::Device> d) {
  if (d && d->has_index()) return d->index();
  return current_device();
}

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
  at::Tensor src_host = on_device(self) ? host_alias(self) : self;
  at::Tensor dst_host = on_device(dst) ? host_alias(dst) : dst;
  dst_host.copy_(src_host, non_blocking);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) at::native::resize_(dst, self.sizes(), c10::nullopt);
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) { return at::native::_local_scalar_dense_cpu(host_alias(self)); }

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
bool dense_host_memory(const at::Tensor& t) {
  auto type = t.device().type();
  return t.layout() == c10::kStrided && !t.is_quantized() && !t.is_nested() &&
         (type == kDeviceType || type == c10::DeviceType::CPU);
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  return self.key_set() == from.key_set() || (dense_host_memory(self) && dense_host_memory(from));
}

// Memory is freed when the last tensor goes, and work is synchronous: no stream can still
// be using a block, so there is nothing to record.
void record_stream(at::Tensor&, c10::Stream) {}

}  // namespace

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
  m.impl("resize_", TORCH_FN(at::native::resize_));
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
