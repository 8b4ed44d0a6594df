"""Compatibility tables generated from the model: the views.

A *view* turns the model into a neutral :class:`Table`: columns, rows of
:class:`TableCell` (text made of plain and code spans, plus a state class such as
``supported``), a legend, and the machine-readable facts behind the rows. A *format*
(:mod:`adapter_matrix.tables.formats`) renders any table as text, so every view exists
in every format and every language. Views ask :mod:`adapter_matrix.matrix.queries` for the
cells; nothing here re-reads ``compat.yaml`` or re-decides a status.

Views:

``grid``
    torch minor (newest first) x Python; a cell shows the cell's status.
``verified``
    the same grid; a cell shows the evidence of the result records: verified on DATE
    by SESSION, claimed but not verified, or failed.
``releases``
    one row per adapter release: torch, Python, extra dimensions, status, support end.
``capabilities``
    torch minor x feature, as the shim serving each line declares it (issue: a feature a
    release lacks is a declared capability, never a silent skip).
``companions``
    torch minor x companion package (torchvision, torchaudio): the releases built for each
    line, or the earlier releases whose open requirement admits it, or none.

The releases view also has a column per companion: the companion releases that pair with
the torch the adapter release supports, or the adapter's own pin.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.companions import requirement
from ..matrix.model import Companion, CompanionRelease, Matrix, PythonVersion, Release, Status, TorchLine
from ..matrix.queries import Cell, cells, claimed_lines, pythons_for, release_status
from .table import STATES, Column, Span, Table, TableCell, code, fill, plain
from .verification import Verification, index_records, verification_of
from .words import LANGS, word

__all__ = ["Span", "TableCell", "Column", "Table", "STATES", "VIEWS", "build", "render"]

def _legend(rows: Iterable[Sequence[TableCell]], lang: str) -> Tuple[Tuple[str, str, str], ...]:
    present = {c.state for row in rows for c in row if c.state}
    return tuple((s, word(s, lang), word(f"{s}_about", lang)) for s in STATES if s in present)


# -- facts for the JSON format -----------------------------------------------------------


def _cell_facts(cell: Cell, evidence: Optional[Verification] = None) -> Dict[str, Any]:
    facts: Dict[str, Any] = {
        "id": cell.id,
        "release": str(cell.release.version),
        "torch_line": str(cell.line.minor),
        "torch": str(cell.torch),
        "python": str(cell.python),
        "dimensions": {name: str(value) for name, value in cell.dimensions},
        "status": cell.status.value,
        "reason": cell.reason or None,
        "link": cell.link,
    }
    if evidence is not None:
        facts["verification"] = {"state": evidence.state, "date": evidence.date, "session": evidence.session}
    return facts


# -- the grid views ----------------------------------------------------------------------


def _status_cell(cell: Cell, lang: str) -> TableCell:
    title = " ".join(t for t in (cell.reason, cell.link or "") if t)
    return plain(word(cell.status.value, lang), cell.status.value, title)


def _evidence_cell(evidence: Verification, lang: str) -> TableCell:
    if evidence.state == "unverified":
        return plain(word("unverified", lang), "unverified")
    date, session = Span(evidence.date or ""), Span(evidence.session or "", code=True)
    return fill(word(f"{evidence.state}_cell", lang), evidence.state, date=date, session=session)


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


def _grid(
    matrix: Matrix,
    release: Optional[Release],
    lang: str,
    today: Optional[_dt.date],
    view: str,
    content: Callable[[Cell], TableCell],
    facts: Callable[[Cell], Dict[str, Any]],
) -> Table:
    shown = cells(matrix, release, today) if release else []
    at: Dict[Tuple[Version, PythonVersion], List[Tuple[Cell, TableCell]]] = {}
    for cell in shown:
        at.setdefault((cell.line.minor, cell.python), []).append((cell, content(cell)))
    columns = _python_columns(matrix, shown)
    rows = []
    for line in sorted(matrix.torch, key=lambda t: t.minor, reverse=True):
        row = [plain(str(line.minor))]
        for python in columns:
            here = at.get((line.minor, python))
            state = "unclaimed" if python in line.python else "nowheel"
            row.append(_merge(here) if here else plain(word(state, lang), state))
        rows.append(tuple(row))
    dist = matrix.adapter.distribution
    if release is None:
        title = word("no_release", lang).format(dist=dist)
    else:
        title = word(f"{view}_title", lang).format(dist=dist, version=release.version)
        if release.dimensions:
            title += " (" + ", ".join(f"{name} {spec}" for name, spec in release.dimensions) + ")"
    header = (Column("torch", word("torch", lang)),) + tuple(Column(str(p), str(p)) for p in columns)
    data = {
        "adapter": dist,
        "release": str(release.version) if release else None,
        "cells": [facts(c) for c in shown],
    }
    return Table(view, lang, title, header, tuple(rows), _legend(rows, lang), data, matrix.path)


def grid(
    matrix: Matrix,
    release: Optional[Release] = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """torch minor (newest first) x Python; each cell shows the cell's status."""
    return _grid(matrix, release or matrix.newest_release, lang, today, "grid", lambda c: _status_cell(c, lang), _cell_facts)


