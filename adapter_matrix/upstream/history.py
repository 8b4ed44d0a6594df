"""An adapter's published release history, read from the index its wheels are on.

What pip enforces is the index, so the index is the evidence of what each release of an
adapter pairs with: the ``torch`` requirement in each wheel's ``METADATA``
(``Requires-Dist: torch==2.14.0.*``), the CPython builds in its wheel tags
(``cp311-cp311``) and the platforms it has wheels for (``manylinux_2_28_aarch64``).
Nothing else is: a README table or a tag name is a claim about the wheels, not a fact.

``init --from-index`` turns a :class:`History` into a ``compat.yaml``
(:mod:`adapter_matrix.upstream.import_matrix`) and ``validate --upstream`` checks the
releases a matrix lists against it (:mod:`adapter_matrix.upstream.own`).

The metadata is read as for companions (:func:`adapter_matrix.upstream.companion_index.fetch_document`):
from PEP 658 files where the index announces them, else out of each wheel with HTTP range
requests (torch-npu announces none: 512 wheels, about 10 KB read of each). A recorded
folder keeps the answer as ``DIR/<name>.json``: the PEP 691 file list trimmed to
filename, upload time, requires-python and yanked, and for each wheel of a final release
the headers of its ``METADATA`` that are facts here (``Name``, ``Version``,
``Requires-Python`` and the ``torch`` requirements of ``Requires-Dist``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Optional, Set, Tuple, cast

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..files import atomic_write, make_folders
from ..matrix.model import PythonVersion
from ..names import canonical_name
from . import companion_index as _companions
from .index import UpstreamError, python_order
from .simple_html import IndexAnswer, IndexFile, parse_page, render_page

__all__ = [
    "WheelBuild",
    "History",
    "Platform",
    "Published",
    "fetch_history",
    "is_index_url",
    "page_path",
    "parse_history",
    "read_history",
    "record_history",
    "torch_headers",
]

_CPYTHON = re.compile(r"^cp(\d)(\d+)$")
# os and arch named as the built-in detectors name them (adapter_matrix.check.detectors)
_ARCHES = (("x86_64", "x86_64"), ("amd64", "x86_64"), ("aarch64", "aarch64"), ("arm64", "aarch64"))
_OSES = (("manylinux", "linux"), ("musllinux", "linux"), ("linux", "linux"), ("win", "windows"), ("macosx", "macos"))


class Platform(str):
    """Where a wheel installs: ``linux/x86_64``; ``any`` for a pure-Python wheel."""

    @property
    def os(self) -> str:
        return self.split("/")[0]

    @property
    def arch(self) -> str:
        return self.split("/")[-1]


def _platform(tag: str) -> Optional[Platform]:
    if tag == "any":
        return Platform("any")
    os_name = next((name for prefix, name in _OSES if tag.startswith(prefix)), None)
    arch = next((name for suffix, name in _ARCHES if tag.endswith(suffix)), None)
    return Platform(f"{os_name}/{arch}") if os_name and arch else None


@dataclass(frozen=True)
class WheelBuild:
    """What a release offers on one platform: the torch its wheels there require (what
    every one allows; ``None`` when none declares a requirement), as declared, and the
    CPython builds it has wheels for."""

    platform: Platform
    torch: Optional[SpecifierSet]
    declared: Tuple[str, ...]
    python: FrozenSet[PythonVersion]

    @property
    def pythons(self) -> Tuple[PythonVersion, ...]:
        return tuple(sorted(self.python, key=python_order))


@dataclass(frozen=True)
class Published:
    """One release on the index. ``yanked`` is ``None``, or the reason given ('' for none).
    ``read`` is False for a yanked release whose wheels' metadata was not recorded: its
    builds then declare nothing because nothing was read, not because the wheels say so."""

    version: Version
    uploaded: Optional[_dt.date]
    yanked: Optional[str]
    builds: Tuple[WheelBuild, ...]  # one per platform, in the order of History.platforms
    wheels: int
    read: bool = True

    def build(self, platform: str) -> Optional[WheelBuild]:
        return next((b for b in self.builds if b.platform == platform), None)

    @property
    def line(self) -> Version:
        """The release it is a post-release of: ``2.9.0`` for ``2.9.0.post9``."""
        return Version(self.version.base_version)


@dataclass(frozen=True)
class History:
    """An adapter's releases on the index, oldest first, and what was left out."""

    name: str
    origin: str
    releases: Tuple[Published, ...]
    platforms: Tuple[Platform, ...]  # every platform some wheel is for
    prereleases: Tuple[Version, ...]  # pip installs them only with --pre: left out
    serial: Optional[str] = None  # the index's _last-serial, when it says
    html: bool = False  # the index answered with a PEP 503 page (no upload times)

    def release(self, version: Version) -> Optional[Published]:
        return next((r for r in self.releases if r.version == version), None)


