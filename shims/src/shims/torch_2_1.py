"""torch 2.1: the oldest era (2.2 shares it but for two capabilities: torch_2_2).

- ``torch.autocast("npu")`` asks the device module for five functions and the
  PrivateUse1 autocast state lives behind ``*_privateuseone_*`` C++ functions;
- ``torch.utils.checkpoint`` calls ``device_module.amp.autocast(...)``;
- no GradScaler for custom devices, no torch.accelerator, no autoload entry point;
- ``init_process_group()`` without a backend builds every device's default backend;
- scaled_dot_product_attention consults a kernel chooser only for CUDA/CPU/HIP, so npu
  runs the math composite where CPU runs its flash kernel (until 2.4);
- inductor reads nothing from the device module, so npu registers itself right after
  ``torch._inductor.graph`` is imported, and it picks its C++ wrapper itself (until 2.4).
"""

from __future__ import annotations

import functools
import types
from typing import Any, Dict, Optional

from ._core import Shim as _Base


class Shim(_Base):
    era = "2.1"
    capabilities: Dict[str, Optional[str]] = {
        "grad_scaler": "torch.amp.GradScaler takes a device from torch 2.3",
        "accelerator": "torch.accelerator exists from torch 2.6",
        "accelerator_memory": "torch.accelerator memory statistics exist from torch 2.9",
        "autoload": "the torch.backends autoload entry point exists from torch 2.5",
        "get_device_module": "torch.get_device_module exists from torch 2.4",
        "safe_globals": "torch.serialization.add_safe_globals exists from torch 2.4",
        "weights_only_default": "torch.load defaults to weights_only=True from torch 2.6",
        "default_pin_memory": "before torch 2.5, pin_memory()/is_pinned()/empty(pin_memory=True) without a device "
        "mean CUDA (a fixed default in torch's C++): pass device='npu'",
        "dataloader_pin_memory": "before torch 2.7, DataLoader(pin_memory=True) pins for CUDA only (and silently not "
        "at all without a CUDA device): pass pin_memory_device='npu'",
        "sdpa_cpu_kernels": "torch 2.1-2.3 ask SDPA's kernel chooser only for CUDA/CPU/HIP: npu takes the math "
        "composite where CPU takes its flash kernel, so attention agrees with CPU to rounding (2.4 asks the device)",
        "inductor_cpp_wrapper": "before torch 2.4 inductor picks its C++ wrapper itself (CPU's for every device that "
        "is not CUDA) and a device cannot register one; the Python wrapper works",
        "inductor_dynamic_shapes": "torch 2.1's inductor fails an internal assertion generating code for npu buffers "
        "of symbolic shape (torch.compile(dynamic=True) of GPT-2 generation, measured on 2.1.2; works on 2.2.2); "
        "static shapes compile",
        "host_allocator": "torch's host-allocator registry (REGISTER_HOST_ALLOCATOR) exists from torch 2.8; pin_memory() "
        "uses the device's pinned allocator through its hooks",
        "empty_host_cache": "torch.accelerator.empty_host_cache exists from torch 2.12",
        "profiler_activity": "torch has no registry for a PrivateUse1 Kineto activity profiler before 2.12 "
        "(REGISTER_PRIVATEUSE1_PROFILER), so ProfilerActivity.PrivateUse1 records no npu events; "
        "profile(use_device='npu') times npu ops through the profiler stubs instead (capability profiler)",
        "tensor_parallel": "torch 2.1's ColwiseParallel/RowwiseParallel leave the gradients of replicated parameters "
        "unreduced, so the ranks' replicas drift apart (measured on 2.1.2; works on 2.2.2)",
        "fsdp2": "fully_shard is public from torch 2.6 (torch.distributed.fsdp); 2.4's private one creates torch.cuda "
        "streams whatever the device",
    }
    inductor_hook = "import"

    def register_distributed(self, core: Any) -> None:
        """``init_process_group()`` without a backend (2.1-2.5) builds one backend per entry
        of ``Backend.default_device_backend_map`` in order (cpu:gloo, cuda:nccl, ...) and
        stops at the first that is a Python ProcessGroup. npu goes first: npu_gloo then
        serves the whole group (CPU tensors too), and no NCCL backend is built, which on a
        CUDA build of torch fails outright on a machine without GPUs."""
        super().register_distributed(core)
        import torch.distributed as dist

        backends = dist.Backend.default_device_backend_map if dist.is_available() else {}
        if "npu" in backends:
            ordered = {"npu": backends["npu"], **{k: v for k, v in backends.items() if k != "npu"}}
            backends.clear()
            backends.update(ordered)

    def extend_device_module(self, module: types.ModuleType) -> None:
        import torch

        core = module._core
        for name in ("is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype"):
            setattr(module, name, getattr(core, name))
        amp = types.ModuleType(f"{module.__name__}.amp")
        setattr(amp, "autocast", functools.partial(torch.autocast, torch._C._get_privateuse1_backend_name()))  # noqa: B010  # ModuleType declares no such attribute
        setattr(module, "amp", amp)  # noqa: B010  # ModuleType declares no such attributes
