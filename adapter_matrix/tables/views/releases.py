"""The ``releases`` view: one row per adapter release: torch, Python, extra dimensions,
status, support end; grouped by release line when the matrix has lines. A column per
companion names the companion releases that pair with the torch the adapter release
supports, or the adapter's own pin.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ...matrix.model import Companion, CompanionRelease, Matrix, PythonVersion, Release, requirement
from ...matrix.queries import (
    Releases,
    chosen,
    claimed_lines,
    pythons_for,
    release_status,
)
from ..table import Column, Span, Table, TableCell, code, plain
from ..words import legend, word
from .common import Records, line_order

__all__ = ["releases"]


def _runs(claimed: Sequence[Any], known: Sequence[Any], label: Callable[[Any], str]) -> str:
    """``2.1\u20132.9, 2.11``: runs of consecutive ``known`` items that are claimed."""
    out: List[str] = []
    run: List[Any] = []
    for item in list(known) + [None]:
        if item is not None and item in claimed:
            run.append(item)
            continue
        if run:
            out.append(label(run[0]) if len(run) == 1 else f"{label(run[0])}\u2013{label(run[-1])}")
        run = []
    return ", ".join(out)


def _torch_text(matrix: Matrix, release: Release) -> str:
    """The torch lines a release claims as runs; a line claimed only in part lists its
    patches; a torch variant shows as the label (``2.8.0+cpu``, ``2.4–2.5 (+cpu)``)."""
    claimed = claimed_lines(matrix, release)
    label = f"+{release.variant}" if release.variant else ""
    whole = [line for line, patches in claimed if len(patches) == len(line.patches) and not release.pins]
    parts = [_runs(whole, matrix.torch, str) + (f" ({label})" if label else "")] if whole else []
    parts += [", ".join(f"{p}{label}" for p in patches) for line, patches in claimed if line not in whole]
    return ", ".join(parts)


def _pythons(matrix: Matrix, release: Release) -> List[PythonVersion]:
    return sorted({p for line, _patches in claimed_lines(matrix, release) for p in pythons_for(release, line)})


def _python_text(matrix: Matrix, release: Release) -> str:
    claimed = _pythons(matrix, release)
    known = sorted({p for line in matrix.torch for p in line.python})
    texts = [_runs(claimed, [p for p in known if p.free_threaded == ft], str) for ft in (False, True)]
    return ", ".join(t for t in texts if t)


def _paired_with(matrix: Matrix, comp: Companion, rel: Release) -> List[CompanionRelease]:
    """The companion releases that pair with some torch the adapter release supports."""
    torches = [p for _line, patches in claimed_lines(matrix, rel) for p in patches]
    return sorted({r for r in comp.releases if any(r.pairs_with(t) for t in torches)}, key=lambda r: r.version)


def _companion_column(matrix: Matrix, comp: Companion, rel: Release, lang: str) -> Tuple[TableCell, Dict[str, Any]]:
    """A releases-view cell: the adapter's own pin, else the companion releases that pair."""
    if comp.adapter:
        pin = comp.pin(rel.version)
        if pin is None:
            return plain(""), {"pin": None, "releases": None}
        if pin.spec is None:
            return plain(word("nocompanion", lang), "nocompanion"), {"pin": "none", "releases": None}
        return code(requirement(pin.spec)), {"pin": requirement(pin.spec), "releases": None}
    paired = _paired_with(matrix, comp, rel)
    versions = [str(r.version) for r in paired]
    if not paired:
        return plain(word("nocompanion", lang), "nocompanion"), {"pin": None, "releases": []}
    text = versions[0] if len(versions) == 1 else f"{versions[0]}\u2013{versions[-1]}"
    return plain(text, "", ", ".join(versions)), {"pin": None, "releases": versions}


def _by_line(matrix: Matrix, shown: Sequence[Release]) -> List[Release]:
    """Releases newest first, grouped by release line when the matrix has lines."""
    newest_first = sorted(shown, key=lambda r: r.version, reverse=True)
    order = line_order(matrix)
    return sorted(newest_first, key=lambda r: order.index(r.release_line))


def releases(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
) -> Table:
    """One row per adapter release (newest first): torch, Python, extra dimensions,
    status, support end, a column per companion package; grouped by release line (a first
    column) when the matrix has lines."""
    rows = []
    facts = []
    with_lines = bool(matrix.release_lines())
    for rel in _by_line(matrix, chosen(matrix, release)):
        status = release_status(rel, today)[0].value
        dims: List[Span] = []  # each constraint as code, with plain separators (adjacent code spans merge)
        for name, spec in rel.dimensions:
            dims += ([Span(", ")] if dims else []) + [Span(f"{name} {spec}", code=True)]
        companion_cells = [_companion_column(matrix, comp, rel, lang) for comp in matrix.companions]
        rows.append(
            ((plain(rel.release_line or ""),) if with_lines else ())
            + (
                plain(str(rel.version)),
                plain(_torch_text(matrix, rel)),
                plain(_python_text(matrix, rel)),
                TableCell(tuple(dims)),
                plain(word(status, lang), status, rel.reason),
                plain(str(rel.supported_until or "")),
            )
            + tuple(cell for cell, _facts in companion_cells)
        )
        facts.append(
            {
                "version": str(rel.version),
                "release_line": rel.release_line,
                "torch_variant": rel.variant,
                "date": str(rel.date) if rel.date else None,
                "torch": str(rel.torch),
                "python": str(rel.python),
                "torch_lines": [str(line.minor) for line, _p in claimed_lines(matrix, rel)],
                "pythons": [str(p) for p in _pythons(matrix, rel)],
                "dimensions": {name: str(spec) for name, spec in rel.dimensions},
                "status": status,
                "declared_status": rel.status.value,
                "reason": rel.reason or None,
                "link": rel.link,
                "supported_until": str(rel.supported_until) if rel.supported_until else None,
                "companions": {comp.name: found for comp, (_cell, found) in zip(matrix.companions, companion_cells)},
            }
        )
    keys = (("line",) if with_lines else ()) + ("adapter", "torch", "python", "dimensions", "status", "until")
    columns = tuple(Column(k, word(k, lang)) for k in keys) + tuple(Column(c.name, c.name) for c in matrix.companions)
    title = word("releases_title", lang).format(dist=matrix.adapter.distribution)
    asked = chosen(matrix, release) if release is not None else ()
    data = {
        "adapter": matrix.adapter.distribution,
        "release": str(asked[0].version) if len(asked) == 1 else None,
        "releases": facts,
    }
    return Table("releases", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
