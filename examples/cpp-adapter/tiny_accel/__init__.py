"""tiny-accel: checks its environment against its matrix, then loads its compiled core, which
registers the PrivateUse1 device `tiny` (its memory is host memory: an example, not a driver)."""

import types

from adapter_matrix import require

support = require(__name__)

import torch  # noqa: E402  # the extension links libtorch: torch loads it first

from ._C import built_for  # noqa: E402

torch.utils.rename_privateuse1_backend("tiny")
torch._register_device_module("tiny", types.ModuleType("torch.tiny"))

__all__ = ["built_for", "support", "torch"]
