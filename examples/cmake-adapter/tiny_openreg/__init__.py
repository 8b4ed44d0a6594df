"""tiny-openreg: checks its environment against its matrix, then loads its device library
(lib/libtiny_openreg.so, through the _C stub), which registers the PrivateUse1 device `tinyreg`.

A plugin that adds kernels to the device (a fused op, another package's operators) compiles
against the header the wheel ships and links the device library, as torchvision_npu does with
torch_npu: ``get_include()`` and ``get_lib()`` say where they are (docs: the README)."""

import os
import types

from adapter_matrix import require

support = require(__name__)

import torch  # noqa: E402  # the device library links libtorch: torch loads it first

from ._C import allocations, built_for  # noqa: E402

torch.utils.rename_privateuse1_backend("tinyreg")
torch._register_device_module("tinyreg", types.ModuleType("torch.tinyreg"))

_HERE = os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """The folder of tiny_openreg.h, for a plugin's include path."""
    return os.path.join(_HERE, "include")


def get_lib() -> str:
    """The folder of libtiny_openreg.so, for a plugin's library path (link with -ltiny_openreg)."""
    return os.path.join(_HERE, "lib")


__all__ = ["allocations", "built_for", "get_include", "get_lib", "support"]
