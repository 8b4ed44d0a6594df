"""Which combinations to test, and how each is named and installed.

A plan row is one (Python, torch) cell of one adapter release. Its ``session`` is the
nox session id that runs it (``device(py3.11-torch2.4)``): the noxfile declares
sessions from this module, and GitHub Actions rows name them, so the two can never
disagree.

Strategies:

``full``
    every cell.
``edges``
    per torch line, its oldest and its newest Python.
``latest``
    per torch line, its newest Python.
``smoke``
    the oldest cell (oldest torch on its oldest Python) plus the cells listed under
    ``ci.smoke`` in the matrix (or the newest cell when none are listed).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.model import Companion, InstallSource, Matrix, Release
from ..matrix.queries import Cell, cells

__all__ = ["STRATEGIES", "SESSION", "CompanionPick", "PlanRow", "plan", "session_id", "install_chain", "companion_picks"]

STRATEGIES = ("full", "edges", "latest", "smoke")
SESSION = "device"


def session_id(cell: Cell) -> str:
    """The nox session id of a cell: ``device(py3.11-torch2.4)``."""
    return f"{SESSION}({cell.id})"


def install_chain(matrix: Matrix, name: str) -> Tuple[InstallSource, ...]:
    """A source followed by its fallbacks, in the order to try them."""
    out: List[InstallSource] = []
    src = matrix.source(name)
    while src is not None and src not in out:
        out.append(src)
        src = matrix.source(src.fallback) if src.fallback else None
    return tuple(out)


@dataclass(frozen=True)
class CompanionPick:
    """A companion release a cell can install: the one that pairs with the cell's torch."""

    companion: Companion
    version: Version

    @property
    def name(self) -> str:
        return self.companion.name

    def requirement(self, variant: Optional[str] = None) -> str:
        """``torchvision==0.28.0``, or the labelled build for a variant (``0.28.0+cpu``)."""
        return f"{self.name}=={self.version}" + (f"+{variant}" if variant else "")

    def mismatched(self, torch: Version) -> Optional[Version]:
        """A release built for another torch line (the nearest, the newer on ties): what a
        cell installs with --no-deps to prove that ``check`` refuses it."""
        others = [r for r in self.companion.releases if not r.pairs_with(torch)]

        def distance(r):  # type: ignore[no-untyped-def]
            gap = (r.line.major - torch.major) * 1000 + r.line.minor - torch.minor
            return (abs(gap), gap < 0, -int(r.version == max(o.version for o in others if o.line == r.line)))

        return min(others, key=distance).version if others else None


def companion_picks(matrix: Matrix, cell: Cell, names: Optional[Sequence[str]] = None) -> Tuple[CompanionPick, ...]:
    """The companions a cell installs (``names``, default ``ci: companions:``), each at the
    release that pairs with the cell's torch; a companion with none for it is left out."""
    wanted = [c.name for c in matrix.ci_companions] if names is None else list(names)
    picks = []
    for name in wanted:
        comp = matrix.companion(name)
        release = comp.choose(cell.torch) if comp is not None else None
        if release is not None:
            picks.append(CompanionPick(comp, release.version))  # type: ignore[arg-type]
    return tuple(picks)


@dataclass(frozen=True)
class PlanRow:
    """One cell to test, with everything a CI job needs to run it."""

    cell: Cell
    tiers: Tuple[str, ...]
    sources: Tuple[InstallSource, ...]
    companions: Tuple[CompanionPick, ...] = ()  # what the cell installs beside torch
    pairable: Tuple[CompanionPick, ...] = ()  # every declared companion with a release for its torch

    @property
    def session(self) -> str:
        return session_id(self.cell)

    @property
    def tags(self) -> Tuple[str, ...]:
        return (f"torch{self.cell.line.minor}", f"py{self.cell.python}") + self.tiers

    def as_dict(self) -> Dict[str, object]:
        c = self.cell
        return {
            "id": c.id,
            "session": self.session,
            "release": str(c.release.version),
            "python": str(c.python),
            "torch": str(c.torch),
            "torch_minor": str(c.line.minor),
            "dimensions": {name: str(v) for name, v in c.dimensions},
            "status": c.status.value,
            "tags": list(self.tags),
            "install": [
                {"source": s.name, "index_url": s.index_url, "find_links": s.find_links, "variant": s.variant}
                for s in self.sources
            ],
            "companions": {pick.name: str(pick.version) for pick in self.companions},
        }


def _select(all_cells: List[Cell], strategy: str, matrix: Matrix) -> List[Cell]:
    by_line: Dict[str, List[Cell]] = {}
    for c in all_cells:
        by_line.setdefault(str(c.line.minor), []).append(c)
    if strategy == "full":
        return all_cells
    if strategy == "edges":
        return [c for group in by_line.values() for c in dict.fromkeys([group[0], group[-1]])]
    if strategy == "latest":
        return [group[-1] for group in by_line.values()]
    if strategy == "smoke":
        if not all_cells:
            return []
        wanted = {(ref.torch, ref.python) for ref in matrix.smoke}
        listed = [c for c in all_cells if (c.line.minor, c.python) in wanted]
        return list(dict.fromkeys([all_cells[0]] + (listed or [all_cells[-1]])))
    raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")


def plan(
    matrix: Matrix,
    strategy: str = "full",
    release: Optional[Release] = None,
    today: Optional[_dt.date] = None,
) -> List[PlanRow]:
    """The rows of ``strategy`` for ``release`` (default: the newest release).

    Cells are (Python, torch) pairs; broken and end-of-life cells are not planned. Each
    row knows every tier it belongs to, so a session can be tagged once for all tiers.
    """
    release = release or matrix.newest_release
    if release is None:
        return []
    # One row per (Python, torch): extra dimensions cannot be installed by a test session.
    unique: Dict[Tuple[object, object], Cell] = {}
    for c in cells(matrix, release, today):
        if c.status.value not in ("broken", "eol"):
            unique.setdefault((c.line.minor, c.python), c)
    ordered = sorted(unique.values(), key=lambda c: (c.line.minor, c.python))
    membership = {s: {id(c) for c in _select(ordered, s, matrix)} for s in STRATEGIES}
    rows = []
    for c in _select(ordered, strategy, matrix):
        tiers = tuple(s for s in STRATEGIES if id(c) in membership[s])
        every = companion_picks(matrix, c, [comp.name for comp in matrix.companions if comp.torch_facts])
        rows.append(PlanRow(c, tiers, install_chain(matrix, c.line.install), companion_picks(matrix, c), every))
    return rows
