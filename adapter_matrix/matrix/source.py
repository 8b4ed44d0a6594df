"""Safe YAML loading that remembers where every node came from.

The matrix model never sees plain Python objects from YAML. It sees :class:`Node`
trees whose scalars keep their *source text*: ``torch: 2.10`` is the text ``"2.10"``,
not the float ``2.1`` that YAML 1.1 would make of it, and ``released: 2024-01-30``
is parsed as a date by the model, not by the YAML library. Each node carries a
:class:`~adapter_matrix.matrix.diagnostics.Mark` so that every error can point at its line
and column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple, Union

import yaml

from .. import limits
from .diagnostics import Diagnostic, Mark

try:  # libyaml keeps marks too and composes ~10x faster than the pure-Python loader
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader  # type: ignore[assignment, misc]  # the pure-Python twin of CSafeLoader

__all__ = ["Node", "Scalar", "Mapping", "Sequence", "parse", "YAML_NULL", "YAML_BOOL"]

YAML_NULL = "tag:yaml.org,2002:null"
YAML_BOOL = "tag:yaml.org,2002:bool"
YAML_INT = "tag:yaml.org,2002:int"
_MERGE = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class Scalar:
    """A scalar exactly as written. ``tag`` is YAML's implicit resolution (int, bool, ...)."""

    text: str
    tag: str
    mark: Mark
    quoted: bool = False

    @property
    def is_null(self) -> bool:
        return self.tag == YAML_NULL and not self.quoted

    def describe(self) -> str:
        return "null" if self.is_null else repr(self.text)


@dataclass(frozen=True)
class Mapping:
    """A mapping with scalar keys, in source order."""

    entries: Tuple[Tuple[Scalar, Node], ...]
    mark: Mark

    def keys(self) -> List[str]:
        return [k.text for k, _ in self.entries]

    def get(self, key: str) -> Optional[Node]:
        for k, v in self.entries:
            if k.text == key:
                return v
        return None

    def key_mark(self, key: str) -> Mark:
        for k, _ in self.entries:
            if k.text == key:
                return k.mark
        return self.mark

    def __iter__(self) -> Iterator[Tuple[Scalar, Node]]:
        return iter(self.entries)

    def describe(self) -> str:
        return "a mapping"


@dataclass(frozen=True)
class Sequence:
    """A sequence, in source order."""

    items: Tuple[Node, ...]
    mark: Mark

    def __iter__(self) -> Iterator[Node]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def describe(self) -> str:
        return "a list"


Node = Union[Scalar, Mapping, Sequence]


def _mark(filename: str, ymark: Optional[yaml.Mark]) -> Mark:
    if ymark is None:
        return Mark(filename, 1, 1)
    return Mark(filename, ymark.line + 1, ymark.column + 1)


# How many nodes aliases may add by repeating their anchors. Ten levels of ten aliases
# each (a "billion laughs") would otherwise expand to 10**10 nodes; real files repeat a
# few small anchors.