# -- reading ----------------------------------------------------------------------------


def _wheel(filename: str) -> Optional[Tuple[Version, FrozenSet[PythonVersion], FrozenSet[Platform]]]:
    parsed = _companions.wheel_tags(filename)
    if parsed is None:
        return None
    version, tags = parsed
    pythons = set()
    for tag in tags:
        match = _CPYTHON.match(tag.interpreter)
        if match is not None:
            pythons.add(
                PythonVersion(Version(f"{match[1]}.{match[2]}"), free_threaded=tag.abi == f"{tag.interpreter}t")
            )
    platforms = {p for p in map(_platform, (t.platform for t in tags)) if p is not None}
    return version, frozenset(pythons), frozenset(platforms)


def _final_wheel(filename: str) -> bool:
    wheel = _wheel(filename)
    return wheel is not None and not wheel[0].is_prerelease and not wheel[0].is_devrelease


def torch_headers(text: str) -> str:
    """What a recording keeps of an adapter wheel's ``METADATA``: its name, version,
    ``Requires-Python`` and ``torch`` requirements; nothing else is a fact here."""
    message = HeaderParser().parsestr(text, headersonly=True)
    kept = []
    for key, value in message.items():
        if key in ("Name", "Version", "Requires-Python") or (key == "Requires-Dist" and _names_torch(value)):
            kept.append(f"{key}: {value}\n")
    return "".join(kept)


def _names_torch(line: str) -> bool:
    try:
        return canonical_name(Requirement(line).name) == "torch"
    except InvalidRequirement:
        return False


def _torch_requirement(text: str, platform: Platform, python: Optional[PythonVersion]) -> List[Tuple[Requirement, str]]:
    """The ``torch`` requirements of a METADATA text that apply on ``platform`` under ``python``."""
    version = str(python.version) if python is not None else "3.11"
    if platform == "any":
        return _companions.torch_requirements(text, _companions.marker_environment(version))
    return _companions.torch_requirements(text, _companions.marker_environment(version, platform.os, platform.arch))


def _yanked(entry: Mapping[str, object]) -> Optional[str]:
    value = entry.get("yanked")
    if value is True:
        return ""
    return value if isinstance(value, str) else None


