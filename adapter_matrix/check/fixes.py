"""The fixes that reach a usable cell from an environment, and the pip commands they paste.

A fix lands in a cell that is usable for **every** dimension of the environment: the
user's Python, torch (version and variant) and adapter, and each extra dimension such
as a driver toolkit or a SoC. A dimension the user cannot change (``changeable:
false``: a SoC, an OS) is never changed by a fix. One that can (a driver toolkit) is
changed only by a fix that says so in ``manual`` ("upgrade cann from 8.0.0 to
8.1.RC1"), ranked after every fix that keeps it, and never hidden in a pip command.
Whatever a fix does not name in ``changes`` stays as installed.
"""

from __future__ import annotations

import datetime as _dt
import heapq
from typing import Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Set, Tuple, Union

from packaging.version import Version

from ..matrix.model import Matrix, Release, Status, TorchLine, Value
from ..matrix.queries import Cell, claimed_lines, claimed_patches, dimension_values, distinct_patches, pythons_for
from .changes import change
from .claims import assess
from .judgment import Environment, Fix
from .shell import quoted, shell_of
from .variants import index_label, pytorch_index

__all__ = [
    "FixAnswer",
    "FixSpace",
    "Ranked",
    "fix_answer",
    "fix_answer_of",
    "pick_answers",
    "fixes",
    "install_fix",
    "listed",
    "ranked",
    "series_note",
    "system_step",
    "torch_index",
    "unknown_step",
    "torch_requirement",
]


def torch_requirement(release: Release, line: TorchLine) -> str:
    """The pip requirement for ``line`` under ``release``: the whole line when the release
    claims a range holding every known patch, else the newest claimed version exactly;
    with the local label when the release needs a torch variant (``torch==2.8.0+cpu``)."""
    patches = claimed_patches(release, line)
    if not patches:
        return f"torch{line.spec.text}"
    newest = max(patches)
    pinned = any(line.holds(pin) for pin in release.pins)
    if not release.variant and not pinned and len(patches) == len(line.patches):
        return f"torch{line.spec.text}"
    return f"torch=={newest}" + (f"+{release.variant}" if release.variant else "")


_REACHABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)


def _public(version: Version) -> Tuple[object, ...]:
    """A version without its local label, compared as versions are (``2.8`` is ``2.8.0``)."""
    release = version.release
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    return version.epoch, release, version.pre, version.post, version.dev


class _Target(NamedTuple):
    """A usable combination and what reaching it changes."""

    cell: Cell  # its torch keeps the local label it is installed with (2.8.0+cpu)
    dims: Dict[str, Optional[Value]]  # every dimension after the fix
    changed_dims: Tuple[str, ...]  # driver-level values the user must change by hand
    unknown_dims: Tuple[str, ...]  # constrained values that could not be detected
    order: int  # the release's place in the file (ties: as before, the later entry first)


def _dimension_plan(
    matrix: Matrix, release: Release, env: Environment
) -> Optional[Tuple[Dict[str, Optional[Value]], Tuple[str, ...], Tuple[str, ...]]]:
    """The dimension values under which ``release`` serves this machine: the user's where
    the release accepts them, else (for a changeable dimension) the declared value
    nearest above the user's. ``None`` when a value the user cannot change is refused."""
    dims = dict(env.dimensions)
    changed, unknown = [], []
    for name, constraint in release.dimensions:
        dim, value = matrix.dimension(name), dims.get(name)
        if value is None:
            unknown.append(name)
            continue
        if constraint.contains(value):
            continue
        options = dimension_values(matrix, name, constraint)
        if dim is None or not dim.changeable or not options:
            return None
        newer = [
            o for o in options if o.version is not None and value.version is not None and o.version > value.version
        ]
        dims[name] = min(newer, key=lambda o: o.order) if newer else max(options, key=lambda o: o.order)
        changed.append(name)
    return dims, tuple(changed), tuple(unknown)


def _families(matrix: Matrix, env: Environment) -> FrozenSet[Optional[str]]:
    """The torch variant families a fix may land in: the installed torch's (its local
    label, ``None`` for PyPI's build: the user's hardware), and the one the installed
    adapter release requires on this machine (a user who installed IPEX 2.8.0+cpu beside
    PyPI's torch chose the CPU build: torch 2.8.0+cpu is their fix)."""
    families = {env.torch.local if env.torch is not None else None}
    if env.adapter is not None:
        entries = matrix.releases_of(env.adapter)
        here = [r for r in entries if _fits(matrix, r, env)] or list(entries)
        families.update(r.variant for r in here if r.variant is not None)
    return frozenset(families)


