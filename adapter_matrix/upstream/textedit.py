"""Editing a YAML file as text: where a composed value's text ends, inserting whole lines,
applying a set of non-overlapping edits, and comparing nodes as plain data.

The writers of upstream facts (:mod:`adapter_matrix.upstream.write` for torch,
:mod:`adapter_matrix.upstream.companion_write` for companions) replace only the text of the
values that change, so comments, blank lines and quoting elsewhere survive; they check the
result by parsing it again and comparing with :func:`plain`.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Tuple

import yaml

from ..files import atomic_write
from ..matrix import source

__all__ = ["Edit", "content_end", "insert_lines", "apply_edits", "plain", "rewrite_file"]

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
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {path}: {exc}") from None
    new = rewrite(text)
    if new == text:
        return False
    atomic_write(path, new)
    return True
