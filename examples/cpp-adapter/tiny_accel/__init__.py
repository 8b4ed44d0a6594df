"""tiny-accel: checks its environment against its matrix, then loads its compiled core."""

from adapter_matrix import require

support = require(__name__)

import torch  # noqa: E402  # the extension links libtorch: torch loads it first

from ._C import built_for  # noqa: E402

__all__ = ["built_for", "support", "torch"]
