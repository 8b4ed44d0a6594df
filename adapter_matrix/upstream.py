"""Upstream facts about torch, read from PyPI, checked against the matrix and written back.

``validate --upstream pypi|FILE`` asks PyPI's Simple JSON API (PEP 691) for torch's file
list, or reads an answer recorded earlier, and turns it into an :class:`Upstream` index:
for every torch release, the CPython versions it has **Linux x86_64 wheels** for (read
from the wheel filename tags; ``requires-python`` is not evidence: torch 2.5 declares
``>=3.8`` and has no cp38 wheel) and its upload date.

:func:`verify` compares the ``torch:`` section with the index. A torch line's Python
claims are checked against the **newest patch** of the line on PyPI, because that is
what a user gets from ``pip install 'torch>=2.12,<2.13'`` (the fix ``check`` prints) and
what CI installs once the line lists it. Errors are false facts (a Python without a
wheel, a patch or line PyPI does not have, a wrong release date); warnings are facts
the file is missing (a newer or skipped torch line, an unlisted patch, a Python that has
a wheel but is not listed) and older patches lacking a wheel the newest one has.

:func:`write` rewrites those facts in place: only the text of the values that change
(plus new entries appended after their predecessor line), so every comment, blank line
and quoting style survives, and the file is replaced atomically.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, TypeVar

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from . import __version__, source
from .diagnostics import Diagnostic, Mark
from .markers import atomic_write
from .model import Matrix, PythonVersion, TorchLine

__all__ = [
    "ACCEPT",
    "PYPI_TORCH",
    "Patch",
    "Upstream",
    "UpstreamError",
    "UpstreamLine",
    "parse_index",
    "python_order",
    "read_upstream",
    "rewrite",
    "verify",
    "write",
]

PYPI_TORCH = "https://pypi.org/simple/torch/"
ACCEPT = "application/vnd.pypi.simple.v1+json"  # PEP 691; without it PyPI answers HTML
TIMEOUT = 30.0

# Every manylinux flavour torch has used on x86_64: manylinux1 (<= 2.6.0), manylinux2014,
# manylinux_2_17, manylinux_2_28 (>= 2.7.0). musllinux is not what CI or users run.
_LINUX_X86_64 = re.compile(r"^manylinux[0-9a-z_]*_x86_64$")
_CPYTHON = re.compile(r"^cp(\d)(\d+)$")

T = TypeVar("T")


class UpstreamError(ValueError):
    """The upstream answer cannot be read or used; the message says what and how to fix it."""


def python_order(python: PythonVersion) -> Tuple[bool, Version]:
    """How lists of Pythons are written: ``3.10 … 3.14`` first, then ``3.13t, 3.14t``."""
    return (python.free_threaded, python.version)


# -- the index ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Patch:
    """One torch release on PyPI (yanked files left out).

    ``python`` holds the CPython builds with a Linux x86_64 wheel; ``uploaded`` is the
    day (UTC) its first file was uploaded; ``requires_python`` is quoted in messages only.
    """

    version: Version
    python: FrozenSet[PythonVersion]
    uploaded: Optional[_dt.date]
    requires_python: Optional[str]


@dataclass(frozen=True)
class UpstreamLine:
    """A torch minor line on PyPI: its releases with Linux x86_64 wheels, oldest first."""

    minor: Version
    patches: Tuple[Patch, ...]
    released: Optional[_dt.date]

    @property
    def newest(self) -> Patch:
        return self.patches[-1]

    @property
    def python(self) -> Tuple[PythonVersion, ...]:
        """The Pythons of the newest patch, the one ``pip install`` picks for the line."""
        return tuple(sorted(self.newest.python, key=python_order))

    def patch(self, version: Version) -> Optional[Patch]:
        for p in self.patches:
            if p.version == version:
                return p
        return None


@dataclass(frozen=True)
class Upstream:
    """What PyPI says about torch: every final release, and which were yanked entirely."""

    source: str  # "pypi" or the recorded file, as the user gave it
    patches: Tuple[Patch, ...]
    yanked: FrozenSet[Version]

    def lines(self) -> Dict[Version, UpstreamLine]:
        """Every minor line that has at least one Linux x86_64 CPython wheel, oldest first.

        A line's release date is the upload date of its ``X.Y.0`` (of its first release
        if ``X.Y.0`` is not on PyPI).
        """
        grouped: Dict[Version, List[Patch]] = {}
        for patch in self.patches:
            grouped.setdefault(Version(f"{patch.version.major}.{patch.version.minor}"), []).append(patch)
        out: Dict[Version, UpstreamLine] = {}
        for minor in sorted(grouped):
            every = sorted(grouped[minor], key=lambda p: p.version)
            linux = tuple(p for p in every if p.python)
            if linux:
                out[minor] = UpstreamLine(minor, linux, every[0].uploaded)
        return out


def read_upstream(source_name: str, *, timeout: float = TIMEOUT) -> Upstream:
    """Read torch's file list: ``"pypi"`` asks PyPI, anything else is a recorded answer.

    Raises :class:`UpstreamError` for a network failure, an unreadable file or an answer
    that is not PEP 691 JSON about torch.
    """
    if source_name == "pypi":
        raw = _fetch(PYPI_TORCH, timeout)
        origin = PYPI_TORCH
    else:
        try:
            with open(source_name, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise UpstreamError(
                f"cannot read {source_name}: {exc.strerror} \u2014 pass 'pypi' or a recorded answer of {PYPI_TORCH}"
            ) from None
        origin = source_name
    try:
        document = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise UpstreamError(f"{origin} is not a PEP 691 JSON answer ({exc}) \u2014 record it with `Accept: {ACCEPT}`") from None
    return parse_index(document, source_name, origin)


def _fetch(url: str, timeout: float) -> bytes:
    """GET ``url`` as PEP 691 JSON. The one place that touches the network (tests replace it)."""
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": f"adapter-matrix/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        reason = f"HTTP {exc.code} {exc.reason}"
    except urllib.error.URLError as exc:
        reason = str(exc.reason)
    except OSError as exc:  # timeouts and resets while reading
        reason = str(exc) or type(exc).__name__
    raise UpstreamError(f"cannot read {url}: {reason} \u2014 check the network, or pass a recorded answer: --upstream FILE")


def parse_index(document: object, source_name: str, origin: str = "") -> Upstream:
    """Build the index from a decoded PEP 691 answer (``origin`` names it in messages)."""
    origin = origin or source_name

    def bad(what: str) -> UpstreamError:
        return UpstreamError(f"{origin}: {what} \u2014 expected PyPI's PEP 691 answer for {PYPI_TORCH}")

    if not isinstance(document, dict):
        raise bad("the answer is not a JSON object")
    meta = document.get("meta")
    api = meta.get("api-version") if isinstance(meta, dict) else None
    if not isinstance(api, str) or api.split(".")[0] != "1":
        raise bad(f"unsupported api-version {api!r} (this tool reads version 1.x)")
    name = document.get("name")
    if not isinstance(name, str) or canonicalize_name(name) != "torch":
        raise bad(f"it lists the files of {name!r}, not torch")
    files = document.get("files")
    if not isinstance(files, list):
        raise bad("it has no list of files")
    pythons: Dict[Version, set] = {}
    uploaded: Dict[Version, Optional[_dt.date]] = {}
    requires: Dict[Version, Optional[str]] = {}
    seen: set = set()
    for number, entry in enumerate(files, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            raise bad(f"file #{number} has no filename")
        parsed = _parse_filename(entry["filename"])
        if parsed is None:
            continue
        version, tags = parsed
        seen.add(version)
        yanked = entry.get("yanked")
        if yanked is True or isinstance(yanked, str):  # PEP 691: false, true, or the reason
            continue
        pythons.setdefault(version, set()).update(p for p in map(_python_of, tags) if p is not None)
        day = _upload_day(entry.get("upload-time"), entry["filename"], bad)
        if day is not None and (uploaded.get(version) is None or day < uploaded[version]):  # type: ignore[operator]
            uploaded[version] = day
        else:
            uploaded.setdefault(version, None)
        rp = entry.get("requires-python")
        if isinstance(rp, str) and rp and not requires.get(version):
            requires[version] = rp
    patches = tuple(Patch(v, frozenset(pythons[v]), uploaded.get(v), requires.get(v)) for v in sorted(pythons))
    return Upstream(source_name, patches, frozenset(seen - set(pythons)))


def _parse_filename(filename: str) -> Optional[Tuple[Version, FrozenSet[Tag]]]:
    """(version, tags) of a final torch release's wheel or sdist; ``None`` for anything else."""
    try:
        if filename.endswith(".whl"):
            name, version, _build, tags = parse_wheel_filename(filename)  # build tags: torch-2.10.0-3-cp312-…
        elif filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
            tags = frozenset()
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    if name != "torch" or version.is_prerelease or version.local:
        return None
    return version, tags