class _Converter:
    """Turns PyYAML's composed node graph into :data:`Node` trees, collecting problems."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.problems: List[Diagnostic] = []
        self._active: Dict[int, bool] = {}
        # Each composed node is converted once; an alias shares the (immutable) result.
        self._done: Dict[int, Tuple[Node, int]] = {}
        self._repeated = 0

    def convert(self, ynode: yaml.Node) -> Node:
        done = self._done.get(id(ynode))
        if done is not None:  # an alias of a node converted before
            node, size = done
            self._repeated += size
            if self._repeated <= limits.MAX_ALIAS_NODES:
                return node
            if self._repeated - size <= limits.MAX_ALIAS_NODES:  # report the first alias past the limit only
                self.problems.append(
                    Diagnostic(
                        node.mark,
                        f"YAML aliases repeat more than {limits.MAX_ALIAS_NODES} nodes",
                        "write the repeated parts out, or alias smaller pieces",
                    )
                )
            return Scalar("", YAML_NULL, node.mark)
        node = self._convert(ynode)
        self._done[id(ynode)] = (node, self._size(ynode))
        return node

    def _size(self, ynode: yaml.Node) -> int:
        if isinstance(ynode, yaml.ScalarNode):
            return 1
        children = ynode.value if isinstance(ynode, yaml.SequenceNode) else [n for pair in ynode.value for n in pair]
        return 1 + sum(self._done[id(c)][1] if id(c) in self._done else 1 for c in children)

    def _convert(self, ynode: yaml.Node) -> Node:
        mark = _mark(self.filename, ynode.start_mark)
        if isinstance(ynode, yaml.ScalarNode):
            return Scalar(str(ynode.value), ynode.tag, mark, quoted=ynode.style in ("'", '"'))
        if id(ynode) in self._active:  # `&a [*a]`: an alias inside its own anchor
            self.problems.append(
                Diagnostic(mark, "recursive YAML alias", "an anchor cannot contain an alias to itself")
            )
            return Scalar("", YAML_NULL, mark)
        self._active[id(ynode)] = True
        try:
            if isinstance(ynode, yaml.SequenceNode):
                return Sequence(tuple(self.convert(item) for item in ynode.value), mark)
            return self._mapping(ynode, mark)
        finally:
            del self._active[id(ynode)]

    def _mapping(self, ynode: yaml.Node, mark: Mark) -> Mapping:
        entries: List[Tuple[Scalar, Node]] = []
        merged: List[Tuple[Scalar, Node]] = []
        seen: Dict[str, Mark] = {}
        for ykey, yvalue in ynode.value:
            key_mark = _mark(self.filename, ykey.start_mark)
            if ykey.tag == _MERGE:  # `<<: *defaults`; explicit keys win over merged ones
                merged.extend(self._merge_entries(yvalue))
                continue
            if not isinstance(ykey, yaml.ScalarNode):
                self.problems.append(Diagnostic(key_mark, "a mapping key must be a plain word, not a list or mapping"))
                continue
            key = Scalar(str(ykey.value), ykey.tag, key_mark, quoted=ykey.style in ("'", '"'))
            if key.text in seen:
                self.problems.append(
                    Diagnostic(
                        key_mark, f"duplicate key {key.text!r}", f"it is already defined at line {seen[key.text].line}"
                    )
                )
                continue
            seen[key.text] = key_mark
            entries.append((key, self.convert(yvalue)))
        for key, value in merged:
            if key.text not in seen:
                seen[key.text] = key.mark
                entries.append((key, value))
        return Mapping(tuple(entries), mark)

    def _merge_entries(self, yvalue: yaml.Node) -> List[Tuple[Scalar, Node]]:
        sources = yvalue.value if isinstance(yvalue, yaml.SequenceNode) else [yvalue]
        out: List[Tuple[Scalar, Node]] = []
        for source in sources:
            node = self.convert(source)
            if isinstance(node, Mapping):
                out.extend(node.entries)
            else:
                self.problems.append(Diagnostic(node.mark, "`<<` merges mappings only"))
        return out


def parse(text: str, filename: str) -> Tuple[Optional[Node], List[Diagnostic]]:
    """Parse one YAML document. Returns the tree (``None`` if empty or unreadable) and problems."""
    try:
        ynode = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        where = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        return None, [
            Diagnostic(_mark(filename, where), f"invalid YAML: {what}", "fix the YAML syntax at this position")
        ]
    except yaml.YAMLError as exc:  # reader errors (control characters, bad encoding)
        position = getattr(exc, "position", None)
        line = text.count("\n", 0, position) + 1 if isinstance(position, int) else 1
        what = str(exc).split("\n", 1)[0]  # the reason; PyYAML's second line names "<unicode string>"
        return None, [Diagnostic(Mark(filename, line, 1), f"invalid YAML: {what}", "remove the unreadable characters")]
    except UnicodeEncodeError as exc:  # libyaml reads UTF-8: a lone surrogate cannot be encoded
        line = text.count("\n", 0, exc.start) + 1
        what = f"character {text[exc.start]!r} is not Unicode text (a lone surrogate)"
        return None, [Diagnostic(Mark(filename, line, 1), f"invalid YAML: {what}", "remove the unreadable characters")]
    except RecursionError:
        return None, [Diagnostic(Mark(filename, 1, 1), "invalid YAML: nested too deeply")]
    if ynode is None:
        return None, []
    converter = _Converter(filename)
    try:
        tree = converter.convert(ynode)
    except RecursionError:
        return None, [Diagnostic(_mark(filename, ynode.start_mark), "YAML nested too deeply")]
    return tree, converter.problems
