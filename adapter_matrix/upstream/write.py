"""Write PyPI's torch facts into a matrix file (``validate --upstream … --write``).

:func:`write` brings the ``torch:`` section of a matrix file in line with an
:class:`~adapter_matrix.upstream.index.Upstream` index: every torch line PyPI knows gets its
``released`` date, ``patches`` and ``python`` list, and every line PyPI has that the
file lacks (newer than its oldest line) gets an entry. Lines PyPI does not know are
left alone.

The file is edited as text, never dumped from data. :mod:`adapter_matrix.upstream.torch_section`
gives where each value is written, and only the text of the values that change is
replaced: list items that stay keep their text and comments, new items are written in
their neighbours' quoting and layout (flow or block list), a value written as an alias
(``*name``) is replaced by the facts, a key that comes from a merge key (``<<``) is
written out explicitly, and a new entry goes after the entry of the nearest older
line, in that entry's style. So every other comment, blank line and quoting style
survives, and the file is replaced atomically.

Text edits cannot see what YAML anchors and merge keys share, so the result is parsed
again with :func:`adapter_matrix.matrix.source.parse` and checked before anything is written:
every section but ``torch:`` and every torch entry PyPI does not know must read as
before, and every line PyPI knows must read back as exactly its facts. Otherwise
:class:`~adapter_matrix.upstream.index.UpstreamError` says what to edit by hand, and the file
is left untouched.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

import yaml
from packaging.version import Version

from ..matrix import source
from ..matrix.model import Matrix, PythonVersion, TorchLine
from ..matrix.textedit import Edit, apply_edits, content_end, insert_lines, plain, rewrite_file
from .index import Upstream, UpstreamError, UpstreamLine, python_order, undescribed
from .torch_section import Pair, Section, entry_field, locate, pairs

__all__ = ["rewrite", "write"]

T = TypeVar("T")


@dataclass(frozen=True)
class _Facts:
    """The upstream facts of one torch line, as the file writes them (``install`` is kept,
    not checked, when a whole entry has to be written out)."""

    released: _dt.date
    patches: Tuple[Version, ...]
    python: Tuple[PythonVersion, ...]
    install: Optional[str] = field(default=None, compare=False)

    @classmethod
    def of(cls, known: UpstreamLine, install: Optional[str] = None) -> _Facts:
        assert known.released is not None
        return cls(known.released, tuple(p.version for p in known.patches), known.python, install)

    def differ(self, line: TorchLine) -> bool:
        return (self.released, set(self.patches), set(self.python)) != (
            line.released,
            set(line.patches),
            set(line.python),
        )


def write(matrix_path: str, matrix: Matrix, index: Upstream) -> bool:
    """Rewrite the torch facts of ``matrix_path`` from ``index``; ``True`` if the file changed."""
    return rewrite_file(matrix_path, lambda text: rewrite(text, matrix, index, matrix.path), UpstreamError)


def rewrite(text: str, matrix: Matrix, index: Upstream, filename: str = "compat.yaml") -> str:
    """``text`` with the torch facts of ``index``.

    A changed value is edited where it is written (list items that stay keep their text
    and comments); a value written as an alias (``*name``) is replaced by the facts; a
    line PyPI has but the file lacks is added after the entry of the nearest older line,
    in that entry's style. Lines PyPI does not know are left alone. Raises
    :class:`UpstreamError` if the result would not read back as exactly these facts
    (e.g. an anchor that other entries share).
    """
    section = locate(text, filename)
    if section is None:
        raise UpstreamError(f"{filename}: cannot find the torch: section to rewrite")
    upstream = index.lines()
    wanted: Dict[Version, _Facts] = {}
    edits: List[Edit] = []
    missing: Dict[Version, _Facts] = {}
    for line in matrix.torch:
        known = upstream.get(line.minor)
        if known is None or known.released is None:
            continue
        facts = wanted[line.minor] = _Facts.of(known, None if line.install == "pypi" else line.install)
        if not facts.differ(line):
            continue
        if line.minor in section.entries:
            edits += _edit_entry(section, section.entries[line.minor], line, facts)
        else:  # the entry comes from a merge key (`<<`): an explicit entry overrides it
            missing[line.minor] = facts
    for minor, known in undescribed(matrix, upstream).items():
        if known.released is not None:
            missing[minor] = wanted[minor] = _Facts.of(known)
    edits += _insert_entries(section, missing)
    result = apply_edits(text, edits)
    _check_rewrite(text, result, filename, wanted)
    return result


def _edit_entry(section: Section, entry: Pair, line: TorchLine, facts: _Facts) -> List[Edit]:
    if not entry.written_here:  # `"2.5": *other`
        return _replace_alias(section.text, entry, _Style.of(section, entry).inline(facts))
    text = section.text
    edits: List[Edit] = []
    if facts.released != line.released:
        edits += _edit_field(
            section, entry, "released", str(facts.released), lambda n: _replace_scalar(text, n, str(facts.released))
        )
    if set(facts.patches) != set(line.patches):
        edits += _edit_field(
            section,
            entry,
            "patches",
            _flow(facts.patches, ""),
            lambda n: _edit_sequence(text, n, Version, facts.patches, lambda v: v),
        )
    if set(facts.python) != set(line.python):
        edits += _edit_field(
            section,
            entry,
            "python",
            _flow(facts.python, '"'),
            lambda n: _edit_sequence(text, n, PythonVersion.parse, facts.python, python_order),
        )
    return edits


def _edit_field(
    section: Section, entry: Pair, name: str, inline: str, in_place: Callable[[yaml.Node], List[Edit]]
) -> List[Edit]:
    """Edit one value where it is written; an alias is replaced by ``inline``; a key that
    comes from a merge key (``<<``) is written out explicitly (explicit keys win)."""
    pair = entry_field(entry, name)
    if pair is not None:
        return in_place(pair.value) if pair.written_here else _replace_alias(section.text, pair, inline)
    node = entry.value
    if not isinstance(node, yaml.MappingNode) or not node.value:
        return []
    if node.flow_style:
        at = node.end_mark.index - 1  # before the closing brace
        return [(at, at, f", {name}: {inline}")]
    indent = " " * node.value[0][0].start_mark.column
    return [insert_lines(section.text, content_end(node), f"{indent}{name}: {inline}\n")]


_ALIAS = re.compile(r"[ \t]*:(?:\s|#[^\n]*)*(\*[^\s,\[\]{}]+)")
_PROPERTIES = re.compile(r"(?:[&!][^\s]*\s+)*")  # an anchor or tag written before a value


def _replace_alias(text: str, pair: Pair, value: str) -> List[Edit]:
    token = _ALIAS.match(text, pair.key.end_mark.index)
    return [(token.start(1), token.end(1), value)] if token else []


def _scalar_text(value: str, style: Optional[str]) -> str:
    return f"{style}{value}{style}" if style in ("'", '"') else value


def _replace_scalar(text: str, node: yaml.Node, value: str) -> List[Edit]:
    if not isinstance(node, yaml.ScalarNode):
        return []
    start = _PROPERTIES.match(text, node.start_mark.index).end()  # type: ignore[union-attr]
    return [(start, node.end_mark.index, _scalar_text(value, node.style))]


def _flow(values: Sequence[object], quote: str) -> str:
    return "[" + ", ".join(f"{quote}{v}{quote}" for v in values) + "]"


def _edit_sequence(
    text: str, node: yaml.Node, parse: Callable[[str], T], wanted: Sequence[T], order: Callable[[T], Any]
) -> List[Edit]:
    """Edits that turn a list of versions into ``wanted``: items that stay keep their text
    (and comments); new items are written like their neighbours, in ``order``."""
    items = list(node.value) if isinstance(node, yaml.SequenceNode) else []
    quote = next((i.style for i in items if isinstance(i, yaml.ScalarNode) and i.style in ("'", '"')), "")
    if not items or not all(_item_written_here(node, i) for i in items):
        start = _PROPERTIES.match(text, node.start_mark.index).end()  # type: ignore[union-attr]
        return [(start, content_end(node), _flow(wanted, quote))]
    values = [_parse_or_none(i.value, parse) for i in items]
    keep = [i for i, v in enumerate(values) if v is not None and v in wanted and v not in values[:i]]
    new = [w for w in wanted if w not in values]
    kept_values = [v for v in (values[i] for i in keep) if v is not None]  # keep holds parsed values only
    if isinstance(node, yaml.CollectionNode) and node.flow_style:
        return _edit_flow(text, items, kept_values, keep, new, order, quote)
    edits = _edit_block(text, items, kept_values, keep, new, order, quote)
    if edits is None:  # not one `- item` per line: write the list as a flow list
        return [(node.start_mark.index, content_end(node), _flow(wanted, quote))]
    return edits


def _parse_or_none(text: str, parse: Callable[[str], T]) -> Optional[T]:
    try:
        return parse(text)
    except ValueError:
        return None


def _item_written_here(sequence: yaml.Node, item: yaml.Node) -> bool:
    return isinstance(item, yaml.ScalarNode) and sequence.start_mark.index <= item.start_mark.index < content_end(
        sequence
    )


def _placement(kept_values: Sequence[T], new: Sequence[T], order: Callable[[T], Any]) -> Dict[int, List[T]]:
    """Which kept item each new value goes before (``len(kept)``: after the last one)."""
    out: Dict[int, List[T]] = {}
    for value in sorted(new, key=order):
        slot = next((k for k, v in enumerate(kept_values) if order(v) > order(value)), len(kept_values))
        out.setdefault(slot, []).append(value)
    return out


def _edit_flow(
    text: str,
    items: List[yaml.Node],
    kept_values: List[T],
    keep: List[int],
    new: List[T],
    order: Callable[[T], Any],
    quote: str,
) -> List[Edit]:
    sep = text[items[0].end_mark.index : items[1].start_mark.index] if len(items) > 1 else ", "
    sep = sep if "\n" not in sep and "#" not in sep else ", "
    render = [f"{quote}{v}{quote}" for v in new]
    by_value = dict(zip(new, render))
    edits: List[Edit] = []
    dropped = [i for i in range(len(items)) if i not in keep]
    if not keep:  # every item goes: one replacement keeps the brackets
        return [(items[0].start_mark.index, items[-1].end_mark.index, sep.join(render))]
    for first, last in _runs(dropped):
        if last + 1 < len(items):
            edits.append((items[first].start_mark.index, items[last + 1].start_mark.index, ""))
        else:
            edits.append((items[first - 1].end_mark.index, items[last].end_mark.index, ""))
    for slot, values in _placement(kept_values, new, order).items():
        words = [by_value[v] for v in values]
        if slot < len(keep):
            edits.append(
                (
                    items[keep[slot]].start_mark.index,
                    items[keep[slot]].start_mark.index,
                    "".join(w + sep for w in words),
                )
            )
        else:
            end = items[keep[-1]].end_mark.index
            edits.append((end, end, "".join(sep + w for w in words)))
    return edits


_BLOCK_ITEM = re.compile(r"[ \t]*-[ \t]+")
_LINE_TAIL = re.compile(r"[ \t]*(#[^\n]*)?(\n|$)")


def _edit_block(
    text: str,
    items: List[yaml.Node],
    kept_values: List[T],
    keep: List[int],
    new: List[T],
    order: Callable[[T], Any],
    quote: str,
) -> Optional[List[Edit]]:
    """Item edits in a block list (one ``- item`` per line); ``None`` for another layout."""
    lines = []
    for item in items:
        start = text.rfind("\n", 0, item.start_mark.index) + 1
        tail = _LINE_TAIL.match(text, item.end_mark.index)
        if not _BLOCK_ITEM.fullmatch(text, start, item.start_mark.index) or tail is None:
            return None
        lines.append((start, tail.end(), text[start : item.start_mark.index], tail.group(1)))
    edits: List[Edit] = []
    for i, (start, end, prefix, comment) in enumerate(lines):
        if i not in keep:  # the item goes; a comment on its line stays, on a line of its own
            indent = prefix[: prefix.index("-")]
            edits.append((start, end, f"{indent}{comment}\n" if comment else ""))
    for slot, values in _placement(kept_values, new, order).items():
        words = [f"{quote}{v}{quote}" for v in values]
        if slot < len(keep):
            start, _end, prefix, _c = lines[keep[slot]]
            edits.append((start, start, "".join(f"{prefix}{w}\n" for w in words)))
        else:
            _start, end, prefix, _c = lines[keep[-1]] if keep else lines[0]
            if not keep:
                end = lines[0][0]
            lead = "" if end == 0 or text[end - 1] == "\n" else "\n"
            edits.append((end, end, lead + "".join(f"{prefix}{w}\n" for w in words)))
    return edits


def _runs(indexes: List[int]) -> List[Tuple[int, int]]:
    """Consecutive runs, e.g. [1, 2, 4] -> [(1, 2), (4, 4)]."""
    runs: List[Tuple[int, int]] = []
    for i in indexes:
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _insert_entries(section: Section, entries: Dict[Version, _Facts]) -> List[Edit]:
    """Each new entry goes right after the entry of the nearest older line, in its style."""
    edits: List[Edit] = []
    for minor, facts in sorted(entries.items()):
        before = max((m for m in section.entries if m < minor), default=None)
        pred = section.entries[before] if before is not None else next(iter(section.entries.values()), None)
        if pred is None:  # an empty torch mapping: nothing to copy the style from
            continue
        style = _Style.of(section, pred)
        end = content_end(pred.value) if pred.written_here else _replace_alias_end(section.text, pred)
        if isinstance(section.node, yaml.CollectionNode) and section.node.flow_style:
            edits.append((end, end, f", {style.key(minor)}: {style.inline(facts)}"))
        else:
            edits.append(insert_lines(section.text, end, style.block(minor, facts)))
    return edits


def _replace_alias_end(text: str, pair: Pair) -> int:
    token = _ALIAS.match(text, pair.key.end_mark.index)
    return token.end(1) if token else pair.key.end_mark.index


@dataclass(frozen=True)
class _Style:
    """How the file writes a torch entry, copied from an existing one for new entries."""

    indent: str  # of the entry's key
    field_indent: Optional[str]  # of its keys; None for a flow mapping entry
    key_quote: str
    python_quote: str
    patch_quote: str
    list_prefix: Optional[str]  # "      - " for block lists; None for flow lists

    @classmethod
    def of(cls, section: Section, entry: Pair) -> _Style:
        fields = {p.key.value: p for p in pairs(entry.value)} if entry.written_here else {}
        block_entry = isinstance(entry.value, yaml.MappingNode) and not entry.value.flow_style and fields
        first = next(iter(fields.values()), None)
        prefix = None
        python = fields.get("python")
        if (
            python is not None
            and isinstance(python.value, yaml.SequenceNode)
            and not python.value.flow_style
            and python.value.value
        ):
            item = python.value.value[0]
            start = section.text.rfind("\n", 0, item.start_mark.index) + 1
            prefix = section.text[start : item.start_mark.index]
        return cls(
            indent=" " * entry.key.start_mark.column,
            field_indent=" " * first.key.start_mark.column if block_entry and first else None,
            key_quote=_quote_of(entry.key),
            python_quote=_list_quote(fields.get("python"), '"'),
            patch_quote=_list_quote(fields.get("patches"), ""),
            list_prefix=prefix if block_entry and prefix and _BLOCK_ITEM.fullmatch(prefix) else None,
        )

    def key(self, minor: Version) -> str:
        return _scalar_text(str(minor), self.key_quote)

    def inline(self, facts: _Facts) -> str:
        install = f", install: {facts.install}" if facts.install else ""
        return (
            f"{{released: {facts.released}, patches: {_flow(facts.patches, self.patch_quote)}, "
            f"python: {_flow(facts.python, self.python_quote)}{install}}}"
        )

    def block(self, minor: Version, facts: _Facts) -> str:
        if self.field_indent is None:
            return f"{self.indent}{self.key(minor)}: {self.inline(facts)}\n"
        out = [f"{self.indent}{self.key(minor)}:", f"{self.field_indent}released: {facts.released}"]
        for name, values, quote in (
            ("patches", facts.patches, self.patch_quote),
            ("python", facts.python, self.python_quote),
        ):
            if self.list_prefix is None:
                out.append(f"{self.field_indent}{name}: {_flow(values, quote)}")
            else:
                out.append(f"{self.field_indent}{name}:")
                out += [f"{self.list_prefix}{quote}{v}{quote}" for v in values]
        if facts.install:
            out.append(f"{self.field_indent}install: {facts.install}")
        return "\n".join(out) + "\n"


def _quote_of(node: yaml.Node) -> str:
    return node.style if isinstance(node, yaml.ScalarNode) and node.style in ("'", '"') else ""


def _list_quote(pair: Optional[Pair], default: str) -> str:
    if pair is None or not isinstance(pair.value, yaml.SequenceNode) or not pair.value.value:
        return default
    return _quote_of(pair.value.value[0])


def _check_rewrite(old: str, new: str, filename: str, wanted: Dict[Version, _Facts]) -> None:
    """Prove the rewrite: every other section reads as before and each line has its facts.

    Anchors and merge keys can make one written value serve several places; if an edit
    reached further than its line (or could not reach a line), refuse rather than guess.
    """
    before, _ = source.parse(old, filename)
    after, problems = source.parse(new, filename)
    if problems or not isinstance(after, source.Mapping) or not isinstance(before, source.Mapping):
        raise UpstreamError(f"{filename}: the rewritten torch facts do not parse; edit the file by hand")
    for key in set(before.keys()) | set(after.keys()):
        if key != "torch" and plain(before.get(key)) != plain(after.get(key)):
            raise UpstreamError(
                f"{filename}: updating the torch facts would change {key!r} (a shared YAML anchor); edit the file by hand"
            )
    old_torch, new_torch = before.get("torch"), after.get("torch")
    if not isinstance(new_torch, source.Mapping) or not isinstance(old_torch, source.Mapping):
        raise UpstreamError(f"{filename}: the torch section is not a mapping")
    written = {_parse_or_none(key.text, Version) for key, _ in new_torch}
    lost = sorted(set(wanted) - written)
    if lost:
        raise UpstreamError(f"{filename}: could not add torch {lost[0]} to the torch section; add it by hand")
    for key_node, value in new_torch:
        minor = _parse_or_none(key_node.text, Version)
        if minor is None:
            continue
        facts = wanted.get(minor)
        if facts is None:
            if plain(value) != plain(old_torch.get(key_node.text)):
                raise UpstreamError(
                    f"{filename}: updating the torch facts would change torch {minor} (a shared YAML anchor); edit it by hand"
                )
        elif _facts_of(value) != facts:
            python = _flow(facts.python, '"')
            raise UpstreamError(
                f"{filename}: cannot update torch {minor} in place (its values come from a YAML anchor or merge key) "
                f"\u2014 write released: {facts.released}, patches: {_flow(facts.patches, '')}, python: {python}"
            )


def _facts_of(node: source.Node) -> Optional[_Facts]:
    if not isinstance(node, source.Mapping):
        return None
    released, patches, python = node.get("released"), node.get("patches"), node.get("python")
    if (
        not isinstance(released, source.Scalar)
        or not isinstance(patches, source.Sequence)
        or not isinstance(python, source.Sequence)
    ):
        return None
    try:
        return _Facts(
            _dt.date.fromisoformat(released.text),
            tuple(sorted({Version(p.text) for p in patches if isinstance(p, source.Scalar)})),
            tuple(
                sorted({PythonVersion.parse(p.text) for p in python if isinstance(p, source.Scalar)}, key=python_order)
            ),
        )
    except ValueError:
        return None
