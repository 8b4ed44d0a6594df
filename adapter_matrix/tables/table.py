"""The neutral table every view builds and every format renders.

A view (:mod:`adapter_matrix.tables.views`) fills a :class:`Table` with :class:`TableCell`
s (spans of plain text and code, a state class such as ``supported``, a title); a
format (:mod:`adapter_matrix.tables.formats`) renders any table, so every view exists in
every format. Neither side imports the other: both import this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple, Union

__all__ = ["STATES", "Span", "TableCell", "Column", "Table", "plain", "code", "fill"]

# Every state a cell can be in, in the order legends list them.
STATES: Tuple[str, ...] = (
    "supported",
    "experimental",
    "deprecated",
    "eol",
    "broken",
    "verified",
    "stale",
    "unverified",
    "unreleased",
    "failed",
    "mixed",
    "unclaimed",
    "nowheel",
    "present",
    "partial",
    "absent",
    "ops_ok",
    "ops_known",
    "ops_unsupported",
    "ops_new",
    "built",
    "open",
    "nocompanion",
    "unstated",
)


@dataclass(frozen=True)
class Span:
    """A run of text; ``code`` spans (specifiers, session names) are shown as code."""

    text: str
    code: bool = False


@dataclass(frozen=True)
class TableCell:
    """One cell: its spans, its state (one of :data:`STATES`, or empty) and a longer
    explanation (the reason of a status) for formats that can show one."""

    spans: Tuple[Span, ...] = ()
    state: str = ""
    title: str = ""
    # more than the cell shows, one click away on the HTML page (the older releases of a
    # compact grid cell); other formats leave it to the table's note or to another view
    detail: str = ""

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.spans)


def plain(text: str, state: str = "", title: str = "") -> TableCell:
    return TableCell((Span(text),) if text else (), state, title)


def code(text: str) -> TableCell:
    return TableCell((Span(text, code=True),) if text else ())


def fill(template: str, state: str, title: str = "", **fields: Union[Span, Tuple[Span, ...]]) -> TableCell:
    """``template`` with each ``{name}`` replaced by its span or spans (so a session stays code)."""
    spans: List[Span] = []
    for i, piece in enumerate(re.split(r"\{(\w+)\}", template)):
        if i % 2:
            value = fields[piece]
            spans.extend((value,) if isinstance(value, Span) else value)
        elif piece:
            spans.append(Span(piece))
    return TableCell(tuple(spans), state, title)


@dataclass(frozen=True)
class Column:
    """A column: a stable machine key (``torch``, ``3.11``, ``status``) and its label."""

    key: str
    label: str


@dataclass(frozen=True)
class Table:
    """A rendered-format-independent table. The first column holds the row headers.

    ``legend`` lists (state, label, description) for the states that occur in the body;
    ``note`` is a sentence every format writes under the table;
    ``data`` holds the facts behind the rows for the JSON format (see
    ``docs/compatibility-table.schema.json``).
    """

    view: str
    lang: str
    title: str
    columns: Tuple[Column, ...]
    rows: Tuple[Tuple[TableCell, ...], ...]
    legend: Tuple[Tuple[str, str, str], ...] = ()
    data: Dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    matrix: str = ""
    note: str = ""  # a sentence under the table (where the cells' older releases are)
