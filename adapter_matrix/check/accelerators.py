"""Another accelerator compiled into torch, next to the adapter's device.

torch's wheels on PyPI are CUDA builds. Next to a PrivateUse1 device, such a build
answers ``torch.cuda.*`` on its own, and the APIs that pick "the" accelerator by
themselves may pick CUDA, which fails without a CUDA driver ("CUDA driver version is
insufficient for CUDA runtime version"). torch_npu refuses to start then; an adapter
that uses this module warns once at activation with :class:`OtherAcceleratorWarning`,
says what happens on this torch release and what to install instead: the CPU build of
the same torch, from PyTorch's CPU index.

The check reads attributes of the imported torch module (it never imports torch):
``torch.version.cuda``, ``torch.version.hip`` and ``torch.xpu._is_compiled()``.

Silence it with ``ADAPTER_MATRIX_IGNORE_OTHER_ACCELERATORS=1``, or with a warnings filter
set before ``import torch``::

    warnings.filterwarnings("ignore", category=adapter_matrix.OtherAcceleratorWarning)
"""

from __future__ import annotations

import os
import warnings
from typing import List, Optional, Protocol, Sequence

from ..urls import PYTORCH_INDEX

__all__ = [
    "OtherAcceleratorWarning",
    "IGNORE_ENV",
    "CPU_INDEX",
    "other_accelerators",
    "describe",
    "warn_other_accelerators",
]

IGNORE_ENV = "ADAPTER_MATRIX_IGNORE_OTHER_ACCELERATORS"
CPU_INDEX = PYTORCH_INDEX.format(label="cpu")


class TorchModule(Protocol):
    """The ``torch`` module as this reads it: its version; ``torch.version.cuda``/``hip`` and
    ``torch.xpu._is_compiled`` are read with getattr (an older torch lacks them)."""

    __version__: str


class OtherAcceleratorWarning(RuntimeWarning):
    """torch was built with another accelerator than the adapter's device."""


def other_accelerators(torch: TorchModule) -> List[str]:
    """The accelerators compiled into this torch build, e.g. ``["CUDA 12.4"]`` (empty for a CPU build)."""
    found = []
    version = getattr(torch, "version", None)
    cuda = getattr(version, "cuda", None)
    if cuda:
        found.append(f"CUDA {cuda}")
    hip = getattr(version, "hip", None)
    if hip:
        found.append(f"ROCm (HIP {hip})")
    xpu = getattr(torch, "xpu", None)
    compiled = getattr(xpu, "_is_compiled", None)
    if callable(compiled) and compiled():
        found.append("XPU")
    return found


def describe(torch: TorchModule, device: str, others: Sequence[str], consequences: Sequence[str] = ()) -> str:
    """The warning's text: the situation, what happens on this release, the fix and how to silence it."""
    release = str(torch.__version__).split("+", 1)[0]
    lines = [
        f"torch {torch.__version__} is built with {' and '.join(others)}, and the {device} device runs in the same "
        f"process: torch.cuda and code that checks it see that accelerator, not {device}, and without its driver "
        "those calls fail (e.g. 'CUDA driver version is insufficient for CUDA runtime version').",
    ]
    lines.extend(f"- {c}" for c in consequences)
    from .shell import host_shell, quoted

    requirement = quoted(f"torch=={release}", host_shell())
    lines.append(f"Install the CPU build of the same torch: pip install {requirement} --index-url {CPU_INDEX}")
    lines.append(f"(to silence this warning: {IGNORE_ENV}=1)")
    return "\n".join(lines)


def warn_other_accelerators(
    torch: TorchModule, device: str, consequences: Sequence[str] = (), stacklevel: int = 2
) -> Optional[str]:
    """Warn when ``torch`` is built with another accelerator; the message, or None."""
    if os.environ.get(IGNORE_ENV):
        return None
    others = other_accelerators(torch)
    if not others:
        return None
    message = describe(torch, device, others, consequences)
    warnings.warn(message, OtherAcceleratorWarning, stacklevel=stacklevel + 1)
    return message
