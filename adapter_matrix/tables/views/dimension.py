"""The ``dimension`` view: an extra dimension's values (newest first) x torch minor; a
cell names the adapter packages that serve that pair: the table torch_npu publishes
(CANN x torch), every release included.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.version import Version

from ...matrix.model import Matrix, Release, Status, Value
from ...matrix.queries import (
    Releases,
    cell_status,
    chosen,
    claimed_lines,
    dimension_values,
    pythons_for,
    release_status,
)
from ..table import Column, Table, plain
from ..words import legend, word
from .common import STATUS_ORDER, Records, line_order

__all__ = ["dimension"]


def _dimension_of(matrix: Matrix, name: Optional[str], shown: Sequence[Release]) -> Optional[str]:
    """The dimension asked for, else the first one a shown release constrains, else the
    first declared; ``None`` for a matrix without extra dimensions."""
    if name is not None:
        if matrix.dimension(name) is None:
            known = ", ".join(d.name for d in matrix.dimensions) or "none"
            raise ValueError(f"unknown dimension {name!r}; the matrix declares: {known}")
        return name
    constrained = [d.name for d in matrix.dimensions if any(r.constraint(d.name) for r in shown)]
    names = constrained or [d.name for d in matrix.dimensions]
    return names[0] if names else None


def dimension(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
    name: Optional[str] = None,
) -> Table:
    """A dimension's values (newest first) x torch minor (newest first): each cell names
    the adapter packages serving that value and torch line, and their best status. Like
    the table vendors publish, it shows every release (end-of-life ones as such) unless
    ``release`` narrows it. The dimension is ``name``, else the first one a release
    constrains."""
    shown = chosen(matrix, release)
    dim_name = _dimension_of(matrix, name, shown)
    dim = matrix.dimension(dim_name) if dim_name else None
    if dim is None or dim_name is None:
        title = word("no_dimension", lang).format(dist=matrix.adapter.distribution)
        data: Dict[str, Any] = {
            "adapter": matrix.adapter.distribution,
            "release": None,
            "dimension": None,
            "packages": [],
        }
        return Table(
            "dimension", lang, title, (Column("dimension", word("dimensions", lang)),), (), (), data, matrix.path
        )
    values: List[Value] = list(reversed(dim.values)) if dim.kind == "version" else list(dim.values)
    served: Dict[Tuple[str, Version], List[Tuple[Release, Version, Status]]] = {}
    lines_shown = set()
    when = today or _dt.date.today()
    for rel in shown:
        constraint = rel.constraint(dim_name)
        bound = dimension_values(matrix, dim_name, constraint) if constraint else values
        for line, patches in claimed_lines(matrix, rel):
            lines_shown.add(line.minor)
            for value in bound:  # the best status of its Pythons, its exceptions for this value applied
                torch = max(patches)
                statuses = [cell_status(rel, torch, p, {dim_name: value}, when)[0] for p in pythons_for(rel, line)]
                status = min(statuses, key=STATUS_ORDER.__getitem__) if statuses else release_status(rel, today)[0]
                if status is not Status.UNSUPPORTED:
                    served.setdefault((value.text, line.minor), []).append((rel, torch, status))
    torch_lines = sorted(lines_shown, reverse=True)
    rows = []
    facts = []
    with_lines = bool(matrix.release_lines())
    for value in values:
        row_releases = [rel for line in torch_lines for rel, _t, _s in served.get((value.text, line), [])]
        if not row_releases:
            continue
        row = [plain(value.text)]
        if with_lines:
            order = line_order(matrix)
            row.append(
                plain(", ".join(sorted({r.release_line for r in row_releases if r.release_line}, key=order.index)))
            )
        for minor in torch_lines:
            entries = sorted(served.get((value.text, minor), []), key=lambda e: e[0].version, reverse=True)
            # a package once per cell: entries of one version (one per OS) are one package
            best_of: Dict[Version, Tuple[Release, Version, Status]] = {}
            for entry in entries:
                if (
                    entry[0].version not in best_of
                    or STATUS_ORDER[entry[2]] < STATUS_ORDER[best_of[entry[0].version][2]]
                ):
                    best_of[entry[0].version] = entry
            here = list(best_of.values())
            if not here:
                row.append(plain(""))
                continue
            best = min((status for _r, _t, status in here), key=STATUS_ORDER.__getitem__)
            reasons = "; ".join(sorted({r.reason for r, _t, _s in here if r.reason}))
            row.append(plain(", ".join(str(r.version) for r, _t, _s in here), best.value, reasons))
            facts += [
                {
                    "value": value.text,
                    "torch_line": str(minor),
                    "torch": str(torch) + (f"+{rel.variant}" if rel.variant else ""),
                    "release": str(rel.version),
                    "release_line": rel.release_line,
                    "status": status.value,
                }
                for rel, torch, status in here
            ]
        rows.append(tuple(row))
    columns = (Column("dimension", dim_name),) + ((Column("line", word("line", lang)),) if with_lines else ())
    columns += tuple(Column(str(line), str(line)) for line in torch_lines)
    title = word("dimension_title", lang).format(dist=matrix.adapter.distribution, dimension=dim_name)
    data = {
        "adapter": matrix.adapter.distribution,
        "release": str(shown[0].version) if release is not None and len({r.version for r in shown}) == 1 else None,
        "dimension": dim_name,
        "packages": facts,
    }
    return Table("dimension", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
