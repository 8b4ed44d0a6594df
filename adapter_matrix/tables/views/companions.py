"""The ``companions`` view: torch minor x companion package (torchvision, torchaudio):
the releases built for each line, or the earlier releases whose open requirement admits
it, or none.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any, Dict, List, Optional, Tuple

from ...matrix.model import Companion, Matrix, TorchLine, requirement
from ...matrix.queries import (
    Releases,
)
from ..table import Column, Span, Table, TableCell, fill, plain
from ..words import legend, word
from .common import Records

__all__ = ["companions"]


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
    records: Optional[Records] = None,
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
        "companions": [
            {"name": c.name, "description": c.description or None, "lines": per_companion[c.name]} for c in shown
        ],
    }
    return Table("companions", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
