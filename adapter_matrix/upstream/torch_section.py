"""Where a matrix file writes its torch facts: the ``torch:`` section as PyYAML nodes.

:func:`locate` finds the ``torch:`` section of a matrix file's text and maps each torch
line (the ``Version`` its key reads as) to its :class:`Pair`: the key node, the value
node and the text range the value may occupy. :mod:`adapter_matrix.upstream.index` uses it to
point diagnostics at the value to change, :mod:`adapter_matrix.upstream.write` to edit
values where they are written.

Keys given by a merge key (``<<``) are not listed. A pair whose value is an alias
(``*name``) says so (:attr:`Pair.written_here` is ``False``): its value node is written
elsewhere, and only its key and the alias belong to this section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import yaml
from packaging.version import InvalidVersion, Version

from ..matrix.diagnostics import Mark
from ..matrix.model import Matrix

__all__ = ["Pair", "Section", "entry_field", "locate", "pairs", "read_section"]


@dataclass(frozen=True)
class Pair:
    """One key of a mapping, with its value and the text range the value may occupy."""

    key: yaml.ScalarNode
    value: yaml.Node
    site_end: int  # where the next key starts (or the mapping ends)

    @property
    def written_here(self) -> bool:
        """``False`` when the value is an alias (``*name``): its node is written elsewhere."""
        return self.key.end_mark.index <= self.value.start_mark.index < self.site_end


def pairs(node: yaml.Node) -> List[Pair]:
    if not isinstance(node, yaml.MappingNode):
        return []
    keys = [k for k, _ in node.value]
    out = []
    for i, (key, value) in enumerate(node.value):
        end = keys[i + 1].start_mark.index if i + 1 < len(keys) else node.end_mark.index
        if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
            out.append(Pair(key, value, end))
    return out


@dataclass(frozen=True)
class Section:
    """The ``torch:`` section of a composed document: its key, mapping and explicit entries."""

    text: str
    filename: str
    key: yaml.ScalarNode
    node: yaml.Node
    entries: Dict[Version, Pair]

    def mark(self, node: yaml.Node) -> Mark:
        return Mark(self.filename, node.start_mark.line + 1, node.start_mark.column + 1)

    def field(self, minor: Version, name: str) -> Optional[Pair]:
        entry = self.entries.get(minor)
        return entry_field(entry, name) if entry is not None else None


def entry_field(entry: Pair, name: str) -> Optional[Pair]:
    """The explicit key ``name`` of a torch entry written in place (not via an alias or ``<<``)."""
    if not entry.written_here:
        return None
    for pair in pairs(entry.value):
        if pair.key.value == name:
            return pair
    return None


def locate(text: str, filename: str) -> Optional[Section]:
    """Locate the torch section; ``None`` when the text does not compose as YAML.

    This reads PyYAML's composed nodes rather than :func:`adapter_matrix.matrix.source.parse`
    because a rewrite needs where each value *ends* and whether it is an alias.
    """
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError):
        return None
    if root is None:  # an empty document
        return None
    for pair in pairs(root):
        if pair.key.value == "torch" and pair.written_here and isinstance(pair.value, yaml.MappingNode):
            entries: Dict[Version, Pair] = {}
            for entry in pairs(pair.value):
                try:
                    entries.setdefault(Version(entry.key.value), entry)
                except InvalidVersion:
                    continue
            return Section(text, filename, pair.key, pair.value, entries)
    return None


def read_section(matrix: Matrix) -> Optional[Section]:
    try:
        with open(matrix.path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    return locate(text, matrix.path)
