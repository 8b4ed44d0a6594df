"""adapter-matrix: one compat.yaml for an out-of-tree PyTorch backend's version matrix.

The library API, for the adapter itself (at the top of its ``__init__``)::

    from adapter_matrix import require

    support = require(__name__)   # raises UnsupportedEnvironment with the fix, or warns under autoload
    if support.usable:
        ...                       # activate the device, with support.shim for this torch

See :func:`adapter_matrix.check.guard.require`. Importing this package is cheap on
purpose (it runs inside ``import torch`` under autoload): the names below load their
modules on first use, and the CLI never loads them.
"""

from __future__ import annotations

from ._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a warm `check` never does)

__all__ = ["__version__", "require", "Support", "UnsupportedEnvironment", "OtherAcceleratorWarning"]

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .check.accelerators import OtherAcceleratorWarning
    from .check.guard import Support, UnsupportedEnvironment, require


def __getattr__(name: str) -> Any:
    if name in ("require", "Support", "UnsupportedEnvironment"):
        from .check import guard

        return getattr(guard, name)
    if name == "OtherAcceleratorWarning":  # for warnings filters set before `import torch`
        from .check import accelerators

        return accelerators.OtherAcceleratorWarning
    raise AttributeError(f"module 'adapter_matrix' has no attribute {name!r}")
