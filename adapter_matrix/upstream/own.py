"""The adapter's own releases, checked against the adapter's own wheels (``validate --upstream``).

A matrix says which torch, Pythons and platforms each release of the adapter serves; the
index says what its wheels require and have (:mod:`adapter_matrix.upstream.history`).
Where they differ the file is wrong, and users get answers pip will contradict:

- errors, at the value to change: a release whose wheels require another torch; a Python
  the release claims (one its torch has a wheel for) without a wheel of the release; a
  platform (an ``arch``/``os`` value it admits) without a wheel; a release the index lacks,
  or has yanked while the file does not call it broken;
- warnings: a release on the index the file does not list (pre-releases aside: pip installs
  them only with ``--pre``); a release whose wheels declare no torch requirement (its
  pairing is not verified); Pythons with a wheel the release leaves out.

Releases published on another index (``index-url:``) are not on PyPI's answer and are not
checked. An adapter the index does not know (not published yet) has nothing to check.

``--write`` corrects a release's ``torch`` and ``python`` in place (:func:`rewrite`), one
scalar each, so comments and layout survive; what it cannot decide (a release to add or
remove, a platform) stays a diagnostic.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..matrix.diagnostics import Diagnostic, Mark
from ..matrix.model import Constraint, Matrix, PythonVersion, Release, Value, requirement
from ..matrix.queries import claimed_lines, pythons_for
from ..matrix.textedit import Edit, apply_edits, line_offsets, rewrite_file
from ..urls import PYPI_SIMPLE
from .companion_index import NotOnIndex
from .from_index import python_text, torch_text
from .history import History, Published, WheelBuild, read_history
from .index import UpstreamError, python_order

__all__ = ["expected_python", "expected_torch", "read_own", "rewrite", "verify_own", "write_own"]

_PYPI = (PYPI_SIMPLE, PYPI_SIMPLE + "/")


def read_own(source: str, matrix: Matrix) -> Optional[History]:
    """The adapter's history from ``source`` (``pypi`` or a recorded folder); ``None`` when
    there is none to check against: a folder without its answer, torch's file alone, or an
    adapter PyPI does not know (HTTP 404: not published yet)."""
    try:
        return read_history(source, matrix.adapter.distribution)
    except NotOnIndex:
        return None


def _checked(release: Release) -> bool:
    return release.index_url is None or release.index_url.rstrip("/") in (u.rstrip("/") for u in _PYPI)


def _builds(matrix: Matrix, release: Release, published: Published) -> Tuple[List[WheelBuild], List[str]]:
    """The builds of ``published`` on the platforms ``release`` admits, and the platform
    values it admits that have no wheel ("arch aarch64")."""
    wanted: List[WheelBuild] = []
    missing: List[str] = []
    constraints = {name: release.constraint(name) for name in ("os", "arch") if matrix.dimension(name)}
    for build in published.builds:
        if build.platform == "any":
            wanted.append(build)
            continue
        values = {"os": build.platform.os, "arch": build.platform.arch}
        if all(c is None or any(v.text == values[n] for v in _values(matrix, n, c)) for n, c in constraints.items()):
            wanted.append(build)
    if any(b.platform == "any" for b in published.builds):
        return wanted, missing
    for name in constraints:
        dim = matrix.dimension(name)
        assert dim is not None
        have = {b.platform.os if name == "os" else b.platform.arch for b in published.builds}
        admitted = [v.text for v in _values(matrix, name, constraints[name])]
        missing += [f"{name} {value}" for value in admitted if value not in have]
    return wanted, missing


def _values(matrix: Matrix, name: str, constraint: Optional[Constraint]) -> List[Value]:
    """The declared values of dimension ``name`` that ``constraint`` admits (``absent`` aside)."""
    dim = matrix.dimension(name)
    values = dim.values if dim is not None else ()
    return [v for v in values if not v.absent and (constraint is None or constraint.contains(v))]


def _written_torch(release: Release) -> SpecifierSet:
    """What a release's torch admits, its variant label included (``==2.9.0+cpu``)."""
    if release.variant and release.pins:
        return SpecifierSet(",".join(f"=={pin}+{release.variant}" for pin in release.pins))
    return SpecifierSet(requirement(release.torch))


