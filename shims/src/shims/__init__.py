"""The reference adapter: a PrivateUse1 device named ``npu`` whose memory is host memory.

``import shims`` makes ``npu`` usable, like ``import torch_npu``. On torch releases
with the ``torch.backends`` autoload entry point, ``import torch`` alone does it; there
a failure warns with the fix instead of breaking ``import torch``.

The shim module for the running torch is chosen from ``compat.yaml`` (packaged with
this package) by ``adapter_matrix.require()``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Dict, Optional

from ._activation import AdapterError, NotActivated, activate, current, under_autoload

__version__ = "0.3.0"  # the adapter-matrix-npu release; compat.yaml's releases are about this

__all__ = ["__version__", "AdapterError", "activate", "capabilities", "capability"]


def capabilities() -> Dict[str, Optional[str]]:
    """Feature -> None when this torch offers it to the device, else why not."""
    from ._core import FEATURES

    state = current() or activate()
    return {feature: state.shim.capability(feature) for feature in FEATURES}


def capability(feature: str) -> Optional[str]:
    state = current() or activate()
    return state.shim.capability(feature)


def _autoload() -> None:
    """The ``torch.backends`` entry point: activation already ran when this package was
    imported; never raise here, or ``import torch`` itself would fail."""


def _announce(folder: Path) -> None:
    print(
        f"adapter-matrix: compiling the npu device for this torch (once; about a minute) into {folder}", file=sys.stderr
    )


if under_autoload():
    try:
        activate(on_compile=_announce)
    except NotActivated:  # adapter_matrix.require() has warned with the fix
        pass
    except Exception as exc:
        warnings.warn(f"the npu device was not activated: {exc}", RuntimeWarning, stacklevel=2)
else:
    activate(on_compile=_announce)
