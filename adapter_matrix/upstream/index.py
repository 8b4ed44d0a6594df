"""Upstream facts about torch, read from PyPI and checked against the matrix.

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

Writing these facts into the file (``--write``) is :mod:`adapter_matrix.upstream.write`;
where the file writes them is :mod:`adapter_matrix.upstream.torch_section`.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, TypeVar

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from ..errors import AdapterMatrixError
from ..matrix.diagnostics import Diagnostic, Mark
from ..matrix.model import Matrix, PythonVersion, TorchLine, minor_line
from ..names import canonical_name
from ..urls import PYPI_SIMPLE
from . import metadata as _metadata
from .torch_section import Section, read_section

__all__ = [
    "ACCEPT",
    "PYPI_TORCH",
    "Patch",
    "Upstream",
    "UpstreamError",
    "UpstreamLine",
    "parse_index",
    "python_order",
    "read_answer",
    "read_upstream",
    "undescribed",
    "verify",
]

PYPI_TORCH = PYPI_SIMPLE + "/torch/"
ACCEPT = "application/vnd.pypi.simple.v1+json"  # PEP 691; without it PyPI answers HTML
TIMEOUT = 30.0

# Every manylinux flavour torch has used on x86_64: manylinux1 (<= 2.6.0), manylinux2014,
# manylinux_2_17, manylinux_2_28 (>= 2.7.0). musllinux is not what CI or users run.
_LINUX_X86_64 = re.compile(r"^manylinux[0-9a-z_]*_x86_64$")
_CPYTHON = re.compile(r"^cp(\d)(\d+)$")

T = TypeVar("T")


class UpstreamError(AdapterMatrixError, ValueError):
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
    variants: FrozenSet[str] = frozenset()  # local labels of its builds (cpu, cu130) on PyTorch's own indexes


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
            grouped.setdefault(minor_line(patch.version), []).append(patch)
        out: Dict[Version, UpstreamLine] = {}
        for minor in sorted(grouped):
            every = sorted(grouped[minor], key=lambda p: p.version)
            linux = tuple(p for p in every if p.python)
            if linux:
                out[minor] = UpstreamLine(minor, linux, every[0].uploaded)
        return out


def read_upstream(source_name: str, *, timeout: float = TIMEOUT) -> Upstream:
    """Read torch's file list: ``"pypi"`` asks PyPI, anything else is a recorded answer
    (a file, or a recorded folder holding ``torch.json``).

    Raises :class:`UpstreamError` for a network failure, an unreadable file or an answer
    that is not PEP 691 JSON about torch.
    """
    raw, origin = read_answer(source_name, timeout=timeout)
    try:
        document = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise UpstreamError(
            f"{origin} is not a PEP 691 JSON answer ({exc}) \u2014 record it with `Accept: {ACCEPT}`"
        ) from None
    return parse_index(document, source_name, origin)


def read_answer(source_name: str, *, timeout: float = TIMEOUT) -> Tuple[bytes, str]:
    """The bytes of torch's answer and where they came from (see :func:`read_upstream`)."""
    if source_name == "pypi":
        url = _metadata.simple_url("torch")
        return _fetch(url, timeout), url
    path = os.path.join(source_name, "torch.json") if os.path.isdir(source_name) else source_name
    try:
        with open(path, "rb") as fh:
            return fh.read(), path
    except OSError as exc:
        raise UpstreamError(
            f"cannot read {path}: {exc.strerror} \u2014 pass 'pypi', a recorded answer of {PYPI_TORCH}, or a recorded folder"
        ) from None


def _fetch(url: str, timeout: float) -> bytes:
    """GET ``url`` as PEP 691 JSON, through :func:`~adapter_matrix.upstream.metadata.http_get`
    (retried as pip retries; tests replace it)."""
    try:
        return _metadata.http_get(url, {"Accept": ACCEPT}, timeout)[0]
    except _metadata.MetadataError as exc:  # "URL: why"
        raise UpstreamError(
            f"cannot read {exc} \u2014 check the network, or pass a recorded answer: --upstream FILE"
        ) from None


