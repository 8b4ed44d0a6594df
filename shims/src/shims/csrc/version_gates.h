// Every difference between torch releases that the C++ core has to know about, in one
// place. Each gate names the first release that has the change and why we care.
// Sources compile with -std=c++17 (torch <= 2.11) and -std=c++20 (2.12+): keep both valid.
//
// Keep this list in step with docs/shims.md; `adapter-matrix shims report` lists gates
// that are always true for the oldest supported torch (dead code once the floor rises).
#pragma once

#include <torch/version.h>

#define ADAPTER_TORCH_VERSION (TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR)
#define ADAPTER_TORCH_AT_LEAST(major, minor) (ADAPTER_TORCH_VERSION >= ((major) * 100 + (minor)))

// 2.3: c10::Allocator::allocate() lost its `const` (pytorch#120969) and copy_data()
// became pure virtual (pytorch#117053).
#define ADAPTER_ALLOCATOR_NONCONST_ALLOCATE ADAPTER_TORCH_AT_LEAST(2, 3)
#define ADAPTER_ALLOCATOR_COPY_DATA ADAPTER_TORCH_AT_LEAST(2, 3)

// 2.9: c10::DeviceAllocator exists; deriving from it lets torch.accelerator.memory_*()
// read our statistics. 2.10 adds the optional getMemoryInfo().
#define ADAPTER_DEVICE_ALLOCATOR ADAPTER_TORCH_AT_LEAST(2, 9)
#define ADAPTER_DEVICE_ALLOCATOR_MEMORY_INFO ADAPTER_TORCH_AT_LEAST(2, 10)

// 2.4: DeviceGuardImplInterface gains getNewStream, synchronizeEvent, elapsedTime.
#define ADAPTER_GUARD_STREAM_EVENTS ADAPTER_TORCH_AT_LEAST(2, 4)
// 2.6: DeviceGuardImplInterface gains synchronizeDevice (torch.accelerator.synchronize).
#define ADAPTER_GUARD_SYNCHRONIZE_DEVICE ADAPTER_TORCH_AT_LEAST(2, 6)

// 2.3: PrivateUse1HooksInterface derives from AcceleratorHooksInterface
// (hasPrimaryContext, getPinnedMemoryAllocator, resizePrivateUse1Bytes, initPrivateUse1).
#define ADAPTER_HOOKS_ACCELERATOR_BASE ADAPTER_TORCH_AT_LEAST(2, 3)
// 2.4: hooks carry deviceCount/setCurrentDevice/getCurrentDevice/exchangeDevice.
#define ADAPTER_HOOKS_DEVICE_API ADAPTER_TORCH_AT_LEAST(2, 4)
// 2.5: getDefaultGenerator() became const; isPinnedPtr() is a hook and pin_memory()
// goes through getPinnedMemoryAllocator() instead of a PrivateUse1 _pin_memory kernel.
#define ADAPTER_HOOKS_CONST_DEFAULT_GENERATOR ADAPTER_TORCH_AT_LEAST(2, 5)
#define ADAPTER_HOOKS_PINNED_MEMORY ADAPTER_TORCH_AT_LEAST(2, 5)
// 2.6: initPrivateUse1() was renamed init(); getNewGenerator() is a hook
// (torch.Generator(device="npu") asks it).
#define ADAPTER_HOOKS_INIT_RENAMED ADAPTER_TORCH_AT_LEAST(2, 6)
#define ADAPTER_HOOKS_NEW_GENERATOR ADAPTER_TORCH_AT_LEAST(2, 6)
// 2.7: isBuilt()/isAvailable() are hooks (torch.accelerator.is_available()); the
// REGISTER_GENERATOR_PRIVATEUSE1 registry is deprecated and warns at load.
#define ADAPTER_HOOKS_AVAILABILITY ADAPTER_TORCH_AT_LEAST(2, 7)
#define ADAPTER_GENERATOR_REGISTRY (!ADAPTER_TORCH_AT_LEAST(2, 7))

