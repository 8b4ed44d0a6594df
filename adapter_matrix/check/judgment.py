"""A judgment's terms: the :class:`Environment` judged (as found, or as a what-if question
assumes), the :class:`Verdict` on it (its outcome a :class:`~adapter_matrix.matrix.status.Status`,
with its exit code) and the fixes (:class:`Fix`) that carry it to a usable combination.

Types only: :mod:`.verdict` decides, :mod:`.fixes` searches, and both speak these.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

from packaging.version import Version

from ..matrix.diagnostics import Mark
from ..matrix.model import PythonVersion, Release, ShimRange, TorchLine, Value
from ..matrix.queries import Cell
from ..matrix.status import Status

__all__ = ["Environment", "Fix", "Verdict"]


class Environment(NamedTuple):
    """What is installed (or what a what-if question assumes). ``torch`` keeps its local
    label (``2.8.0+cpu``): the variant is part of what is installed. ``platform_os`` is the
    OS it runs on (``linux``, ``windows``), when known: the shell its fixes' commands are
    written for when the matrix has no ``os`` dimension (:mod:`.shell`)."""

    python: PythonVersion
    python_full: str = ""
    implementation: str = "cpython"
    torch: Optional[Version] = None
    adapter: Optional[Version] = None
    dimensions: Tuple[Tuple[str, Optional[Value]], ...] = ()
    platform_os: Optional[str] = None

    def dimension(self, name: str) -> Optional[Value]:
        return dict(self.dimensions).get(name)


class Fix(NamedTuple):
    """A usable combination reachable from an environment.

    ``changes`` names what differs from the environment (``python``, ``adapter``,
    ``torch`` and extra dimensions such as ``cann``); ``manual`` lists the steps no pip
    command can do (another driver toolkit, a value to make sure of); ``commands`` are
    the pip commands to paste, after the manual steps, written for ``shell`` (``posix``,
    ``windows`` or ``any``: see :mod:`.shell`).
    """

    summary: str
    commands: Tuple[str, ...]
    changes: Tuple[str, ...]
    cell: Cell
    manual: Tuple[str, ...] = ()
    shell: str = "posix"
    # a stack's fix: every other package of the stack it leaves (each layer and what the
    # layers pin), canonical name -> version; what `check --emit` pins besides torch and the adapter
    packages: Tuple[Tuple[str, str], ...] = ()
    diff: Tuple[str, ...] = ()  # uv's lines: "- torch==2.16.0", "+ torch==2.15.0" (check/changes.py)
    # the packages the fix moves in the clone they are installed from (git checkout): `--emit`
    # leaves them out of its pins, which would install a wheel in the clone's place
    in_clones: Tuple[str, ...] = ()


class Verdict(NamedTuple):
    """The answer for one environment, with the rows that decided it."""

    outcome: Status  # the status of the environment's cell; unsupported when none claims it
    reasons: Tuple[str, ...]
    release: Optional[Release] = None
    line: Optional[TorchLine] = None
    shim: Optional[ShimRange] = None
    decided_by: Tuple[Mark, ...] = ()
    assumptions: Tuple[str, ...] = ()
    fixes: Tuple[Fix, ...] = ()

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code
