// PrivateUse1 hooks and the device's random number generators.
#include "npu.h"  // first: the version gates decide what else to include

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/util/Exception.h>

#if ADAPTER_GENERATOR_REGISTRY
#include <ATen/core/GeneratorForPrivateuseone.h>
#endif

#include <cstring>
#include <mutex>
#include <vector>


namespace npu {

namespace {

// A generator of an npu device. Its state *is* a CPU generator (the twin): random
// kernels run on CPU with the twin, so `torch.npu.manual_seed(s)` followed by
// `torch.randn(n, device="npu")` gives exactly `torch.manual_seed(s); torch.randn(n)`,
// independently of the CPU default generator's own state.
struct NpuGenerator final : public c10::GeneratorImpl {
  explicit NpuGenerator(c10::DeviceIndex index, at::Generator twin)
      : c10::GeneratorImpl(npu::device(index), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)), twin_(std::move(twin)) {}
  explicit NpuGenerator(c10::DeviceIndex index)
      : NpuGenerator(index, at::detail::createCPUGenerator(c10::default_rng_seed_val)) {}

  void set_current_seed(uint64_t seed) override { twin_impl()->set_current_seed(seed); }
  void set_offset(uint64_t offset) override { twin_impl()->set_offset(offset); }
  uint64_t get_offset() const override { return twin_impl()->get_offset(); }
  uint64_t current_seed() const override { return twin_impl()->current_seed(); }
  uint64_t seed() override { return twin_impl()->seed(); }
  void set_state(const c10::TensorImpl& new_state) override { twin_impl()->set_state(new_state); }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override { return twin_impl()->get_state(); }

  c10::GeneratorImpl* twin_impl() const { return twin_.unsafeGetGeneratorImpl(); }
  const at::Generator& twin() const { return twin_; }

 private:
  NpuGenerator* clone_impl() const override {
    return new NpuGenerator(device().index(), at::Generator(twin_.clone()));
  }
  at::Generator twin_;
};

struct DefaultGenerators {
  std::once_flag once;
  std::vector<at::Generator> generators;
};

DefaultGenerators& defaults() {
  static DefaultGenerators d;
  std::call_once(d.once, [] {
    for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
      d.generators.push_back(at::make_generator<NpuGenerator>(i));
    }
  });
  return d;
}

at::Generator new_generator(c10::DeviceIndex index) {
  if (index < 0) index = current_device();
  check_device_index(index);
  return at::make_generator<NpuGenerator>(index);
}

#if ADAPTER_GENERATOR_REGISTRY
// Before 2.7, torch.Generator(device="npu") asks this registry.
REGISTER_GENERATOR_PRIVATEUSE1(new_generator)
#endif

#if ADAPTER_HOOKS_CONST_DEFAULT_GENERATOR
#define ADAPTER_DEFAULT_GENERATOR_CONST const
#else
#define ADAPTER_DEFAULT_GENERATOR_CONST
#endif

struct Hooks final : public at::PrivateUse1HooksInterface {
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) ADAPTER_DEFAULT_GENERATOR_CONST override {
    return default_generator(index);
  }
  at::Device getDeviceFromPtr(void*) const override { return device(current_device()); }

#if ADAPTER_HOOKS_ACCELERATOR_BASE
  bool hasPrimaryContext(c10::DeviceIndex index) const override {
    check_device_index(index);
    return true;
  }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_allocator(); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    // torch.UntypedStorage.resize_() on the device: new memory, old bytes kept.
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
    c10::DeviceIndex index = impl->device().index();
    c10::DeviceIndex previous = current_device();
    set_current_device(index);
    c10::DataPtr fresh = allocator()->allocate(newsize);
    set_current_device(previous);
    size_t keep = std::min(newsize, impl->nbytes());
    if (keep) std::memcpy(fresh.get(), impl->data(), keep);
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
#endif
#if ADAPTER_HOOKS_ACCELERATOR_BASE && !ADAPTER_HOOKS_INIT_RENAMED
  void initPrivateUse1() const override {}
#endif
#if ADAPTER_HOOKS_INIT_RENAMED
  void init() const override {}
#endif
#if ADAPTER_HOOKS_DEVICE_API
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex index) const override { set_current_device(index); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    c10::DeviceIndex previous = current_device();
    set_current_device(index);
    return previous;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override { return exchangeDevice(index); }
#endif
#if ADAPTER_HOOKS_PINNED_MEMORY
  bool isPinnedPtr(const void* data) const override { return is_pinned_ptr(data); }
#endif
#if ADAPTER_HOOKS_NEW_GENERATOR
  at::Generator getNewGenerator(c10::DeviceIndex index) const override { return new_generator(index); }
#endif
#if ADAPTER_HOOKS_AVAILABILITY
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
#endif
};

}  // namespace

const at::Generator& default_generator(c10::DeviceIndex index) {
  if (index < 0) index = current_device();
  check_device_index(index);
  return defaults().generators[index];
}

c10::optional<at::Generator> twin_of(const at::Generator& generator) {
  if (!generator.defined() || generator.device().type() != kDeviceType) return c10::nullopt;
  return static_cast<NpuGenerator*>(generator.unsafeGetGeneratorImpl())->twin();
}

void register_hooks() {
  static std::once_flag once;
  std::call_once(once, [] { at::RegisterPrivateUse1HooksInterface(new Hooks()); });
}

}  // namespace npu
