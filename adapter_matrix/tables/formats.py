"""Text formats of a :class:`~adapter_matrix.tables.table.Table`: Markdown, reST, CSV, JSON, HTML.

Markdown is GitHub-flavoured and written exactly as ``mdformat`` with ``mdformat-gfm``
would write it (columns padded to their display width, a CJK character counting two),
so a repository that formats its docs never fights ``table --check``. Plain text that
Markdown or reST would read as markup is shown as code instead of being escaped:
escapes differ between formatters, code spans do not.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from typing import Any, Callable, Dict, List, Sequence

from .table import Span, Table, TableCell

__all__ = [
    "JSON_SCHEMA_VERSION",
    "FORMATS",
    "FORMAT_ALIASES",
    "format_named",
    "render_table",
    "render_markdown",
    "render_rst",
    "render_csv",
    "render_json",
    "json_document",
]

JSON_SCHEMA_VERSION = 1  # bump on any incompatible change; see docs/compatibility-table.schema.json


def _spans(cell: TableCell, unsafe: re.Pattern[str]) -> List[Span]:
    """The cell's spans on one line: whitespace runs collapsed to one space (as Markdown
    and reST read them), plain text containing markup characters turned into code,
    whitespace kept outside code (where it survives parsing), neighbours of a kind merged."""
    pieces: List[Span] = []
    for span in cell.spans:
        text = re.sub(r"\s+", " ", span.text)
        if not (span.code or unsafe.search(text)):
            pieces.append(Span(text))
            continue
        core = text.strip()
        lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
        pieces += [Span(lead), Span(core, code=True), Span(trail)]
    out: List[Span] = []
    for piece in pieces:
        if not piece.text:
            continue
        if out and out[-1].code == piece.code:
            out[-1] = Span(out[-1].text + piece.text, piece.code)
        else:
            out.append(piece)
    out = [Span(s.text if s.code else re.sub(" +", " ", s.text), s.code) for s in out]
    if out and not out[0].code:
        out[0] = Span(out[0].text.lstrip())
    if out and not out[-1].code:
        out[-1] = Span(out[-1].text.rstrip())
    return [s for s in out if s.text]


# -- Markdown ----------------------------------------------------------------------------

# Characters mdformat would escape (or that would start markup) in the text of a cell.
_MD_UNSAFE = re.compile(r"[\\`*_\[\]<>&~|]")


def _md_code(text: str) -> str:
    """A code span exactly as mdformat writes one (a longer fence around backticks)."""
    ticks = max((len(m) for m in re.findall(r"`+", text)), default=0)
    if ticks:
        fence = "`" * (ticks + 1)
        return f"{fence} {text} {fence}"
    if text.startswith(" ") and text.endswith(" ") and text.strip():
        return f"` {text} `"
    return f"`{text}`"


def _md_cell(cell: TableCell) -> str:
    text = "".join(_md_code(s.text) if s.code else s.text for s in _spans(cell, _MD_UNSAFE))
    return text.replace("|", "\\|")  # a pipe ends the cell even inside code


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal or editor: wide (CJK) characters take two."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def render_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table, padded as mdformat pads it."""
    body = [[_md_cell(TableCell((Span(c.label),))) for c in table.columns]]
    body += [[_md_cell(c) for c in row] for row in table.rows]
    widths = [max(3, *(display_width(r[i]) for r in body)) for i in range(len(table.columns))]

    def line(cols: Sequence[str]) -> str:
        return "| " + " | ".join(c + " " * (w - display_width(c)) for c, w in zip(cols, widths)) + " |"

    out = [line(body[0]), "| " + " | ".join("-" * w for w in widths) + " |"]
    out.extend(line(r) for r in body[1:])
    if table.note:
        out += ["", _md_cell(TableCell((Span(table.note),)))]
    return "\n".join(out) + "\n"


# -- reStructuredText --------------------------------------------------------------------

_RST_MARKUP = re.compile(r"([\\`*|_])")
# A cell that starts like a list item or a field would nest markup in the list-table.
_RST_LIST_START = re.compile(r"^(?:[-+*\u2022]|\(?(?:\d+|#|[A-Za-z])[.)]|:|:[^:]+:)(?:\s|$)")  # :name: is a field list
# A cell of one repeated punctuation character reads as a section adornment.
_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1*$")
_RST_CLOSERS = " \t'\")]}>-/:.,;!?"
_NEVER = re.compile(r"(?!)")


