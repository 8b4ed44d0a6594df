"""What the running torch offers a PrivateUse1 backend, as data that can be diffed.

Each capability is a question asked of the imported torch (an attribute, a signature)
with a JSON-able answer. ``probe --json`` records the answers of one release;
``probe --diff A.json B.json`` lists what moved between two; ``new-shim`` turns that
list into a to-do for the new era's shim. The list follows
``shared/research/apidrift.md`` and what the shims branch on.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Tuple, TypedDict

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = ["PROBE_SCHEMA", "CAPABILITIES", "Probe", "probe", "Difference", "diff"]

PROBE_SCHEMA = 1


class Probe(TypedDict):
    """A probe as ``probe --json`` prints it: each capability's answer (JSON: a bool, a list of
    names, a default), and ``cpp_gates`` (gate -> on) with the adapter's C++ sources."""

    schema: int
    torch: str
    torch_minor: str
    python: str
    capabilities: Dict[str, object]


def _params(fn: object, skip: Tuple[str, ...] = ("self",)) -> List[str]:
    if not callable(fn):  # what inspect.signature refuses with a TypeError
        return []
    try:
        return [p for p in inspect.signature(fn).parameters if p not in skip]
    except (TypeError, ValueError):
        return []


def _default(fn: object, name: str) -> object:
    if not callable(fn):
        return None
    try:
        p = inspect.signature(fn).parameters.get(name)
    except (TypeError, ValueError):
        return None
    return None if p is None or p.default is inspect.Parameter.empty else p.default


def _public(module: object) -> List[str]:
    """A module's API: its ``__all__``, else its public callables."""
    if module is None:
        return []
    names: List[str] = getattr(module, "__all__", None) or [
        n for n in dir(module) if callable(getattr(module, n, None))
    ]
    return sorted(n for n in names if not n.startswith("_"))


# name -> (what it tells, how to ask torch: the imported module, its attributes looked up by name)
CAPABILITIES: Dict[str, Tuple[str, Callable[[ModuleType], object]]] = {
    "rename_privateuse1_backend": (
        "torch.utils.rename_privateuse1_backend",
        lambda t: hasattr(t.utils, "rename_privateuse1_backend"),
    ),
    "generate_methods_parameters": (
        "parameters of generate_methods_for_privateuse1_backend",
        lambda t: _params(t.utils.generate_methods_for_privateuse1_backend),
    ),
    "library_impl_parameters": ("parameters of torch.library.Library.impl", lambda t: _params(t.library.Library.impl)),
    "library_impl_allow_override_default": (
        "Library.impl(allow_override=...) default (True: duplicate registrations allowed)",
        lambda t: _default(t.library.Library.impl, "allow_override"),
    ),
    "library_fallback": ("torch.library.Library.fallback", lambda t: hasattr(t.library.Library, "fallback")),
    "torch_library_api": (
        "torch.library registration functions",
        lambda t: [
            n
            for n in ("impl", "register_kernel", "custom_op", "register_fake", "register_autocast")
            if hasattr(t.library, n)
        ],
    ),
    "autocast_state_by_device_type": (
        "torch keeps the autocast state per device type (the device module needs one function, not five)",
        lambda t: hasattr(t, "get_autocast_dtype"),
    ),
    "grad_scaler_device": (
        "torch.amp.GradScaler(device)",
        lambda t: "device" in _params(getattr(getattr(t, "amp", None), "GradScaler", None)),
    ),
    "add_safe_globals": (
        "torch.serialization.add_safe_globals",
        lambda t: hasattr(t.serialization, "add_safe_globals"),
    ),
    "weights_only_default": (
        "torch.load defaults to weights_only=True",
        lambda t: hasattr(t.serialization, "_default_to_weights_only"),
    ),
    "rebuild_device_tensor_from_cpu_tensor": (
        "torch._utils._rebuild_device_tensor_from_cpu_tensor (pickling storage-less device tensors)",
        lambda t: hasattr(t._utils, "_rebuild_device_tensor_from_cpu_tensor"),
    ),
    "accelerator_api": ("public names of torch.accelerator", lambda t: _public(getattr(t, "accelerator", None))),
    "backend_autoload": ("the torch.backends entry-point autoload", lambda t: hasattr(t, "_import_device_backends")),
    "get_device_module": ("torch.get_device_module", lambda t: hasattr(t, "get_device_module")),
    "acc_python_hooks": ("torch._C._acc (PrivateUse1 hooks from Python)", lambda t: hasattr(t._C, "_acc")),
    "fork_rng_device_type": (
        "torch.random.fork_rng(device_type=...)",
        lambda t: "device_type" in _params(t.random.fork_rng),
    ),
    "register_device_module": ("torch._register_device_module", lambda t: hasattr(t, "_register_device_module")),
}


def _gates(csrc: Optional[Path], torch_version: Version) -> Optional[Dict[str, bool]]:
    """The adapter's C++ gates that this torch turns on."""
    from .gates import read_gates

    gates = read_gates(csrc) if csrc is not None else []
    return {g.name: g.on(torch_version) for g in gates} or None


def probe(csrc: Optional[Path] = None) -> Probe:
    """Import torch (autoload off: probe torch, not an adapter) and answer every question;
    with the adapter's ``csrc`` folder, also which of its C++ gates this torch turns on."""
    import os

    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    import torch
    from packaging.version import Version

    from ..matrix.model import minor_line

    answers: Dict[str, object] = {}
    for name, (_what, ask) in CAPABILITIES.items():
        try:
            answers[name] = ask(torch)
        except Exception as exc:
            answers[name] = f"error: {type(exc).__name__}"
    version = Version(torch.__version__)
    gates = _gates(csrc, version)
    if gates is not None:
        answers["cpp_gates"] = gates
    return {
        "schema": PROBE_SCHEMA,
        "torch": torch.__version__,
        "torch_minor": str(minor_line(version)),
        "python": ".".join(map(str, sys.version_info[:3])),
        "capabilities": answers,
    }


@dataclass(frozen=True)
class Difference:
    name: str
    before: object  # a capability's answer, as JSON read it: compared and printed, never looked into
    after: object

    @property
    def description(self) -> str:
        return CAPABILITIES.get(self.name, ("C++ version gates of the adapter", None))[0]

    def describe(self, a: str, b: str) -> str:
        if isinstance(self.before, list) and isinstance(self.after, list):
            added = [x for x in self.after if x not in self.before]
            removed = [x for x in self.before if x not in self.after]
            parts = ([f"added {', '.join(map(str, added))}"] if added else []) + (
                [f"removed {', '.join(map(str, removed))}"] if removed else []
            )
            return f"{self.name}: {'; '.join(parts) or 'reordered'} ({self.description})"
        if isinstance(self.before, dict) and isinstance(self.after, dict):
            changed = [k for k in sorted(set(self.before) | set(self.after)) if self.before.get(k) != self.after.get(k)]
            return f"{self.name}: " + ", ".join(f"{k} {self.before.get(k)} -> {self.after.get(k)}" for k in changed)
        return f"{self.name}: {self.before!r} on {a}, {self.after!r} on {b} ({self.description})"


def _capabilities(probe: Mapping[str, object]) -> Mapping[str, object]:
    found = probe.get("capabilities", {})
    return found if isinstance(found, dict) else {}


def diff(a: Mapping[str, object], b: Mapping[str, object]) -> List[Difference]:
    """Capabilities whose answers differ between probes ``a`` and ``b``."""
    ca, cb = _capabilities(a), _capabilities(b)
    return [Difference(k, ca.get(k), cb.get(k)) for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)]
