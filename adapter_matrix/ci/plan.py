"""Which combinations to test, and how each is named and installed.

A plan row is one (Python, torch) cell of one adapter release, for each value of the
dimensions a CI runner must provide (a driver toolkit: ``runner:`` in the matrix). Its
``session`` is the nox session id that runs it (``device(py3.11-torch2.4)``): the
noxfile declares sessions from this module, and GitHub Actions rows name them, so the
two can never disagree.

A plan covers every maintained (not end-of-life) release, or the releases ``--release``
names. Row ids are stable and unique: ``py3.11-torch2.4``, then each runner-provided
value (``-cann9.1.0``), then, in a matrix of several releases, the release
(``-v2.9.0.post6``). Dimensions no runner provides (and no session installs) do not
multiply rows.

Strategies, each per release and runner-provided values:

``full``
    every cell.
``edges``
    per torch line, its oldest and its newest Python.
``latest``
    per torch line, its newest Python.
``smoke``
    the oldest cell (oldest torch on its oldest Python) plus the cells listed under
    ``ci.smoke`` in the matrix, of the newest release that has them (or the newest cell
    when none are listed).
``pairwise``
    across releases: every release at least once, and every pair of values of two
    dimensions (the torch line, Python, each extra dimension of the row's cell) that
    occur together in a row of ``full`` together in at least one row
    (:mod:`adapter_matrix.ci.covering`; ``cover=3``: every triple).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Collection, Dict, Hashable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.cellid import CellId
from ..matrix.model import Companion, CompanionRelease, InstallSource, Matrix, Release, Value
from ..matrix.queries import Cell, Releases, cells, chosen, maintained, torch_source
from .covering import cover as covering

__all__ = [
    "STRATEGIES",
    "SESSION",
    "DEFAULT_RUNNER",
    "RunnerLabels",
    "row_labels",
    "CompanionPick",
    "PlanRow",
    "plan",
    "covered_values",
    "install_chain",
    "companion_picks",
]

STRATEGIES = ("full", "edges", "latest", "smoke", "pairwise")
SESSION = "device"
DEFAULT_RUNNER = ("self-hosted",)  # base labels of a row that needs a runner-provided dimension


class RunnerLabels(NamedTuple):
    """The ``runs-on`` labels of a row (empty: any runner) and the values no label names."""

    labels: Tuple[str, ...]
    unnamed: Tuple[str, ...]  # "cann9.1.0": a value neither the given labels nor the matrix name


def row_labels(
    matrix: Matrix, requires: Sequence[Tuple[str, Value]], given: Optional[Mapping[str, Sequence[str]]] = None
) -> RunnerLabels:
    """The one computation of a row's runner labels: per runner-provided value, the ``given``
    labels (``--runners``: the value's, else its dimension's), else the matrix's base labels and
    the dimension's ``runner:`` label. A plan row keeps them for the matrix alone
    (:attr:`PlanRow.runs_on`), the GitHub plan asks again with ``--runners``."""
    labels: List[str] = []
    unnamed: List[str] = []
    for name, value in requires:
        named = given.get(f"{name}{value}", given.get(name)) if given else None
        if named is not None:
            labels += named
            continue
        dim = matrix.dimension(name)
        label = dim.runner.label(value) if dim is not None and dim.runner is not None else None
        if label is None:
            unnamed.append(f"{name}{value}")
            continue
        labels += [*(matrix.runs_on or DEFAULT_RUNNER), label]
    return RunnerLabels(tuple(dict.fromkeys(labels)), tuple(unnamed))


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

    def mismatched(self, torch: Version, lines: Optional[Collection[Version]] = None) -> Optional[Version]:
        """A release built for another torch line (the nearest, the newer on ties): what a
        cell installs with --no-deps to prove that ``check`` refuses it. ``lines``: the torch
        lines with wheels for the cell's Python; a companion follows its torch's Pythons, so
        one built for a line that dropped the cell's Python has no wheel to install."""
        others = [r for r in self.companion.releases if not r.pairs_with(torch) and (lines is None or r.line in lines)]

        def distance(r: CompanionRelease) -> Tuple[int, bool, int]:
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
    """One cell to test, with everything a CI job needs to run it.

    ``requires`` are the runner-provided dimension values the job needs, ``runs_on``
    the runner labels the matrix gives such a runner (empty: any runner;
    :func:`row_labels`, the one computation of them).
    """

    cell: Cell
    tiers: Tuple[str, ...]
    sources: Tuple[InstallSource, ...]
    id: CellId
    requires: Tuple[Tuple[str, Value], ...] = ()
    runs_on: Tuple[str, ...] = ()
    release_tags: Tuple[str, ...] = ()
    companions: Tuple[CompanionPick, ...] = ()  # what the cell installs beside torch
    pairable: Tuple[CompanionPick, ...] = ()  # every declared companion with a release for its torch

    @property
    def session(self) -> str:
        """The nox session id: ``device(py3.11-torch2.4)``."""
        return f"{SESSION}({self.id})"

    @property
    def tags(self) -> Tuple[str, ...]:
        dims = tuple(f"{name}{value}" for name, value in self.requires)
        return (f"torch{self.cell.line.minor}", f"py{self.cell.python}") + dims + self.release_tags + self.tiers

    def as_dict(self) -> Dict[str, object]:
        c = self.cell
        return {
            "id": self.id,
            "session": self.session,
            "release": str(c.release.version),
            "release_line": c.release.release_line,
            "python": str(c.python),
            "torch": str(c.torch),
            "torch_minor": str(c.line.minor),
            "torch_variant": c.release.variant,
            "dimensions": {name: str(v) for name, v in c.dimensions},
            "requires": {name: str(v) for name, v in self.requires},
            "runs_on": list(self.runs_on),
            "status": c.status.value,
            "tags": list(self.tags),
            "install": [
                {"source": s.name, "index_url": s.index_url, "find_links": s.find_links, "variant": s.variant}
                for s in self.sources
            ],
            "companions": {pick.name: str(pick.version) for pick in self.companions},
        }


