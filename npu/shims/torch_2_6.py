"""torch 2.6: the ``torch.accelerator`` API (through the PrivateUse1 hooks) and
``torch.load(weights_only=True)`` by default."""

from __future__ import annotations

from .torch_2_5 import Shim as _Previous


class Shim(_Previous):
    era = "2.6"
    capabilities = {
        k: v for k, v in _Previous.capabilities.items() if k not in ("accelerator", "weights_only_default")
    }
    on_python = {}