def _fits(matrix: Matrix, release: Release, env: Environment) -> bool:
    """Whether ``release`` accepts every detected value the user cannot change (an OS, an arch)."""
    for name, constraint in release.dimensions:
        dim, value = matrix.dimension(name), env.dimension(name)
        if dim is not None and not dim.changeable and value is not None and not constraint.contains(value):
            return False
    return True


def _family_label(
    matrix: Matrix, env: Environment, release: Release, families: FrozenSet[Optional[str]], asked: bool = False
) -> Tuple[bool, Optional[str]]:
    """Whether ``release`` keeps to a torch variant family a fix may land in
    (:func:`_families`), and the local label its torch carries then. The installed torch's
    family is kept unless the release is the installed adapter and needs the family the
    user chose with it, the matrix says ``torch-variants: {changeable: true}``, no torch is
    installed, or the torch is only ``asked`` for (a pick on the selector page)."""
    if env.torch is None or matrix.variants_changeable or asked:
        return True, release.variant
    if release.variant is not None and release.variant != env.torch.local:
        # the family the installed adapter requires, for a fix that keeps that adapter
        return release.version == env.adapter and release.variant in families, release.variant
    return True, env.torch.local


def torch_index(matrix: Matrix, release: Release, line: TorchLine, label: Optional[str]) -> Optional[str]:
    """The pip options that find torch of ``label`` for ``release`` ('' for PyPI), or
    ``None`` when no known index has that build."""
    src = None
    if release.torch_source:
        src = matrix.source(release.torch_source)
        serves = src.variant or index_label(src.index_url or "") if src is not None else None
        if label and serves and serves != label:
            return None  # the source has another build only: no +cpu nightly on the xpu nightly index
    elif label:
        # a source the user's pip can reach: an index; a find-links folder is one machine's disk
        src = next((s for s in matrix.sources if s.variant == label and s.index_url), None)
        if src is None:
            index = pytorch_index(label)  # torch's own index for a kept variant, if it has one
            return f" --index-url {index}" if index else None
    if src is None or src.name == "pypi":
        return ""
    if src.index_url:
        return f" --index-url {src.index_url}"
    return f" --find-links {src.find_links}" if src.find_links else ""


class FixSpace(NamedTuple):
    """A matrix as the fix search reads it: the model, and each release's claimed torch
    lines (:func:`claimed_lines`, in the order of ``matrix.releases``) worked out once.
    Every function below takes a matrix or its space; ``check`` asks once per answer, so a
    matrix will do, while the selector page makes one space for its thousands of cells and
    picks and passes it down (a model is immutable; no module keeps a space between calls)."""

    matrix: Matrix
    lines: Tuple[List[Tuple[TorchLine, Tuple[Version, ...]]], ...]

    @classmethod
    def of(cls, matrix: Matrix) -> FixSpace:
        return cls(matrix, tuple(claimed_lines(matrix, release) for release in matrix.releases))


Searched = Union[Matrix, FixSpace]  # what the public functions search: a matrix, or its space made once


def _space(searched: Searched) -> FixSpace:
    return searched if isinstance(searched, FixSpace) else FixSpace.of(searched)


def _targets(space: FixSpace, env: Environment, today: _dt.date, asked: bool = False) -> List[_Target]:
    """Every usable cell a fix could land in: each release's claimed torch (its pin, or
    the newest patch pip picks) with the user's variant label, each Python; and the
    installed torch itself where the release claims it. One pass over the releases.
    ``asked``: the environment's torch is asked for, not installed: any build of it will do."""
    matrix = space.matrix
    out: List[_Target] = []
    installed = env.torch
    families = _families(matrix, env)
    for order, (release, lines) in enumerate(zip(matrix.releases, space.lines)):
        keeps_family, label = _family_label(matrix, env, release, families, asked)
        if not keeps_family:
            continue
        plan = _dimension_plan(matrix, release, env)
        if plan is None:
            continue
        dims, changed, unknown = plan
        # another family only by pip in this environment: the evidence is the user's adapter, not the machine
        leaves = installed is not None and not (matrix.variants_changeable or asked) and label != installed.local
        if leaves and (changed or unknown):
            continue
        cell_dims = tuple((name, value) for name, _c in release.dimensions if (value := dims.get(name)) is not None)
        for line, patches in lines:
            if torch_index(matrix, release, line, label) is None:
                continue
            claims_installed = (
                installed is not None
                and line.holds(installed)
                and release.torch.contains(installed)
                and (release.variant is None or installed.local == release.variant)
            )
            # pip's pick of the line, and the newest patch of each part an exception splits
            # the claim into (a patch made experimental leaves the supported one to go back to)
            fresh = [Version(f"{p}+{label}") if label else p for p in distinct_patches(release, patches)]
            for python in pythons_for(release, line):
                if leaves and python != env.python:
                    continue
                # keep the installed torch (not in a new environment: a new Python), or
                # install one the release claims
                choices = list(fresh)
                if claims_installed and python == env.python and installed is not None and installed not in fresh:
                    choices.insert(0, installed)
                for torch in choices:
                    status, reasons, link, marks = assess(matrix, release, torch, python, dims, today)
                    if status in _REACHABLE:
                        cell = Cell(release, line, torch, python, cell_dims, status, "; ".join(reasons), link, marks)
                        out.append(_Target(cell, dims, changed, unknown, order))
    return out


