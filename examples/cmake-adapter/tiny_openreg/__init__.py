"""tiny-openreg: checks its environment against its matrix, then loads its device library
(lib/libtiny_openreg.so, through the _C stub), which registers the PrivateUse1 device `tinyreg`."""

import types

from adapter_matrix import require

support = require(__name__)

import torch  # noqa: E402  # the device library links libtorch: torch loads it first

from ._C import built_for  # noqa: E402

torch.utils.rename_privateuse1_backend("tinyreg")
torch._register_device_module("tinyreg", types.ModuleType("torch.tinyreg"))

__all__ = ["built_for", "support"]
