"""torch 2.5: ``import torch`` activates the device through the ``torch.backends``
entry point (autoload); the package's entry point makes that safe. ``pin_memory()``
without a device pins for the current accelerator, which is ``npu`` once registered
(PrivateUse1 goes first, even next to a CUDA build).

On Python 3.13 torch 2.5's own ``torch.save`` fails for every tensor, CPU included: it
assigns ``Pickler.persistent_id``, which CPython 3.13 made read-only (torch 2.6 subclasses
the pickler instead). The shim declares serialization absent there. Its Dynamo refuses
Python 3.13 too (``torch.compile`` raises "Dynamo is not supported on Python 3.13+" whatever
the device; torch 2.6 supports it), as 2.2-2.3's refused 3.12.

Inductor's ``init_backend_registration`` reads npu's scheduling and wrapper classes from the
device module (``torch.npu.Scheduling`` ...): npu registers with inductor when it starts.
"""

from __future__ import annotations

from .torch_2_4 import Shim as _Previous


class Shim(_Previous):
    era = "2.5"
    inductor_hook = "module"
    capabilities = {k: v for k, v in _Previous.capabilities.items() if k not in ("autoload", "default_pin_memory")}
    on_python = {
        "serialization": (
            ">=3.13",
            "torch 2.5 cannot torch.save on Python 3.13 ('_pickle.Pickler' object attribute 'persistent_id' "
            "is read-only), CPU tensors included; torch 2.6 fixed it",
        ),
        **dict.fromkeys(
            ("dynamo", "inductor", "inductor_cpp_wrapper", "inductor_dynamic_shapes"),
            (
                ">=3.13",
                "torch 2.5's Dynamo refuses Python 3.13 ('Dynamo is not supported on Python 3.13+'), CPU included; "
                "torch 2.6 supports it",
            ),
        ),
    }
