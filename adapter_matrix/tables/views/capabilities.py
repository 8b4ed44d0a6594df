"""The ``capabilities`` view: torch minor x feature, as the shim serving each line
declares it (a feature a release lacks is a declared capability, never a silent skip).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Optional

from ...matrix.model import Matrix, Release
from ..table import Column, Span, Table, code, fill, plain
from ..words import legend, word
from .common import Records

__all__ = ["capabilities"]


def capabilities(
    matrix: Matrix,
    release: Optional[Release] = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
) -> Table:
    """torch minor (newest first) x feature: what the shim serving each line declares."""
    from ...device.capabilities import capabilities as declared

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
    columns = (Column("torch", word("torch", lang)), Column("shim", word("shim", lang))) + tuple(
        Column(f, f) for f in features
    )
    title = word("capabilities_title", lang).format(dist=matrix.adapter.distribution)
    data = {"adapter": matrix.adapter.distribution, "release": None, "features": dict(features), "lines": facts}
    return Table("capabilities", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
