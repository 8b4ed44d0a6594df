"""Generated blocks inside hand-written documents, rewritten atomically.

A block sits between an opening and a closing marker::

    <!-- adapter-matrix:table view=grid lang=en -->
    ...generated...
    <!-- /adapter-matrix:table -->

(reStructuredText uses comments: ``.. adapter-matrix:table view=grid`` and
``.. /adapter-matrix:table``.) Only the text between the markers is ever rewritten;
everything else, including the markers, is kept byte for byte. Writing the result is
:func:`adapter_matrix.files.atomic_write`'s job.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

__all__ = ["Block", "MarkerError", "find_blocks", "rewrite", "syntax_for"]

_OPEN = {
    "markdown": re.compile(r"^[ \t]*<!--\s*adapter-matrix:table\b(?P<args>[^\n]*?)\s*-->[ \t]*\n", re.M),
    "rst": re.compile(r"^[ \t]*\.\.\s+adapter-matrix:table\b(?P<args>[^\n]*?)[ \t]*\n", re.M),
}
_CLOSE = {
    "markdown": re.compile(r"^[ \t]*<!--\s*/adapter-matrix:table\s*-->", re.M),
    "rst": re.compile(r"^[ \t]*\.\.\s+/adapter-matrix:table[ \t]*$", re.M),
}


class MarkerError(ValueError):
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
    for token in shlex.split(raw):
        if "=" not in token:
            raise MarkerError(f"{where}: marker option {token!r} is not key=value")
        key, value = token.split("=", 1)
        out[key] = value
    return out


def find_blocks(text: str, syntax: str, filename: str = "<text>") -> List[Block]:
    """Every block in ``text``, in order. Raises :class:`MarkerError` for an unclosed one."""
    blocks = []
    pos = 0
    while True:
        opening = _OPEN[syntax].search(text, pos)
        if opening is None:
            return blocks
        line = text.count("\n", 0, opening.start()) + 1
        closing = _CLOSE[syntax].search(text, opening.end())
        nested = _OPEN[syntax].search(text, opening.end())
        if closing is None or (nested is not None and nested.start() < closing.start()):
            raise MarkerError(f"{filename}:{line}:1: adapter-matrix:table block is not closed \u2014 add its closing marker")
        blocks.append(Block(_options(opening.group("args"), f"{filename}:{line}:1"), opening.end(), closing.start(), line))
        pos = closing.end()


def rewrite(text: str, syntax: str, render: Callable[[Block], str], filename: str = "<text>") -> Tuple[str, List[Block]]:
    """Return ``text`` with every block's body replaced by ``render(block)``.

    The body gets a blank line on both sides: in reST that keeps the comment markers
    out of the table, and in Markdown it is what mdformat puts between an HTML comment
    and a table, so formatting the document leaves the block alone.
    """
    out = []
    last = 0
    blocks = find_blocks(text, syntax, filename)
    for block in blocks:
        body = "\n" + render(block).strip("\n") + "\n\n"
        out.append(text[last : block.start])
        out.append(body)
        last = block.end
    out.append(text[last:])
    return "".join(out), blocks