def expected_torch(builds: Iterable[WheelBuild]) -> Optional[str]:
    """The torch a release's entry should say for ``builds``: the one text they all require,
    ``None`` when they disagree or none declares one."""
    texts = {torch_text(b.torch) for b in builds if b.torch is not None}
    return texts.pop() if len(texts) == 1 else None


def expected_python(builds: Sequence[WheelBuild]) -> Tuple[PythonVersion, ...]:
    """The Pythons a release has wheels for on every platform of ``builds``."""
    common = set(builds[0].python).intersection(*(b.python for b in builds[1:])) if builds else set()
    return tuple(sorted(common, key=python_order))


def _claimed_pythons(matrix: Matrix, release: Release) -> List[PythonVersion]:
    """The Pythons a release claims: those it admits that its torch lines have wheels for."""
    out: Dict[PythonVersion, None] = {}
    for line, _patches in claimed_lines(matrix, release):
        out.update(dict.fromkeys(pythons_for(release, line)))
    return sorted(out, key=python_order)


def verify_own(matrix: Matrix, history: Optional[History], source: str) -> List[Diagnostic]:
    """Check every release of ``matrix`` against ``history`` (see the module docstring)."""
    if history is None:
        return []
    fix = f"or run `adapter-matrix validate --upstream {source} --write`"
    name = matrix.adapter.distribution
    out: List[Diagnostic] = []
    listed = set()
    for release in matrix.releases:
        if not _checked(release):
            continue
        listed.add(release.version)
        published = history.release(release.version)
        if published is None:
            pre = release.version in history.prereleases
            out.append(
                Diagnostic(
                    release.mark_of("version"),
                    f"{name} {release.version} is not on the index"
                    + (" as a release (only as a pre-release)" if pre else ""),
                    f"check the version, or remove the entry (the index has {_near(history, release.version)})",
                )
            )
            continue
        if published.yanked is not None and release.status.value != "broken":
            why = f" ({published.yanked})" if published.yanked else ""
            out.append(
                Diagnostic(
                    release.mark_of("version"),
                    f"{name} {release.version} was yanked from the index{why}; pip installs it only when pinned",
                    'mark it `status: broken` with `reason: "yanked"`, or remove it',
                )
            )
        builds, missing = _builds(matrix, release, published)
        for what in missing:
            out.append(
                Diagnostic(
                    release.mark_of("dimensions")
                    if "dimensions" in dict(release.marks)
                    else release.mark_of("version"),
                    f"{name} {release.version} has no wheel for {what} on the index "
                    f"(its wheels: {', '.join(b.platform for b in published.builds)})",
                    f"leave {what.split()[1]} out of its dimensions",
                )
            )
        if not builds:
            continue
        out += _verify_torch(name, release, builds, fix)
        out += _verify_python(matrix, name, release, builds, fix)
    for published in history.releases:
        if published.version not in listed and published.yanked is None:
            arches = ", ".join(b.platform for b in published.builds)
            out.append(
                Diagnostic(
                    matrix.releases[-1].mark if matrix.releases else matrix.adapter.mark,
                    f"{name} {published.version} is on the index ({arches}; uploaded {published.uploaded}) "
                    "but this file does not list it",
                    f"add it (`adapter-matrix init --from-index {name} --upstream {source} -o FILE` writes every release)",
                    "warning",
                )
            )
    return out


def _near(history: History, version: Version) -> str:
    same = [str(r.version) for r in history.releases if r.line == Version(version.base_version)]
    return ", ".join(same) if same else f"{len(history.releases)} releases"


def _verify_torch(name: str, release: Release, builds: List[WheelBuild], fix: str) -> List[Diagnostic]:
    out = []
    written = _written_torch(release)
    for build in builds:
        if build.torch is None:
            out.append(
                Diagnostic(
                    release.mark_of("torch"),
                    f"{name} {release.version} declares no torch requirement on {build.platform}: pip installs it "
                    f"beside any torch, and the pairing written here (torch {release.torch}) is not verified",
                    "keep it only if the project documents the pairing",
                    "warning",
                )
            )
        elif build.torch != written:
            declared = "; ".join(build.declared)
            out.append(
                Diagnostic(
                    release.mark_of("torch"),
                    f"{name} {release.version} requires torch {torch_text(build.torch)} on {build.platform} "
                    f"(its wheels declare Requires-Dist: {declared}), not torch {_shown(release)}",
                    f"write torch: {torch_text(build.torch)}, {fix}",
                )
            )
    return out


