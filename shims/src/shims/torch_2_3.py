"""torch 2.3: ``torch.amp.GradScaler`` takes a device, so ``GradScaler("npu")`` works."""

from __future__ import annotations

from .torch_2_2 import Shim as _Previous


class Shim(_Previous):
    era = "2.3"
    capabilities = {k: v for k, v in _Previous.capabilities.items() if k != "grad_scaler"}
