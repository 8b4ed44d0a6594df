// The zero-copy boxed fallback of the reference device.
//
// Device memory is host memory, so almost every op runs its CPU kernel directly on the
// device's bytes: the fallback wraps each device tensor in a CPU tensor that aliases the
// same memory (no copy), runs the CPU kernel, and turns the results back into device
// tensors (views stay views of the device storage, fresh outputs are adopted without a
// copy). The device's own kernels are in kernels.cpp, the registrations in registrations.cpp.
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

const c10::Device kCpu(c10::DeviceType::CPU);

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

}  // namespace

// -- one CPU kernel call on host aliases ------------------------------------------------------

void HostCall::note_device(const at::Tensor& t) {
  c10::DeviceIndex i = t.device().index();
  if (index_ < 0) {
    index_ = i;
  } else {
    TORCH_CHECK(i == index_, "Expected all tensors to be on the same device, but found at least two devices, ",
                device(index_), " and ", t.device(), "! (when checking arguments of ", op_name_, ")");
  }
}

c10::DeviceIndex HostCall::checked_index() {
  if (index_ < 0) index_ = current_device();
  TORCH_CHECK(!saw_cpu_tensor_ || arguments_.empty(),
              "Expected all tensors to be on the same device, but found at least two devices, ", device(index_), " and ",
              cpu_seen_, "! (when checking arguments of ", op_name_, ")");
  return index_;
}

const c10::Storage& HostCall::host_for(const at::Tensor& t) {
  c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
  for (auto& a : aliases_) {
    if (a.device.unsafeGetStorageImpl() == impl) return a.host;
  }
  aliases_.push_back(Alias{t.storage(), host_storage(t.storage()), impl->data(), impl->nbytes()});
  return aliases_.back().host;
}

at::Tensor HostCall::to_host(const at::Tensor& t, bool writes) {
  note_device(t);
  TORCH_CHECK(t.layout() == c10::kStrided, "npu: ", op_name_, " got a ", t.layout(), " tensor; only strided tensors are supported");
  at::Tensor host = borrow_ ? pooled_alias(t) : at::Tensor();
  if (!host.defined()) host = tensor_over(host_for(t), c10::DispatchKey::CPU, t);
  arguments_.push_back(Argument{borrow_ ? c10::MaybeOwned<at::Tensor>::borrowed(t) : c10::MaybeOwned<at::Tensor>::owned(at::Tensor(t)),
                                host, writes});
  return host;
}

namespace {

// The host aliases that direct kernels' calls handed back, for the next calls on the same
// thread: plain CPU tensors, each with a storage of its own that points at nothing.
class AliasPool {
 public:
  at::Tensor take() {
    if (spare_.empty()) return at::Tensor();
    at::Tensor alias = std::move(spare_.back());
    spare_.pop_back();
    return alias;
  }
  void give(at::Tensor&& alias) noexcept {
    if (spare_.size() < kCapacity) spare_.push_back(std::move(alias));  // within the inline capacity
  }

 private:
  static constexpr size_t kCapacity = 8;  // a direct kernel takes at most three
  c10::SmallVector<at::Tensor, kCapacity> spare_;
};

AliasPool& alias_pool() {
  thread_local AliasPool pool;
  return pool;
}

}  // namespace

// The first alias of a device storage in a direct kernel's call, from the pool: what
// tensor_over(host_storage(...)) would make, by re-pointing a spare alias instead of
// allocating one. Undefined for what the pool does not serve (quantized tensors and
// ZeroTensors, whose aliases carry more than a dtype; a second view of a storage that the
// call aliased already, which shares that alias's storage through host_for()).
at::Tensor HostCall::pooled_alias(const at::Tensor& t) {
  if (t.is_quantized() || t._is_zerotensor()) return at::Tensor();
  c10::StorageImpl* device_storage = t.storage().unsafeGetStorageImpl();
  for (auto& a : aliases_) {
    if (a.device.unsafeGetStorageImpl() == device_storage) return at::Tensor();
  }
  at::Tensor host = alias_pool().take();
  if (host.defined()) {
    c10::TensorImpl* impl = host.unsafeGetTensorImpl();
    c10::Storage storage = impl->storage();
    storage.unsafeGetStorageImpl()->set_data_ptr_noswap(c10::DataPtr(const_cast<void*>(device_storage->data()), kCpu));
    storage.unsafeGetStorageImpl()->set_nbytes(device_storage->nbytes());
    impl->set_storage_and_dtype(std::move(storage), t.dtype());
    impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
    impl->_set_conj(t.is_conj());
    impl->_set_neg(t.is_neg());
  } else {
    host = tensor_over(host_storage(t.storage()), c10::DispatchKey::CPU, t);
  }
  aliases_.push_back(Alias{t.storage(), host.storage(), device_storage->data(), device_storage->nbytes(), host});
  return host;
}

