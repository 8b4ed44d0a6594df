"""torch 2.2: inductor compiles npu graphs of symbolic shape (``dynamic=True``), and
tensor parallel's ``ColwiseParallel``/``RowwiseParallel`` reduce the gradients of
replicated parameters; 2.1 did neither (measured on 2.2.2 and 2.3.1)."""

from __future__ import annotations

from .torch_2_1 import Shim as _Previous


class Shim(_Previous):
    era = "2.2"
    capabilities = {
        k: v for k, v in _Previous.capabilities.items() if k not in ("inductor_dynamic_shapes", "tensor_parallel")
    }
