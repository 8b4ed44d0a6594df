"""torch 2.6: the ``torch.accelerator`` API (through the PrivateUse1 hooks) and
``torch.load(weights_only=True)`` by default, and ``fully_shard`` (FSDP2) in
``torch.distributed.fsdp`` for any device. ``init_process_group()`` without a backend
builds only the detected accelerator's backend (npu_gloo), so the default map keeps its order."""

from __future__ import annotations

from typing import Any

from ._core import Shim as _Base
from .torch_2_5 import Shim as _Previous


class Shim(_Previous):
    era = "2.6"
    capabilities = {
        k: v for k, v in _Previous.capabilities.items() if k not in ("accelerator", "weights_only_default", "fsdp2")
    }
    on_python = {}

    def register_distributed(self, core: Any) -> None:
        _Base.register_distributed(self, core)
