"""Questions asked of a :class:`~adapter_matrix.matrix.model.Matrix`, answered in one place.

Every stage (``check``, ``tables``, ``ci``, ``validate``) asks the model through these
functions: which cells a release claims, the status of a cell and of a release, and the
shim for a torch version. The verdict for a user's environment, and the fixes, build on
them in :mod:`adapter_matrix.check.verdict` and :mod:`adapter_matrix.check.fixes`.
"""

from __future__ import annotations

import datetime as _dt
from typing import Dict, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

from packaging.version import InvalidVersion, Version

from .cellid import CellId
from .diagnostics import Mark
from .model import Constraint, Matrix, PythonVersion, Release, ShimRange, Spec, Status, TorchLine, Value

__all__ = [
    "Cell",
    "claimed_patches",
    "claimed_lines",
    "distinct_patches",
    "pythons_for",
    "cell_status",
    "release_status",
    "cells",
    "shim_for",
    "chosen",
    "maintained",
    "select_releases",
    "torch_source",
    "torch_points",
    "release_points",
]

Releases = Union[Release, Sequence[Release], None]


class Cell(NamedTuple):
    """One combination the matrix makes a statement about."""

    release: Release
    line: TorchLine
    torch: Version
    python: PythonVersion
    dimensions: Tuple[Tuple[str, Value], ...]
    status: Status
    reason: str
    link: Optional[str]
    decided_by: Tuple[Mark, ...]
    row: str = ""  # the patch, when releases pin several of the line (see torch_points)

    @property
    def torch_row(self) -> str:
        """How tables and ids name its torch: the line (``2.4``), or the patch (``2.7.0``)
        when releases pin several patches of the line and cells are judged at each."""
        return self.row or str(self.line.minor)

    @property
    def id(self) -> CellId:
        """A stable, readable id such as ``py3.11-torch2.4`` (dimensions appended if any)."""
        return CellId.of(self.python, self.torch_row, self.dimensions)


# -- claims ------------------------------------------------------------------------------


def claimed_patches(release: Release, line: TorchLine) -> Tuple[Version, ...]:
    """The known patch releases of ``line`` that ``release`` claims, and the pre-releases
    of the line it pins exactly (IPEX 2.10.10 pins the nightly ``2.10.0.dev20251205``),
    oldest first."""
    known = [p for p in line.patches if release.torch.contains(p)]
    pinned = [p for p in release.pins if p.is_prerelease and line.holds(p) and p not in known]
    return tuple(sorted(known + pinned))


def claimed_lines(matrix: Matrix, release: Release) -> List[Tuple[TorchLine, Tuple[Version, ...]]]:
    """The torch lines a release claims, each with the patches it claims."""
    out = []
    for line in matrix.torch:
        patches = claimed_patches(release, line)
        if patches:
            out.append((line, patches))
    return out


def distinct_patches(release: Release, patches: Sequence[Version]) -> Tuple[Version, ...]:
    """The newest of ``patches`` that ``release``'s exceptions treat alike, for each way
    they treat them, newest first: one patch (pip's pick) for a plain range, and more when
    an exception's torch splits the line (a range with ``torch: "==2.7.1"`` made
    experimental keeps 2.7.0, the supported patch, beside 2.7.1). Dates and other keys of
    an exception do not split a line: only its torch."""
    newest: Dict[Tuple[bool, ...], Version] = {}
    for patch in sorted(patches, reverse=True):
        newest.setdefault(tuple(_rule_matches(rule.torch, patch) for rule in release.rules), patch)
    return tuple(newest.values())


def torch_points(matrix: Matrix, releases: Sequence[Release]) -> Dict[Version, Tuple[Version, ...]]:
    """The torch versions of each line that cells are judged at, oldest first: every
    exact pin a release makes in the line (IPEX 2.7.0+cpu pins 2.7.0 while 2.7.1 exists),
    and the newest patch a release claims by a range (what ``pip install`` picks), with
    the newest patch of each part an exception's torch splits the range into
    (:func:`distinct_patches`). A line nobody pins or splits keeps one point, its newest
    claimed patch, as before."""
    points: Dict[Version, Set[Version]] = {}
    for rel in releases:
        pins = rel.pins
        for line, patches in claimed_lines(matrix, rel):
            own = [p for p in pins if line.holds(p)]
            points.setdefault(line.minor, set()).update(own or distinct_patches(rel, patches))
    return {minor: tuple(sorted(found)) for minor, found in points.items()}


def release_points(
    release: Release, line: TorchLine, patches: Tuple[Version, ...], points: Tuple[Version, ...]
) -> Tuple[Version, ...]:
    """The points of ``line`` that ``release`` claims: its own pin, else each release
    point its range holds (a pre-release only when it pins it), else its newest patch."""
    own = tuple(p for p in release.pins if line.holds(p))
    if own:
        return own
    held = tuple(p for p in points if not p.is_prerelease and release.torch.contains(p))
    return held or (max(patches),)


def pythons_for(release: Release, line: TorchLine) -> Tuple[PythonVersion, ...]:
    """Pythons of ``line`` that have wheels and that ``release`` admits."""
    return tuple(p for p in line.python if release.python.admits(p))


def dimension_values(matrix: Matrix, name: str, constraint: Constraint) -> List[Value]:
    """The declared values of dimension ``name`` that ``constraint`` accepts."""
    dim = matrix.dimension(name)
    return [v for v in (dim.values if dim else ()) if constraint.contains(v)]


