"""The ``selector`` view: every combination the matrix describes, each with the exact
commands that install it; the data of the selector page (``--format html``).

A row is one cell (extra-dimension values, Python, torch line, adapter release) with its
status and its install commands. The commands are :func:`adapter_matrix.check.fixes.install_fix`'s:
the same search and the same command text as ``check``'s fixes, for a newcomer's fresh
environment (the cell's Python, nothing installed), computed here when the table is
generated, so the page and ``check`` cannot disagree. A cell no fix reaches (end of
life, broken) has no command; the page then shows ``check``'s first fix for it, as it does
for a pick no cell describes (the ``picks``: :mod:`adapter_matrix.tables.picks`).

The JSON document holds the ``axes`` in the order the page asks them (extra dimensions,
Python, torch, release), each newest first; the ``torch_lines``' Pythons (why a choice is
disabled); the ``release_facts`` (dates, whether frozen); the ``combinations``, best
first; the ``default`` one the page opens on: the newest supported combination; and the
``picks``, ``check``'s answer for every pick the page can express (JSON and HTML only).
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ...ci.evidence import Verification, index_records, verification_of
from ...ci.record import RecordSet
from ...matrix.model import Matrix, Status
from ...matrix.queries import Cell, Releases, cells, chosen
from ..selector_entries import SelectorAxis, SelectorEntry
from ..table import Column, Span, Table, TableCell, plain
from ..words import word
from .lag import lag

if TYPE_CHECKING:
    from ...check.fixes import FixSpace

__all__ = ["selector", "newest_first"]

_USABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)


def newest_first(values: Sequence[str]) -> List[str]:
    """Versions newest first; names (an OS) keep the order they came in."""
    unique = list(dict.fromkeys(values))
    try:
        return sorted(unique, key=Version, reverse=True)
    except InvalidVersion:
        return unique


def _python_key(text: str) -> Tuple[Version, bool]:
    return Version(text.rstrip("t")), text.endswith("t")


def _cell_entry(
    space: FixSpace, cell: Cell, today: _dt.date, evidence: Optional[Verification]
) -> Tuple[SelectorEntry, Tuple[str, ...]]:
    from ...check.fixes import install_fix  # check's code, not a copy of it

    fix = install_fix(space, cell, today) if cell.status in _USABLE else None
    commands = fix.commands if fix is not None else ()
    # the build the release needs, also where no fix reaches it (an end-of-life x86_64 torch_npu: +cpu)
    variant = cell.release.variant
    torch = fix.cell.torch if fix is not None else cell.torch
    entry: SelectorEntry = {
        "release": str(cell.release.version),
        "torch_line": str(cell.line.minor),
        "torch": str(torch) + (f"+{variant}" if variant and not torch.local else ""),
        "python": str(cell.python),
        "dimensions": {name: str(value) for name, value in cell.dimensions},
        "status": cell.status.value,
        "commands": list(commands),
    }
    series = {name: str(c) for name, c in cell.release.dimensions if c.series}
    if series:  # the release states compatible series: the page says so beside the value picked
        entry["series"] = series
    if cell.reason:
        entry["reason"] = cell.reason
    if evidence is not None and evidence.state != "unverified":
        # what the page says of it: the state, when, which torch ran, where (the short hash)
        entry["verification"] = {
            "state": evidence.state,
            "date": evidence.date,
            "torch": evidence.torch,
            "commit": (evidence.commit or "")[:12] or None,
        }
    return entry, commands


def _order(entry: SelectorEntry) -> Tuple[Any, ...]:
    """Best first: usable before not, supported first, then the newest torch, release and Python."""
    status = Status(entry["status"])
    return (
        not entry["commands"],
        status is not Status.SUPPORTED,
        -Version(entry["torch_line"]).major * 1000 - Version(entry["torch_line"]).minor,
        [-x for x in Version(entry["release"]).release],
        [-x for x in _python_key(entry["python"])[0].release],
        entry["python"].endswith("t"),
    )


def selector(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[RecordSet] = None,
    picks: bool = True,
) -> Table:
    """One row per cell of the releases asked for (default: every release), best first,
    with its install commands; ``records`` (result records) add each cell's evidence.
    ``picks``: with ``check``'s answer for every pick the page can express
    (:mod:`adapter_matrix.tables.picks`), which only the page and its JSON carry."""
    today = today or _dt.date.today()
    shown = chosen(matrix, release)
    index = index_records(records, matrix, today) if records is not None else None
    from ...check.fixes import FixSpace  # check's search, made once for every cell and pick of the page

    space = FixSpace.of(matrix)
    entries: List[SelectorEntry] = []
    for cell in cells(matrix, shown, today):
        entry, _commands = _cell_entry(space, cell, today, verification_of(cell, index) if index else None)
        entries.append(entry)
    entries.sort(key=_order)
    dims = [d.name for d in matrix.dimensions if any(d.name in e["dimensions"] for e in entries)]
    axes: List[SelectorAxis] = [
        {
            "key": name,
            "label": name,
            "changeable": bool(dim.changeable) if (dim := matrix.dimension(name)) is not None else True,
            "kind": dim.kind if dim is not None else "enum",
            "values": newest_first([e["dimensions"][name] for e in entries if name in e["dimensions"]]),
        }
        for name in dims
    ]
    axes += [
        {
            "key": "python",
            "label": word("python", lang),
            "values": sorted({e["python"] for e in entries}, key=_python_key, reverse=True),
        },
        {"key": "torch", "label": word("torch", lang), "values": newest_first([e["torch_line"] for e in entries])},
        {"key": "release", "label": word("adapter", lang), "values": newest_first([e["release"] for e in entries])},
    ]
    releases: Dict[str, Dict[str, Any]] = {}
    for rel in shown:
        releases.setdefault(
            str(rel.version),
            {
                "line": rel.release_line,
                "date": rel.date.isoformat() if rel.date else None,
                "supported_until": rel.supported_until.isoformat() if rel.supported_until else None,
                "frozen": bool(index and str(rel.version) in index.frozen),
            },
        )
    dist = matrix.adapter.distribution
    # A row per (dimension values, torch line, release, status, commands): the Pythons that
    # share them in one cell, so the Markdown table stays readable.
    python_column = Column("python", word("python", lang))
    columns = tuple(Column(a["key"], a["label"]) for a in axes if a["key"] != "python") + (
        python_column,
        Column("status", word("status", lang)),
        Column("commands", word("sel_command", lang)),
    )
    groups: Dict[Tuple[Any, ...], List[SelectorEntry]] = {}
    for e in entries:
        key = (
            tuple(e["dimensions"].get(n, "") for n in dims),
            e["torch_line"],
            e["release"],
            e["status"],
            tuple(e["commands"]),
        )
        groups.setdefault(key, []).append(e)
    rows = []
    for (values, line, version, status, commands), members in groups.items():
        pythons = sorted({m["python"] for m in members}, key=_python_key)
        row: List[TableCell] = [plain(v) for v in values] + [plain(line), plain(version), plain(", ".join(pythons))]
        row.append(plain(word(status, lang), status, members[0].get("reason") or ""))
        spans: List[Span] = []
        for i, command in enumerate(commands):
            spans += ([Span("; ")] if i else []) + [Span(command, code=True)]
        row.append(TableCell(tuple(spans)))
        rows.append(tuple(row))
    data: Dict[str, Any] = {
        "adapter": dist,
        "release": str(shown[0].version) if release is not None and len({r.version for r in shown}) == 1 else None,
        "axes": axes,
        "torch_lines": {str(t.minor): [str(p) for p in t.python] for t in matrix.torch},
        "release_facts": releases,
        "evidence_folder": matrix.evidence.folder if index is not None else None,
        "default": 0 if entries and entries[0]["commands"] else None,
        "combinations": entries,
    }
    if picks:
        from ..picks import pick_answers  # check's ranking for every pick: only the page and the JSON need it

        data["picks"], unusable = pick_answers(space, entries, axes, today)
        # the page's "release lag" section: the same facts as --view lag, without the days since
        # torch (a published page does not change by itself from one day to the next)
        data["lag"] = [{k: v for k, v in e.items() if k != "days_since_torch"} for e in lag(matrix).data["lag"]]
        for i, answers in unusable.items():
            entries[i]["nearest"] = answers["nearest"]
            if answers["held"]:  # check's system change after its first fix
                entries[i]["held"] = answers["held"]
    legend = tuple(
        (s.value, word(s.value, lang), word(f"{s.value}_about", lang))
        for s in Status
        if any(e["status"] == s.value for e in entries)
    )
    return Table(
        "selector",
        lang,
        word("selector_title", lang).format(dist=dist),
        columns,
        tuple(rows),
        legend,
        data,
        matrix.path,
    )