def _shown(release: Release) -> str:
    return (
        f"{release.torch}+{release.variant}"
        if release.variant and "+" not in release.torch.text
        else str(release.torch)
    )


def _verify_python(matrix: Matrix, name: str, release: Release, builds: List[WheelBuild], fix: str) -> List[Diagnostic]:
    out = []
    have = expected_python(builds)
    claimed = _claimed_pythons(matrix, release)
    lacking = [p for p in claimed if p not in have]
    if lacking:
        out.append(
            Diagnostic(
                release.mark_of("python"),
                f"{name} {release.version} has no wheel for Python {', '.join(map(str, lacking))} on "
                f"{', '.join(b.platform for b in builds)} (its wheels: {', '.join(map(str, have)) or 'none'})",
                f"write python: {python_claim(have)}, {fix}",
            )
        )
    extra = [
        p for p in have if p not in claimed and any(p in line.python for line, _p in claimed_lines(matrix, release))
    ]
    if extra:
        out.append(
            Diagnostic(
                release.mark_of("python"),
                f"{name} {release.version} also has wheels for Python {', '.join(map(str, extra))}, which its python leaves out",
                f"write python: {python_claim(have)}, {fix}",
                "warning",
            )
        )
    return out


def python_claim(pythons: Tuple[PythonVersion, ...]) -> str:
    """A Python claim as an import writes it: ``>=3.10,<3.15``, or a list when not consecutive."""
    return python_text(pythons)[0]


# -- --write ----------------------------------------------------------------------------------


def _span(line: str, column: int) -> Tuple[int, int]:
    """(start, end) columns of the one-line scalar starting at ``column`` (0-based), in
    block or flow context: a quoted one to its closing quote, a plain one to the first of
    ``,}]`` (in a flow collection), `` #`` or the end of the line."""
    if line[column] in "\"'":
        return column, line.index(line[column], column + 1) + 1
    if line[column] == "[":  # a flow list of Pythons, on one line
        return column, line.index("]", column) + 1
    flow = "{" in line[:column] or "[" in line[:column]
    stop = re.compile(r"\s*(,|\}|\]|\s#|$)" if flow else r"\s*(\s#|$)")
    match = stop.search(line, column)
    return column, match.start() if match else len(line)


def rewrite(text: str, matrix: Matrix, history: History) -> str:
    """``text`` with each checked release's ``torch`` and ``python`` as the index says, where
    every wheel the entry covers agrees; only those scalars change."""
    lines = text.splitlines(keepends=True)
    starts = line_offsets(lines)
    edits: List[Edit] = []
    for release in matrix.releases:
        published = history.release(release.version) if _checked(release) else None
        if published is None:
            continue
        builds, _missing = _builds(matrix, release, published)
        if not builds:
            continue
        torch = expected_torch(builds)
        if (
            torch is not None
            and all(b.torch is not None for b in builds)
            and SpecifierSet(requirement_of(torch)) != _written_torch(release)
        ):
            edits.append(_edit(lines, starts, release.mark_of("torch"), torch if torch[:1].isalnum() else f'"{torch}"'))
        have = expected_python(builds)
        claimed = _claimed_pythons(matrix, release)
        if have and set(claimed) != {
            p for p in have if any(p in line.python for line, _ in claimed_lines(matrix, release))
        }:
            edits.append(_edit(lines, starts, release.mark_of("python"), python_claim(have)))
    unique = sorted(set(edits))
    return apply_edits(text, unique) if unique else text


def requirement_of(torch: str) -> str:
    return torch if torch[:1] in "<>=!~" else f"=={torch}"


def _edit(lines: List[str], starts: List[int], mark: Mark, new: str) -> Edit:
    row, column = mark.line - 1, mark.column - 1
    begin, end = _span(lines[row], column)
    return (starts[row] + begin, starts[row] + end, new)


def write_own(path: str, matrix: Matrix, history: Optional[History]) -> bool:
    """Rewrite the adapter's release facts of ``path`` from ``history``; ``True`` if it changed."""
    if history is None:
        return False
    return rewrite_file(path, lambda text: rewrite(text, matrix, history), UpstreamError)
