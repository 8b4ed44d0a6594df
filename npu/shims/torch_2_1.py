"""torch 2.1-2.2: the oldest era.

- ``torch.autocast("npu")`` asks the device module for five functions and the
  PrivateUse1 autocast state lives behind ``*_privateuseone_*`` C++ functions;
- ``torch.utils.checkpoint`` calls ``device_module.amp.autocast(...)``;
- no GradScaler for custom devices, no torch.accelerator, no autoload entry point.
"""

from __future__ import annotations

import functools
import types
from typing import Dict, Optional

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
    }

    def extend_device_module(self, module: types.ModuleType) -> None:
        import torch

        core = module._core
        for name in ("is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype"):
            setattr(module, name, getattr(core, name))
        amp = types.ModuleType(f"{module.__name__}.amp")
        amp.autocast = functools.partial(torch.autocast, torch._C._get_privateuse1_backend_name())
        module.amp = amp
