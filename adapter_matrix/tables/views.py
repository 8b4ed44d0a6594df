"""Compatibility tables generated from the model: the views.

A *view* turns the model into a neutral :class:`Table`: columns, rows of
:class:`TableCell` (text made of plain and code spans, plus a state class such as
``supported``), a legend, and the machine-readable facts behind the rows. A *format*
(:mod:`adapter_matrix.tables.formats`) renders any table as text, so every view exists
in every format and every language. Views ask :mod:`adapter_matrix.matrix.queries` for the
cells; nothing here re-reads ``compat.yaml`` or re-decides a status.

Views:

``grid``
    torch minor (newest first) x Python; a cell shows the cell's status. Without
    ``--release`` it aggregates every maintained (not end-of-life) release: a position
    served by several releases names the adapter versions that serve it.
``verified``
    the same grid for one release (the newest by default); a cell shows what the result
    records say: verified (the date, the torch that ran, the commit), stale (it ran another
    torch patch), failed, or claimed but not verified. It depends on the records and the
    matrix only; whether a pass is fresh enough for a release is the gate's question
    (``validate --results --strict``).
``releases``
    one row per adapter release: torch, Python, extra dimensions, status, support end;
    grouped by release line when the matrix has lines.
``dimension``
    an extra dimension's values (newest first) x torch minor; a cell names the adapter
    packages that serve that pair: the table torch_npu publishes (CANN x torch), every
    release included.
``capabilities``
    torch minor x feature, as the shim serving each line declares it (issue: a feature a
    release lacks is a declared capability, never a silent skip).
``ops``, ``op-dtypes``, ``op-failures``
    what PyTorch's OpInfo sweep found on the device per torch line, from op-sweep
    records (:mod:`adapter_matrix.tables.opcoverage`).
``companions``
    torch minor x companion package (torchvision, torchaudio): the releases built for each
    line, or the earlier releases whose open requirement admits it, or none.

The releases view also has a column per companion: the companion releases that pair with
the torch the adapter release supports, or the adapter's own pin.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from packaging.version import Version


from ..matrix.model import Companion, CompanionRelease, Matrix, PythonVersion, Release, Status, TorchLine, Value, requirement
from ..matrix.queries import (
    torch_points,
    Cell,
    Releases,
    cell_status,
    cells,
    chosen,
    claimed_lines,
    dimension_values,
    maintained,
    pythons_for,
    release_status,
)
from ..ci.evidence import Verification, index_records, verification_of
from . import opcoverage
from .formats import render_table
from .table import STATES, Column, Span, Table, TableCell, code, fill, plain
from .words import LANGS, legend, word

__all__ = ["Span", "TableCell", "Column", "Table", "STATES", "VIEWS", "RECORDS", "build", "render"]

# -- facts for the JSON format -----------------------------------------------------------


def _cell_facts(cell: Cell, evidence: Optional[Verification] = None) -> Dict[str, Any]:
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


# -- the grid views ----------------------------------------------------------------------


def _status_cell(cell: Cell, lang: str) -> TableCell:
    title = " ".join(t for t in (cell.reason, cell.link or "") if t)
    return plain(word(cell.status.value, lang), cell.status.value, title)


def _evidence_cell(evidence: Verification, lang: str, proves: bool = False) -> TableCell:
    """``verified 2026-12-01, torch 2.13.0 at `1a2b3c4```; stale and failed ones say why in the
    title. ``proves``: the record's release is frozen, and the cell names it (``, proves 0.1.0``)."""
    if evidence.state == "unverified":
        return plain(word("unverified", lang), "unverified")
    at: Tuple[Span, ...] = ()
    if evidence.commit:
        at = fill(word("at_commit", lang), "", commit=Span(evidence.commit[:7], code=True)).spans
    if proves and evidence.release:
        at += (Span(word("proves", lang).format(release=evidence.release)),)
    return fill(
        word(f"{evidence.state}_cell", lang),
        evidence.state,
        evidence.reason,
        date=Span(evidence.date or ""),
        torch=Span(evidence.torch or "?"),
        at=at,
    )


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


