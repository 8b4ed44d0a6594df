"""Compatibility tables generated from the model.

A *view* turns the model into a neutral :class:`Table` (headers, rows of cells with a
status class, a legend); a *format* renders a table as text. Views and formats are
independent, so every view exists in every format and every language.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .model import Matrix, PythonVersion, Release
from .queries import cells

__all__ = ["TableCell", "Table", "VIEWS", "FORMATS", "build", "render", "render_markdown"]


@dataclass(frozen=True)
class TableCell:
    """One cell: the text shown and a machine-readable class (a status, or empty)."""

    text: str
    css: str = ""


@dataclass(frozen=True)
class Table:
    title: str
    headers: Tuple[str, ...]
    rows: Tuple[Tuple[TableCell, ...], ...]
    legend: Tuple[Tuple[str, str], ...] = ()


_WORDS = {
    "en": {
        "torch": "torch",
        "python": "Python",
        "adapter": "adapter",
        "status": "status",
        "until": "supported until",
        "no_wheel": "no wheel",
        "grid_title": "{dist} {version}: torch \u00d7 Python",
        "releases_title": "{dist} releases",
        "supported": "supported",
        "experimental": "experimental",
        "deprecated": "deprecated",
        "eol": "end of life",
        "broken": "broken",
        "not_claimed": "not supported",
        "dimensions": "extra",
    },
}


def _python_columns(matrix: Matrix) -> List[PythonVersion]:
    return sorted({p for line in matrix.torch for p in line.python if not p.free_threaded})


def grid(matrix: Matrix, release: Optional[Release] = None, lang: str = "en", today: Optional[_dt.date] = None) -> Table:
    """torch minor (newest first) x Python version; each cell shows the cell's status."""
    words = _WORDS[lang]
    release = release or matrix.newest_release
    columns = _python_columns(matrix)
    by_key = {(c.line.minor, c.python): c for c in (cells(matrix, release, today) if release else [])}
    rows = []
    for line in reversed(matrix.torch):
        row = [TableCell(str(line.minor))]
        for python in columns:
            cell = by_key.get((line.minor, python))
            if cell is not None:
                row.append(TableCell(words[cell.status.value], cell.status.value))
            elif python in line.python:
                row.append(TableCell(words["not_claimed"], "unclaimed"))
            else:
                row.append(TableCell(words["no_wheel"], "nowheel"))
        rows.append(tuple(row))
    title = words["grid_title"].format(dist=matrix.adapter.distribution, version=release.version if release else "")
    return Table(title, (words["torch"],) + tuple(str(p) for p in columns), tuple(rows))


def releases(matrix: Matrix, release: Optional[Release] = None, lang: str = "en", today: Optional[_dt.date] = None) -> Table:
    """One row per adapter release: torch, Python, extra dimensions, status, support end."""
    words = _WORDS[lang]
    rows = []
    for rel in reversed(matrix.releases) if release is None else [release]:
        dims = ", ".join(f"{name} {spec}" for name, spec in rel.dimensions)
        rows.append(
            (
                TableCell(str(rel.version)),
                TableCell(str(rel.torch)),
                TableCell(str(rel.python)),
                TableCell(dims),
                TableCell(words[rel.status.value], rel.status.value),
                TableCell(str(rel.supported_until or "")),
            )
        )
    headers = (words["adapter"], words["torch"], words["python"], words["dimensions"], words["status"], words["until"])
    return Table(words["releases_title"].format(dist=matrix.adapter.distribution), headers, tuple(rows))


VIEWS: Dict[str, Callable[..., Table]] = {"grid": grid, "releases": releases}


def _escape_md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table with padded columns."""
    body = [[_escape_md(h) for h in table.headers]] + [[_escape_md(c.text) for c in row] for row in table.rows]
    widths = [max(3, *(len(r[i]) for r in body)) for i in range(len(table.headers))]

    def line(cols: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |"

    out = [line(body[0]), "| " + " | ".join("-" * w for w in widths) + " |"]
    out.extend(line(r) for r in body[1:])
    return "\n".join(out) + "\n"


FORMATS: Dict[str, Callable[[Table], str]] = {"markdown": render_markdown}


def build(matrix: Matrix, view: str = "grid", lang: str = "en", release: Optional[Release] = None, today: Optional[_dt.date] = None) -> Table:
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")
    if lang not in _WORDS:
        raise ValueError(f"unknown language {lang!r}; choose from {', '.join(_WORDS)}")
    return VIEWS[view](matrix, release=release, lang=lang, today=today)


def render(matrix: Matrix, view: str = "grid", fmt: str = "markdown", lang: str = "en", release: Optional[Release] = None, today: Optional[_dt.date] = None) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    return FORMATS[fmt](build(matrix, view, lang, release, today))