Group = Tuple[
    int, Tuple[Tuple[str, Value], ...]
]  # (release index, runner-provided values): what edges/latest work within


def covered_values(cell: Cell) -> Dict[str, Hashable]:
    """The values a row stands for in the ``pairwise`` strategy: its torch line, its Python
    and each extra dimension its cell has a value of (compared as the model compares them)."""
    values: Dict[str, Hashable] = {"torch line": str(cell.line.minor), "Python": str(cell.python)}
    values.update((name, value.identity) for name, value in cell.dimensions)
    return values


def _select(rows: List[Tuple[Group, Cell]], strategy: str, matrix: Matrix, strength: int = 2) -> List[Cell]:
    by_line: Dict[Tuple[Group, str], List[Cell]] = {}
    for group, c in rows:
        by_line.setdefault((group, c.torch_row), []).append(c)
    all_cells = [c for _g, c in rows]
    if strategy == "full":
        return all_cells
    if strategy == "edges":
        return [c for group in by_line.values() for c in dict.fromkeys([group[0], group[-1]])]
    if strategy == "latest":
        return [group[-1] for group in by_line.values()]
    if strategy == "smoke":
        if not all_cells:
            return []
        oldest = min(all_cells, key=lambda c: (c.line.minor, c.python))
        listed = []
        for ref in matrix.smoke:
            here = [c for c in all_cells if (c.line.minor, c.python) == (ref.torch, ref.python)]
            if here:
                listed.append(max(here, key=lambda c: c.release.version))
        newest = max(all_cells, key=lambda c: (c.release.version, c.line.minor, c.python))
        return list(dict.fromkeys([oldest] + (listed or [newest])))
    if strategy == "pairwise":
        keep = covering([(covered_values(c), [str(c.release.version)]) for c in all_cells], strength)
        return [all_cells[i] for i in keep]
    raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")


