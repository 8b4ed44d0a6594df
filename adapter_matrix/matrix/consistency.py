"""Cross-reference checks of a loaded matrix: what no single key can tell.

The loader has already checked each value's syntax; these checks look at how the
sections fit together (claims against upstream facts, shims against claims, names
against declarations). Each finding is a diagnostic pointing at the row to change.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Dict, Iterator, List, Optional, Set, Tuple

from packaging.version import Version

from . import companions
from .diagnostics import Diagnostic, Diagnostics, Mark
from .model import Matrix, Release, Spec, Status
from .queries import claimed_lines, claimed_patches, pythons_for, shim_for

__all__ = ["check"]

_BOUNDED = ("<", "<=", "==", "~=", "===")
_MAX_GAP = 100  # minors probed past each known one for claims the file does not describe


def check(matrix: Matrix, *, check_modules: bool = True) -> List[Diagnostic]:
    diags = Diagnostics()
    _sources(matrix, diags)
    _torch_lines(matrix, diags)
    _duplicate_releases(matrix, diags)
    for release in matrix.releases:
        _release(matrix, release, diags)
    _shim_overlaps(matrix, diags)
    if check_modules:
        _shim_modules(matrix, diags)
    _smoke(matrix, diags)
    diags.extend(companions.check(matrix))
    return diags.items


def _sources(matrix: Matrix, diags: Diagnostics) -> None:
    names = {s.name for s in matrix.sources}
    for src in matrix.sources:
        if src.fallback is not None and src.fallback not in names:
            diags.error(src.mark, f"source {src.name!r} falls back to unknown source {src.fallback!r}", f"known: {', '.join(sorted(names))}")
        seen, cur = {src.name}, src
        while cur is not None and cur.fallback is not None:
            if cur.fallback in seen:
                diags.error(src.mark, f"source {src.name!r} has a fallback cycle", "end the chain at a source without fallback")
                break
            seen.add(cur.fallback)
            cur = matrix.source(cur.fallback)


def _torch_lines(matrix: Matrix, diags: Diagnostics) -> None:
    previous = None
    for line in matrix.torch:
        if matrix.source(line.install) is None:
            names = ", ".join(s.name for s in matrix.sources)
            diags.error(line.mark, f"torch {line.minor} installs from unknown source {line.install!r}", f"declare it under sources: (known: {names})")
        if previous is not None and line.released < previous.released:
            diags.warning(line.mark, f"torch {line.minor} is dated before torch {previous.minor}", "check the release dates")
        previous = line


def _duplicate_releases(matrix: Matrix, diags: Diagnostics) -> None:
    first: Dict[Version, Mark] = {}
    for release in sorted(matrix.releases, key=lambda r: r.mark):
        if release.version in first:
            diags.error(release.mark_of("version"), f"duplicate release {release.version}", f"it is already listed at line {first[release.version].line}")
        else:
            first[release.version] = release.mark


def _mentioned_versions(spec: Spec) -> Iterator[Tuple[str, Version]]:
    for s in spec.specifier:
        text = s.version.replace(".*", "")
        try:
            yield s.operator, Version(text)
        except ValueError:  # arbitrary equality (===) with a non-version string
            continue


def _undescribed_claims(matrix: Matrix, release: Release) -> List[str]:
    """Torch versions the release claims that the ``torch:`` section does not describe.

    Probes every minor between the lowest and highest one the specifier or the file
    mentions (``<2.17`` probes 2.16.0), plus exact pins such as ``==2.4.3``.
    """
    mentioned = [v for _, v in _mentioned_versions(release.torch)]
    probes: Set[Version] = {v for v in mentioned if len(v.release) >= 3}
    for major in {v.major for v in mentioned}:
        minors = [v.minor for v in mentioned if v.major == major]
        minors += [t.minor.minor for t in matrix.torch if t.minor.major == major]
        top = max(minors)
        # Every minor from the lowest to the highest, but never more than _MAX_GAP past a
        # mentioned or described one: `<2.100000000` would otherwise probe 10**8 minors.
        for start in set(minors):
            probes.update(Version(f"{major}.{m}.0") for m in range(start, min(start + _MAX_GAP, top) + 1))
    out: Set[str] = set()
    for v in probes:
        if not release.torch.contains(v):
            continue
        line = matrix.torch_line(v)
        if line is None:
            out.add(f"{v.major}.{v.minor}")
        elif v not in line.patches and not claimed_patches(release, line):
            out.add(str(v))
    return sorted(out, key=Version)


def _release(matrix: Matrix, release: Release, diags: Diagnostics) -> None:
    where_torch = release.mark_of("torch")
    for unknown in _undescribed_claims(matrix, release):
        diags.error(
            where_torch,
            f"release {release.version} claims torch {unknown} (torch {release.torch}), which this file does not describe",
            f"add a `torch: {unknown}:` entry with its facts, or narrow the specifier",
        )
    if not any(op in _BOUNDED for op, _ in _mentioned_versions(release.torch)):
        diags.warning(where_torch, f"release {release.version} claims every future torch ({release.torch})", "add an upper bound such as <2.16")
    lines = claimed_lines(matrix, release)
    if not lines:
        diags.error(where_torch, f"release {release.version} claims no torch release this file describes", "check the torch specifier")
    for line, patches in lines:
        if release.python.exact:
            for python in release.python.exact:
                if python not in line.python:
                    diags.error(
                        release.mark_of("python"),
                        f"release {release.version} claims Python {python} with torch {line.minor}, which has no {python.tag} wheel",
                        f"torch {line.minor} has wheels for {', '.join(str(p) for p in line.python)}; narrow the claim",
                    )
        elif not pythons_for(release, line):
            diags.error(
                release.mark_of("python"),
                f"release {release.version} claims torch {line.minor}, but none of its Pythons ({', '.join(str(p) for p in line.python)}) matches {release.python}",
                "widen the Python range or narrow the torch specifier",
            )
        if release.status not in (Status.BROKEN, Status.EOL) or release.rules:
            missing = [p for p in patches if shim_for(matrix, p) is None]
            if missing:
                diags.error(
                    where_torch,
                    f"release {release.version} supports torch {', '.join(map(str, missing))} but no shim serves it",
                    "add a shim range covering it under shims:",
                )
    for name, _spec in release.dimensions:
        if matrix.dimension(name) is None:
            diags.error(release.mark_of("dimensions"), f"release {release.version} names unknown dimension {name!r}", "declare it under dimensions:")
    for rule in release.rules:
        for name, _spec in rule.dimensions:
            if matrix.dimension(name) is None:
                diags.error(rule.mark, f"exception names unknown dimension {name!r}", "declare it under dimensions:")
        if rule.torch is not None and not any(rule.torch.contains(p) for _, ps in lines for p in ps):
            diags.warning(rule.mark, f"exception for torch {rule.torch} matches no torch that release {release.version} claims", "remove it or fix its specifier")
        if rule.status is Status.BROKEN and not rule.reason:
            diags.error(rule.mark, "a broken exception needs a reason", "add `reason:`")
    if release.date and release.supported_until and release.supported_until < release.date:
        diags.error(release.mark_of("supported-until"), f"release {release.version} support ends before its release date", "fix supported-until")


def _shim_overlaps(matrix: Matrix, diags: Diagnostics) -> None:
    probes = sorted({p for line in matrix.torch for p in line.patches} | {Version(f"{line.minor}.0") for line in matrix.torch})
    for i, a in enumerate(matrix.shims):
        for b in matrix.shims[i + 1 :]:
            both = [v for v in probes if a.torch.contains(v) and b.torch.contains(v)]
            if both:
                diags.error(
                    b.mark,
                    f"shim {b.module} ({b.torch}) overlaps {a.module} ({a.torch}) at torch {both[0]}",
                    f"make the ranges disjoint (the other is at line {a.mark.line})",
                )


def _package_dir(matrix: Matrix, top: str) -> Optional[str]:
    """Where the shims' top-level package lives: next to the matrix file, else installed."""
    beside = os.path.join(os.path.dirname(os.path.abspath(matrix.path)), top)
    if os.path.isdir(beside):
        return beside
    try:
        spec = importlib.util.find_spec(top)  # top-level only: does not import the package
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _shim_modules(matrix: Matrix, diags: Diagnostics) -> None:
    for shim in matrix.shims:
        top, *rest = shim.module.split(".")
        base = _package_dir(matrix, top)
        if base is None:
            diags.warning(shim.mark, f"cannot check shim module {shim.module}: package {top!r} is not installed")
            continue
        path = os.path.join(base, *rest)
        if not (os.path.isfile(path + ".py") or os.path.isfile(os.path.join(path, "__init__.py")) or not rest):
            diags.error(shim.mark, f"shim module {shim.module} does not exist (no {path}.py)", "create it, e.g. with `adapter-matrix new-shim`")


def _smoke(matrix: Matrix, diags: Diagnostics) -> None:
    for ref in matrix.smoke:
        line = matrix.torch_line(ref.torch)
        if line is None:
            diags.error(ref.mark, f"smoke cell names torch {ref.torch}, which this file does not describe")
        elif ref.python not in line.python:
            diags.error(ref.mark, f"smoke cell names Python {ref.python}, but torch {line.minor} has no {ref.python.tag} wheel")
