"""Does the installed adapter load? Run inside a cell, before its tests.

A compiled adapter can install cleanly and still not load: a ``_C`` built against another
torch (``undefined symbol``), a ``lib/*.so`` the wheel left out, an rpath that points at the
build folder. ``adapter-matrix check`` never imports the adapter (it must not import torch),
so the cell asks here: import torch, import each top-level package of the adapter's
distribution as installed (never the source tree), and create a tensor on the matrix's device.
An adapter after whose import torch knows no such device (a pure-Python adapter that registers
none yet) loads without a tensor, and the answer says so (``note``); a device torch knows must
hold one.

The cell runs it as a script, with the working directory taken off ``sys.path``::

    python -c "import sys; del sys.path[0]; from adapter_matrix.ci.load import main; main()" DIST DEVICE [--import-only]

It prints one JSON document: ``{"loaded": true, "modules": [...], "tensor": "tiny:0"}`` or
``{"loaded": false, "error": "ImportError: ..."}`` (exit 1).
"""

from __future__ import annotations

import json
import sys
from importlib import import_module, metadata
from typing import List, Optional, Sequence, TypedDict

__all__ = ["LOAD_MODES", "top_level_modules", "load", "command", "main"]

LOAD_MODES = ("tensor", "import")  # import the adapter and create a tensor on its device, or import it only


def top_level_modules(distribution: str) -> List[str]:
    """The top-level import names of an installed distribution: its packages (a folder with an
    ``__init__.py``) and modules, from the files it installed (else its ``top_level.txt``)."""
    dist = metadata.distribution(distribution)
    names = set()
    for f in dist.files or ():
        parts = f.parts
        if not parts or parts[0].startswith("..") or parts[0].endswith((".dist-info", ".data")):
            continue
        if len(parts) == 2 and parts[1] == "__init__.py":
            names.add(parts[0])
        elif len(parts) == 1 and parts[0].endswith(".py") and not parts[0].startswith("_"):
            names.add(parts[0][:-3])
    if not names:  # an editable install lists a .pth file; setuptools' top_level.txt names the packages
        names.update(line.strip() for line in (dist.read_text("top_level.txt") or "").splitlines() if line.strip())
    return sorted(names)


LONG_LINE = 200  # a first line longer than this is cut after its first sentence


def _error(exc: BaseException) -> str:
    """The exception's type and the first line of its message, as the error itself says it
    (``ImportError: ... undefined symbol: ...``). torch's dispatcher writes its cause first
    and then every kernel registered for the op, one per line: "Could not run
    'aten::empty.memory_format' with arguments from the 'tiny' backend. …" is kept, not
    "PythonDispatcher: registered at …". A long first line keeps its first sentence."""
    kind = type(exc)
    name = (
        kind.__qualname__ if kind.__module__ in ("builtins", "__main__") else f"{kind.__module__}.{kind.__qualname__}"
    )
    try:
        text = str(exc)
    except Exception:  # an exception whose __str__ fails still has a type
        text = ""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) > LONG_LINE and ". " in first[:LONG_LINE]:
        first = first[: first.index(". ") + 1]
    return f"{name}: {first}" if first else name


class _LoadKeys(TypedDict):
    distribution: str
    device: str
    loaded: bool


class LoadReport(_LoadKeys, total=False):
    """What :func:`load` found, as :func:`main` prints it."""

    modules: List[str]  # the adapter's top-level modules, imported in this order
    error: str  # why it does not load (the step and the error)
    note: str  # loaded, but no tensor made: torch knows no such device yet
    tensor: str  # the device the tensor was made on


def load(distribution: str, device: str, tensor: bool = True) -> LoadReport:
    """Import the adapter (torch first: a compiled adapter links libtorch) and, with ``tensor``,
    create a tensor on ``device``; what happened, as the JSON document :func:`main` prints."""
    out: LoadReport = {"distribution": distribution, "device": device, "loaded": False}
    try:
        modules = top_level_modules(distribution)
    except metadata.PackageNotFoundError:
        out["error"] = f"{distribution} is not installed in this environment"
        return out
    out["modules"] = modules
    if not modules:
        out["error"] = f"{distribution} installed no importable package"
        return out
    current: Optional[str] = "torch"
    try:
        torch = import_module("torch")
        for current in modules:
            import_module(current)
        current = None
        if tensor:
            try:
                torch.device(device)
            except RuntimeError:  # the adapter registers no device (yet): nothing to hold a tensor
                out["note"] = f"torch knows no device {device!r} after importing {', '.join(modules)}: no tensor made"
                out["loaded"] = True
                return out
            made = torch.empty(2, device=device)
            if made.device.type != torch.device(device).type:
                out["error"] = f"torch.empty(2, device={device!r}) made a tensor on {made.device}"
                return out
            out["tensor"] = str(made.device)
    except Exception as exc:  # whatever the adapter raises is the finding
        where = f"import {current}" if current else f"torch.empty(2, device={device!r})"
        out["error"] = f"{where}: {_error(exc)}"
        return out
    out["loaded"] = True
    return out


def command(distribution: str, device: str, tensor: bool = True) -> List[str]:
    """The arguments after ``python`` that run :func:`main` in a cell, the working directory
    (the adapter's source tree, without its compiled parts) off ``sys.path``."""
    code = "import sys; del sys.path[0]; from adapter_matrix.ci.load import main; main()"
    return ["-c", code, distribution, device, *([] if tensor else ["--import-only"])]


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    tensor = "--import-only" not in args
    distribution, device = [a for a in args if a != "--import-only"][:2]
    found = load(distribution, device, tensor)
    print(json.dumps(found))
    sys.exit(0 if found["loaded"] else 1)