def verified(
    matrix: Matrix,
    release: Optional[Release] = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """Like ``grid``, but each claimed cell shows what the result records say about it."""
    if records is None:
        raise ValueError("the verified view needs the result records: give --results DIR (or results=DIR in a marker)")
    index = index_records(records)
    return _grid(
        matrix,
        release or matrix.newest_release,
        lang,
        today,
        "verified",
        # a broken cell is known not to work: its status is the answer, not missing evidence
        lambda c: _status_cell(c, lang) if c.status is Status.BROKEN else _evidence_cell(verification_of(c, index), lang),
        lambda c: _cell_facts(c, verification_of(c, index)),
    )


# -- the releases view -------------------------------------------------------------------


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
    """The torch lines a release claims as runs; a line claimed only in part lists its patches."""
    claimed = claimed_lines(matrix, release)
    whole = [line for line, patches in claimed if len(patches) == len(line.patches)]
    parts = [_runs(whole, matrix.torch, str)] if whole else []
    parts += [", ".join(str(p) for p in patches) for line, patches in claimed if line not in whole]
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


def releases(
    matrix: Matrix,
    release: Optional[Release] = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """One row per adapter release (newest first): torch, Python, extra dimensions, status,
    support end, and a column per companion package."""
    rows = []
    facts = []
    for rel in reversed(matrix.releases) if release is None else [release]:
        status = release_status(rel, today)[0].value
        dims: List[Span] = []  # each constraint as code, with plain separators (adjacent code spans merge)
        for name, spec in rel.dimensions:
            dims += ([Span(", ")] if dims else []) + [Span(f"{name} {spec}", code=True)]
        companion_cells = [_companion_column(matrix, comp, rel, lang) for comp in matrix.companions]
        rows.append(
            (
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
    keys = ("adapter", "torch", "python", "dimensions", "status", "until")
    columns = tuple(Column(k, word(k, lang)) for k in keys) + tuple(Column(c.name, c.name) for c in matrix.companions)
    title = word("releases_title", lang).format(dist=matrix.adapter.distribution)
    data = {"adapter": matrix.adapter.distribution, "release": str(release.version) if release else None, "releases": facts}
    return Table("releases", lang, title, columns, tuple(rows), _legend(rows, lang), data, matrix.path)


# -- the capabilities view ---------------------------------------------------------------


def capabilities(
    matrix: Matrix,
    release: Optional[Release] = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """torch minor (newest first) x feature: what the shim serving each line declares."""
    from ..device.capabilities import capabilities as declared

    features, lines = declared(matrix)
    rows = []
    facts = []
    for entry in lines:
        row = [plain(str(entry.line.minor)), code(entry.shim.rsplit(".", 1)[-1] if entry.shim else "")]
        for feature in features:
            if feature in entry.absent:
                row.append(plain(word("absent", lang), "absent", entry.absent[feature]))
            elif feature in entry.absent_on:
                spec, why = entry.absent_on[feature]
                row.append(fill(word("partial_cell", lang), "partial", spec=Span(spec, code=True)))
                row[-1] = dataclasses.replace(row[-1], title=why)
            else:
                row.append(plain(word("present", lang), "present"))
        rows.append(tuple(row))
        facts.append(
            {
                "torch_line": str(entry.line.minor),
                "shim": entry.shim,
                "absent": dict(entry.absent),
                "absent_on_python": {k: {"python": spec, "reason": why} for k, (spec, why) in entry.absent_on.items()},
            }
        )
    columns = (Column("torch", word("torch", lang)), Column("shim", word("shim", lang))) + tuple(Column(f, f) for f in features)
    title = word("capabilities_title", lang).format(dist=matrix.adapter.distribution)
    data = {"adapter": matrix.adapter.distribution, "release": None, "features": dict(features), "lines": facts}
    return Table("capabilities", lang, title, columns, tuple(rows), _legend(rows, lang), data, matrix.path)


# -- the companions view -----------------------------------------------------------------


def _line_cell(comp: Companion, line: TorchLine, lang: str) -> Tuple[TableCell, Dict[str, Any]]:
    entry = comp.line(line.minor)
    built = list(entry.releases) if entry is not None else []
    earlier = [r for r in comp.releases if r.line < line.minor and any(r.pairs_with(p) for p in line.patches)]
    facts = {
        "torch_line": str(line.minor),
        "stated": entry is not None,
        "built": [{"version": str(r.version), "torch": requirement(r.torch)} for r in built],
        "earlier": [{"version": str(r.version), "torch": requirement(r.torch)} for r in earlier],
    }
    title = "; ".join(f"{r.version}: torch{requirement(r.torch)}" for r in built + earlier)
    if built:
        return plain(", ".join(str(r.version) for r in built), "built", title), facts
    if earlier:
        versions = Span(", ".join(str(r.version) for r in earlier))
        return dataclasses.replace(fill(word("open_cell", lang), "open", versions=versions), title=title), facts
    if entry is None:
        return plain(word("unstated", lang), "unstated"), facts
    return plain(word("nocompanion", lang), "nocompanion"), facts


def companions(
    matrix: Matrix,
    release: Optional[Release] = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """torch minor (newest first) x companion: which of its releases pair with each line."""
    shown = [c for c in matrix.companions if c.torch_facts]
    rows = []
    per_companion: Dict[str, List[Dict[str, Any]]] = {c.name: [] for c in shown}
    for line in sorted(matrix.torch, key=lambda t: t.minor, reverse=True):
        row = [plain(str(line.minor))]
        for comp in shown:
            cell, facts = _line_cell(comp, line, lang)
            row.append(cell)
            per_companion[comp.name].append(facts)
        rows.append(tuple(row))
    columns = (Column("torch", word("torch", lang)),) + tuple(Column(c.name, c.name) for c in shown)
    title = word("companions_title", lang).format(dist=matrix.adapter.distribution)
    data = {
        "adapter": matrix.adapter.distribution,
        "release": None,
        "companions": [{"name": c.name, "description": c.description or None, "lines": per_companion[c.name]} for c in shown],
    }
    return Table("companions", lang, title, columns, tuple(rows), _legend(rows, lang), data, matrix.path)


VIEWS: Dict[str, Callable[..., Table]] = {
    "grid": grid,
    "verified": verified,
    "releases": releases,
    "capabilities": capabilities,
    "companions": companions,
}


def build(
    matrix: Matrix,
    view: str = "grid",
    lang: str = "en",
    release: Optional[Release] = None,
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """The table of ``view``; ``ValueError`` names the choices for a bad view or language."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGS)}")
    return VIEWS[view](matrix, release=release, lang=lang, today=today, records=records)


def render(
    matrix: Matrix,
    view: str = "grid",
    fmt: str = "markdown",
    lang: str = "en",
    release: Optional[Release] = None,
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> str:
    """``view`` rendered as ``fmt`` (see :data:`adapter_matrix.tables.formats.FORMATS`)."""
    from .formats import render_table  # the formats import this module's types

    return render_table(build(matrix, view, lang, release, today, records), fmt)