def _driver_changes(env: Environment, target: _Target) -> List[str]:
    """``upgrade cann from 8.0.0 to 8.1.RC1`` for each value the user must change."""
    return [change(name, env.dimension(name), target.dims[name]).text for name in target.changed_dims]


def series_note(release: Release, name: str) -> str:
    """Where the release states compatible series of a toolkit, the fix says any of them will
    do, not only the value it names: ``; 2.12.0 (release 26.1.0) works with cann >=9.1.0
    (compatible series 8.5.*, 9.0.*)``."""
    constraint = release.constraint(name)
    if constraint is None or not constraint.series:
        return ""
    return f"; {release.label} works with {name} {constraint}"


def system_step(step: str, note: str = "") -> str:
    """A step pip cannot take (``upgrade cann from 8.2.RC1 to 9.1.0``), as every fix says it,
    the adapter's and a stack's alike: a system change the user makes, before the commands."""
    return f"{step} (a system change, not a pip package: install it yourself{note})"


def unknown_step(name: str, value: object) -> str:
    """The step of a fix whose ``name`` could not be detected: what it must be."""
    return f"make sure {name} is {value} ({name} could not be detected)"


def _what_changes(env: Environment, target: _Target) -> Tuple[Tuple[str, ...], Tuple[str, ...], bool, bool, bool]:
    """What reaching ``target`` changes (names), the manual steps it needs, and whether
    Python, the adapter and torch change."""
    cell, release = target.cell, target.cell.release
    python_changes = cell.python != env.python
    adapter_changes = env.adapter != release.version
    torch_changes = cell.torch != env.torch
    changes = (
        tuple(
            name
            for name, changed in (("python", python_changes), ("adapter", adapter_changes), ("torch", torch_changes))
            if changed
        )
        + target.changed_dims
    )
    manual = tuple(
        system_step(step, series_note(release, name))
        for name, step in zip(target.changed_dims, _driver_changes(env, target))
    ) + tuple(unknown_step(name, release.constraint(name)) for name in target.unknown_dims)
    return changes, manual, python_changes, adapter_changes, torch_changes


def _torch_pin(env: Environment, release: Release, cell: Cell) -> str:
    """The torch requirement that installs ``cell.torch``: the whole line when the release
    claims it and pip's pick is the cell's torch, else that version exactly. Exact too
    when the installed torch already satisfies the range: pip would keep it, and the fix
    would reinstall what is installed, and when the cell's torch is not pip's pick (an
    older patch an exception keeps supported)."""
    if cell.torch.local:
        return f"torch=={cell.torch}"
    requirement = torch_requirement(release, cell.line)
    installed = env.torch
    if not requirement.startswith("torch==") and (
        (installed is not None and cell.line.spec.contains(installed))
        or cell.torch != max(claimed_patches(release, cell.line))
    ):
        return f"torch=={cell.torch}"
    return requirement


