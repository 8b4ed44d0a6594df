"""torch 2.9: ``torch.accelerator`` memory statistics, read from the C++ core's
``c10::DeviceAllocator``."""

from __future__ import annotations

from .torch_2_8 import Shim as _Previous


class Shim(_Previous):
    era = "2.9"
    capabilities = {k: v for k, v in _Previous.capabilities.items() if k != "accelerator_memory"}
