"""What several views share: the grid both grid views draw (torch minor x Python), a
cell's status and facts, the releases a table shows, the order of statuses and of release
lines; and what the op-sweep views say of a sweep record.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from packaging.version import Version

from ...ci.evidence import Verification
from ...ci.record import RecordSet
from ...matrix.model import Matrix, PythonVersion, Release, Status
from ...matrix.queries import (
    Cell,
    Releases,
    cells,
    chosen,
    maintained,
    torch_points,
)
from ..table import Column, Span, Table, TableCell, fill, plain
from ..words import legend, word

__all__ = [
    "Records",
    "STATUS_ORDER",
    "NEEDS",
    "cell_facts",
    "status_cell",
    "shown_releases",
    "grid_table",
    "line_order",
    "sweep_facts",
]


SweepRecords = Sequence[Dict[str, Any]]  # the op sweep's records (adapter_matrix.device.opsweep.record)
Records = Union[RecordSet, SweepRecords]  # what a view is drawn from: result records or the op sweep's

STATUS_ORDER = {status: status.rank for status in Status}


def cell_facts(cell: Cell, evidence: Optional[Verification] = None) -> Dict[str, Any]:
    facts: Dict[str, Any] = {
        "id": cell.id,
        "release": str(cell.release.version),
        "release_line": cell.release.release_line,
        "torch_line": str(cell.line.minor),
        "torch": str(cell.torch),
        "python": str(cell.python),
        "dimensions": {name: str(value) for name, value in cell.dimensions},
        "status": cell.status.value,
        "reason": cell.reason or None,
        "link": cell.link,
    }
    if evidence is not None:
        facts["verification"] = evidence.as_dict()
    return facts


def status_cell(cell: Cell, lang: str) -> TableCell:
    title = " ".join(t for t in (cell.reason, cell.link or "") if t)
    return plain(word(cell.status.value, lang), cell.status.value, title)


def _merge(here: Sequence[Tuple[Cell, TableCell]]) -> TableCell:
    """One grid position holds a cell per extra-dimension value. Identical answers show
    once; otherwise each value shows its own, and the state is ``mixed`` unless the
    states agree (two sessions verified the two values)."""
    contents = [content for _cell, content in here]
    states = {c.state for c in contents}
    title = "; ".join(sorted({c.title for c in contents if c.title}))
    state = states.pop() if len(states) == 1 else "mixed"
    if all(c.spans == contents[0].spans for c in contents):
        return TableCell(contents[0].spans, state, title)
    spans: List[Span] = []
    for i, (cell, content) in enumerate(here):
        label = ", ".join(f"{name} {value}" for name, value in cell.dimensions)
        spans.extend(([Span("; ")] if i else []) + [Span(f"{label}: ")] + list(content.spans))
    return TableCell(tuple(spans), state, title)


def _python_columns(matrix: Matrix, shown: Sequence[Cell]) -> List[PythonVersion]:
    """Every non-free-threaded Python that some torch line has a wheel for, plus the
    free-threaded builds the shown cells claim (unclaimed ones would be noise)."""
    plain = {p for line in matrix.torch for p in line.python if not p.free_threaded}
    return sorted(plain | {c.python for c in shown if c.python.free_threaded})


def shown_releases(matrix: Matrix, release: Releases, today: Optional[_dt.date]) -> Tuple[Release, ...]:
    """The releases a table shows: those asked for, else every maintained one."""
    return chosen(matrix, release) if release is not None else maintained(matrix, today)


def _differing(own: Sequence[Cell], everything: Sequence[Cell]) -> str:
    """The dimension values that set ``own`` (cells of one release and status) apart
    from the release's other cells at the same grid position: ``distro ubuntu22.04``
    (``distro rhel9.4/sles15.5`` for several); dimensions equal in all of them are left out."""
    parts = []
    for name, _value in own[0].dimensions:
        if len({str(dict(c.dimensions).get(name)) for c in everything}) < 2:
            continue
        values = list(dict.fromkeys(str(dict(c.dimensions)[name]) for c in own if name in dict(c.dimensions)))
        parts.append(f"{name} {'/'.join(values)}")
    return ", ".join(parts)


def _served(here: Sequence[Cell], lang: str) -> TableCell:
    """A grid position served by several releases: each status (best first) with the
    adapter versions that have it there, each version once per status. A release whose
    cells here differ in status (by a dimension value) names the values of each status:
    ``supported (1.22.0 with os ubuntu22.04); experimental (1.22.0 with os rhel9)``."""
    by_release: Dict[Version, Dict[Status, List[Cell]]] = {}
    for cell in here:
        by_release.setdefault(cell.release.version, {}).setdefault(cell.status, []).append(cell)
    statuses = sorted({c.status for c in here}, key=STATUS_ORDER.__getitem__)
    spans: List[Span] = []
    for status in statuses:
        names = []
        for version in sorted(by_release, reverse=True):
            own = by_release[version]
            if status not in own:
                continue
            differing = _differing(own[status], [c for group in own.values() for c in group]) if len(own) > 1 else ""
            names.append(f"{version} with {differing}" if differing else str(version))
        versions = ", ".join(dict.fromkeys(names))
        spans += ([Span("; ")] if spans else []) + list(
            fill(word("served_cell", lang), "", status=Span(word(status.value, lang)), versions=Span(versions)).spans
        )
    title = "; ".join(sorted({c.reason for c in here if c.reason}))
    return TableCell(tuple(spans), statuses[0].value, title)


def _best(here: Sequence[Cell]) -> Tuple[Version, List[Cell]]:
    """The release a compact grid position shows: the best status any release gives it, and
    of the releases that give it, the newest; with that release's cells there."""
    best = min(STATUS_ORDER[c.status] for c in here)
    version = max(c.release.version for c in here if STATUS_ORDER[c.status] == best)
    return version, [c for c in here if c.release.version == version]


