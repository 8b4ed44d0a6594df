"""Frozen releases: the proof of a published release describes that release, whatever main does next.

``adapter-matrix release VERSION`` (:func:`freeze`) writes ``<evidence>/<VERSION>/release.json``
once: the hash of the evidence sources (:func:`adapter_matrix.ci.evidence.sources_hash`),
the commit and the date. From then on the records of that release are judged against the
frozen hash, not the working tree (:func:`adapter_matrix.ci.evidence.judge`), so a comment
fix in a shim ages nothing that was released.

Changed code is a new release: :func:`version_findings` reports, at the frozen release's
line, sources that differ from the newest frozen release while the adapter's version
(``__version__`` beside the matrix, or ``pyproject.toml``) is still that release's, or while
the matrix has no later release to hold the change.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass
from typing import FrozenSet, List, Mapping, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ..files import atomic_write, dunder_version, make_folders, read_toml
from ..matrix.diagnostics import Diagnostic, display_path
from ..matrix.model import Matrix, Release
from .evidence import git_state, sources_hash
from .frozen import FROZEN_SCHEMA, FrozenRelease, read_frozen
from .record_names import RELEASE_FILE, EvidenceError, check_name

__all__ = [
    "RELEASE_FILE",
    "FROZEN_SCHEMA",
    "FrozenRelease",
    "read_frozen",
    "freeze",
    "AdapterVersion",
    "adapter_version",
    "version_findings",
    "past_releases",
]


def past_releases(matrix: Matrix) -> FrozenSet[str]:
    """The releases this tree cannot test: frozen (``<evidence>/<VERSION>/release.json``)
    with other evidence sources than the tree holds now. Their code is a commit in the past,
    so a cell run here would test later code under their name; the plan leaves them out
    (``plan(..., skip=...)``), while the gate still judges their frozen records. Empty when
    the matrix names no evidence sources or the folder holds no frozen release."""
    from .evidence import evidence_folder

    try:
        frozen = read_frozen(evidence_folder(matrix, {}))
        if not frozen:
            return frozenset()
        now = sources_hash(matrix)
    except EvidenceError:  # a broken release.json or missing sources: the gate reports it; plan everything
        return frozenset()
    return frozenset(v for v, f in frozen.items() if f.sources_hash != now)


def freeze(matrix: Matrix, version: str, folder: str, today: Optional[_dt.date] = None) -> Tuple[FrozenRelease, bool]:
    """Freeze release ``version`` of ``matrix``: write ``folder/<version>/release.json`` with the
    current sources hash, commit and date. Returns it and whether it was written now (False:
    it was frozen already, with this hash). :class:`EvidenceError` for a release the matrix
    does not have, one frozen with other sources, or sources git sees as uncommitted."""
    check_name(version, "release")
    try:
        wanted = Version(version)
    except InvalidVersion:
        raise EvidenceError(
            f"{version!r} is not a PEP 440 version \u2014 name a release of {display_path(matrix.path)}"
        ) from None
    entries = matrix.releases_of(wanted)
    if not entries:
        known = ", ".join(str(r.version) for r in matrix.releases) or "none"
        raise EvidenceError(
            f"{display_path(matrix.path)} has no release {version} (its releases: {known}) \u2014 add it first"
        )
    version = str(entries[0].version)  # as the matrix writes it: the folder its records are in
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise EvidenceError(f"{folder}: not a folder \u2014 give the evidence folder (e.g. evidence)")
    now = sources_hash(matrix)
    existing = read_frozen(folder).get(version)
    if existing is not None:
        if existing.sources_hash == now:
            return existing, False
        raise EvidenceError(
            f"{existing.path}: release {version} is frozen already, with sources hash {existing.sources_hash} "
            f"(now {now}) \u2014 a release is frozen once; changed code is a new release (docs/releasing.md)"
        )
    commit, dirty = git_state(matrix)
    if dirty:
        raise EvidenceError(
            f"the evidence sources ({', '.join(matrix.evidence.sources)}) have uncommitted changes \u2014 "
            f"commit them first: the frozen commit must hold the code of release {version}"
        )
    day = (today or _dt.datetime.now(_dt.timezone.utc).date()).isoformat()
    path = os.path.join(folder, version, RELEASE_FILE)
    entry = FrozenRelease(version, now, tuple(matrix.evidence.sources), commit, day, path)
    make_folders(os.path.dirname(path))  # a read-only checkout: one line, not an internal error
    atomic_write(path, json.dumps(entry.as_dict(), indent=2) + "\n", follow=False)
    return entry, True


# -- the adapter's version -----------------------------------------------------------------


@dataclass(frozen=True)
class AdapterVersion:
    version: Version
    where: str  # the file that says it, as messages show it


def _from_pyproject(path: str) -> Optional[Tuple[str, str]]:
    """The version ``pyproject.toml`` states: ``[project] version``, or setuptools' dynamic ``attr``."""
    doc = read_toml(path)
    if doc is None:
        return None
    project = doc.get("project") or {}
    if isinstance(project.get("version"), str):
        return project["version"], path
    attr = (((doc.get("tool") or {}).get("setuptools") or {}).get("dynamic") or {}).get("version") or {}
    target = attr.get("attr") if isinstance(attr, dict) else None
    if not isinstance(target, str) or "." not in target:
        return None
    module = target.rsplit(".", 1)[0].split(".")
    base = os.path.dirname(os.path.abspath(path))
    for root in (base, os.path.join(base, "src")):
        for candidate in (os.path.join(root, *module, "__init__.py"), os.path.join(root, *module) + ".py"):
            found = dunder_version(candidate) if os.path.isfile(candidate) else None
            if found:
                return found, candidate
    return None


