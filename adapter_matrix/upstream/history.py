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
from typing import Dict, FrozenSet, List, Optional, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..matrix.model import PythonVersion
from ..names import canonical_name
from . import companion_index as _companions
from .index import UpstreamError, python_order

__all__ = [
    "Build",
    "History",
    "Platform",
    "Published",
    "fetch_history",
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
class Build:
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
    """One release on the index. ``yanked`` is ``None``, or the reason given ('' for none)."""

    version: Version
    uploaded: Optional[_dt.date]
    yanked: Optional[str]
    builds: Tuple[Build, ...]  # one per platform, in the order of History.platforms
    wheels: int

    def build(self, platform: str) -> Optional[Build]:
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


def _yanked(entry: dict) -> Optional[str]:
    value = entry.get("yanked")
    if value is True:
        return ""
    return value if isinstance(value, str) else None


def parse_history(document: object, name: str, origin: str) -> History:
    """The releases a (recorded) PEP 691 answer shows for ``name``: every final release
    (post-releases included) with a wheel, each wheel's torch requirement read from the
    metadata recorded with it. :class:`UpstreamError` for an answer that is no such thing."""

    def bad(what: str) -> UpstreamError:
        return UpstreamError(
            f"{origin}: {what} \u2014 expected a PEP 691 answer for {name} recorded with "
            f"`adapter-matrix init --from-index {name} --upstream pypi --record DIR`"
        )

    if not isinstance(document, dict) or not isinstance(document.get("files"), list):
        raise bad("no list of files")
    if canonical_name(str(document.get("name", ""))) != canonical_name(name):
        raise bad(f"it lists the files of {document.get('name')!r}, not {name}")
    per_version: Dict[Version, List[dict]] = {}
    pre: set = set()
    for entry in document["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            raise bad("a file without a filename")
        wheel = _wheel(entry["filename"])
        if wheel is None:
            continue
        if wheel[0].is_prerelease or wheel[0].is_devrelease:
            pre.add(wheel[0])
            continue
        per_version.setdefault(wheel[0], []).append(entry)
    platforms: set = set()
    releases = []
    for version in sorted(per_version):
        entries = per_version[version]
        live = [e for e in entries if _yanked(e) is None]
        yanked = None if live else next((_yanked(e) for e in entries), "")
        chosen = live or entries  # a yanked release is described by its (yanked) wheels
        builds: Dict[Platform, Tuple[List[Tuple[Requirement, str]], set, int, int]] = {}
        days = []
        for entry in chosen:
            _v, pythons, wheel_platforms = _wheel(entry["filename"])  # type: ignore[misc]
            text = entry.get("metadata")
            if not isinstance(text, str):
                raise bad(f"{entry['filename']} carries no metadata")
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
            out.append(Build(platform, torch, tuple(dict.fromkeys(t for _r, t in reqs)), frozenset(found)))
        releases.append(Published(version, min(days, default=None), yanked, tuple(out), len(chosen)))
    meta = document.get("meta")
    serial = meta.get("_last-serial") if isinstance(meta, dict) else None
    return History(
        document.get("name") or name,
        origin,
        tuple(releases),
        tuple(sorted(platforms)),
        tuple(sorted(pre)),
        str(serial) if serial is not None else None,
    )


def _day(value: object) -> Optional[_dt.date]:
    try:
        return _dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def fetch_history(name: str, *, timeout: float = 30.0, workers: int = 16) -> dict:
    """PyPI's answer for ``name``, each wheel of a final release with its metadata facts
    (:func:`torch_headers`): the document a recording keeps."""
    return _companions.fetch_document(
        name, None, timeout=timeout, wheel=_final_wheel, keep=torch_headers, workers=workers
    )


def answer_path(folder: str, name: str) -> str:
    return os.path.join(folder, f"{canonical_name(name)}.json")


def read_history(source: str, name: str) -> Optional[History]:
    """The history of ``name`` from ``pypi`` or a recorded folder; ``None`` when the folder
    holds no answer for it (or ``source`` is torch's recorded file alone)."""
    if source == "pypi":
        return parse_history(fetch_history(name), name, _companions.SIMPLE.format(name=canonical_name(name)))
    if not os.path.isdir(source):
        return None
    path = answer_path(source, name)
    try:
        with open(path, "rb") as fh:
            document = json.loads(fh.read())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UpstreamError(f"cannot read {path}: {exc}") from None
    return parse_history(document, name, path)


def record_history(folder: str, name: str, document: dict) -> str:
    """Save ``document`` (from :func:`fetch_history`) into ``folder``; the path written."""
    os.makedirs(folder, exist_ok=True)
    path = answer_path(folder, name)
    _companions.write_answer(path, document)
    return path
