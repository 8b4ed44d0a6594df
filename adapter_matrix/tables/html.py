"""A table as one standalone HTML page: no scripts, fonts or images to fetch (the stack
table's copy buttons are its one inline script).

The page is a colored grid with a legend. Colors come from CSS variables with a
second set under ``prefers-color-scheme: dark``; every state is also written out in
the cell, so the page reads without color too. The table scrolls sideways inside its
own box with the row headers pinned, so the page itself fits a phone's width. Each
body cell with a state is ``<td class="cell STATE">`` so tools (and tests) can count
states from the DOM.
"""

from __future__ import annotations

import html
import os
import string
from typing import Dict, List, Tuple

from .table import STATES, Table, TableCell
from .words import word

__all__ = ["COLORS", "render_html"]

# state -> (light background, light text, dark background, dark text); every pair has a
# WCAG AA contrast (>= 4.5), which the browser test measures.
COLORS: Dict[str, Tuple[str, str, str, str]] = {
    "supported": ("#dafbe1", "#0f5323", "#12361f", "#7ee787"),
    "experimental": ("#ddf4ff", "#0a3069", "#0c2d6b", "#a5d6ff"),
    "deprecated": ("#fff8c5", "#4d2d00", "#3b2e00", "#f2cc60"),
    "eol": ("#fff1e5", "#762c00", "#4a2106", "#ffa657"),
    "broken": ("#ffebe9", "#82071e", "#5a1016", "#ffa198"),
    "verified": ("#dafbe1", "#0f5323", "#12361f", "#7ee787"),
    "stale": ("#fff1e5", "#762c00", "#4a2106", "#ffa657"),
    "unverified": ("#fff8c5", "#4d2d00", "#3b2e00", "#f2cc60"),
    "unreleased": ("#fff8c5", "#4d2d00", "#3b2e00", "#f2cc60"),
    "failed": ("#ffebe9", "#82071e", "#5a1016", "#ffa198"),
    "mixed": ("#fbefff", "#512a97", "#2e1a5c", "#d2a8ff"),
    "unclaimed": ("#f6f8fa", "#59636e", "#151b23", "#9198a1"),
    "nowheel": ("#eaeef2", "#59636e", "#010409", "#9198a1"),
    "present": ("#dafbe1", "#0f5323", "#12361f", "#7ee787"),
    "partial": ("#fff8c5", "#4d2d00", "#3b2e00", "#f2cc60"),
    "absent": ("#f6f8fa", "#59636e", "#151b23", "#9198a1"),
    "ops_ok": ("#dafbe1", "#0f5323", "#12361f", "#7ee787"),
    "ops_known": ("#fff8c5", "#4d2d00", "#3b2e00", "#f2cc60"),
    "ops_unsupported": ("#f6f8fa", "#59636e", "#151b23", "#9198a1"),
    "ops_new": ("#ffebe9", "#82071e", "#5a1016", "#ffa198"),
    "built": ("#dafbe1", "#0f5323", "#12361f", "#7ee787"),
    "open": ("#ddf4ff", "#0a3069", "#0c2d6b", "#a5d6ff"),
    "nocompanion": ("#f6f8fa", "#59636e", "#151b23", "#9198a1"),
    "unstated": ("#eaeef2", "#59636e", "#010409", "#9198a1"),
}

_BASE_CSS = """\
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --head: #f6f8fa;
${light}
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --head: #151b23;
${dark}
  }
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans", "PingFang SC", "Microsoft YaHei", sans-serif;
}
main { max-width: 75rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.35rem; margin: 0 0 .75rem; overflow-wrap: anywhere; }
h2 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
.scroll { overflow-x: auto; width: fit-content; max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
.scroll:focus { outline: 2px solid var(--experimental-fg); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: .35rem .6rem; text-align: left; white-space: nowrap; }
thead th { background: var(--head); position: sticky; top: 0; }
tbody th, thead th:first-child { background: var(--head); position: sticky; left: 0; z-index: 1; }
.view-verified td { white-space: normal; min-width: 9rem; }
code { font: .9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.nowheel, .swatch.nowheel {
  background-image: repeating-linear-gradient(135deg, transparent 0 6px, var(--line) 6px 7px);
}
${states}
.legend { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; }
.legend li { display: flex; align-items: baseline; gap: .5rem; }
.swatch { display: inline-block; padding: .1rem .5rem; border-radius: 4px; border: 1px solid var(--line); }
.generated { color: var(--muted); font-size: .85rem; margin-top: 1.5rem; }
.note { color: var(--muted); margin: .5rem 0 0; }
details summary { cursor: pointer; }
details[open] { white-space: normal; min-width: 12rem; }
details[open] summary { margin-bottom: .25rem; }
@media (max-width: 40rem) {
  body { font-size: 13px; }
  main { padding: .5rem; }
  th, td { padding: .25rem .4rem; }
}
"""


def _css() -> str:
    light = "\n".join(f"  --{s}-bg: {c[0]}; --{s}-fg: {c[1]};" for s, c in COLORS.items())
    dark = "\n".join(f"    --{s}-bg: {c[2]}; --{s}-fg: {c[3]};" for s, c in COLORS.items())
    states = "\n".join(
        f".cell.{s}, .swatch.{s} {{ background-color: var(--{s}-bg); color: var(--{s}-fg); }}" for s in STATES
    )
    return string.Template(_BASE_CSS).substitute(light=light, dark=dark, states=states)


def _content(cell: TableCell) -> str:
    return "".join(f"<code>{html.escape(s.text)}</code>" if s.code else html.escape(s.text) for s in cell.spans)


