"""torch 2.7: ``DataLoader(pin_memory=True)`` pins for the current accelerator (``npu``),
no longer for CUDA only."""

from __future__ import annotations

from .torch_2_6 import Shim as _Previous


class Shim(_Previous):
    era = "2.7"
    capabilities = {k: v for k, v in _Previous.capabilities.items() if k != "dataloader_pin_memory"}