def _shown(matrix: Matrix, release: Releases, today: Optional[_dt.date]) -> Tuple[Release, ...]:
    """The releases a table shows: those asked for, else every maintained one."""
    return chosen(matrix, release) if release is not None else maintained(matrix, today)


_BEST = {status: i for i, status in enumerate(Status)}


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
    statuses = sorted({c.status for c in here}, key=_BEST.get)
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
        spans += ([Span("; ")] if spans else []) + list(fill(word("served_cell", lang), "", status=Span(word(status.value, lang)), versions=Span(versions)).spans)
    title = "; ".join(sorted({c.reason for c in here if c.reason}))
    return TableCell(tuple(spans), statuses[0].value, title)


def _grid(
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
                    row.append(_served([c for c, _content in here], lang))
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
    data = {
        "adapter": dist,
        "release": str(single.version) if single else None,
        "cells": [facts(c) for c in shown],
    }
    if single is None and shown_releases:
        newest_first = sorted(shown_releases, key=lambda r: r.version, reverse=True)
        data["releases_shown"] = list(dict.fromkeys(str(r.version) for r in newest_first))
    return Table(view, lang, title, header, tuple(rows), legend(rows, lang, matrix.evidence.max_age_days), data, matrix.path)


def grid(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """torch minor (newest first) x Python; each cell shows its status, for the releases
    asked for or (by default) every maintained release."""
    return _grid(matrix, _shown(matrix, release, today), lang, today, "grid", lambda c: _status_cell(c, lang), _cell_facts)


def verified(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """Like ``grid`` for one release (the newest by default), but each claimed cell shows
    what the result records say about it."""
    if records is None:
        raise ValueError("the verified view needs the result records: give --results DIR (or results=DIR in a marker)")
    index = index_records(records, matrix, today)
    asked = chosen(matrix, release) if release is not None else tuple(r for r in [matrix.newest_release] if r)
    if len(asked) > 1:
        raise ValueError("the verified view shows one release: name a package version with --release (or release= in a marker)")
    # Once a folder holds frozen releases (adapter-matrix release), a release not frozen in it is
    # unreleased code: its records prove work in progress, so its cells are not yet verified.
    frozen = index.frozen.get(str(asked[0].version)) if asked else None
    unreleased = bool(index.frozen) and bool(asked) and frozen is None

    def shown(c: Cell) -> TableCell:
        if c.status is Status.BROKEN:  # known not to work: its status is the answer, not missing evidence
            return _status_cell(c, lang)
        if unreleased:
            return plain(word("unreleased", lang), "unreleased", word("unreleased_about", lang))
        return _evidence_cell(verification_of(c, index), lang, proves=frozen is not None)

    table = _grid(matrix, asked, lang, today, "verified", shown, lambda c: _cell_facts(c, verification_of(c, index)))
    if frozen is not None:
        at = word("at_commit", lang).format(commit=frozen.commit[:7]) if frozen.commit else ""
        title = table.title + word("frozen_title", lang).format(version=frozen.version, date=frozen.date, at=at)
    elif unreleased:
        title = table.title + word("unreleased_title", lang).format(version=asked[0].version)
    else:
        return table
    return dataclasses.replace(table, title=title)


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


def _line_order(matrix: Matrix) -> List[Optional[str]]:
    """Release lines newest first (by version when every name is one, else as written),
    then the releases outside any line."""
    lines = list(matrix.release_lines())
    try:
        lines.sort(key=Version, reverse=True)
    except ValueError:  # a line named cpu or xpu: keep the file's order
        pass
    return [*lines, None]


def _by_line(matrix: Matrix, shown: Sequence[Release]) -> List[Release]:
    """Releases newest first, grouped by release line when the matrix has lines."""
    newest_first = sorted(shown, key=lambda r: r.version, reverse=True)
    order = _line_order(matrix)
    return sorted(newest_first, key=lambda r: order.index(r.release_line))


def releases(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
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
    data = {"adapter": matrix.adapter.distribution, "release": str(asked[0].version) if len(asked) == 1 else None, "releases": facts}
    return Table("releases", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)


# -- the dimension view ------------------------------------------------------------------


def _dimension_of(matrix: Matrix, name: Optional[str], shown: Sequence[Release]) -> Optional[str]:
    """The dimension asked for, else the first one a shown release constrains, else the
    first declared; ``None`` for a matrix without extra dimensions."""
    if name is not None:
        if matrix.dimension(name) is None:
            known = ", ".join(d.name for d in matrix.dimensions) or "none"
            raise ValueError(f"unknown dimension {name!r}; the matrix declares: {known}")
        return name
    constrained = [d.name for d in matrix.dimensions if any(r.constraint(d.name) for r in shown)]
    return (constrained or [d.name for d in matrix.dimensions] or [None])[0]


def dimension(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
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
    if dim is None:
        title = word("no_dimension", lang).format(dist=matrix.adapter.distribution)
        data = {"adapter": matrix.adapter.distribution, "release": None, "dimension": None, "packages": []}
        return Table("dimension", lang, title, (Column("dimension", word("dimensions", lang)),), (), (), data, matrix.path)
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
                status = min(statuses, key=_BEST.get) if statuses else release_status(rel, today)[0]
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
            order = _line_order(matrix)
            row.append(plain(", ".join(sorted({r.release_line for r in row_releases if r.release_line}, key=order.index))))
        for line in torch_lines:
            entries = sorted(served.get((value.text, line), []), key=lambda e: e[0].version, reverse=True)
            # a package once per cell: entries of one version (one per OS) are one package
            best_of: Dict[Version, Tuple[Release, Version, Status]] = {}
            for entry in entries:
                if entry[0].version not in best_of or _BEST[entry[2]] < _BEST[best_of[entry[0].version][2]]:
                    best_of[entry[0].version] = entry
            here = list(best_of.values())
            if not here:
                row.append(plain(""))
                continue
            best = min((status for _r, _t, status in here), key=_BEST.get)
            reasons = "; ".join(sorted({r.reason for r, _t, _s in here if r.reason}))
            row.append(plain(", ".join(str(r.version) for r, _t, _s in here), best.value, reasons))
            facts += [
                {
                    "value": value.text,
                    "torch_line": str(line),
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
        "release": str(shown[0].version) if release is not None and len(shown) == 1 else None,
        "dimension": dim_name,
        "packages": facts,
    }
    return Table("dimension", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)


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
    return Table("capabilities", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)


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
    release: Releases = None,
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
    return Table("companions", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)


VIEWS: Dict[str, Callable[..., Table]] = {
    "grid": grid,
    "verified": verified,
    "releases": releases,
    "dimension": dimension,
    "capabilities": capabilities,
    "ops": opcoverage.ops,
    "op-dtypes": opcoverage.op_dtypes,
    "op-failures": opcoverage.op_failures,
    "companions": companions,
}
# Views drawn from records, and which: the nox cells' result records, or op-sweep records.
RECORDS: Dict[str, str] = {"verified": "results", "ops": "op-sweeps", "op-dtypes": "op-sweeps", "op-failures": "op-sweeps"}


def build(
    matrix: Matrix,
    view: str = "grid",
    lang: str = "en",
    release: Releases = None,
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
    dimension: Optional[str] = None,
) -> Table:
    """The table of ``view`` (``dimension`` names the dimension of the dimension view);
    ``ValueError`` names the choices for a bad view, language or dimension."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGS)}")
    if dimension is not None and view != "dimension":
        raise ValueError(f"a dimension is chosen for the dimension view only, not {view}")
    extra = {"name": dimension} if view == "dimension" else {}
    return VIEWS[view](matrix, release=release, lang=lang, today=today, records=records, **extra)


def render(
    matrix: Matrix,
    view: str = "grid",
    fmt: str = "markdown",
    lang: str = "en",
    release: Releases = None,
    today: Optional[_dt.date] = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
    dimension: Optional[str] = None,
) -> str:
    """``view`` rendered as ``fmt`` (see :data:`adapter_matrix.tables.formats.FORMATS`)."""
    return render_table(build(matrix, view, lang, release, today, records, dimension), fmt)