def _python_of(tag: Tag) -> Optional[PythonVersion]:
    """The CPython build a Linux x86_64 wheel tag serves: ``cp313-cp313t`` is 3.13t."""
    match = _CPYTHON.match(tag.interpreter)
    if match is None or not _LINUX_X86_64.match(tag.platform):
        return None
    return PythonVersion(Version(f"{match[1]}.{match[2]}"), free_threaded=tag.abi == f"{tag.interpreter}t")


def _upload_day(value: object, filename: str, bad: Callable[[str], UpstreamError]) -> Optional[_dt.date]:
    if value is None:  # upload-time is optional (PEP 700)
        return None
    try:
        return _dt.date.fromisoformat(str(value)[:10])  # "2024-10-17T16:59:40.123Z", always UTC
    except ValueError:
        raise bad(f"{filename} has a malformed upload-time {value!r}") from None


# -- where the torch facts are written ----------------------------------------------------


@dataclass(frozen=True)
class _Pair:
    """One key of a mapping, with its value and the text range the value may occupy."""

    key: yaml.ScalarNode
    value: yaml.Node
    site_end: int  # where the next key starts (or the mapping ends)

    @property
    def written_here(self) -> bool:
        """``False`` when the value is an alias (``*name``): its node is written elsewhere."""
        return self.key.end_mark.index <= self.value.start_mark.index < self.site_end