def _rst_cell(cell: TableCell) -> str:
    """Cell text for reST: markup characters backslash-escaped (reST escapes reliably),
    code spans as inline literals where reST can delimit them."""
    spans = _spans(cell, _NEVER)
    out = ""
    for i, span in enumerate(spans):
        if not span.code or "``" in span.text or span.text[0] == "`" or span.text[-1] == "`":
            out += _RST_MARKUP.sub(r"\\\1", span.text)
            continue
        # an inline literal must follow whitespace
        # and precede whitespace or punctuation; an escaped space is invisible glue
        if out and out[-1] not in " \t":
            out += "\\ "
        out += f"``{span.text}``"
        following = spans[i + 1].text[:1] if i + 1 < len(spans) else ""
        if following and following not in _RST_CLOSERS:
            out += "\\ "
    if out.endswith("::"):  # would announce a literal block
        out = out[:-1] + "\\:"
    if _RST_ADORNMENT.match(out):
        return "\\ " + out  # an escaped space reads as nothing, and breaks the adornment
    return "\\" + out if _RST_LIST_START.match(out) else out


def render_rst(table: Table) -> str:
    """A Sphinx/docutils ``list-table`` with a header row and the first column as stubs."""
    out = [f".. list-table:: {_rst_cell(TableCell((Span(table.title),)))}"]
    if table.rows:  # docutils refuses a header row without a body: an empty table is one plain row
        out.append("   :header-rows: 1")
    if len(table.columns) > 1:  # ... and a stub column without data columns
        out.append("   :stub-columns: 1")
    out += ["   :class: adapter-matrix", ""]
    header = [TableCell((Span(c.label),)) for c in table.columns]
    for row in [header] + [list(r) for r in table.rows]:
        for i, cell in enumerate(row):
            text = _rst_cell(cell)
            out.append(("   * -" if i == 0 else "     -") + (f" {text}" if text else ""))
    if table.note:
        out += ["", _rst_cell(TableCell((Span(table.note),)))]
    return "\n".join(out) + "\n"


# -- CSV and JSON ------------------------------------------------------------------------


def render_csv(table: Table) -> str:
    """RFC 4180 CSV: the header labels, then the text of every cell."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.label for c in table.columns])
    for row in table.rows:
        writer.writerow([c.text for c in row])
    return buf.getvalue()


def json_document(table: Table) -> Dict[str, Any]:
    """The documented JSON document (``docs/compatibility-table.schema.json``) as data."""
    doc: Dict[str, Any] = {
        "schema_version": JSON_SCHEMA_VERSION,
        "view": table.view,
        "lang": table.lang,
        "title": table.title,
        "columns": [{"key": c.key, "label": c.label} for c in table.columns],
        "rows": [
            [{"text": c.text, "state": c.state or None, "title": c.title or None} for c in row] for row in table.rows
        ],
        "legend": [{"state": s, "label": label, "description": about} for s, label, about in table.legend],
    }
    doc.update(table.data)
    return doc


def render_json(table: Table) -> str:
    """The documented JSON document (``docs/compatibility-table.schema.json``)."""
    return json.dumps(json_document(table), indent=2, ensure_ascii=False) + "\n"


def _render_html(table: Table) -> str:
    if table.view == "selector":  # a page of its own, its data the JSON document embedded once
        from .selector_page import render_selector

        return render_selector(table, json_document(table))
    from .html import render_html

    return render_html(table)


FORMATS: Dict[str, Callable[[Table], str]] = {
    "markdown": render_markdown,
    "rst": render_rst,
    "html": _render_html,
    "csv": render_csv,
    "json": render_json,
}


# Short names people type for the formats (file extensions, mostly); each is listed in
# `table --help` and docs/tables.md next to its format.
FORMAT_ALIASES: Dict[str, str] = {
    "md": "markdown",
    "gfm": "markdown",
    "rest": "rst",
    "restructuredtext": "rst",
    "htm": "html",
}


def format_named(name: str) -> str:
    """The format ``name`` stands for (``md`` is ``markdown``); ``ValueError`` names the choices."""
    fmt = FORMAT_ALIASES.get(name.lower(), name.lower())
    if fmt not in FORMATS:
        aliases = ", ".join(f"{alias} ({full})" for alias, full in FORMAT_ALIASES.items())
        raise ValueError(f"unknown format {name!r}; choose from {', '.join(FORMATS)}, or a short name: {aliases}")
    return fmt


def render_table(table: Table, fmt: str) -> str:
    """``table`` as ``fmt`` (a format or one of its short names); ``ValueError`` names the formats for a bad one."""
    return FORMATS[format_named(fmt)](table)