HostCall::~HostCall() {
  arguments_.clear();  // their references to the aliases
  for (auto& a : aliases_) {
    if (a.pooled.defined()) return_to_pool(a);
  }
}

// A pooled alias goes back only if nothing but the call holds it or its storage, and the
// kernel left it as pooled_alias() can reset it: same storage and bytes (not owned), no autograd
// metadata or wrapped-number flag. Anything else is freed as a fresh alias would be.
void HostCall::return_to_pool(Alias& a) {
  at::Tensor alias = std::move(a.pooled);
  c10::TensorImpl* impl = alias.unsafeGetTensorImpl();
  const bool own_storage = impl->storage().unsafeGetStorageImpl() == a.host.unsafeGetStorageImpl();
  a.host = c10::Storage();
  if (!own_storage || alias.use_count() != 1 || alias.weak_use_count() != 1 || impl->storage().use_count() != 1) return;
  c10::StorageImpl* storage = impl->storage().unsafeGetStorageImpl();
  if (storage->data() != a.data || storage->nbytes() != a.nbytes || storage->data_ptr().get_context() != nullptr) return;
  if (impl->autograd_meta() != nullptr || impl->is_wrapped_number()) return;
  storage->set_data_ptr_noswap(c10::DataPtr(nullptr, kCpu));  // keeps no pointer into device memory
  alias_pool().give(std::move(alias));
}

void HostCall::write_back() {
  for (auto& a : aliases_) {
    c10::StorageImpl* host = a.host.unsafeGetStorageImpl();
    if (host->data() != a.data || host->nbytes() != a.nbytes) {
      size_t nbytes = host->nbytes();
      c10::StorageImpl* dev = a.device.unsafeGetStorageImpl();
      dev->set_data_ptr_noswap(adopt(host->set_data_ptr(c10::DataPtr(nullptr, kCpu)), nbytes, index_));
      dev->set_nbytes(nbytes);
    }
  }
  for (auto& arg : arguments_) {
    if (!arg.mutable_) continue;
    c10::TensorImpl* d = arg.device->unsafeGetTensorImpl();
    const at::Tensor& h = arg.host;
    if (h.storage().unsafeGetStorageImpl() != alias_of(*arg.device)) {
      d->set_storage_keep_dtype(device_storage_for(h.storage()));  // the kernel swapped storage (set_)
    }
    if (d->sizes() != h.sizes() || d->strides() != h.strides() || d->storage_offset() != h.storage_offset()) {
      d->set_sizes_and_strides(h.sizes(), h.strides(), h.storage_offset());
    }
  }
}

c10::StorageImpl* HostCall::alias_of(const at::Tensor& device_tensor) {
  c10::StorageImpl* impl = device_tensor.storage().unsafeGetStorageImpl();
  for (auto& a : aliases_) {
    if (a.device.unsafeGetStorageImpl() == impl) return a.host.unsafeGetStorageImpl();
  }
  return nullptr;
}

// The device storage behind a host storage: the aliased one, or a fresh one adopted once.
c10::Storage HostCall::device_storage_for(const c10::Storage& host) {
  c10::StorageImpl* impl = host.unsafeGetStorageImpl();
  for (auto& a : aliases_) {
    if (a.host.unsafeGetStorageImpl() == impl) return a.device;
  }
  for (auto& f : adopted_) {
    if (f.first == impl) return f.second;
  }
  adopted_.emplace_back(impl, adopt_storage(host, index_));
  return adopted_.back().second;
}