def _pairs(node: yaml.Node) -> List[_Pair]:
    if not isinstance(node, yaml.MappingNode):
        return []
    keys = [k for k, _ in node.value]
    out = []
    for i, (key, value) in enumerate(node.value):
        end = keys[i + 1].start_mark.index if i + 1 < len(keys) else node.end_mark.index
        if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
            out.append(_Pair(key, value, end))
    return out


@dataclass(frozen=True)
class _Section:
    """The ``torch:`` section of a composed document: its key, mapping and explicit entries."""

    text: str
    filename: str
    key: yaml.ScalarNode
    node: yaml.Node
    entries: Dict[Version, _Pair]

    def mark(self, node: yaml.Node) -> Mark:
        return Mark(self.filename, node.start_mark.line + 1, node.start_mark.column + 1)

    def field(self, minor: Version, name: str) -> Optional[_Pair]:
        entry = self.entries.get(minor)
        return _field(entry, name) if entry is not None else None


def _field(entry: _Pair, name: str) -> Optional[_Pair]:
    """The explicit key ``name`` of a torch entry written in place (not via an alias or ``<<``)."""
    if not entry.written_here:
        return None
    for pair in _pairs(entry.value):
        if pair.key.value == name:
            return pair
    return None


def _section(text: str, filename: str) -> Optional[_Section]:
    """Locate the torch section; ``None`` when the text does not compose as YAML.

    This reads PyYAML's composed nodes rather than :func:`adapter_matrix.source.parse`
    because a rewrite needs where each value *ends* and whether it is an alias.
    """
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError):
        return None
    for pair in _pairs(root):
        if pair.key.value == "torch" and pair.written_here and isinstance(pair.value, yaml.MappingNode):
            entries: Dict[Version, _Pair] = {}
            for entry in _pairs(pair.value):
                try:
                    entries.setdefault(Version(entry.key.value), entry)
                except InvalidVersion:
                    continue
            return _Section(text, filename, pair.key, pair.value, entries)
    return None