def parse_history(document: object, name: str, origin: str) -> History:
    """The releases a (recorded) PEP 691 answer (or a PEP 503 page read as one) shows for ``name``: every final release
    (post-releases included) with a wheel, each wheel's torch requirement read from the
    metadata recorded with it. :class:`UpstreamError` for an answer that is no such thing."""

    def bad(what: str) -> UpstreamError:
        return UpstreamError(
            f"{origin}: {what} \u2014 expected the index's answer for {name} with the metadata of each wheel, "
            f"as `adapter-matrix init --from-index {name} --device NAME --upstream pypi --record DIR` records it"
        )

    if not isinstance(document, dict) or not isinstance(document.get("files"), list):
        raise bad("no list of files")
    if canonical_name(str(document.get("name", ""))) != canonical_name(name):
        raise bad(f"it lists the files of {document.get('name')!r}, not {name}")
    per_version: Dict[Version, List[IndexFile]] = {}
    pre: Set[Version] = set()
    for entry in document["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            raise bad("a file without a filename")
        wheel = _wheel(entry["filename"])
        if wheel is None:
            continue
        if wheel[0].is_prerelease or wheel[0].is_devrelease:
            pre.add(wheel[0])
            continue
        per_version.setdefault(wheel[0], []).append(cast(IndexFile, entry))  # its filename checked; the rest where read
    platforms: Set[Platform] = set()
    releases = []
    for version in sorted(per_version):
        entries = per_version[version]
        live = [e for e in entries if _yanked(e) is None]
        yanked = None if live else next((_yanked(e) for e in entries), "")
        chosen = live or entries  # a yanked release is described by its (yanked) wheels
        builds: Dict[Platform, Tuple[List[Tuple[Requirement, str]], Set[PythonVersion], int, int]] = {}
        days = []
        read = True
        for entry in chosen:
            _v, pythons, wheel_platforms = _wheel(entry["filename"])  # type: ignore[misc]
            text = entry.get("metadata")
            if not isinstance(text, str):
                if yanked is None:  # a live wheel without its facts: the recording is incomplete
                    raise bad(f"{entry['filename']} carries no metadata")
                text, read = "", False  # yanked before its metadata was recorded: its tags still say something
            day = _day(entry.get("upload-time"))
            if day is not None:
                days.append(day)
            for platform in wheel_platforms:
                platforms.add(platform)
                reqs, found, with_req, total = builds.get(platform, ([], set(), 0, 0))
                found |= pythons
                for python in sorted(pythons, key=python_order) or [None]:
                    applying = _torch_requirement(text, platform, python)
                    reqs += applying
                    with_req += bool(applying)
                    total += 1
                builds[platform] = (reqs, found, with_req, total)
        out = []
        for platform in sorted(builds):
            reqs, found, with_req, total = builds[platform]
            torch = _companions.intersection(r.specifier for r, _t in reqs) if reqs else None
            out.append(WheelBuild(platform, torch, tuple(dict.fromkeys(t for _r, t in reqs)), frozenset(found)))
        releases.append(Published(version, min(days, default=None), yanked, tuple(out), len(chosen), read))
    meta = document.get("meta")
    serial = meta.get("_last-serial") if isinstance(meta, dict) else None
    return History(
        document.get("name") or name,
        origin,
        tuple(releases),
        tuple(sorted(platforms)),
        tuple(sorted(pre)),
        str(serial) if serial is not None else None,
        bool(document.get("html")),
    )


def _day(value: object) -> Optional[_dt.date]:
    try:
        return _dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def is_index_url(source: str) -> bool:
    """Whether ``--upstream`` names an index by its URL (its Simple API root), not a folder."""
    return source.startswith(("https://", "http://"))


def fetch_history(
    name: str, *, timeout: float = 30.0, workers: int = 16, index_url: Optional[str] = None
) -> IndexAnswer:
    """The answer of PyPI (or of the index at ``index_url``, JSON or HTML) for ``name``, each
    wheel of a final release with its metadata facts (:func:`torch_headers`), yanked ones
    too: the document a recording keeps."""
    return _companions.fetch_document(
        name,
        None,
        timeout=timeout,
        wheel=_final_wheel,
        keep=torch_headers,
        workers=workers,
        index_url=index_url,
        yanked=True,
    )


def answer_path(folder: str, name: str) -> str:
    """Where a recorded folder keeps an index's JSON answer for ``name``."""
    return os.path.join(folder, f"{canonical_name(name)}.json")


def page_path(folder: str, name: str) -> str:
    """Where a recorded folder keeps an index's PEP 503 page for ``name`` (as the index serves
    it, at ``<index>/<name>/``); each wheel's metadata facts beside it, ``<wheel>.metadata``."""
    return os.path.join(folder, canonical_name(name), "index.html")


def read_history(source: str, name: str) -> Optional[History]:
    """The history of ``name`` from ``pypi``, an index's URL, or a recorded folder (its JSON
    answer, else its PEP 503 page); ``None`` when the folder holds no answer for it (or
    ``source`` is torch's recorded file alone)."""
    if source == "pypi" or is_index_url(source):
        index_url = None if source == "pypi" else source
        return parse_history(fetch_history(name, index_url=index_url), name, _companions.project_url(name, index_url))
    if not os.path.isdir(source):
        return None
    path = answer_path(source, name)
    if not os.path.exists(path) and os.path.exists(page_path(source, name)):
        return parse_history(_recorded_page(source, name), name, page_path(source, name))
    document = recorded_answer(source, name)
    return None if document is None else parse_history(document, name, path)


def recorded_answer(folder: str, name: str) -> Optional[object]:
    """The JSON answer a recorded folder keeps for ``name`` (:func:`answer_path`), parsed; ``None``
    when it has none. :class:`UpstreamError` for a file that cannot be read or is no JSON."""
    path = answer_path(folder, name)
    try:
        with open(path, "rb") as fh:
            document: object = json.loads(fh.read())  # its shape is checked by the reader
        return document
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UpstreamError(f"cannot read {path}: {exc}") from None


def _recorded_page(folder: str, name: str) -> IndexAnswer:
    """A recorded PEP 503 page as the answer it stands for, each wheel with the metadata facts
    recorded beside it (``<wheel>.metadata``), as :func:`fetch_history` reads them live."""
    page = Path(page_path(folder, name))
    try:
        document = parse_page(page.read_text(encoding="utf-8"), name, page.resolve().as_uri())
        document["html"] = True
        for entry in document["files"]:
            facts = page.parent / f"{entry['filename']}.metadata"
            if facts.is_file():
                entry["metadata"] = facts.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise UpstreamError(f"cannot read {page}: {exc}") from None
    return document


def record_history(folder: str, name: str, document: IndexAnswer) -> str:
    """Save ``document`` (from :func:`fetch_history`) into ``folder`` in the form the index
    answered in (:func:`answer_path`, or :func:`page_path` and the metadata beside it); the
    path written."""
    if not document.get("html"):
        make_folders(folder)
        path = answer_path(folder, name)
        _companions.write_answer(path, document)
        return path
    path = page_path(folder, name)
    make_folders(os.path.dirname(path))
    for entry in document["files"]:
        if isinstance(entry.get("metadata"), str):
            atomic_write(os.path.join(os.path.dirname(path), f"{entry['filename']}.metadata"), entry["metadata"])
    atomic_write(path, render_page(document))
    return path
