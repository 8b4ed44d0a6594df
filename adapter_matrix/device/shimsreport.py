"""``shims report``: compatibility code that no supported torch needs any more.

Two kinds of dead code appear when a project raises its torch floor:

- a shim module that serves no torch claimed by any release still in support
  (status other than ``eol``/``broken``);
- a C++ version gate that is constant (always on, or always off) across every torch
  minor still in support: its ``#if`` can go, keeping one branch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Set

from packaging.version import Version

from ..matrix.model import Matrix, Status, minor_line
from ..matrix.queries import claimed_lines
from .gates import read_gates

__all__ = ["Finding", "supported_torch", "report"]

_RETIRED = (Status.EOL, Status.BROKEN)


@dataclass(frozen=True)
class Finding:
    kind: str  # "dead shim" or "dead gate"
    name: str
    where: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.kind} {self.name} \u2014 {self.why}"


def supported_torch(matrix: Matrix) -> List[Version]:
    """Every torch patch claimed by a release that is still in support."""
    found: Set[Version] = set()
    for release in matrix.releases:
        if release.status in _RETIRED:
            continue
        for _line, patches in claimed_lines(matrix, release):
            found.update(patches)
    return sorted(found)


def report(matrix: Matrix, csrc: Optional[Path]) -> List[Finding]:
    torch = supported_torch(matrix)
    findings: List[Finding] = []
    for shim in matrix.shims:
        if not any(shim.torch.contains(v) for v in torch):
            findings.append(
                Finding(
                    "dead shim", shim.module, str(shim.mark), f"serves {shim.torch}, which no supported release claims"
                )
            )
    if not torch or csrc is None:
        return findings
    minors = sorted({minor_line(v) for v in torch})
    for gate in read_gates(csrc):
        states = {gate.on(m) for m in minors}
        if len(states) == 1:
            state = "on" if states.pop() else "off"
            findings.append(
                Finding(
                    "dead gate",
                    gate.name,
                    f"{Path(csrc) / 'version_gates.h'}:{gate.line}:1",
                    f"always {state} for torch {minors[0]}\u2013{minors[-1]} ({gate.describe()}): drop the #if, keep the {state} branch",
                )
            )
    return findings
