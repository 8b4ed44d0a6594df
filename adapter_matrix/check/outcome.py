"""What ``check`` answers with: the outcome and its exit code, the environment asked
about, the fixes and the verdict that carries them.

Types only: :mod:`.verdict` decides, :mod:`.fixes` searches, and both speak these.
"""

from __future__ import annotations

import enum
from typing import NamedTuple, Optional, Tuple

from packaging.version import Version

from ..matrix.diagnostics import Mark
from ..matrix.model import PythonVersion, Release, ShimRange, TorchLine, Value
from ..matrix.queries import Cell

__all__ = ["Outcome", "Environment", "Fix", "Verdict", "RANK"]


class Outcome(str, enum.Enum):
    """The answer of ``check``; each has a documented exit code."""

    SUPPORTED = "supported"
    EXPERIMENTAL = "experimental"
    DEPRECATED = "deprecated"
    EOL = "eol"
    BROKEN = "broken"
    UNSUPPORTED = "unsupported"

    @property
    def exit_code(self) -> int:
        """0 supported; 3 works with a warning; 1 unsupported or known broken."""
        if self is Outcome.SUPPORTED:
            return 0
        if self in (Outcome.EXPERIMENTAL, Outcome.DEPRECATED, Outcome.EOL):
            return 3
        return 1

    def __str__(self) -> str:
        return self.value


class Environment(NamedTuple):
    """What is installed (or what a what-if question assumes). ``torch`` keeps its local
    label (``2.8.0+cpu``): the variant is part of what is installed."""

    python: PythonVersion
    python_full: str = ""
    implementation: str = "cpython"
    torch: Optional[Version] = None
    adapter: Optional[Version] = None
    dimensions: Tuple[Tuple[str, Optional[Value]], ...] = ()

    def dimension(self, name: str) -> Optional[Value]:
        return dict(self.dimensions).get(name)


class Fix(NamedTuple):
    """A usable combination reachable from an environment.

    ``changes`` names what differs from the environment (``python``, ``adapter``,
    ``torch`` and extra dimensions such as ``cann``); ``manual`` lists the steps no pip
    command can do (another driver toolkit, a value to make sure of); ``commands`` are
    the pip commands to paste, after the manual steps.
    """

    summary: str
    commands: Tuple[str, ...]
    changes: Tuple[str, ...]
    cell: Cell
    manual: Tuple[str, ...] = ()


class Verdict(NamedTuple):
    """The answer for one environment, with the rows that decided it."""

    outcome: Outcome
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


RANK = {o: i for i, o in enumerate(Outcome)}
"""Outcomes from best to worst: the verdict keeps the best answer, a fix must improve on it."""