def _read_section(matrix: Matrix) -> Optional[_Section]:
    try:
        with open(matrix.path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    return _section(text, matrix.path)


# -- verification -------------------------------------------------------------------------


def _names(pythons: Iterable[PythonVersion]) -> str:
    return ", ".join(str(p) for p in sorted(pythons, key=python_order)) or "none"


def _summary(line: UpstreamLine) -> str:
    when = f", released {line.released}" if line.released else ""
    return f"{', '.join(str(p.version) for p in line.patches)}{when}; Python {_names(line.python)}"


def verify(matrix: Matrix, index: Upstream) -> List[Diagnostic]:
    """Check every torch line of ``matrix`` against ``index``; diagnostics point at the value to change.

    Positions come from re-reading ``matrix.path`` (the model keeps the position of each
    torch entry only); if the file cannot be read they fall back to the entry's key.
    """
    section = _read_section(matrix)
    upstream = index.lines()
    fix = f"or run `adapter-matrix validate --upstream {index.source} --write`"
    out: List[Diagnostic] = []
    for line in matrix.torch:
        known = upstream.get(line.minor)
        if known is None:
            out.append(Diagnostic(line.mark, f"torch {line.minor} has no Linux x86_64 wheel on PyPI", "check the minor, or remove its entry"))
            continue
        out += _verify_line(line, known, index.yanked, _Places(section, line), fix)
    out += _missing_lines(matrix, upstream, section, fix)
    return out


@dataclass(frozen=True)
class _Places:
    """Positions of one torch entry's values, each falling back to the entry's key."""

    section: Optional[_Section]
    line: TorchLine

    def value(self, name: str) -> Mark:
        pair = self.section.field(self.line.minor, name) if self.section else None
        if pair is None:
            return self.line.mark
        return self.section.mark(pair.value if pair.written_here else pair.key)  # type: ignore[union-attr]

    def item(self, name: str, parse: Callable[[str], T], wanted: T) -> Mark:
        """The position of the list item of ``name`` that reads as ``wanted``."""
        pair = self.section.field(self.line.minor, name) if self.section else None
        if pair is not None and isinstance(pair.value, yaml.SequenceNode):
            for item in pair.value.value:
                if isinstance(item, yaml.ScalarNode) and _parses_as(item.value, parse, wanted):
                    return self.section.mark(item)  # type: ignore[union-attr]
        return self.value(name)


def _parses_as(text: str, parse: Callable[[str], T], wanted: T) -> bool:
    try:
        return parse(text) == wanted
    except ValueError:  # InvalidVersion is a ValueError
        return False


def _verify_line(line: TorchLine, known: UpstreamLine, yanked: FrozenSet[Version], at: _Places, fix: str) -> List[Diagnostic]:
    out: List[Diagnostic] = []
    newest = known.newest
    for python in line.python:
        if python in newest.python:
            continue
        notes = [f"newest patch {newest.version}"]
        older = [p for p in known.patches if python in p.python]
        if older:
            notes.append(f"{', '.join(str(p.version) for p in older)} had one, but pip installs {newest.version}")
        if not python.free_threaded and newest.requires_python and _admits(newest.requires_python, python):
            notes.append(f"its requires-python {newest.requires_python!r} is no evidence of a wheel")
        out.append(
            Diagnostic(
                at.item("python", PythonVersion.parse, python),
                f"torch {line.minor} has no {python.tag} wheel for Linux x86_64 on PyPI ({'; '.join(notes)})",
                f"remove \"{python}\" from its python list (PyPI: {_names(newest.python)}), {fix}",
            )
        )
    unlisted = sorted(set(newest.python) - set(line.python), key=python_order)
    if unlisted:
        out.append(
            Diagnostic(
                at.value("python"),
                f"torch {newest.version} also has Linux x86_64 wheels for Python {_names(unlisted)}, which its python list leaves out",
                f"add {', '.join(repr(str(p)) for p in unlisted)}, {fix}",
                "warning",
            )
        )
    for patch in line.patches:
        if known.patch(patch) is None:
            out.append(
                Diagnostic(
                    at.item("patches", Version, patch),
                    f"torch {patch} was yanked from PyPI" if patch in yanked else f"torch {patch} has no Linux x86_64 wheel on PyPI",
                    f"remove it from patches (PyPI: {', '.join(str(p.version) for p in known.patches)}), {fix}",
                )
            )
    for patch in known.patches:
        if patch.version not in line.patches:
            out.append(
                Diagnostic(
                    at.value("patches"),
                    f"torch {patch.version} is on PyPI but not in the patches of torch {line.minor}",
                    f"add {patch.version} (cells install the newest listed patch), {fix}",
                    "warning",
                )
            )
        lacking = sorted(set(newest.python) - set(patch.python), key=python_order)
        if lacking and patch is not newest:
            out.append(
                Diagnostic(
                    at.item("patches", Version, patch.version),
                    f"torch {patch.version} has no Linux x86_64 wheel for Python {_names(lacking)} ({newest.version} has)",
                    f"a release pinning torch {patch.version} cannot run there; claim {newest.version}",
                    "warning",
                )
            )
    if known.released is not None and known.released != line.released:
        out.append(
            Diagnostic(
                at.value("released"),
                f"torch {line.minor} was released on {known.released} (upload of {known.patches[0].version} on PyPI), not {line.released}",
                f"write released: {known.released}, {fix}",
            )
        )
    return out


def _admits(requires_python: str, python: PythonVersion) -> bool:
    try:
        return SpecifierSet(requires_python).contains(python.version)
    except InvalidSpecifier:
        return False


def _undescribed(matrix: Matrix, upstream: Dict[Version, UpstreamLine]) -> Dict[Version, UpstreamLine]:
    """Lines on PyPI that the file lacks, newer than its oldest line (older ones are out of scope)."""
    if not matrix.torch:
        return {}
    oldest = matrix.torch[0].minor
    return {minor: known for minor, known in upstream.items() if minor > oldest and matrix.torch_line(minor) is None}


def _missing_lines(matrix: Matrix, upstream: Dict[Version, UpstreamLine], section: Optional[_Section], fix: str) -> List[Diagnostic]:
    where = section.mark(section.key) if section else (matrix.torch[-1].mark if matrix.torch else Mark(matrix.path, 1, 1))
    return [
        Diagnostic(
            where,
            f"torch {minor} is on PyPI ({_summary(known)}) but this file does not describe it",
            f"add a \"{minor}\" entry under torch: and decide which releases support it, {fix}",
            "warning",
        )
        for minor, known in _undescribed(matrix, upstream).items()
    ]


# -- rewriting ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Facts:
    """The upstream facts of one torch line, as the file writes them (``install`` is kept,
    not checked, when a whole entry has to be written out)."""

    released: _dt.date
    patches: Tuple[Version, ...]
    python: Tuple[PythonVersion, ...]
    install: Optional[str] = field(default=None, compare=False)

    @classmethod
    def of(cls, known: UpstreamLine, install: Optional[str] = None) -> "_Facts":
        assert known.released is not None
        return cls(known.released, tuple(p.version for p in known.patches), known.python, install)

    def differ(self, line: TorchLine) -> bool:
        return (self.released, set(self.patches), set(self.python)) != (line.released, set(line.patches), set(line.python))


Edit = Tuple[int, int, str]  # replace text[start:end] with the string


def write(matrix_path: str, matrix: Matrix, index: Upstream) -> bool:
    """Rewrite the torch facts of ``matrix_path`` from ``index``; ``True`` if the file changed."""
    try:
        with open(matrix_path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UpstreamError(f"cannot read {matrix_path}: {exc}") from None
    new = rewrite(text, matrix, index, matrix.path)
    if new == text:
        return False
    atomic_write(matrix_path, new)
    return True


def rewrite(text: str, matrix: Matrix, index: Upstream, filename: str = "compat.yaml") -> str:
    """``text`` with the torch facts of ``index``.

    A changed value is edited where it is written (list items that stay keep their text
    and comments); a value written as an alias (``*name``) is replaced by the facts; a
    line PyPI has but the file lacks is added after the entry of the nearest older line,
    in that entry's style. Lines PyPI does not know are left alone. Raises
    :class:`UpstreamError` if the result would not read back as exactly these facts
    (e.g. an anchor that other entries share).
    """
    section = _section(text, filename)
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
    for minor, known in _undescribed(matrix, upstream).items():
        if known.released is not None:
            missing[minor] = wanted[minor] = _Facts.of(known)
    edits += _insert_entries(section, missing)
    result = _apply(text, edits)
    _check_rewrite(text, result, filename, wanted)
    return result


def _edit_entry(section: _Section, entry: _Pair, line: TorchLine, facts: _Facts) -> List[Edit]:
    if not entry.written_here:  # `"2.5": *other`
        return _replace_alias(section.text, entry, _Style.of(section, entry).inline(facts))
    text = section.text
    edits: List[Edit] = []
    if facts.released != line.released:
        edits += _edit_field(section, entry, "released", str(facts.released), lambda n: _replace_scalar(text, n, str(facts.released)))
    if set(facts.patches) != set(line.patches):
        edits += _edit_field(
            section, entry, "patches", _flow(facts.patches, ""), lambda n: _edit_sequence(text, n, Version, facts.patches, lambda v: v)
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


def _edit_field(section: _Section, entry: _Pair, name: str, inline: str, in_place: Callable[[yaml.Node], List[Edit]]) -> List[Edit]:
    """Edit one value where it is written; an alias is replaced by ``inline``; a key that
    comes from a merge key (``<<``) is written out explicitly (explicit keys win)."""
    pair = _field(entry, name)
    if pair is not None:
        return in_place(pair.value) if pair.written_here else _replace_alias(section.text, pair, inline)
    node = entry.value
    if not isinstance(node, yaml.MappingNode) or not node.value:
        return []
    if node.flow_style:
        at = node.end_mark.index - 1  # before the closing brace
        return [(at, at, f", {name}: {inline}")]
    indent = " " * node.value[0][0].start_mark.column
    return [_insert_lines(section.text, _content_end(node), f"{indent}{name}: {inline}\n")]


_ALIAS = re.compile(r"[ \t]*:(?:\s|#[^\n]*)*(\*[^\s,\[\]{}]+)")
_PROPERTIES = re.compile(r"(?:[&!][^\s]*\s+)*")  # an anchor or tag written before a value


def _replace_alias(text: str, pair: _Pair, value: str) -> List[Edit]:
    token = _ALIAS.match(text, pair.key.end_mark.index)
    return [(token.start(1), token.end(1), value)] if token else []


def _insert_lines(text: str, index: int, lines: str) -> Edit:
    """Insert whole ``lines`` after the line holding ``index`` (and after its comment)."""
    newline = text.find("\n", index)
    if newline < 0:
        return (len(text), len(text), "\n" + lines)
    return (newline + 1, newline + 1, lines)


def _scalar_text(value: str, style: Optional[str]) -> str:
    return f"{style}{value}{style}" if style in ("'", '"') else value


def _replace_scalar(text: str, node: yaml.Node, value: str) -> List[Edit]:
    if not isinstance(node, yaml.ScalarNode):
        return []
    start = _PROPERTIES.match(text, node.start_mark.index).end()  # type: ignore[union-attr]
    return [(start, node.end_mark.index, _scalar_text(value, node.style))]


def _flow(values: Sequence[object], quote: str) -> str:
    return "[" + ", ".join(f"{quote}{v}{quote}" for v in values) + "]"


def _edit_sequence(text: str, node: yaml.Node, parse: Callable[[str], T], wanted: Sequence[T], order: Callable[[T], object]) -> List[Edit]:
    """Edits that turn a list of versions into ``wanted``: items that stay keep their text
    (and comments); new items are written like their neighbours, in ``order``."""
    items = list(node.value) if isinstance(node, yaml.SequenceNode) else []
    quote = next((i.style for i in items if isinstance(i, yaml.ScalarNode) and i.style in ("'", '"')), "")
    if not items or not all(_item_written_here(node, i) for i in items):
        start = _PROPERTIES.match(text, node.start_mark.index).end()  # type: ignore[union-attr]
        return [(start, _content_end(node), _flow(wanted, quote))]
    values = [_parse_or_none(i.value, parse) for i in items]
    keep = [i for i, v in enumerate(values) if v is not None and v in wanted and v not in values[:i]]
    new = [w for w in wanted if w not in values]
    kept_values = [values[i] for i in keep]
    if node.flow_style:
        return _edit_flow(text, items, kept_values, keep, new, order, quote)
    edits = _edit_block(text, items, kept_values, keep, new, order, quote)
    if edits is None:  # not one `- item` per line: write the list as a flow list
        return [(node.start_mark.index, _content_end(node), _flow(wanted, quote))]
    return edits


def _parse_or_none(text: str, parse: Callable[[str], T]) -> Optional[T]:
    try:
        return parse(text)
    except ValueError:
        return None


def _item_written_here(sequence: yaml.Node, item: yaml.Node) -> bool:
    return isinstance(item, yaml.ScalarNode) and sequence.start_mark.index <= item.start_mark.index < _content_end(sequence)


def _placement(kept_values: Sequence[T], new: Sequence[T], order: Callable[[T], object]) -> Dict[int, List[T]]:
    """Which kept item each new value goes before (``len(kept)``: after the last one)."""
    out: Dict[int, List[T]] = {}
    for value in sorted(new, key=order):
        slot = next((k for k, v in enumerate(kept_values) if order(v) > order(value)), len(kept_values))  # type: ignore[operator]
        out.setdefault(slot, []).append(value)
    return out


def _edit_flow(text: str, items: List[yaml.Node], kept_values: List[T], keep: List[int], new: List[T], order: Callable[[T], object], quote: str) -> List[Edit]:
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
            edits.append((items[keep[slot]].start_mark.index, items[keep[slot]].start_mark.index, "".join(w + sep for w in words)))
        else:
            end = items[keep[-1]].end_mark.index
            edits.append((end, end, "".join(sep + w for w in words)))
    return edits


_BLOCK_ITEM = re.compile(r"[ \t]*-[ \t]+")
_LINE_TAIL = re.compile(r"[ \t]*(#[^\n]*)?(\n|$)")


def _edit_block(text: str, items: List[yaml.Node], kept_values: List[T], keep: List[int], new: List[T], order: Callable[[T], object], quote: str) -> Optional[List[Edit]]:
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


def _content_end(node: yaml.Node) -> int:
    """Where a value's own text ends: block collections end with their last child (PyYAML's
    end mark lies past the comments that follow them)."""
    if isinstance(node, yaml.ScalarNode) or node.flow_style:
        return node.end_mark.index
    children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else list(node.value)
    ends = [_content_end(c) for c in children if c.start_mark.index >= node.start_mark.index]
    return max(ends, default=node.end_mark.index)


def _insert_entries(section: _Section, entries: Dict[Version, _Facts]) -> List[Edit]:
    """Each new entry goes right after the entry of the nearest older line, in its style."""
    edits: List[Edit] = []
    for minor, facts in sorted(entries.items()):
        before = max((m for m in section.entries if m < minor), default=None)
        pred = section.entries[before] if before is not None else next(iter(section.entries.values()), None)
        if pred is None:  # an empty torch mapping: nothing to copy the style from
            continue
        style = _Style.of(section, pred)
        end = _content_end(pred.value) if pred.written_here else _replace_alias_end(section.text, pred)
        if section.node.flow_style:
            edits.append((end, end, f", {style.key(minor)}: {style.inline(facts)}"))
        else:
            edits.append(_insert_lines(section.text, end, style.block(minor, facts)))
    return edits


def _replace_alias_end(text: str, pair: _Pair) -> int:
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
    def of(cls, section: _Section, entry: _Pair) -> "_Style":
        fields = {p.key.value: p for p in _pairs(entry.value)} if entry.written_here else {}
        block_entry = isinstance(entry.value, yaml.MappingNode) and not entry.value.flow_style and fields
        first = next(iter(fields.values()), None)
        prefix = None
        python = fields.get("python")
        if python is not None and isinstance(python.value, yaml.SequenceNode) and not python.value.flow_style and python.value.value:
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
        for name, values, quote in (("patches", facts.patches, self.patch_quote), ("python", facts.python, self.python_quote)):
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


def _list_quote(pair: Optional[_Pair], default: str) -> str:
    if pair is None or not isinstance(pair.value, yaml.SequenceNode) or not pair.value.value:
        return default
    return _quote_of(pair.value.value[0])


def _apply(text: str, edits: List[Edit]) -> str:
    """Apply non-overlapping edits; at one position a replacement goes before an insertion."""
    ordered = sorted(edits, key=lambda e: (e[0], e[1]))
    for a, b in zip(ordered, ordered[1:]):
        if a[1] > b[0] and not (a[0] == a[1] == b[0]):
            raise UpstreamError("internal error: overlapping edits of the torch section")  # pragma: no cover
    out = []
    last = 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], -e[1] if e[0] != e[1] else 0)):
        out.append(text[last:start])
        out.append(replacement)
        last = max(last, end)
    out.append(text[last:])
    return "".join(out)


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
        if key != "torch" and _plain(before.get(key)) != _plain(after.get(key)):
            raise UpstreamError(f"{filename}: updating the torch facts would change {key!r} (a shared YAML anchor); edit the file by hand")
    old_torch, new_torch = before.get("torch"), after.get("torch")
    if not isinstance(new_torch, source.Mapping) or not isinstance(old_torch, source.Mapping):
        raise UpstreamError(f"{filename}: the torch section is not a mapping")
    written = {_parse_or_none(key.text, Version) for key, _ in new_torch}
    lost = sorted(set(wanted) - written)
    if lost:
        raise UpstreamError(f"{filename}: could not add torch {lost[0]} to the torch section; add it by hand")
    for key, value in new_torch:
        minor = _parse_or_none(key.text, Version)
        if minor is None:
            continue
        facts = wanted.get(minor)
        if facts is None:
            if _plain(value) != _plain(old_torch.get(key.text)):
                raise UpstreamError(f"{filename}: updating the torch facts would change torch {minor} (a shared YAML anchor); edit it by hand")
        elif _facts_of(value) != facts:
            python = _flow(facts.python, '"')
            raise UpstreamError(
                f"{filename}: cannot update torch {minor} in place (its values come from a YAML anchor or merge key) "
                f"\u2014 write released: {facts.released}, patches: {_flow(facts.patches, '')}, python: {python}"
            )


def _plain(node: Optional[source.Node]) -> object:
    """A node as comparable plain data (scalar text, ignoring positions)."""
    if isinstance(node, source.Scalar):
        return node.text
    if isinstance(node, source.Sequence):
        return [_plain(i) for i in node]
    if isinstance(node, source.Mapping):
        return [(k.text, _plain(v)) for k, v in node]
    return None


def _facts_of(node: source.Node) -> Optional[_Facts]:
    if not isinstance(node, source.Mapping):
        return None
    released, patches, python = node.get("released"), node.get("patches"), node.get("python")
    if not isinstance(released, source.Scalar) or not isinstance(patches, source.Sequence) or not isinstance(python, source.Sequence):
        return None
    try:
        return _Facts(
            _dt.date.fromisoformat(released.text),
            tuple(sorted({Version(p.text) for p in patches if isinstance(p, source.Scalar)})),
            tuple(sorted({PythonVersion.parse(p.text) for p in python if isinstance(p, source.Scalar)}, key=python_order)),
        )
    except ValueError:
        return None
