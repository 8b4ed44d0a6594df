"""Write the index's companion facts into a matrix file (``validate --upstream … --write``).

For each companion with ``torch:`` facts, every torch line the file describes gets the
releases built for it, each with the torch requirement its wheels declare, or ``none``:
a line whose facts changed has its value rewritten as one flow mapping
(``{0.16.0: 2.1.0, 0.16.1: 2.1.1}``, a bare version meaning ``==``), a described line
without an entry gets one after the entry of the nearest older line, in its style.
Releases that declare no torch requirement stay as written (the index cannot say what
they pair with); releases the index lacks are dropped. Everything else in the file
(comments, other entries, other sections) is left as it is, and the result is loaded
again and compared before the file is replaced atomically.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import yaml
from packaging.version import InvalidVersion, Version

from ..matrix import source
from ..matrix.companions import NONE
from ..matrix.diagnostics import MatrixError
from ..matrix.loader import load_text
from ..matrix.model import Companion, Matrix
from ..matrix.textedit import Edit, apply_edits, content_end, insert_lines, plain, rewrite_file
from .companion_index import CompanionIndex, wanted_lines, written_lines
from .index import UpstreamError
from .torch_section import Pair, pairs

__all__ = ["render_line", "rewrite_companions", "write_companions"]

Releases = Tuple[Tuple[Version, str], ...]


def render_line(releases: Releases) -> str:
    """A line's value as the file writes it: ``{0.16.0: 2.1.0, 0.29.1: ">=2.14.0"}`` or ``none``."""
    if not releases:
        return NONE
    items = (f"{version}: {text if text[:1] not in '<>=!~*' else _quoted(text)}" for version, text in releases)
    return "{" + ", ".join(items) + "}"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_companions(matrix_path: str, matrix: Matrix, found: Dict[str, CompanionIndex]) -> bool:
    """Rewrite the companion facts of ``matrix_path``; ``True`` if the file changed."""
    return rewrite_file(matrix_path, lambda text: rewrite_companions(text, matrix, found, matrix.path), UpstreamError)


def rewrite_companions(
    text: str, matrix: Matrix, found: Dict[str, CompanionIndex], filename: str = "compat.yaml"
) -> str:
    """``text`` with the companion facts of ``found`` (companions without an answer are kept)."""
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        raise UpstreamError(f"{filename}: cannot read the file to rewrite it") from None
    section = _child(root, "companions")
    edits: List[Edit] = []
    wanted: Dict[str, Dict[Version, Releases]] = {}
    for comp in matrix.companions:
        index = found.get(comp.name)
        facts = _child(_child(section, comp.name), "torch") if section is not None else None
        if index is None or facts is None or not isinstance(facts.value, yaml.MappingNode):
            continue
        wanted[comp.name] = lines = wanted_lines(matrix, comp, index)
        edits += _edit_companion(text, facts, comp, lines)
    result = apply_edits(text, edits)
    if result != text:
        _check(text, result, filename, wanted)
    return result


def _child(pair_or_node: Optional[object], key: str) -> Optional[Pair]:
    node = pair_or_node.value if isinstance(pair_or_node, Pair) else pair_or_node
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((p for p in pairs(node) if p.key.value == key and p.written_here), None)


def _minor(text: str) -> Optional[Version]:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _edit_companion(text: str, facts: Pair, comp: Companion, lines: Dict[Version, Releases]) -> List[Edit]:
    mapping = facts.value
    entries = {m: p for p in pairs(mapping) for m in [_minor(p.key.value)] if m is not None and p.written_here}
    edits: List[Edit] = []
    missing: List[Version] = []
    for minor, releases in lines.items():
        pair = entries.get(minor)
        if pair is None:
            missing.append(minor)
        elif written_lines(comp.line(minor)) != releases:
            # from the end of the key (its colon, comments and old value go) to the value's end
            edits.append((pair.key.end_mark.index, content_end(pair.value), ": " + render_line(releases)))
    if missing and not entries:  # `torch: {}`: write the entries as a block under the key
        indent = " " * (facts.key.start_mark.column + 2)
        block = "".join(f'\n{indent}"{minor}": {render_line(lines[minor])}' for minor in missing)
        return edits + [(facts.key.end_mark.index, content_end(mapping), ":" + block)]
    for minor in missing:
        assert isinstance(mapping, yaml.MappingNode)  # entries came from its pairs, so it is a mapping
        edits.append(_insert(text, mapping, entries, minor, render_line(lines[minor])))
    return edits


def _insert(text: str, mapping: yaml.MappingNode, entries: Dict[Version, Pair], minor: Version, value: str) -> Edit:
    """A new entry after the entry of the nearest older line (else before the first), in
    the style of its neighbour."""
    older = [m for m in entries if m < minor]
    neighbour = entries[max(older)] if older else (entries[min(entries)] if entries else None)
    quote = neighbour.key.style if neighbour is not None and neighbour.key.style in ("'", '"') else '"'
    key = f"{quote}{minor}{quote}"
    assert neighbour is not None  # an empty mapping is written as a whole block instead
    if mapping.flow_style:
        if older:
            at = content_end(neighbour.value)
            return (at, at, f", {key}: {value}")
        at = neighbour.key.start_mark.index
        return (at, at, f"{key}: {value}, ")
    indent = " " * neighbour.key.start_mark.column
    if older:
        return insert_lines(text, content_end(neighbour.value), f"{indent}{key}: {value}\n")
    start = text.rfind("\n", 0, neighbour.key.start_mark.index) + 1
    return (start, start, f"{indent}{key}: {value}\n")


def _check(old: str, new: str, filename: str, wanted: Dict[str, Dict[Version, Releases]]) -> None:
    """Prove the rewrite: everything but the rewritten companion facts reads as before,
    and each companion's lines read back as exactly the facts written."""
    before, _ = source.parse(old, filename)
    after, problems = source.parse(new, filename)
    if problems or not isinstance(before, source.Mapping) or not isinstance(after, source.Mapping):
        raise UpstreamError(f"{filename}: the rewritten companion facts do not parse; edit the file by hand")

    def outside(root: source.Mapping) -> object:
        data = [(k.text, plain(v)) for k, v in root if k.text != "companions"]
        comps = root.get("companions")
        if isinstance(comps, source.Mapping):
            for name, body in comps:
                if isinstance(body, source.Mapping) and name.text in wanted:
                    data.append((name.text, [(k.text, plain(v)) for k, v in body if k.text != "torch"]))
                else:
                    data.append((name.text, plain(body)))
        return data

    if outside(before) != outside(after):
        raise UpstreamError(
            f"{filename}: updating the companion facts would change other values (a shared YAML anchor); edit the file by hand"
        )
    try:
        matrix = load_text(new, filename, check_modules=False).matrix
    except MatrixError as exc:
        raise UpstreamError(
            f"{filename}: the rewritten companion facts do not load ({exc.diagnostics[0]}); edit the file by hand"
        ) from None
    for name, lines in wanted.items():
        comp = matrix.companion(name)
        for minor, releases in lines.items():
            if comp is None or written_lines(comp.line(minor)) != releases:
                raise UpstreamError(
                    f"{filename}: could not write the {name} facts of torch {minor}; write them by hand: {render_line(releases)}"
                )
