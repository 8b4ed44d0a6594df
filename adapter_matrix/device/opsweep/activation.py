"""How the sweep's workers activate the adapter's device: the way a user does.

The parent never imports torch or the adapter; it reads the installed distribution's
metadata and hands each worker one ``--activate`` value:

- the matrix's shims package (``adapter: shims:``), as before: ``import shims``;
- else the distribution's ``torch.backends`` entry point (``module:function``): torch
  2.5+ calls it on ``import torch`` (autoload); the worker calls it itself when torch did
  not (an older torch, or ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``);
- else the module the distribution is imported as (``import torch_npu``): the module of
  its ``adapter_matrix.matrices`` entry point, else its ``top_level.txt``, else its
  name with ``_`` for ``-``.

``--activate`` on the command line names the module (or ``module:function``) instead.
The worker then checks that PrivateUse1 carries the matrix's device name
(:func:`activate`), so a wrong guess is one clear error, not thousands of failures.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from types import ModuleType
from typing import List, Optional

from ...errors import AdapterMatrixError

__all__ = ["AUTOLOAD_GROUP", "ActivationError", "Activation", "activation_of", "activate"]

AUTOLOAD_GROUP = "torch.backends"
MATRICES_GROUP = "adapter_matrix.matrices"


class ActivationError(AdapterMatrixError, RuntimeError):
    """The adapter cannot be activated: not installed, or it does not register the device."""


@dataclass(frozen=True)
class Activation:
    """What the workers get as ``--activate``, and how it was found (for the summary)."""

    target: str  # a module, or module:function (an autoload entry point)
    how: str


def _module_names(distribution: metadata.Distribution) -> List[str]:
    names: List[str] = []
    for ep in distribution.entry_points:
        if ep.group == MATRICES_GROUP:
            names.append(ep.value.partition(":")[0].strip())
    top_level = distribution.read_text("top_level.txt") or ""
    names += [line.strip() for line in top_level.splitlines() if line.strip() and not line.startswith("_")]
    return list(dict.fromkeys(n for n in names if n))


def activation_of(distribution: str, shims: Optional[str], override: Optional[str] = None) -> Activation:
    """The activation of the matrix's adapter (see the module's docstring)."""
    if override:
        top = override.partition(":")[0].split(".")[0]
        # the top-level package only, where the workers will look (PYTHONPATH first, as they start
        # with it): finding it imports nothing, a submodule's parent would run
        path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + sys.path
        if not top.isidentifier() or (
            importlib.machinery.PathFinder.find_spec(top, path) is None
            and importlib.util.find_spec(top) is None  # an editable install's finder, a built-in module
        ):
            raise ActivationError(
                f"{override}: no module {top!r} is importable here \u2014 give MODULE[:FUNCTION] of the adapter "
                "installed in this environment"
            )
        return Activation(override, f"--activate {override}")
    if shims:
        return Activation(shims, f"import {shims} (the matrix's shims package)")
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise ActivationError(
            f"the adapter's distribution {distribution} is not installed: install it into this environment "
            "(or name the module that activates the device with --activate)"
        ) from None
    for ep in dist.entry_points:
        if ep.group == AUTOLOAD_GROUP:
            return Activation(ep.value.replace(" ", ""), f"torch's autoload entry point {ep.name} = {ep.value}")
    names = _module_names(dist)
    module = names[0] if names else distribution.replace("-", "_").replace(".", "_").lower()
    return Activation(module, f"import {module}")


def _device_name(torch: ModuleType) -> Optional[str]:
    name = getattr(torch._C, "_get_privateuse1_backend_name", None)
    return str(name()) if callable(name) else None


def activate(torch: ModuleType, target: str, device: str) -> None:
    """In the worker, after ``import torch``: import the module (or call the entry point,
    unless torch's autoload already registered the device), then check that the device is
    PrivateUse1's name; :class:`ActivationError` otherwise."""
    module, _, function = target.partition(":")
    if not (function and _device_name(torch) == device):
        loaded = importlib.import_module(module)
        if function:
            getattr(loaded, function)()
    name = _device_name(torch)
    if name is not None and name != device and device not in ("cpu", "cuda", "meta"):
        raise ActivationError(
            f"activating the adapter ({target}) did not register the device {device!r}: PrivateUse1 is named "
            f"{name!r}; name the module that does with --activate, or fix adapter: device: in the matrix"
        )