def _usual(positions: Sequence[Sequence[Cell]]) -> Optional[Version]:
    """The release most compact grid positions show (:func:`_best`; the newer on ties): the
    one the grid's note names and the cells leave unnamed."""
    counts: Dict[Version, int] = {}
    for here in positions:
        version = _best(here)[0]
        counts[version] = counts.get(version, 0) + 1
    return max(counts, key=lambda v: (counts[v], v), default=None)


def _compact(here: Sequence[Cell], lang: str, usual: Version) -> TableCell:
    """A compact grid position: the best status a release gives it, from the newest release
    that gives it (:func:`_best`; by extra-dimension value when that release's cells differ),
    its version named unless it is ``usual`` (the one the note names). Every release's answer
    is the cell's detail (one click away on the HTML page) and title."""
    version, own = _best(here)
    cell = _served(own, lang)
    if version == usual and len({c.status for c in own}) == 1:
        cell = plain(word(own[0].status.value, lang), cell.state, cell.title)
    full = _served(here, lang).text if len(own) < len(here) else ""
    title = "; ".join(t for t in (full, cell.title) if t)
    return TableCell(cell.spans, cell.state, title, full)


def grid_table(
    matrix: Matrix,
    shown_releases: Sequence[Release],
    lang: str,
    today: Optional[_dt.date],
    view: str,
    content: Callable[[Cell], TableCell],
    facts: Callable[[Cell], Dict[str, Any]],
) -> Table:
    shown = cells(matrix, shown_releases, today) if shown_releases else []
    single = shown_releases[0] if len(shown_releases) == 1 else None
    at: Dict[Tuple[str, PythonVersion], List[Tuple[Cell, TableCell]]] = {}
    for cell in shown:
        at.setdefault((cell.torch_row, cell.python), []).append((cell, content(cell)))
    columns = _python_columns(matrix, shown)
    points = torch_points(matrix, matrix.releases)
    usual = _usual([[c for c, _content in here] for here in at.values()]) if single is None else None
    rows = []
    for line in sorted(matrix.torch, key=lambda t: t.minor, reverse=True):
        pinned = points.get(line.minor, ())  # a row per pinned patch when releases pin several
        for name in [str(p) for p in reversed(pinned)] if len(pinned) > 1 else [str(line.minor)]:
            row = [plain(name)]
            for python in columns:
                here = at.get((name, python))
                state = "unclaimed" if python in line.python else "nowheel"
                if not here:
                    row.append(plain(word(state, lang), state))
                elif single is not None:
                    row.append(_merge(here))
                else:
                    assert usual is not None  # a position with cells has a usual release
                    row.append(_compact([c for c, _content in here], lang, usual))
            rows.append(tuple(row))
    dist = matrix.adapter.distribution
    if not shown_releases:
        title = word("no_release", lang).format(dist=dist)
    elif single is None:
        title = word(f"{view}_title_all", lang).format(dist=dist)
    else:
        title = word(f"{view}_title", lang).format(dist=dist, version=single.version)
        if single.dimensions:
            title += " (" + ", ".join(f"{name} {spec}" for name, spec in single.dimensions) + ")"
    header = (Column("torch", word("torch", lang)),) + tuple(Column(str(p), str(p)) for p in columns)
    data: Dict[str, Any] = {
        "adapter": dist,
        "release": str(single.version) if single else None,
        "cells": [facts(c) for c in shown],
    }
    note = ""
    if single is None and shown_releases:
        newest_first = sorted(shown_releases, key=lambda r: r.version, reverse=True)
        data["releases_shown"] = list(dict.fromkeys(str(r.version) for r in newest_first))
        data["usual_release"] = str(usual) if usual is not None else None
        others = [v for v in data["releases_shown"] if v != data["usual_release"]]
        if others and usual is not None:
            note = word("grid_note", lang).format(usual=usual, others=", ".join(others))
    return Table(
        view,
        lang,
        title,
        header,
        tuple(rows),
        legend(rows, lang, matrix.evidence.max_age_days),
        data,
        matrix.path,
        note,
    )


def line_order(matrix: Matrix) -> List[Optional[str]]:
    """Release lines newest first (by version when every name is one, else as written),
    then the releases outside any line."""
    lines = list(matrix.release_lines())
    try:
        lines.sort(key=Version, reverse=True)
    except ValueError:  # a line named cpu or xpu: keep the file's order
        pass
    return [*lines, None]


NEEDS = (
    "the {view} view needs op-sweep records: give --results DIR (or results=DIR in a marker) holding them "
    "(results/ops/; a cell's result record keeps the counts per family only, which the ops view reads)"
)


def sweep_facts(record: Dict[str, Any]) -> Dict[str, Any]:
    """What the JSON format of the ops and op-dtypes views carries of one sweep record."""
    keys = (
        "torch",
        "torch_line",
        "python",
        "device",
        "mode",
        "seconds",
        "timestamp",
        "ops",
        "tasks_run",
        "ok",
        "float32",
        "families",
        "by_dtype",
    )
    # a row drawn from a cell's result record has the counts per family, not per dtype, and names its cell
    return {key: record[key] for key in (*keys, "cell", "release") if key in record}
