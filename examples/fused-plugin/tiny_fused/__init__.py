"""tiny-fused: a fused op (``torch.ops.tiny_fused.add_relu``) for CPU and for tiny-openreg's
device, from an op library compiled against torch and tiny-openreg. tiny-openreg's import checks
torch against the adapter's matrix; `adapter-matrix check` judges the whole stack, this layer's
compat.yaml and its op library's symbols against the installed adapter's library included."""

import tiny_openreg  # noqa: F401  # the device, and libtiny_openreg.so the op library links
import torch

from . import _C  # noqa: F401  # registers tiny_fused::add_relu


def add_relu(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """relu(a + alpha * b) in one op, on the device of ``a`` and ``b``."""
    return torch.ops.tiny_fused.add_relu(a, b, alpha)


__all__ = ["add_relu"]
