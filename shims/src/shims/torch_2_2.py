"""torch 2.2: inductor compiles npu graphs of symbolic shape (``dynamic=True``), and
tensor parallel's ``ColwiseParallel``/``RowwiseParallel`` reduce the gradients of
replicated parameters; 2.1 did neither (measured on 2.2.2 and 2.3.1).

2.2 is the first release with wheels for Python 3.12, and its Dynamo refuses that Python,
as 2.3's does: ``torch.compile`` raises "Dynamo is not supported on Python 3.12+" whatever
the device (measured on 2.2.2 and 2.3.1, Python 3.12; 2.4 supports it).
"""

from __future__ import annotations

from typing import Dict, Tuple

from .torch_2_1 import Shim as _Previous

_NO_DYNAMO_ON_312 = (
    ">=3.12",
    "torch 2.2-2.3's Dynamo refuses Python 3.12 ('Dynamo is not supported on Python 3.12+'), CPU included; "
    "torch 2.4 supports it",
)


class Shim(_Previous):
    era = "2.2"
    capabilities = {
        k: v for k, v in _Previous.capabilities.items() if k not in ("inductor_dynamic_shapes", "tensor_parallel")
    }
    on_python: Dict[str, Tuple[str, str]] = dict.fromkeys(
        ("dynamo", "inductor", "inductor_dynamic_shapes"), _NO_DYNAMO_ON_312
    )