at::Tensor HostCall::to_device(const at::Tensor& h) {
  if (!h.defined() || h.device().type() != c10::DeviceType::CPU) return h;
  for (auto& arg : arguments_) {
    if (arg.host.unsafeGetTensorImpl() == h.unsafeGetTensorImpl()) return *arg.device;  // in-place / out=
  }
  // A CPU kernel that makes a sparse (or mkldnn) tensor from device inputs: the device
  // holds strided tensors only, and handing back the CPU tensor would move the result
  // off the device without a word (to_sparse() on npu returned a CPU tensor).
  TORCH_CHECK_NOT_IMPLEMENTED(h.layout() == c10::kStrided, "npu: ", op_name_, " returns a ", h.layout(),
                              " tensor; the npu device supports strided tensors only");
  if (h._is_zerotensor()) return zero_tensor_like(h, index_);  // no memory behind it to adopt
  if (sole_owner(h)) return become_device_tensor(h);
  return tensor_over(device_storage_for(h.storage()), c10::DispatchKey::PrivateUse1, h);
}

// A fresh output that nothing else holds, tensor or storage: the common case, and the one
// that can skip making a second storage and tensor (what a small op costs is mostly such
// allocations).
bool HostCall::sole_owner(const at::Tensor& h) {
  return h.use_count() == 1 && h.storage().use_count() == 1 && !h.is_quantized() && !h.is_nested() &&
         h.storage().data_ptr().device().type() == c10::DeviceType::CPU;
}

// The device tensor made of `h` itself, as the general path would make it: its storage takes
// the memory as adopted device memory (counted, reported to the profiler) and the device
// allocator for later resizes; the tensor takes the device's dispatch keys and device.
at::Tensor HostCall::become_device_tensor(const at::Tensor& h) {
  c10::StorageImpl* impl = h.storage().unsafeGetStorageImpl();
  size_t nbytes = impl->nbytes();
  impl->set_data_ptr_noswap(adopt(impl->set_data_ptr(c10::DataPtr(nullptr, kCpu)), nbytes, index_));
  impl->set_allocator(allocator());
  c10::TensorImpl* t = h.unsafeGetTensorImpl();
  t->set_storage_keep_dtype(h.storage());  // re-reads the device from the storage
  t->_change_backend_component_keys(device(index_));
  adopted_.emplace_back(impl, h.storage());  // later outputs over the same memory find it
  return h;
}

// -- the zero-copy fallback ----------------------------------------------------------------

namespace {

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
  HostCall call(schema.name().c_str());
  c10::SmallVector<size_t, 2> default_generators;
  bool results_on_cpu = false;  // the op was asked for CPU results

  for (size_t i = 0; i < num_args; ++i) {
    c10::IValue& value = (*stack)[first + i];
    const bool writes = is_write(params[i]);
    if (value.isTensor()) {
      value = call.input(value.toTensor(), writes);
    } else if (value.isTensorList()) {
      auto list = value.toTensorList();
      c10::List<at::Tensor> host;
      host.reserve(list.size());
      for (const at::Tensor& t : list) host.push_back(call.input(t, writes));
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
      call.note_device_index(idx);
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
  const c10::DeviceIndex index = call.checked_index();
  for (size_t position : default_generators) {
    (*stack)[position] = c10::IValue(*twin_of(default_generator(index)));
  }

  {
    DeviceScope scope(index);
    DeviceActivity activity(call.op_name(), index);  // the profiler's device event (device_activity.h)
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
      for (const at::Tensor& t : list) out.push_back(call.to_device(t));
      value = out;
    }
  }
}

}  // namespace

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKeySet(c10::DispatchKey::CPU));
}

// Quantized npu tensors (QuantizedPrivateUse1) run QuantizedCPU's kernels the same way:
// their host aliases are quantized CPU tensors with the same quantizer.
void quantized_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKeySet(c10::DispatchKey::CPU) | c10::DispatchKeySet(c10::DispatchKey::QuantizedCPU));
}

}  // namespace npu