def _td(cell: TableCell) -> str:
    attrs = f' class="cell {cell.state}"' if cell.state else ""
    if cell.title:
        attrs += f' title="{html.escape(cell.title)}"'
    if cell.detail:  # the older releases: one click (or Enter) away, no script needed
        return f"<td{attrs}><details><summary>{_content(cell)}</summary>{html.escape(cell.detail)}</details></td>"
    return f"<td{attrs}>{_content(cell)}</td>"


# The stack table's commands, under their row: wrapped, never scrolled (only its page has them).
_INSTALL_CSS = """\
tr.install td { white-space: normal; }
td { white-space: normal; }  /* a pin's alternatives (2.1.0 | 2.6.0) wrap at their spaces */
.install .command { display: flex; gap: .5rem; align-items: flex-start; margin: .25rem 0; }
.install .where { flex: 0 0 9rem; color: var(--muted); overflow-wrap: anywhere; }
.install pre {
  flex: 1; margin: 0; padding: .35rem .6rem; border-radius: 6px; background: var(--head);
  border: 1px solid var(--line); white-space: pre-wrap; overflow-wrap: anywhere;
}
.install pre code { font-size: .85rem; }
.install .steps { margin: .1rem 0 .35rem; }
.copy { font: inherit; padding: .2rem .6rem; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; }
@media (max-width: 40rem) { .install .command { flex-direction: column; } }
"""

# The stack table's copy buttons (the selector page's): the only script a table page has,
# and it reads nothing but the button's own command.
_COPY_JS = """
document.querySelectorAll("button.copy").forEach(function (b) {
  b.addEventListener("click", function () {
    var done = function () { b.textContent = b.getAttribute("data-copied"); };
    if (navigator.clipboard) navigator.clipboard.writeText(b.getAttribute("data-command")).then(done, function () {});
  });
});
"""


def _install_row(table: Table, row: Tuple[TableCell, ...], moved: List[int], width: int) -> str:
    """The stack table's steps before pip and its commands, under their row across the whole
    table: each command on its own, wrapped rather than scrolled, with a copy button."""
    esc = html.escape
    parts = []
    for i in moved:
        column, cell = table.columns[i], row[i]
        commands = [s.text for s in cell.spans if s.code]
        if column.key == "prerequisites":
            if cell.text.strip() and cell.text != "\u2014":
                parts.append(f'<p class="steps"><strong>{esc(column.label)}:</strong> {esc(cell.text)}</p>')
            continue
        if not commands:
            parts.append(f'<div class="command"><span class="where">{esc(column.label)}</span>{_content(cell)}</div>')
            continue
        for command in commands:
            parts.append(
                f'<div class="command"><span class="where">{esc(column.label)}</span>'
                f"<pre><code>{esc(command)}</code></pre>"
                f'<button type="button" class="copy" data-command="{esc(command)}"'
                f' data-copied="{esc(word("sel_copied", table.lang))}">{esc(word("sel_copy", table.lang))}</button></div>'
            )
    return f'<tr class="install"><td colspan="{width}">' + "".join(parts) + "</td></tr>"


def render_html(table: Table) -> str:
    """The standalone page: inline CSS, light and dark colors, legend, phone-sized layout.
    The selector view is a page of its own (:mod:`.selector_page`, chosen by the caller); the
    stack view's commands go under their row, across the table, each with a copy button."""
    esc = html.escape
    moved = (
        [i for i, c in enumerate(table.columns) if c.key == "prerequisites" or c.key.startswith("install")]
        if table.view == "stack"
        else []
    )
    kept = [i for i in range(len(table.columns)) if i not in moved]
    lines: List[str] = [
        "<!DOCTYPE html>",
        f'<html lang="{esc(table.lang)}">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        '<meta name="generator" content="adapter-matrix">',
        f"<title>{esc(table.title)}</title>",
        "<style>",
        (_css() + (_INSTALL_CSS if moved else "")).rstrip("\n"),
        "</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{esc(table.title)}</h1>",
        f'<div class="scroll" tabindex="0" role="region" aria-label="{esc(table.title)}">',
        f'<table class="matrix view-{esc(table.view)}">',
        "<thead>",
        "<tr>" + "".join(f'<th scope="col">{esc(table.columns[i].label)}</th>' for i in kept) + "</tr>",
        "</thead>",
        "<tbody>",
    ]
    for row in table.rows:
        lines.append(f'<tr><th scope="row">{_content(row[0])}</th>' + "".join(_td(row[i]) for i in kept[1:]) + "</tr>")
        if moved:
            lines.append(_install_row(table, row, moved, len(kept)))
    lines += ["</tbody>", "</table>", "</div>"]
    if table.note:
        lines.append(f'<p class="note">{esc(table.note)}</p>')
    if table.legend:
        lines.append(f"<h2>{esc(word('legend', table.lang))}</h2>")
        lines.append('<ul class="legend">')
        for state, label, about in table.legend:
            lines.append(f'<li><span class="swatch {state}">{esc(label)}</span> {esc(about)}</li>')
        lines.append("</ul>")
    footer = esc(word("generated", table.lang)).format(
        matrix=esc(os.path.basename(table.matrix) or "compat.yaml"), command="<code>adapter-matrix table</code>"
    )
    lines.append(f'<p class="generated">{footer}</p>')
    if moved:
        lines += ["<script>", _COPY_JS.strip(), "</script>"]
    lines += ["</main>", "</body>", "</html>"]
    return "\n".join(lines) + "\n"
