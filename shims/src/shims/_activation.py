"""Turn the running torch into one with an ``npu`` device.

Steps, each failing with one clear message:

1. ``adapter_matrix.require()`` checks the pairing against the packaged
   ``compat.yaml`` and names the shim module for this torch;
2. PrivateUse1 must be free, or already ours (another adapter is reported by name);
3. the C++ core is built for this torch if needed (cached) and loaded after its build
   manifest is checked;
4. the C++ core registers its hooks; the shim registers the Python side;
5. a torch built with another accelerator (a CUDA build from PyPI) gets one
   ``OtherAcceleratorWarning`` saying what that changes and what to install.
"""

from __future__ import annotations

import importlib
import os
import time
from typing import Any, Dict, NamedTuple, Optional

from adapter_matrix.check.accelerators import warn_other_accelerators
from adapter_matrix.check.guard import under_autoload
from adapter_matrix.device import build as _build

__all__ = ["AdapterError", "NotActivated", "Activation", "activate", "current", "under_autoload", "MATRIX_FILE"]

DEVICE = "npu"
# Features whose APIs pick the accelerator themselves (see shims._core.FEATURES).
DEFAULT_ACCELERATOR_FEATURES = ("default_pin_memory", "dataloader_pin_memory")
MATRIX_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compat.yaml")


class AdapterError(RuntimeError):
    """The device cannot be activated in this process; the message says why and what to do."""


class NotActivated(AdapterError):
    """Refused under autoload by the guard, which has already warned with the fix."""


class Activation(NamedTuple):  # not a dataclass: this runs inside `import torch` (~0.5 ms less)
    """What the activation did, for reports (``check --deep``) and the conformance suite."""

    device: str
    shim: Any
    core: Any
    build: _build.Build
    verdict: str
    timings: Dict[str, float]  # phase -> seconds (benchmarks/activation_cost.py reads them)
    registrations: Dict[str, Any]


_current: Optional[Activation] = None


def current() -> Optional[Activation]:
    return _current


def _claimed_by(torch: Any) -> Optional[str]:
    """Who renamed PrivateUse1, if somebody other than us did."""
    name = torch._C._get_privateuse1_backend_name()
    if name in ("privateuseone", DEVICE):
        return None
    module = getattr(torch, name, None)
    owner = getattr(module, "__name__", "") or ""
    package = owner.split(".")[0] if owner and not owner.startswith("torch.") else None
    return f"'{name}'" + (f" (registered by {package})" if package else "")


def activate(on_compile: Optional[Any] = None) -> Activation:
    """Activate the device once per process; later calls return the first result."""
    global _current
    if _current is not None:
        return _current
    timings: Dict[str, float] = {}
    start = time.perf_counter()
    import torch

    from adapter_matrix import UnsupportedEnvironment, require

    from . import __version__

    try:
        support = require(__package__, version=__version__, torch_version=torch.__version__)
    except UnsupportedEnvironment as exc:
        raise AdapterError(str(exc)) from None
    if not support.usable:  # under autoload: require() has warned with the fix
        raise NotActivated(support.message)
    if support.shim is None:  # validate refuses a claimed torch that no shim serves; a hand-edited matrix can still
        raise AdapterError(
            f"no shim of {__package__} serves torch {torch.__version__}: add one to compat.yaml's shims:"
        )
    timings["guard"] = time.perf_counter() - start

    other = _claimed_by(torch)
    if other is not None:
        raise AdapterError(
            f"PrivateUse1 is already claimed by {other}; one process can hold one such adapter. "
            f"Uninstall it, or stop it from loading (TORCH_DEVICE_BACKEND_AUTOLOAD=0), to use {DEVICE}."
        )

    t = time.perf_counter()
    try:
        build = _build.ensure_built(_build.Extension.of_package(__package__, DEVICE), on_compile=on_compile)
        timings["build"] = time.perf_counter() - t  # the manifest check (or a compile)
        t = time.perf_counter()
        core = _build.load(build)
    except (_build.BuildError, _build.BuildMismatch) as exc:
        raise AdapterError(str(exc)) from None
    timings["load"] = time.perf_counter() - t  # dlopen, static registrations, the module's init

    t = time.perf_counter()
    registrations = dict(core.activate())
    timings["core"] = time.perf_counter() - t  # hooks and the registrations made at activation
    t = time.perf_counter()
    shim = importlib.import_module(support.shim).Shim()
    shim.activate(core, DEVICE)
    timings["shim"] = time.perf_counter() - t
    # A CUDA (ROCm, XPU) build of torch next to npu: say what that changes on this release.
    consequences = [why for why in map(shim.capability, DEFAULT_ACCELERATOR_FEATURES) if why]
    warn_other_accelerators(torch, DEVICE, consequences, stacklevel=2)
    _current = Activation(DEVICE, shim, core, build, support.outcome, timings, registrations)
    return _current