def _dimension_values(matrix: Matrix, release: Release) -> List[Tuple[Tuple[str, Value], ...]]:
    """Every combination of the known values of the dimensions ``release`` constrains."""
    combos: List[Tuple[Tuple[str, Value], ...]] = [()]
    for name, constraint in release.dimensions:
        values = dimension_values(matrix, name, constraint)
        if not values:
            continue
        combos = [c + ((name, v),) for c in combos for v in values]
    return combos


def _rule_matches(spec: Optional[Spec], value: Optional[Version]) -> bool:
    if spec is None:
        return True
    return value is not None and spec.contains(value)


def _constraint_matches(constraint: Constraint, value: Optional[Value]) -> bool:
    return value is not None and constraint.contains(value)


def _after_window(release: Release, status: Status, reason: str, today: _dt.date) -> Tuple[Status, str, bool]:
    """A support window that has ended turns a working status into ``eol``."""
    if (
        release.supported_until is not None
        and today > release.supported_until
        and status in (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)
    ):
        return Status.EOL, f"support for {release.version} ended on {release.supported_until}", True
    return status, reason, False


def release_status(release: Release, today: Optional[_dt.date] = None) -> Tuple[Status, str]:
    """The release's own status on ``today`` (its exceptions aside), with the reason."""
    status, reason, _ended = _after_window(release, release.status, release.reason, today or _dt.date.today())
    return status, reason


def cell_status(
    release: Release,
    torch: Version,
    python: PythonVersion,
    dimensions: Dict[str, Optional[Value]],
    today: _dt.date,
) -> Tuple[Status, str, Optional[str], Tuple[Mark, ...]]:
    """Status of one combination of ``release``: the first matching exception, else the
    release's own status; a support window that has ended turns it into ``eol``."""
    status, reason, link = release.status, release.reason, release.link
    marks: Tuple[Mark, ...] = (release.mark,)
    for rule in release.rules:
        if (
            _rule_matches(rule.torch, torch)
            and _rule_matches(rule.python, python.version)
            and all(_constraint_matches(constraint, dimensions.get(name)) for name, constraint in rule.dimensions)
        ):
            status, reason, link = rule.status, rule.reason, rule.link
            marks = (release.mark, rule.mark)
            break
    status, reason, ended = _after_window(release, status, reason, today)
    if ended:
        marks = marks + (release.mark_of("supported-until"),)
    return status, reason, link, marks


def chosen(matrix: Matrix, release: Releases) -> Tuple[Release, ...]:
    """``release`` as a tuple: one release, several, or (``None``) every release."""
    if release is None:
        return matrix.releases
    if isinstance(release, Release):
        return (release,)
    return tuple(release)


def cells(matrix: Matrix, release: Releases = None, today: Optional[_dt.date] = None) -> List[Cell]:
    """All cells: release x torch line x Python x extra-dimension values (of one
    release, of several, or of every release when ``release`` is ``None``).

    A cell's torch is a point of its line (:func:`torch_points`): the newest patch the
    release claims, the one a ``pip install`` of the line would pick, unless releases pin
    exact patches of the line; then each pinned patch the release claims is a cell of its
    own. Cells an exception marks ``unsupported`` are not claimed, so not listed.
    """
    today = today or _dt.date.today()
    shown = chosen(matrix, release)
    points = torch_points(matrix, matrix.releases)
    out: List[Cell] = []
    for rel in shown:
        combos = _dimension_values(matrix, rel)
        for line, patches in claimed_lines(matrix, rel):
            several = len(points.get(line.minor, ())) > 1
            for torch in release_points(rel, line, patches, points.get(line.minor, ())):
                row = str(torch) if several else ""
                for python in pythons_for(rel, line):
                    for dims in combos:
                        status, reason, link, marks = cell_status(rel, torch, python, dict(dims), today)
                        if status is Status.UNSUPPORTED:
                            continue
                        out.append(Cell(rel, line, torch, python, dims, status, reason, link, marks, row))
    return out


def shim_for(matrix: Matrix, torch: Version) -> Optional[ShimRange]:
    """The shim that serves ``torch`` (local labels such as ``+cpu`` are ignored)."""
    for shim in matrix.shims:
        if shim.torch.contains(torch):
            return shim
    return None


def maintained(matrix: Matrix, today: Optional[_dt.date] = None) -> Tuple[Release, ...]:
    """The releases that are not end of life on ``today`` (by status or support window)."""
    return tuple(rel for rel in matrix.releases if release_status(rel, today)[0] is not Status.EOL)


def select_releases(matrix: Matrix, text: str) -> Tuple[Release, ...]:
    """What ``--release TEXT`` names: the entries of an adapter version, else the packages
    of a release line (``7.3.0``); empty when it names neither."""
    try:
        found = matrix.releases_of(Version(text))
    except InvalidVersion:
        found = ()
    if found:
        return found
    return tuple(rel for rel in matrix.releases if rel.release_line == text)


def torch_source(matrix: Matrix, release: Release, line: TorchLine) -> str:
    """The source torch is installed from for ``release``: the one it names, else the
    source of its torch variant, else the torch line's."""
    if release.torch_source:
        return release.torch_source
    if release.variant:
        for src in matrix.sources:
            if src.variant == release.variant:
                return src.name
    return line.install