def _fix_for(matrix: Matrix, env: Environment, target: _Target) -> Fix:
    """How to get from ``env`` to ``target``. A new Python is a new environment, so its
    commands install both torch and the adapter; torch comes from the index of the
    variant it keeps. Requirements are quoted for the shell of the fix's OS."""
    cell, release, dist = target.cell, target.cell.release, matrix.adapter.distribution
    changes, manual, python_changes, adapter_changes, torch_changes = _what_changes(env, target)
    shell = shell_of(matrix, env, dict(cell.dimensions))
    pip = f"python{cell.python} -m pip" if python_changes else "pip"
    adapter_req = quoted(f"{dist}=={release.version}", shell) + (
        f" --extra-index-url {release.index_url}" if release.index_url else ""
    )
    requirement = _torch_pin(env, release, cell)
    index = torch_index(matrix, release, cell.line, cell.torch.local) or ""
    # A new Python is a new environment: it needs torch and the adapter, changed or not.
    install_torch, install_adapter = torch_changes or python_changes, adapter_changes or python_changes
    commands: List[str] = []
    if install_torch and index:  # torch from its own index first, then the adapter
        commands.append(f"{pip} install {quoted(requirement, shell)}{index}")
        if install_adapter:
            commands.append(f"{pip} install {adapter_req}")
    elif install_torch or install_adapter:
        requirements = ([adapter_req] if install_adapter else []) + (
            [quoted(requirement, shell)] if install_torch else []
        )
        commands.append(f"{pip} install " + " ".join(requirements))
    parts = []
    if python_changes:
        parts.append(f"use Python {cell.python}")
    # as uv says them: "downgrade torch from 2.16 to 2.15.0", "- torch==2.16" / "+ torch==2.15.0"
    moves = [change("torch", env.torch, cell.torch)] * torch_changes + [
        change(dist, env.adapter, release.version)
    ] * adapter_changes
    parts += [move.text for move in moves]
    diff = tuple(line for move in moves for line in move.lines)
    summary = ", then ".join(_driver_changes(env, target) + ([" and ".join(parts)] if parts else []))
    facts = [f"{dist} {release.version}", f"torch {cell.torch}", f"Python {cell.python}"]
    facts += [f"{name} {value}" for name, value in cell.dimensions]
    summary = (summary or "nothing to change") + f" ({cell.status}: {', '.join(facts)})"
    return Fix(summary, tuple(commands), changes, cell, manual, shell, diff=diff)


class Ranked(NamedTuple):
    """A usable cell reachable from an environment, with what reaching it changes and the
    steps by hand it needs (the inputs of :class:`~.outcome.Fix`)."""

    cell: Cell
    changes: Tuple[str, ...]
    manual: Tuple[str, ...]
    target: _Target


def _keyed(space: FixSpace, env: Environment, today: _dt.date, asked: bool) -> List[Tuple[Tuple[object, ...], Ranked]]:
    """Every cell a fix could land in (:func:`_targets`) with what reaching it changes and
    its place in the one order of a fix (:func:`ranked`), before rule 4."""

    def line_key(v: Version) -> int:
        return v.major * 1000 + v.minor

    matrix = space.matrix
    installed = env.torch
    installed_line = line_key(installed) if installed is not None else 0
    installed_public = _public(installed) if installed is not None else None
    python_line = line_key(env.python.version)
    keep_family = not (matrix.variants_changeable or asked)
    keep_family_asked = not matrix.variants_changeable and any(r.variant for r in matrix.releases)
    keyed: List[Tuple[Tuple[object, ...], Ranked]] = []
    for place, target in enumerate(_targets(space, env, today, asked)):
        cell = target.cell
        changes, manual = _what_changes(env, target)[:2]
        if asked and keep_family_asked and installed is not None and _public(cell.torch) == installed_public:
            # a pick's torch is any build of it: the one of the answer's family is no change
            # (as `check --torch 2.6+cpu` asks, the build the answer installs)
            changes = tuple(c for c in changes if c != "torch")
        if installed is None:
            distance = -line_key(cell.line.minor)  # nothing installed: the newest line
        else:
            gap = line_key(cell.line.minor) - installed_line
            distance = abs(gap) * 2 + int(gap < 0)  # the nearest line, the newer one on ties
        python_gap = abs(line_key(cell.python.version) - python_line)
        pip_only = not manual and "python" not in changes
        # another variant family after those that keep it, unless the matrix says the family is no machine's
        other_family = installed is not None and keep_family and cell.torch.local != installed.local
        other_version = installed is not None and _public(cell.torch) != installed_public
        key = (
            bool(target.changed_dims),
            not pip_only,
            _REACHABLE.index(cell.status),
            len(changes),
            other_family,
            distance,
            other_version,
            -target.order,
            python_gap,
            place,  # ties: the order of the search (a stable sort)
        )
        keyed.append((key, Ranked(cell, changes, manual, target)))
    return keyed


_RANKS = {status: status.rank for status in Status}


