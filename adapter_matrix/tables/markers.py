"""Generated blocks inside hand-written documents, rewritten atomically.

A block sits between an opening and a closing marker::

    <!-- adapter-matrix:table view=grid lang=en -->
    ...generated...
    <!-- /adapter-matrix:table -->

(reStructuredText uses comments: ``.. adapter-matrix:table view=grid`` and
``.. /adapter-matrix:table``.) Only the text between the markers is ever rewritten;
everything else, including the markers, is kept byte for byte. Writing the result is
:func:`adapter_matrix.files.atomic_write`'s job.

Markers inside a code example are text, not blocks: a Markdown fenced code block
(`````` or ``~~~``), or a reST literal block (the indented text after a paragraph
ending in ``::``, or the body of ``.. code-block::`` and its kin). Documents that
explain the markers show them that way, and ``--update`` must leave them alone.
"""

from __future__ import annotations

import bisect
import re
import shlex
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

from ..errors import AdapterMatrixError

__all__ = ["Block", "MarkerError", "examples", "find_blocks", "rewrite", "syntax_for"]

_OPEN = {
    # `\r?`: the markers of a document saved with Windows line endings (CRLF) are found too.
    "markdown": re.compile(r"^[ \t]*<!--\s*adapter-matrix:table\b(?P<args>[^\r\n]*?)\s*-->[ \t]*\r?\n", re.M),
    "rst": re.compile(r"^[ \t]*\.\.\s+adapter-matrix:table\b(?P<args>[^\r\n]*?)[ \t]*\r?\n", re.M),
}
_CLOSE = {
    "markdown": re.compile(r"^[ \t]*<!--\s*/adapter-matrix:table\s*-->", re.M),
    "rst": re.compile(r"^[ \t]*\.\.\s+/adapter-matrix:table[ \t]*\r?$", re.M),
}


# A Markdown fence opens with three or more backticks or tildes (a backtick fence's info
# string holds no backtick) and closes with a line of at least as many of the same character.
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# reST directives whose body is literal text (Sphinx's names included).
_RST_LITERAL_DIRECTIVE = re.compile(
    r"^[ \t]*\.\.\s+(?:code-block|code|sourcecode|parsed-literal|doctest|testcode|testoutput|testsetup|ipython)::"
)


class MarkerError(AdapterMatrixError, ValueError):
    """A malformed block: an opening marker without its closing one, or a bad option."""


@dataclass(frozen=True)
class Block:
    """One generated block: its options and where its body lies in the text."""

    options: Dict[str, str]
    start: int  # first character of the body
    end: int  # first character of the closing marker
    line: int  # 1-based line of the opening marker

    def body(self, text: str) -> str:
        return text[self.start : self.end]


def syntax_for(path: str) -> str:
    return "rst" if path.endswith((".rst", ".txt")) else "markdown"


def _options(raw: str, where: str) -> Dict[str, str]:
    out = {}
    try:
        tokens = shlex.split(raw)
    except ValueError as exc:  # `view='grid`: "No closing quotation"
        raise MarkerError(
            f"{where}: marker options {raw.strip()!r} cannot be read: {str(exc).lower()} \u2014 close the quote"
        ) from None
    for token in tokens:
        if "=" not in token:
            raise MarkerError(f"{where}: marker option {token!r} is not key=value")
        key, value = token.split("=", 1)
        out[key] = value
    return out


def _lines(text: str) -> List[Tuple[int, str]]:
    """Each line of ``text`` (without its line ending) with the offset it starts at."""
    out = []
    offset = 0
    for line in text.splitlines(keepends=True):
        out.append((offset, line.rstrip("\r\n")))
        offset += len(line)
    return out


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip(" "))


def _markdown_examples(text: str) -> List[Tuple[int, int]]:
    """The ``(start, end)`` offsets of every fenced code block; an unclosed one runs to the end."""
    spans = []
    fence = ""
    start = 0
    for offset, line in _lines(text):
        if not fence:
            match = _FENCE.match(line)
            if match and not (match.group("fence")[0] == "`" and "`" in match.group("info")):
                fence, start = match.group("fence"), offset
            continue
        stripped = line.strip()
        if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            spans.append((start, offset + len(line)))
            fence = ""
    if fence:
        spans.append((start, len(text)))
    return spans


def _rst_examples(text: str) -> List[Tuple[int, int]]:
    """The ``(start, end)`` offsets of every literal block: the lines indented deeper than a
    paragraph ending in ``::`` (not a directive or comment) or a literal directive."""
    spans = []
    lines = _lines(text)
    i = 0
    while i < len(lines):
        _offset, line = lines[i]
        stripped = line.strip()
        literal = _RST_LITERAL_DIRECTIVE.match(line) or (stripped.endswith("::") and not stripped.startswith(".."))
        i += 1
        if not literal:
            continue
        base = _indent(line)
        j = i
        while j < len(lines) and (not lines[j][1].strip() or _indent(lines[j][1]) > base):
            j += 1
        if j > i:
            spans.append((lines[i][0], lines[j][0] if j < len(lines) else len(text)))
        i = j
    return spans


def examples(text: str, syntax: str) -> List[Tuple[int, int]]:
    """Where ``text`` shows code (fenced blocks, literal blocks), as sorted ``(start, end)`` offsets."""
    return _rst_examples(text) if syntax == "rst" else _markdown_examples(text)


def find_blocks(text: str, syntax: str, filename: str = "<text>") -> List[Block]:
    """Every block in ``text``, in order, skipping markers inside code examples.

    Raises :class:`MarkerError` for an unclosed block.
    """
    shown = examples(text, syntax)
    starts = [start for start, _ in shown]

    def real(match: re.Match[str]) -> bool:
        k = bisect.bisect_right(starts, match.start()) - 1
        return k < 0 or match.start() >= shown[k][1]

    openings = [m for m in _OPEN[syntax].finditer(text) if real(m)]
    closings = [m for m in _CLOSE[syntax].finditer(text) if real(m)]
    blocks = []
    pos = 0
    for k, opening in enumerate(openings):
        if opening.start() < pos:
            continue
        line = text.count("\n", 0, opening.start()) + 1
        closing = next((c for c in closings if c.start() >= opening.end()), None)
        nested = openings[k + 1] if k + 1 < len(openings) else None
        if closing is None or (nested is not None and nested.start() < closing.start()):
            raise MarkerError(
                f"{filename}:{line}:1: adapter-matrix:table block is not closed \u2014 add its closing marker"
            )
        blocks.append(
            Block(_options(opening.group("args"), f"{filename}:{line}:1"), opening.end(), closing.start(), line)
        )
        pos = closing.end()
    return blocks


def rewrite(
    text: str, syntax: str, render: Callable[[Block], str], filename: str = "<text>"
) -> Tuple[str, List[Block]]:
    """Return ``text`` with every block's body replaced by ``render(block)``.

    The body gets a blank line on both sides: in reST that keeps the comment markers
    out of the table, and in Markdown it is what mdformat puts between an HTML comment
    and a table, so formatting the document leaves the block alone.
    """
    out = []
    last = 0
    blocks = find_blocks(text, syntax, filename)
    eol = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"  # a CRLF document stays CRLF
    for block in blocks:
        body = "\n" + render(block).replace("\r\n", "\n").strip("\n") + "\n\n"
        if eol != "\n":
            body = body.replace("\n", eol)
        out.append(text[last : block.start])
        out.append(body)
        last = block.end
    out.append(text[last:])
    return "".join(out), blocks
