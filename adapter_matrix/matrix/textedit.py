"""Editing ``compat.yaml`` as text, the one editor every writer uses: where a value's text
ends (a PyYAML node's, or a positioned block's), inserting whole lines, replacing a
one-line scalar, applying a set of non-overlapping edits, and comparing nodes as plain data.

The writers of upstream facts (:mod:`adapter_matrix.upstream.write` for torch,
:mod:`adapter_matrix.upstream.companion_write` for companions), ``init``'s adoption
(:mod:`adapter_matrix.upstream.adopt`) and ``new-shim`` (:mod:`adapter_matrix.device.newshim`)
replace only the text that changes, so comments, blank lines and quoting elsewhere
survive; they check the result by parsing (or loading) it again.
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional, Tuple

import yaml

from ..files import atomic_write, read_keeping_newlines
from . import source

__all__ = [
    "Edit",
    "content_end",
    "insert_lines",
    "line_offsets",
    "block_end",
    "section_stop",
    "replace_scalar",
    "apply_edits",
    "plain",
    "rewrite_file",
]

Edit = Tuple[int, int, str]  # replace text[start:end] with the string


def content_end(node: yaml.Node) -> int:
    """Where a value's own text ends: block collections end with their last child (PyYAML's
    end mark lies past the comments that follow them)."""
    if isinstance(node, yaml.ScalarNode) or (isinstance(node, yaml.CollectionNode) and node.flow_style):
        return node.end_mark.index
    children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else list(node.value)
    ends = [content_end(c) for c in children if c.start_mark.index >= node.start_mark.index]
    return max(ends, default=node.end_mark.index)


def insert_lines(text: str, index: int, lines: str) -> Edit:
    """Insert whole ``lines`` after the line holding ``index`` (and after its comment)."""
    newline = text.find("\n", index)
    if newline < 0:
        return (len(text), len(text), "\n" + lines)
    return (newline + 1, newline + 1, lines)


def line_offsets(lines: List[str]) -> List[int]:
    """The text index where each of ``lines`` starts, and (last) the end of the text."""
    out = [0]
    for line in lines:
        out.append(out[-1] + len(line))
    return out


def block_end(lines: List[str], start: int, stop: int) -> int:
    """Index after the last content line of a block that starts at ``start`` and ends before
    ``stop`` (trailing blank and comment lines belong to what follows)."""
    end = stop
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def section_stop(root: source.Mapping, key: str, total: int) -> Optional[int]:
    """0-based line index where the top-level entry after ``key`` starts (or ``total``, the
    end); ``None`` when the document has no ``key``."""
    keys = [k for k, _ in root.entries]
    for i, k in enumerate(keys):
        if k.text == key:
            return keys[i + 1].mark.line - 1 if i + 1 < len(keys) else total
    return None


def _scalar_span(lines: List[str], node: source.Node) -> Tuple[int, int, int]:
    """(line index, start column, end column) of a one-line scalar, quotes included."""
    i, col = node.mark.line - 1, node.mark.column - 1
    text = lines[i]
    if text[col] in "\"'":
        end = text.index(text[col], col + 1) + 1
    else:
        m = re.match(r"[^#\n]*?(?=\s+#|\s*$)", text[col:])
        end = col + (m.end() if m else len(text) - col)
    return i, col, end


def replace_scalar(lines: List[str], node: source.Node, new_text: str) -> Edit:
    """The edit that replaces a one-line scalar of ``lines`` (quotes included) by ``new_text``
    in double quotes."""
    i, start, end = _scalar_span(lines, node)
    at = line_offsets(lines[:i])[-1]
    return (at + start, at + end, f'"{new_text}"')


def apply_edits(text: str, edits: List[Edit]) -> str:
    """Apply non-overlapping edits; at one position a replacement goes before an insertion."""
    ordered = sorted(edits, key=lambda e: (e[0], e[1]))
    for a, b in zip(ordered, ordered[1:]):
        if a[1] > b[0] and not (a[0] == a[1] == b[0]):
            raise ValueError("internal error: overlapping edits")  # pragma: no cover
    out = []
    last = 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], -e[1] if e[0] != e[1] else 0)):
        out.append(text[last:start])
        out.append(replacement)
        last = max(last, end)
    out.append(text[last:])
    return "".join(out)


def plain(node: Optional[source.Node]) -> object:
    """A node as comparable plain data (scalar text, ignoring positions)."""
    if isinstance(node, source.Scalar):
        return node.text
    if isinstance(node, source.Sequence):
        return [plain(i) for i in node]
    if isinstance(node, source.Mapping):
        return [(k.text, plain(v)) for k, v in node]
    return None


def rewrite_file(path: str, rewrite: Callable[[str], str], error: Callable[[str], Exception]) -> bool:
    """Replace the file's text with ``rewrite(text)`` atomically; ``True`` if it changed.
    An unreadable file raises ``error(message)``."""
    try:  # edited with \n line endings, written back in the file's own (a CRLF file stays CRLF, unmixed)
        text, back = read_keeping_newlines(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {path}: {exc}") from None
    new = rewrite(text)
    if new == text:
        return False
    atomic_write(path, back(new))
    return True