def _runner_values(matrix: Matrix, cell: Cell) -> Tuple[Tuple[str, Value], ...]:
    out = []
    for name, value in cell.dimensions:
        dim = matrix.dimension(name)
        if dim is not None and dim.runner is not None:
            out.append((name, value))
    return tuple(out)


def _row_id(cell: Cell, requires: Tuple[Tuple[str, Value], ...], several: bool) -> CellId:
    return CellId.of(cell.python, cell.torch_row, requires, cell.release.version if several else None)


def plan(
    matrix: Matrix,
    strategy: str = "full",
    release: Releases = None,
    today: Optional[_dt.date] = None,
    skip: Collection[str] = (),
    cover: int = 2,
) -> List[PlanRow]:
    """The rows of ``strategy`` for ``release`` (a release, several, or by default every
    maintained release but the versions in ``skip``).

    Broken and end-of-life cells are not planned. Each row knows every tier it belongs
    to, so a session can be tagged once for all tiers. ``skip`` is for releases this tree
    cannot test (:func:`adapter_matrix.ci.release.past_releases`: frozen, and the code has
    moved on); row ids carry the release only when several releases are planned, so
    freezing a release and starting the next keeps every session id. ``cover`` is the
    ``pairwise`` strategy's strength (3: every triple of values).
    """
    if release is not None:
        shown: Sequence[Release] = chosen(matrix, release)
    else:
        shown = [r for r in maintained(matrix, today) if str(r.version) not in skip]
    several = len([r for r in matrix.releases if str(r.version) not in skip]) > 1
    order = {id(rel): i for i, rel in enumerate(matrix.releases)}
    unique: Dict[Tuple[object, ...], Tuple[Group, Cell]] = {}
    for c in cells(matrix, shown, today):
        if c.status.value in ("broken", "eol"):
            continue
        group: Group = (order[id(c.release)], _runner_values(matrix, c))
        unique.setdefault((group, c.line.minor, c.torch, c.python), (group, c))
    ordered = sorted(
        unique.values(),
        key=lambda gc: (
            gc[1].release.version,
            gc[0][0],
            [v.order for _n, v in gc[0][1]],
            gc[1].line.minor,
            gc[1].torch,
            gc[1].python,
        ),
    )
    # tags name the tiers at their defaults (`pairwise` is pairs); ``cover`` picks this plan's rows
    membership = {s: {id(c) for c in _select(ordered, s, matrix)} for s in STRATEGIES}
    wanted = membership[strategy] if cover == 2 else {id(c) for c in _select(ordered, strategy, matrix, cover)}
    ids: Dict[str, int] = {}
    rows = []
    for group, c in ordered:
        if id(c) not in wanted:
            continue
        requires = group[1]
        row_id = _row_id(c, requires, several)
        if row_id in ids:  # entries of one version for other dimension values (IPEX on Linux and Windows)
            row_id = CellId.of(c.python, c.torch_row, c.dimensions, c.release.version)
        ids[row_id] = 1
        release_tags = (f"v{c.release.version}",) + (
            (f"line{c.release.release_line}",) if c.release.release_line else ()
        )
        rows.append(
            PlanRow(
                cell=c,
                tiers=tuple(s for s in STRATEGIES if id(c) in membership[s]),
                sources=install_chain(matrix, torch_source(matrix, c.release, c.line)),
                id=row_id,
                requires=requires,
                # the labels the matrix knows; a value its runner: mapping does not name has none
                # here, and a plan for GitHub refuses the row unless --runners names one
                runs_on=row_labels(matrix, requires).labels,
                release_tags=release_tags if several else (),
                companions=companion_picks(matrix, c),
                pairable=companion_picks(matrix, c, [comp.name for comp in matrix.companions if comp.torch_facts]),
            )
        )
    return rows