// 2.4: autocast state is keyed by device type ({is,set}_autocast_enabled(DeviceType));
// before, PrivateUse1 had its own *_privateuseone_* functions and the Python device
// module had to expose them.
#define ADAPTER_AUTOCAST_BY_DEVICE_TYPE ADAPTER_TORCH_AT_LEAST(2, 4)
// 2.4: KERNEL_PRIVATEUSEONE became variadic; before, overloads needed KERNEL_PRIVATEUSEONE2.
#define ADAPTER_AUTOCAST_VARIADIC_KERNEL ADAPTER_TORCH_AT_LEAST(2, 4)

// 2.4: scaled_dot_product_attention asks its kernel-choice stub for every device that
// registered one (DispatchStub::is_device_supported); before, only CUDA/CPU/HIP asked, so
// npu took the math path while CPU took its flash kernel (declared: sdpa_cpu_kernels).
// 2.5: the chooser gained enable_gqa.
#define ADAPTER_SDPA_CHOICE_STUB ADAPTER_TORCH_AT_LEAST(2, 4)
#define ADAPTER_SDPA_ENABLE_GQA ADAPTER_TORCH_AT_LEAST(2, 5)

// 2.8: at::HostAllocator registry (REGISTER_HOST_ALLOCATOR); torch.accelerator.empty_host_cache
// (2.12) asks it for the accelerator and crashed with nothing registered (host_allocator.cpp).
#define ADAPTER_HOST_ALLOCATOR_REGISTRY ADAPTER_TORCH_AT_LEAST(2, 8)

// 2.12: a registry for a PrivateUse1 Kineto activity profiler (REGISTER_PRIVATEUSE1_PROFILER,
// torch/csrc/profiler/standalone/privateuse1_profiler.h), so ProfilerActivity.PrivateUse1
// shows the device's op events (kineto_plugin.cpp). Before, Kineto had no way in for us.
#define ADAPTER_KINETO_PLUGIN ADAPTER_TORCH_AT_LEAST(2, 12)

// 2.13: named tensors left structured kernels: set_output_raw_strided() lost its
// DimnameList argument (direct.cpp's device outputs override it).
#define ADAPTER_STRUCTURED_OUTPUT_NAMES (!ADAPTER_TORCH_AT_LEAST(2, 13))

// Every gate above, for reports (`version_gates()` in Python). `adapter-matrix shims report`
// reads the versions from the #defines above, so they are written once.
#define ADAPTER_FOR_EACH_GATE(_)              \
  _(ADAPTER_ALLOCATOR_NONCONST_ALLOCATE)      \
  _(ADAPTER_ALLOCATOR_COPY_DATA)              \
  _(ADAPTER_DEVICE_ALLOCATOR)                 \
  _(ADAPTER_DEVICE_ALLOCATOR_MEMORY_INFO)     \
  _(ADAPTER_GUARD_STREAM_EVENTS)              \
  _(ADAPTER_GUARD_SYNCHRONIZE_DEVICE)         \
  _(ADAPTER_HOOKS_ACCELERATOR_BASE)           \
  _(ADAPTER_HOOKS_DEVICE_API)                 \
  _(ADAPTER_HOOKS_CONST_DEFAULT_GENERATOR)    \
  _(ADAPTER_HOOKS_PINNED_MEMORY)              \
  _(ADAPTER_HOOKS_INIT_RENAMED)               \
  _(ADAPTER_HOOKS_NEW_GENERATOR)              \
  _(ADAPTER_HOOKS_AVAILABILITY)               \
  _(ADAPTER_GENERATOR_REGISTRY)               \
  _(ADAPTER_AUTOCAST_BY_DEVICE_TYPE)          \
  _(ADAPTER_AUTOCAST_VARIADIC_KERNEL)         \
  _(ADAPTER_SDPA_CHOICE_STUB)                 \
  _(ADAPTER_SDPA_ENABLE_GQA)                  \
  _(ADAPTER_HOST_ALLOCATOR_REGISTRY)          \
  _(ADAPTER_KINETO_PLUGIN)                    \
  _(ADAPTER_STRUCTURED_OUTPUT_NAMES)
