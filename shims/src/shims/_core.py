"""What every torch era shares: the feature list and the activation steps of a shim.

An era shim (``shims/torch_X_Y.py``) subclasses the previous era's ``Shim`` and
overrides only what its era changes: a method, or an entry of ``capabilities``.

Shim modules import torch only inside their methods, so tools can read their
declarations (``adapter-matrix capabilities``) without torch and without activating.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Dict, Optional, Tuple

__all__ = ["FEATURES", "Shim"]

# Features a torch release may or may not offer a PrivateUse1 device. The conformance
# suite skips a test only when the active shim declares its feature absent.
FEATURES: Dict[str, str] = {
    "autocast": "torch.autocast('npu') with lower-precision matmul/conv",
    "grad_scaler": "torch.amp.GradScaler('npu')",
    "generator": "torch.Generator(device='npu') and per-device seeding",
    "pinned_memory": "pinned host memory for npu copies (pin_memory, is_pinned)",
    "accelerator": "the torch.accelerator API",
    "accelerator_memory": "torch.accelerator memory statistics",
    "autoload": "activation by `import torch` (torch.backends entry point)",
    "get_device_module": "torch.get_device_module('npu')",
    "safe_globals": "torch.serialization.add_safe_globals",
    "weights_only_default": "torch.load() defaults to weights_only=True",
    "serialization": "torch.save/torch.load of device tensors",
    # APIs that pick "the" accelerator themselves (next to a CUDA build of torch, CUDA may win)
    "default_pin_memory": "Tensor.pin_memory()/is_pinned() and torch.empty(pin_memory=True) without a device pin for npu",
    "dataloader_pin_memory": "DataLoader(pin_memory=True) without pin_memory_device pins for npu",
    "sdpa_cpu_kernels": "scaled_dot_product_attention runs the kernel CPU runs (bitwise CPU results)",
    "distributed": "the npu_gloo process group: collectives and DDP on npu tensors",
    "quantized": "quantized npu tensors (torch.quantize_per_tensor) running QuantizedCPU kernels",
    # torch.compile (shims/inductor.py): CPU's C++/OpenMP code generator, registered for npu
    "dynamo": "torch.compile's graph capture (Dynamo) of npu code, with any backend (eager, aot_eager, inductor)",
    "inductor": "torch.compile with its default backend (inductor) on npu tensors",
    "inductor_cpp_wrapper": "torch.compile with inductor's C++ wrapper (options={'cpp_wrapper': True})",
    "inductor_dynamic_shapes": "torch.compile(dynamic=True) with inductor on npu tensors (GPT-2 generation)",
    "host_allocator": "the pinned allocator is torch's host allocator for npu (at::getHostAllocator; host memory stats)",
    "empty_host_cache": "torch.accelerator.empty_host_cache() after npu allocations",
    "profiler": "profile(use_device='npu'): device time and npu memory per op, fallback outputs included",
    "profiler_device_time": "key_averages() of profile(use_device='npu') carries the stubs' npu op times",
    "profiler_activity": "ProfilerActivity.PrivateUse1 device events (Kineto activity plugin) in key_averages() and traces",
    "fsdp": "FullyShardedDataParallel over npu_gloo, sharded state dicts with torch.distributed.checkpoint",
    "fsdp2": "fully_shard (FSDP2) over an npu DeviceMesh",
    "tensor_parallel": "DTensor: init_device_mesh('npu', ...) and parallelize_module (column and row parallel)",
}


class Shim:
    """The Python side of the device: one subclass per torch era."""

    #: First torch minor of the era.
    era = ""
    #: Every feature the device may offer (feature -> what it is).
    features: Dict[str, str] = FEATURES
    #: feature -> None when the era has it, else why it is absent.
    capabilities: Dict[str, Optional[str]] = {}
    #: feature -> (Python specifier, why): absent only on the Pythons the specifier matches.
    on_python: Dict[str, Tuple[str, str]] = {}
    #: How torch asks for npu's inductor registration (shims.inductor.HOOKS).
    inductor_hook = "module"

    def activate(self, core: Any, name: str) -> ModuleType:
        """Make ``name`` a working device on this torch; returns the device module."""
        import torch

        from . import device

        torch.utils.rename_privateuse1_backend(name)
        device._attach(core)
        self.extend_device_module(device)
        self.register_compiler(device)
        torch._register_device_module(name, device)
        self.generate_methods()
        self.register_serialization(name)
        self.register_distributed(core)
        return device

    def extend_device_module(self, module: ModuleType) -> None:
        """Add what this era's torch expects of a device module (nothing, by default)."""

    def register_compiler(self, module: ModuleType) -> None:
        """Let inductor find npu when it starts, without importing torch._inductor now."""
        from . import inductor

        inductor.attach(module, self.inductor_hook)

    def generate_methods(self) -> None:
        """Tensor.npu(), Module.npu(), storage .npu() and friends."""
        import torch

        torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

    def register_serialization(self, name: str) -> None:
        """torch.save/torch.load of device tensors need nothing beyond torch's own
        privateuse1 location tag (present in every release) and the storage methods."""

    def register_distributed(self, core: Any) -> None:
        """The ``npu_gloo`` process group, for ``init_process_group("npu_gloo")`` and, as the
        npu entry of ``Backend.default_device_backend_map``, for ``init_process_group()``.
        2.1-2.5 build a backend for every device in that map; 2.6+ only for the detected
        accelerator (npu), so there a default group serves npu tensors only."""
        from . import distributed

        distributed.register(core)

    def capability(self, feature: str) -> Optional[str]:
        """None when ``feature`` is available on this torch and this Python, else why not."""
        if feature not in FEATURES:
            raise KeyError(f"unknown feature {feature!r}; known: {', '.join(FEATURES)}")
        if feature in self.on_python:
            import platform

            from packaging.specifiers import SpecifierSet

            spec, why = self.on_python[feature]
            if SpecifierSet(spec).contains(platform.python_version()):
                return why
        return self.capabilities.get(feature)
