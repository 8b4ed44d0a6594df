"""torch 2.5: ``import torch`` activates the device through the ``torch.backends``
entry point (autoload); the package's entry point makes that safe."""

from __future__ import annotations

from .torch_2_4 import Shim as _Previous


class Shim(_Previous):
    era = "2.5"
    capabilities = {k: v for k, v in _Previous.capabilities.items() if k != "autoload"}