def _improves(entry: Ranked, now: Status) -> bool:
    """Rule 4: a cell that improves the verdict and changes something."""
    return _RANKS[entry.cell.status] < _RANKS[now] and bool(entry.changes)


def ranked(matrix: Searched, env: Environment, today: _dt.date, now: Status, asked: bool = False) -> List[Ranked]:
    """Every cell a fix could land in from an environment whose verdict is ``now``, best
    first by the one rule of a fix (docs/check.md, "How fixes are ranked"). ``check``'s
    fixes are its head (:func:`fixes`); the selector page's nearest combination for a pick
    is its first entry, or its first entry that has a value the user clicked.

    1. pip-only fixes before any that needs a manual step (a driver toolkit, a value to
       make sure of, a new Python: a new environment); a driver change after all others;
    2. within those, supported before experimental before deprecated;
    3. within a status, fewest changed things first;
    4. only cells that improve the verdict (an experimental user is offered supported
       cells only) and change something;
    5. never one that reinstalls what is installed, or changes a dimension the user
       cannot change; never one that leaves the installed torch's variant family, unless
       it keeps the installed adapter and installs the torch build that adapter requires,
       by pip alone (then after those that keep the family).

    Then the nearest versions: the torch line nearest the installed one (the newer on
    ties), the installed torch's own version (``2.9.0`` -> ``2.9.0+cpu`` before
    ``2.9.1+cpu``), the file's order of releases (the newest release first: a line's newest
    post-release), the nearest Python. ``asked``: the environment is a pick on the selector
    page, its torch line asked for rather than installed, so any build of it is as near as
    another (rule 5's family does not apply). Cost: one pass over the releases and a sort
    of the usable cells.
    """
    keyed = [(key, entry) for key, entry in _keyed(_space(matrix), env, today, asked) if _improves(entry, now)]
    keyed.sort(key=lambda pair: pair[0])
    return [entry for _key, entry in keyed]


def listed(order: Iterable[Ranked], limit: int = 3) -> List[Ranked]:
    """The entries of a ranked order ``check`` lists as its fixes, in their order. A fix
    that changes more than a listed one, with no fewer manual steps, for a status no
    better, is left out: no listed fix changes more packages than another for a status no
    better. At most ``limit``; the best fix that changes a held value (a driver toolkit:
    a system change, not a pip one) always among them, last."""
    entries = list(order)  # a ranked order: every fix that keeps the held values first
    return _listed(
        (e for e in entries if not e.target.changed_dims), (e for e in entries if e.target.changed_dims), limit
    )


def _steps(entry: Ranked) -> Set[Tuple[str, str]]:
    """The manual steps of a fix as what they do: each dimension it changes with the value it
    moves to, each value to make sure of. Not their text, which names the fix's own release
    (a compatible series' note: "2.11.0 (release 26.1.0) works with cann ..."): two fixes that
    upgrade cann to 8.5.0 take the same step."""
    release = entry.cell.release
    return {(name, str(entry.target.dims[name])) for name in entry.target.changed_dims} | {
        (name, f"make sure {release.constraint(name)}") for name in entry.target.unknown_dims
    }


def _listed(pip: Iterable[Ranked], held: Iterable[Ranked], limit: int) -> List[Ranked]:
    """:func:`listed` of an order made of ``pip`` (the fixes that keep every held value)
    then ``held`` (those that change one), each in its order: read only as far as needed."""
    kept: List[Ranked] = []  # fixes that keep every dimension
    driver: List[Ranked] = []  # fixes that change a driver (sorted after all the others)

    def dominated(entry: Ranked) -> bool:
        # a listed fix changes less, with no manual step this one lacks, for a status as good
        rank = _REACHABLE.index(entry.cell.status)
        return any(
            _steps(c) <= _steps(entry)
            and set(c.changes) <= set(entry.changes)
            and _REACHABLE.index(c.cell.status) <= rank
            for c in kept + driver
        )

    for entry in pip:
        if len(kept) >= limit:
            break
        if not dominated(entry):
            kept.append(entry)
    for entry in held:
        if driver and (kept or len(driver) >= limit):
            break  # one driver-level fix after pip fixes, or `limit` of them alone
        if not dominated(entry):
            driver.append(entry)
    return kept[: limit - len(driver)] + driver if kept else driver


