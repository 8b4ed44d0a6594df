"""The verdict at import time: the one function an adapter calls before activating.

``guard()`` answers with the same code as ``adapter-matrix check`` (the model's
:func:`~adapter_matrix.check.verdict.verdict`), for the torch that is already imported, and
names the shim module that serves it. It runs inside ``import torch`` under autoload,
so its answer is memoized: keyed by the matrix file's bytes, the torch, Python and
adapter versions and today's date, a repeated import reads a few hundred bytes of JSON
and imports neither the model nor ``packaging``.

Policy: unsupported and broken pairings raise :class:`UnsupportedEnvironment` with
the fix (set ``ADAPTER_MATRIX_ALLOW_UNSUPPORTED=1`` to get a warning instead);
deprecated and end-of-life ones warn; experimental ones pass silently. Extra
dimensions are not detected here (that may run commands); ``check`` reports them.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import warnings
from typing import Any, NamedTuple, Optional

from .. import __version__
from ..matrix.cache import cache_root
from .facts import distribution_version, python_identity

__all__ = ["UnsupportedEnvironment", "Selection", "select", "guard", "explain", "ALLOW_ENV"]

ALLOW_ENV = "ADAPTER_MATRIX_ALLOW_UNSUPPORTED"
_BLOCKING = ("unsupported", "broken")
_WARNING = ("deprecated", "eol")


class UnsupportedEnvironment(RuntimeError):
    """The running torch/Python is not a combination the adapter supports."""


class Selection(NamedTuple):  # not a dataclass: imported on every activation (~0.5 ms less)
    """The verdict for the running process and the shim module that serves it."""

    outcome: str  # an Outcome value: supported, experimental, ..., unsupported
    shim: Optional[str]
    message: str


def explain(answer: Any, distribution: str, torch_version: str) -> str:
    """One message for a :class:`~adapter_matrix.check.verdict.Verdict`: what is wrong and the fix."""
    lines = [f"{distribution} with torch {torch_version}: {answer.outcome}" + "".join(f": {r}" for r in answer.reasons[:1])]
    for i, fix in enumerate(answer.fixes[:2]):
        lines.append(("fix: " if i == 0 else "or:  ") + fix.summary)
        lines.extend(f"    {c}" for c in fix.commands)
    return "\n".join(lines)


def _decide(raw: bytes, matrix_path: str, torch_version: str, adapter_version: Optional[str]) -> Selection:
    from packaging.version import InvalidVersion, Version

    from ..matrix.cache import load_matrix
    from ..matrix.queries import shim_for
    from .environment import current_python
    from .verdict import Environment, verdict

    matrix = load_matrix(matrix_path).matrix
    python, full, implementation = current_python()
    adapter_text = adapter_version or distribution_version(matrix.adapter.distribution)
    try:
        torch = Version(torch_version)
        adapter = Version(adapter_text) if adapter_text else None
    except InvalidVersion as exc:
        raise UnsupportedEnvironment(f"cannot read a version: {exc}") from None
    env = Environment(python=python, python_full=full, implementation=implementation, torch=torch, adapter=adapter)
    answer = verdict(matrix, env)
    shim = answer.shim or shim_for(matrix, torch)
    return Selection(answer.outcome.value, shim.module if shim else None, explain(answer, matrix.adapter.distribution, torch_version))


def select(matrix_path: str, torch_version: str, adapter_version: Optional[str] = None) -> Selection:
    """Verdict and shim for this interpreter running ``torch_version`` (memoized)."""
    with open(matrix_path, "rb") as fh:
        raw = fh.read()
    key = hashlib.sha256(
        json.dumps([__version__, torch_version, python_identity(), adapter_version, _dt.date.today().isoformat()]).encode()
        + raw
    ).hexdigest()[:32]
    memo = os.path.join(cache_root(), "verdicts", key + ".json")
    try:
        with open(memo) as fh:
            return Selection(**json.load(fh))
    except (OSError, ValueError, TypeError):
        pass
    selection = _decide(raw, matrix_path, torch_version, adapter_version)
    try:
        os.makedirs(os.path.dirname(memo), exist_ok=True)
        tmp = f"{memo}.{os.getpid()}.tmp"
        with open(tmp, "w") as fh:
            json.dump(selection._asdict(), fh)
        os.replace(tmp, memo)
    except OSError:  # a read-only cache only costs time
        pass
    return selection


def guard(matrix_path: str, torch_version: str, adapter_version: Optional[str] = None) -> Selection:
    """Raise :class:`UnsupportedEnvironment` unless the pairing may run; warn where due."""
    selection = select(matrix_path, torch_version, adapter_version)
    if selection.outcome in _BLOCKING:
        if not os.environ.get(ALLOW_ENV) or selection.shim is None:
            raise UnsupportedEnvironment(selection.message + f"\n(set {ALLOW_ENV}=1 to try anyway)")
        warnings.warn(selection.message, RuntimeWarning, stacklevel=3)
    elif selection.outcome in _WARNING:
        warnings.warn(selection.message, FutureWarning, stacklevel=3)
    return selection