def adapter_version(matrix: Matrix, pyproject: Optional[str] = None) -> Optional[AdapterVersion]:
    """The version of the adapter's code as it is now: from ``pyproject`` when given, else the
    ``__version__`` of the package that ships the matrix (the ``__init__.py`` beside the
    matrix file, links followed: this repository's compat.yaml links into shims/src/shims/), else
    a ``pyproject.toml`` beside the matrix. ``None`` when none says."""
    found = None
    if pyproject:
        found = _from_pyproject(pyproject)
    else:
        package = os.path.dirname(os.path.realpath(matrix.path))
        init = os.path.join(package, "__init__.py")
        text = dunder_version(init) if os.path.isfile(init) else None
        found = (text, init) if text else None
        beside = os.path.join(os.path.dirname(os.path.abspath(matrix.path)), "pyproject.toml")
        if found is None and os.path.isfile(beside):
            found = _from_pyproject(beside)
    if found is None:
        return None
    try:
        return AdapterVersion(Version(found[0]), display_path(found[1]))
    except InvalidVersion:
        return None


def _next_version(version: Version) -> str:
    return f"{version.major}.{version.minor + 1}.0"


def version_findings(
    matrix: Matrix, frozen: Mapping[str, FrozenRelease], adapter: Optional[AdapterVersion], strict: bool = False
) -> List[Diagnostic]:
    """Changed code needs a new version: when the evidence sources differ from the newest
    frozen release's hash, and the adapter's version is still that release's (or, the
    version unknown, the matrix has no later release), one finding at that release's line
    naming the step. Also an adapter version the matrix has no release for. Warnings, or
    errors when ``strict``."""
    severity = "error" if strict else "warning"
    releases: Sequence[Release] = matrix.releases
    by_version = {str(r.version): r for r in releases}
    known = [(r, frozen[str(r.version)]) for r in releases if str(r.version) in frozen]
    if not known:
        return []
    release, newest = max(known, key=lambda pair: pair[0].version)
    now = sources_hash(matrix)
    found: List[Diagnostic] = []
    if adapter is not None and not matrix.releases_of(adapter.version):
        found.append(
            Diagnostic(
                releases[-1].mark_of("version"),
                f"the adapter's version is {adapter.version} ({adapter.where}), and {display_path(matrix.path)} has no release {adapter.version}",
                f"add release {adapter.version} with status: experimental (docs/releasing.md)",
                severity,
            )
        )
    if now == newest.sources_hash:
        return found
    later = [r for r in releases if r.version > release.version]
    still = adapter is not None and any(r.version == release.version for r in matrix.releases_of(adapter.version))
    if still or (adapter is None and not later):
        suggestion = str(later[-1].version) if later else _next_version(release.version)
        bump = (
            f"bump the version in {adapter.where} to {suggestion}"
            if adapter is not None
            else f"bump the adapter's version to {suggestion}"
        )
        add = (
            f"add release {suggestion} with status: experimental"
            if not later
            else f"keep release {suggestion} experimental until it is frozen"
        )
        said = (
            f"the adapter's version is still {adapter.version} ({adapter.where})"
            if adapter is not None
            else "no later release holds them"
        )
        found.append(
            Diagnostic(
                by_version[str(release.version)].mark_of("version"),
                f"the evidence sources changed since release {release.version} was frozen (hash {newest.sources_hash} "
                f"in {display_path(newest.path)}, now {now}), and {said}: changed code must not ship as {release.version}",
                f"{add}, and {bump} (docs/releasing.md)",
                severity,
            )
        )
    return found