class FixAnswer(NamedTuple):
    """``check``'s answer for an environment, as every surface shows it: its first fix,
    and the fix that changes a held value (a toolkit, a driver: a system change) listed
    after the pip ones, when the first fix is not already one."""

    first: Optional[Ranked]
    held: Optional[Ranked]


def fix_answer_of(order: Iterable[Ranked], limit: int = 3) -> FixAnswer:
    """The :class:`FixAnswer` of a ranked order: the head of what ``check`` lists."""
    return _answer(listed(order, limit))


def _answer(shown: List[Ranked]) -> FixAnswer:
    first = shown[0] if shown else None
    held = next((e for e in shown if e.target.changed_dims), None)
    return FixAnswer(first, held if held is not first else None)


def fix_answer(matrix: Searched, env: Environment, today: _dt.date, now: Status, asked: bool = False) -> FixAnswer:
    """``check``'s answer for an environment whose verdict is ``now`` (:func:`fixes`'s
    first fix and its system change): the one function the page, ``check`` and the
    exports take their answers from."""
    return fix_answer_of(ranked(matrix, env, today, now, asked))


def pick_answers(
    matrix: Searched, env: Environment, today: _dt.date, releases: Iterable[Version]
) -> Tuple[List[Ranked], Dict[Version, FixAnswer]]:
    """For a pick on the selector page (``env``: nothing installed, its torch ``asked``
    for): :func:`ranked` for it, and :func:`fix_answer` for it with each of ``releases``
    installed, releases that describe none of the pick (so ``unsupported`` with them). One
    search for all: an installed release changes only the count of changes of its own
    cells (installing it again is no change), so each order is the pick's own with that
    release's cells moved up; each answer reads its order only as far as it needs."""
    assert env.adapter is None
    keyed = [(key, e) for key, e in _keyed(_space(matrix), env, today, True) if _improves(e, Status.UNSUPPORTED)]
    keyed.sort(key=lambda pair: pair[0])
    pip = [pair for pair in keyed if not pair[1].target.changed_dims]
    held = [pair for pair in keyed if pair[1].target.changed_dims]

    # each release's cells as they rank with it installed: one change fewer (none: not a fix)
    moved: Dict[Version, List[Tuple[Tuple[object, ...], Ranked]]] = {}
    for key, entry in keyed:
        changes = tuple(c for c in entry.changes if c != "adapter")
        if changes:
            adjusted = (key[:3] + (len(changes),) + key[4:], entry._replace(changes=changes))
            moved.setdefault(entry.cell.release.version, []).append(adjusted)

    def installed(pairs: List[Tuple[Tuple[object, ...], Ranked]], version: Version, held: bool) -> Iterator[Ranked]:
        others = (pair for pair in pairs if pair[1].cell.release.version != version)
        mine = [pair for pair in moved.get(version, []) if bool(pair[1].target.changed_dims) == held]
        return (entry for _key, entry in heapq.merge(others, mine, key=lambda pair: pair[0]))

    answers = {}
    for version in releases:
        answers[version] = _answer(_listed(installed(pip, version, False), installed(held, version, True), 3))
    return [entry for _key, entry in keyed], answers


def fixes(matrix: Searched, env: Environment, today: _dt.date, now: Status, limit: int = 3) -> List[Fix]:
    """The fixes for an environment whose verdict is ``now``: what :func:`listed` keeps of
    :func:`ranked`, each with its commands."""
    space = _space(matrix)
    return [_fix_for(space.matrix, env, entry.target) for entry in listed(ranked(space, env, today, now), limit)]


def install_fix(matrix: Searched, cell: Cell, today: _dt.date) -> Optional[Fix]:
    """The fix that reaches ``cell`` from a fresh environment: the cell's Python and
    extra-dimension values, no torch and no adapter installed (what a newcomer has). The
    same search and the same commands as :func:`fixes`, for one chosen cell rather than
    the best ranked; ``None`` when no fix reaches it (its status is not usable, or no
    known index has its torch). The selector page publishes these commands."""
    space = _space(matrix)
    env = Environment(python=cell.python, dimensions=tuple(cell.dimensions))
    wanted = dict(cell.dimensions)
    found = [
        target
        for target in _targets(space, env, today)
        if target.cell.release is cell.release
        and target.cell.line.minor == cell.line.minor
        and target.cell.python == cell.python
        and all(wanted.get(name) == value for name, value in target.cell.dimensions)
    ]
    if not found:
        return None
    exact = [t for t in found if t.cell.torch.public == cell.torch.public]
    return _fix_for(space.matrix, env, (exact or found)[0])