def parse_index(document: object, source_name: str, origin: str = "", *, local: bool = False) -> Upstream:
    """Build the index from a decoded PEP 691 answer (``origin`` names it in messages).
    ``local``: builds with a local label count as their public version (PyTorch's own indexes,
    whose every file is ``2.16.0+cpu`` or ``+cu130``); PyPI's have none."""
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
    if not isinstance(name, str) or canonical_name(name) != "torch":
        raise bad(f"it lists the files of {name!r}, not torch")
    files = document.get("files")
    if not isinstance(files, list):
        raise bad("it has no list of files")
    pythons: Dict[Version, Set[PythonVersion]] = {}
    uploaded: Dict[Version, Optional[_dt.date]] = {}
    requires: Dict[Version, Optional[str]] = {}
    labels: Dict[Version, Set[str]] = {}
    seen: Set[Version] = set()
    for number, entry in enumerate(files, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            raise bad(f"file #{number} has no filename")
        parsed = _parse_filename(entry["filename"], local)
        if parsed is None:
            continue
        built, tags = parsed
        version = Version(built.public)
        seen.add(version)
        yanked = entry.get("yanked")
        if yanked is True or isinstance(yanked, str):  # PEP 691: false, true, or the reason
            continue
        found = {p for p in map(_python_of, tags) if p is not None}
        pythons.setdefault(version, set()).update(found)
        if built.local and found:
            labels.setdefault(version, set()).add(built.local)
        day = _upload_day(entry.get("upload-time"), entry["filename"], bad)
        if day is not None and (uploaded.get(version) is None or day < uploaded[version]):  # type: ignore[operator]
            uploaded[version] = day
        else:
            uploaded.setdefault(version, None)
        rp = entry.get("requires-python")
        if isinstance(rp, str) and rp and not requires.get(version):
            requires[version] = rp
    patches = tuple(
        Patch(v, frozenset(pythons[v]), uploaded.get(v), requires.get(v), frozenset(labels.get(v, ())))
        for v in sorted(pythons)
    )
    return Upstream(source_name, patches, frozenset(seen - set(pythons)))


def _parse_filename(filename: str, local: bool = False) -> Optional[Tuple[Version, FrozenSet[Tag]]]:
    """(version, tags) of a final torch release's wheel or sdist; ``None`` for anything else
    (a build with a local label too, unless ``local``: then the version with its label)."""
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
    if name != "torch" or version.is_prerelease or (version.local and not local):
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
    section = read_section(matrix)
    upstream = index.lines()
    fix = f"or run `adapter-matrix validate --upstream {index.source} --write`"
    out: List[Diagnostic] = []
    for line in matrix.torch:
        known = upstream.get(line.minor)
        if known is None:
            out.append(
                Diagnostic(
                    line.mark,
                    f"torch {line.minor} has no Linux x86_64 wheel on PyPI",
                    "check the minor, or remove its entry",
                )
            )
            continue
        out += _verify_line(line, known, index.yanked, _Places(section, line), fix)
    out += _missing_lines(matrix, upstream, section, fix)
    return out


@dataclass(frozen=True)
class _Places:
    """Positions of one torch entry's values, each falling back to the entry's key."""

    section: Optional[Section]
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


def _verify_line(
    line: TorchLine, known: UpstreamLine, yanked: FrozenSet[Version], at: _Places, fix: str
) -> List[Diagnostic]:
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
                f'remove "{python}" from its python list (PyPI: {_names(newest.python)}), {fix}',
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
                    f"torch {patch} was yanked from PyPI"
                    if patch in yanked
                    else f"torch {patch} has no Linux x86_64 wheel on PyPI",
                    f"remove it from patches (PyPI: {', '.join(str(p.version) for p in known.patches)}), {fix}",
                )
            )
    for found in known.patches:
        if found.version not in line.patches:
            out.append(
                Diagnostic(
                    at.value("patches"),
                    f"torch {found.version} is on PyPI but not in the patches of torch {line.minor}",
                    f"add {found.version} (cells install the newest listed patch), {fix}",
                    "warning",
                )
            )
        lacking = sorted(set(newest.python) - set(found.python), key=python_order)
        if lacking and found is not newest:
            out.append(
                Diagnostic(
                    at.item("patches", Version, found.version),
                    f"torch {found.version} has no Linux x86_64 wheel for Python {_names(lacking)} ({newest.version} has)",
                    f"a release pinning torch {found.version} cannot run there; claim {newest.version}",
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


def undescribed(matrix: Matrix, upstream: Dict[Version, UpstreamLine]) -> Dict[Version, UpstreamLine]:
    """Lines on PyPI that the file lacks, newer than its oldest line (older ones are out of scope)."""
    if not matrix.torch:
        return {}
    oldest = matrix.torch[0].minor
    return {minor: known for minor, known in upstream.items() if minor > oldest and matrix.torch_line(minor) is None}


def _missing_lines(
    matrix: Matrix, upstream: Dict[Version, UpstreamLine], section: Optional[Section], fix: str
) -> List[Diagnostic]:
    where = (
        section.mark(section.key) if section else (matrix.torch[-1].mark if matrix.torch else Mark(matrix.path, 1, 1))
    )
    return [
        Diagnostic(
            where,
            f"torch {minor} is on PyPI ({_summary(known)}) but this file does not describe it",
            f'add a "{minor}" entry under torch: and decide which releases support it, {fix}',
            "warning",
        )
        for minor, known in undescribed(matrix, upstream).items()
    ]
