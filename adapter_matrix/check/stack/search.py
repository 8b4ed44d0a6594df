"""One fix for the whole stack: the nearest stacks that every matrix supports.

A stack's fix is a whole stack: a Python, a torch, an adapter cell the adapter's matrix
supports, a release of every layer, the versions of what the layers pin (vllm,
triton-ascend) and the adapter's dimensions (CANN), that all agree. It is found by
resolvelib, the resolver pip uses, over the matrices' own releases: each layer release,
each usable adapter cell and each torch line is a candidate whose dependencies are its
pins, so the resolver's backtracking does the joint search and none is written here.

Which stacks are offered (docs/stacks.md, "The fix"): what the user changes is the unit.
The search asks the resolver for a stack that changes only the packages of a subset,
keeping everything else as installed, over subsets of growing size; each answer is
judged again by :func:`.stack.judge_stack` (an exception of the adapter's matrix can
make a cell the resolver chose unusable). Fixes rank by status (supported first), then
the number of things changed, then the steps by hand, then the newest; no listed fix
changes more than another listed fix of a status as good. Choices the user holds
(``--set cann=9.1.0``, ``--companion vllm-ascend=0.23.0``) are never changed; when no
stack keeps them all, :class:`StackFixes` names the conflict and offers the nearest
stacks that each give up one of them (a held value, or one layer of the stack).
"""

from __future__ import annotations

import datetime as _dt
import itertools
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from packaging.version import Version

from ...matrix.model import (
    Dimension,
    GitPin,
    Layer,
    LayerRelease,
    Matrix,
    PackagePin,
    Release,
    Value,
)
from ...matrix.queries import Cell, cells
from ...matrix.status import Status
from ...names import canonical_name
from ..changes import Change, change
from ..fixes import series_note, system_step, torch_index, unknown_step
from ..judgment import Environment, Fix, Verdict
from ..provenance import Provenance, compiled, fetch_argv, git_worktree, judge_commit, release_tag
from ..shell import quoted, shell_of
from .judge import Stack, judge_stack, stack_packages
from .space import (
    PYTHON,
    REACHABLE,
    TORCH,
    Candidates,
    Choice,
    Need,
    Space,
    anything,
    build_space,
    dim_name,
    label_of,
    resolve,
)

__all__ = ["Held", "StackFixes", "install_stack", "stack_fixes"]

_BUDGET = 400  # resolutions per search: a stack of 3 layers needs well under 100 (benchmarks/stack_check.py)


class _Searches:
    """What the searches of one answer share, passed down to each: the candidates they resolve
    over (built once) and the resolutions left to try (``left``, spent by every resolution)."""

    def __init__(self, candidates: Candidates, left: int = _BUDGET) -> None:
        self.candidates = candidates
        self.left = left


class Held(NamedTuple):
    """What the user holds fixed: dimension values they set, layer versions they asked for."""

    dimensions: Tuple[Tuple[str, Value], ...] = ()
    packages: Tuple[Tuple[str, Version], ...] = ()

    def names(self) -> Tuple[str, ...]:
        return tuple(dim_name(n) for n, _ in self.dimensions) + tuple(n for n, _ in self.packages)

    def without(self, name: str) -> Held:
        return Held(
            tuple((n, v) for n, v in self.dimensions if dim_name(n) != name),
            tuple((n, v) for n, v in self.packages if n != name),
        )

    def describe(self, name: str) -> str:
        for n, value in self.dimensions:
            if dim_name(n) == name:
                return f"{n} {value}"
        return next((f"{n} {v}" for n, v in self.packages if n == name), name)


class StackFixes(NamedTuple):
    """The fixes of a stack, and when none keeps what the user holds, why (``conflict``);
    ``reason`` when there is no fix: why none exists and what would have to change."""

    fixes: Tuple[Fix, ...]
    conflict: Optional[str] = None
    stacks: Tuple[Stack, ...] = ()  # the stack each fix leaves, in the same order
    reason: Optional[str] = None
    # a layer release held or installed that no fix keeps (end of life, broken, or no release of
    # its matrix), and where the fixes take it: said apart from ``conflict``, which it is not
    not_kept: Optional[str] = None


class _Found(NamedTuple):
    key: Tuple[Any, ...]
    changes: FrozenSet[str]
    fix: Fix
    stack: Stack  # what the fix leaves


def _state(space: Space, stack: Stack, mapping: Mapping[str, Choice]) -> Tuple[Stack, Cell]:
    """The stack a resolution leaves: its choices, and what it did not touch as installed."""
    env = stack.env
    cell: Cell = mapping[space.adapter].value
    dims = dict(env.dimensions)
    for name, choice in mapping.items():
        if name.startswith("dim:"):
            dims[name[4:]] = choice.value
    packages = dict(stack.packages)
    for name in packages:
        if name in mapping and mapping[name] is not space.current.get(name):  # the installed release stays as installed
            chosen = mapping[name].value
            packages[name] = chosen.version if isinstance(chosen, LayerRelease) else chosen
    new_env = Environment(
        python=mapping[PYTHON].value,
        python_full=env.python_full if mapping[PYTHON].value == env.python else "",
        implementation=env.implementation,
        torch=mapping[TORCH].value,
        adapter=cell.release.version,
        dimensions=tuple(dims.items()),
    )
    kept = tuple((n, p) for n, p in stack.provenance if packages.get(n) == stack.version(n))
    return Stack(new_env, tuple(packages.items()), kept, stack.built), cell


def _changes(before: Stack, after: Stack, adapter: str, detected: Iterable[str]) -> Tuple[str, ...]:
    """What a fix changes, by name: python, torch, the adapter, each package, each dimension
    whose value was known (an undetected one is a step to make sure of, not a change)."""
    out = []
    if before.env.python != after.env.python:
        out.append(PYTHON)
    if before.env.torch != after.env.torch:
        out.append(TORCH)
    if before.env.adapter != after.env.adapter:
        out.append(adapter)
    old, new = dict(before.packages), dict(after.packages)
    out += [name for name in new if old.get(name) != new[name]]
    for name in detected:
        was, now = before.env.dimension(name), after.env.dimension(name)
        if was is not None and now is not None and not was.same(now):
            out.append(name)
    return tuple(out)


def _fix(
    matrix: Matrix,
    layers: Sequence[Layer],
    before: Stack,
    after: Stack,
    cell: Cell,
    status: Status,
    changes: Tuple[str, ...],
    note: str = "",
) -> Fix:
    """How to get from ``before`` to ``after``: the steps by hand (a driver toolkit), then one
    pip command for every package (torch first from its own index when it needs one)."""
    env = after.env
    owned = [d for layer in layers for d in layer.dimensions if matrix.dimension(d.name) is None]
    by_hand = (*matrix.dimensions, *owned)  # the adapter's, and a layer's own (a driver)
    manual = _by_hand(by_hand, _constrained(layers, after, cell), before, after, cell, changes)
    shell = shell_of(matrix, env, dict(cell.dimensions))
    cloned: Tuple[List[str], List[str], Dict[str, str]] = ([], [], {})
    if PYTHON not in changes:  # a new Python is a new environment: everything is installed there
        cloned = _checkouts(layers, before, after, changes, shell)
    manual += cloned[1]
    by_pip = tuple(c for c in changes if c not in cloned[2])
    manual += _unserved(layers, after, by_pip)
    pip = _pip_commands(matrix, layers, after, cell, by_pip, shell)
    commands = (*cloned[0], *pip)
    # the fix in one line: its steps, then the status and facts of the stack it reaches
    # a build by hand comes after the rest: the summary says the move ("reinstall X from A to B")
    steps = [m.split(" (")[0] for m in manual if not m.startswith("make sure") and _ONCE not in m]
    installs, diff = _installs(matrix, before, after, cell, changes, {d.name for d in by_hand}, cloned[2])
    diff = _sourced(layers, after, diff, set(cloned[2]))
    steps += installs
    facts = ", ".join(_facts(matrix, layers, after, cell))
    summary = (note + ": " if note else "") + (", then ".join(steps) or "nothing to change") + f" ({status}: {facts})"
    fixed = cell._replace(status=status, torch=env.torch or cell.torch)
    packages = tuple((n, str(v)) for n, v in after.packages if v is not None)
    return Fix(summary, commands, changes, fixed, tuple(manual), shell, packages, diff=diff, in_clones=tuple(cloned[2]))


def _constrained(layers: Sequence[Layer], after: Stack, cell: Cell) -> Set[str]:
    """The dimensions the new stack constrains: the adapter cell's, and its layers' releases'."""
    constrained = {name for name, _v in cell.dimensions}
    for layer in layers:
        version = after.version(layer.name)
        release = layer.release(version) if version is not None else None
        constrained |= {name for name, _c in release.dimensions} if release is not None else set()
    return constrained


def _by_hand(
    dimensions: Sequence[Dimension],
    constrained: Set[str],
    before: Stack,
    after: Stack,
    cell: Cell,
    changes: Tuple[str, ...],
) -> List[str]:
    """The steps pip cannot take: a dimension to upgrade or downgrade (a driver toolkit), or one
    to make sure of when it could not be detected."""
    manual = []
    for dim in dimensions:
        was, now = before.env.dimension(dim.name), after.env.dimension(dim.name)
        if dim.name in changes and was is not None and now is not None:
            series = series_note(cell.release, dim.name)  # not `note`: that is the fix's own heading
            said = change(dim.name, was, now).text  # uv's words, as the adapter's fixes say it
            manual.append(system_step(said, series))
        elif was is None and now is not None and dim.name in constrained:
            manual.append(unknown_step(dim.name, now))
    return manual


def _sourced(layers: Sequence[Layer], after: Stack, diff: Tuple[str, ...], in_clones: Set[str]) -> Tuple[str, ...]:
    """uv's diff lines, a release pip builds from its source's ref said as uv says it
    (``+ torchvision-npu==0.20.1+7.1.0 (from git+https://...@v0.20.1-7.1.0)``); not one checked
    out in its clone (``in_clones``)."""
    origin = {}
    for layer in layers:
        if layer.name in in_clones:
            continue
        version = after.version(layer.name)
        release = layer.release(version) if version is not None else None
        if layer.source is not None and release is not None and release.ref is not None:
            origin[f"+ {layer.distribution}=={version}"] = f"{layer.source.pip_url}@{release.ref}"
    return tuple(f"{line} (from {origin[line]})" if line in origin else line for line in diff)


_ONCE = ", once the rest is installed"  # a layer release built by hand: after what pip installs


def _unserved(layers: Sequence[Layer], after: Stack, changes: Tuple[str, ...]) -> List[str]:
    """The layer releases a fix installs that no index serves and no ref of their source names:
    a step by hand, never ``NAME==V`` (docs/stacks.md, "Layers no index serves")."""
    out = []
    for layer in layers:
        version = after.version(layer.name)
        release = layer.release(version) if version is not None and layer.name in changes else None
        if release is not None and layer.source is not None and layer.unserved(release):
            out.append(
                f"build {layer.distribution} {release.version} from {layer.source.url} yourself{_ONCE}"
                " (no index serves it and its matrix names no tag or commit for it)"
            )
    return out


def _from_source(layer: Layer, release: LayerRelease, pip: str, shell: str) -> Tuple[Optional[str], List[str]]:
    """How pip installs a release of a layer built from its source: a direct reference
    (``NAME @ git+URL@REF``), in the fix's pip command when the build is isolated, else in a
    command of its own after it, told ``--no-build-isolation`` (the build needs the torch the
    fix installs first). An installed clone of it is checked out instead (:func:`_checkouts`).
    Returns (requirement, commands)."""
    assert layer.source is not None and release.ref is not None
    requirement = quoted(f"{layer.distribution} @ {layer.source.pip_url}@{release.ref}", shell)
    if layer.source.build_isolation:
        return requirement, []
    return None, [f"{pip} install --no-build-isolation {requirement}"]


def _pip_commands(
    matrix: Matrix,
    layers: Sequence[Layer],
    after: Stack,
    cell: Cell,
    changes: Tuple[str, ...],
    shell: str,
) -> Tuple[str, ...]:
    """torch first from its own index when it needs one, then one pip command for the rest, then
    each layer built from its source that needs what those install."""
    adapter = canonical_name(matrix.adapter.distribution)
    env = after.env
    new_python = PYTHON in changes
    pip = f"python{env.python} -m pip" if new_python else "pip"
    names = {layer.name: layer for layer in layers}
    commits = _git_pins_of(layers, after)
    requirements: List[str] = []
    built: List[str] = []  # after the pip command: what builds against what it installs
    torch_first = None
    for name in [TORCH, adapter] + [n for n, _ in after.packages]:
        if name not in changes and not (new_python and name != PYTHON):
            continue
        if name == TORCH and env.torch is not None:
            index = torch_index(matrix, cell.release, cell.line, env.torch.local) or ""
            if index:
                torch_first = f"{pip} install {quoted(f'torch=={env.torch}', shell)}{index}"
            else:
                requirements.append(quoted(f"torch=={env.torch}", shell))
        elif name == adapter:
            requirements.append(quoted(f"{matrix.adapter.distribution}=={cell.release.version}", shell))
            if cell.release.index_url:
                requirements.append(f"--extra-index-url {cell.release.index_url}")
        else:
            version = dict(after.packages).get(name)
            layer = names.get(name)
            release = layer.release(version) if layer is not None and version is not None else None
            if layer is not None and release is not None and layer.source is not None and release.ref is not None:
                # from its repository: no index serves it
                requirement, commands = _from_source(layer, release, pip, shell)
                requirements += [requirement] if requirement else []
                built += commands
            elif layer is not None and release is not None and layer.unserved(release):
                continue  # a step by hand (_unserved)
            elif version is not None:
                requirements += _package_requirement(name, version, layer, commits.get(name), shell)
    first = (torch_first, f"{pip} install " + " ".join(requirements) if requirements else None)
    return tuple(c for c in first if c) + tuple(built)


def _package_requirement(
    name: str, version: Version, layer: Optional[Layer], git: Optional[Tuple[Version, GitPin]], shell: str
) -> List[str]:
    """A package above the adapter as pip is told it: by the commit the release stands for (from
    its repository), else by version, from the layer's own index when it has one."""
    shown = layer.distribution if layer is not None else name
    if git is not None and git[0] == version:
        return [quoted(f"{shown} @ {git[1].pip_url}@{git[1].ref}", shell)]
    requirement = [quoted(f"{shown}=={version}", shell)]
    if layer is not None and layer.index_url:
        requirement.append(f"--extra-index-url {layer.index_url}")
    return requirement


def _installs(
    matrix: Matrix,
    before: Stack,
    after: Stack,
    cell: Cell,
    changes: Tuple[str, ...],
    by_hand: Set[str],
    cloned: Mapping[str, str],
) -> Tuple[List[str], Tuple[str, ...]]:
    """The step pip takes, in words (a new Python, and what to install; ``cloned``: the words of
    a package checked out in its clone instead, empty when a step by hand says it), and uv's diff lines."""
    adapter = canonical_name(matrix.adapter.distribution)
    parts = []
    if PYTHON in changes:
        parts.append(f"use Python {after.env.python}")
    shown_changes = [n for n in changes if n not in (PYTHON,) and n not in by_hand]
    # as uv says them, as the adapter's fixes do: "downgrade torch from 2.16.0 to 2.15.0", "- torch==2.16.0"
    moves = [_move(n, before, after, adapter, matrix, cell) for n in shown_changes]
    parts += [cloned.get(n, move.text) for n, move in zip(shown_changes, moves) if cloned.get(n, move.text)]
    return ([" and ".join(parts)] if parts else []), tuple(line for move in moves for line in move.lines)


def _facts(matrix: Matrix, layers: Sequence[Layer], after: Stack, cell: Cell) -> List[str]:
    """What the stack a fix reaches is: each layer, the adapter, torch, Python and the dimensions."""
    env = after.env
    names = {layer.name: layer for layer in layers}
    facts = [f"{names[n].distribution} {v}" for n, v in after.packages if n in names and v is not None]
    facts += [f"{matrix.adapter.distribution} {cell.release.version}", f"torch {env.torch}", f"Python {env.python}"]
    facts += [
        f"{name} {value}" for name, value in env.dimensions if value is not None and matrix.dimension(name) is not None
    ]
    return facts


def _git_pins_of(layers: Sequence[Layer], after: Stack) -> Dict[str, Tuple[Version, GitPin]]:
    """The packages the layers' releases in ``after`` pin by commit: name -> (version, pin)."""
    out: Dict[str, Tuple[Version, GitPin]] = {}
    for layer in layers:
        version = after.version(layer.name)
        release = layer.release(version) if version is not None else None
        for pin in release.packages if release is not None else ():
            if pin.git is not None and pin.exact:
                out.setdefault(pin.name, (Version(pin.exact[0].public), pin.git))
    return out


def _move(name: str, before: Stack, after: Stack, adapter: str, matrix: Matrix, cell: Cell) -> Change:
    """The change of one package from ``before`` to ``after`` (torch, the adapter, a layer)."""
    if name == TORCH:
        return change("torch", before.env.torch, after.env.torch)
    if name == adapter:
        return change(matrix.adapter.distribution, before.env.adapter, cell.release.version)
    return change(name, dict(before.packages).get(name), dict(after.packages).get(name))


def _rank(
    status: Status, changes: Tuple[str, ...], manual: Tuple[str, ...], cell: Cell, after: Stack
) -> Tuple[Any, ...]:
    newest = tuple(-v.major * 1000 - v.minor for v in (after.env.torch,) if v is not None)
    return (
        REACHABLE.index(status),
        len(changes),
        len(manual),
        newest,
        -cell.release.version.major,
        str(cell.release.version),
    )


def _pinned(space: Space, held: Held) -> Dict[str, List[Choice]]:
    """The candidates of what the user holds: their values (a --set value the matrix does not
    list is still what they hold), and the releases of the layer versions they asked for."""
    pinned: Dict[str, List[Choice]] = {}
    for name, value in held.dimensions:
        pinned[dim_name(name)] = [c for c in space.choices.get(dim_name(name), []) if c.value.same(value)] or [
            Choice(dim_name(name), value, f"{name} {value}", Status.SUPPORTED, ())
        ]
    for name, version in held.packages:
        pinned[name] = [
            c
            for c in space.choices.get(name, [])
            if (c.value.version if isinstance(c.value, LayerRelease) else c.value) == version
        ]
    return pinned


def _fixed(matrix: Matrix, space: Space, layers: Sequence[Layer]) -> Dict[str, List[Choice]]:
    """The detected values of the dimensions no one can change (a SoC, an arch, a layer's own
    device type): kept by every stack."""
    out: Dict[str, List[Choice]] = {}
    for dim in (*matrix.dimensions, *(d for layer in layers for d in layer.dimensions)):
        current = space.current.get(dim_name(dim.name))
        if not dim.changeable and current is not None:
            out[dim_name(dim.name)] = [current]
    return out


def _roots(space: Space, wanted: Sequence[str]) -> List[Need]:
    return [Need(name, "", "the stack", anything) for name in [PYTHON, TORCH, space.adapter, *wanted]]


def _attempt(
    space: Mapping[str, Sequence[Choice]], roots: Sequence[Need], searches: _Searches
) -> Optional[Dict[str, Choice]]:
    """One resolution, or None when none exists (or the resolver gives up: too deep)."""
    from resolvelib import ResolutionImpossible, ResolutionTooDeep

    searches.left -= 1
    try:
        return resolve(
            space,
            roots,
            searches.candidates,
            frozenset(n for n, options in space.items() if options and isinstance(options[0].value, LayerRelease)),
        )
    except (ResolutionImpossible, ResolutionTooDeep):
        return None


def _search(
    matrix: Matrix,
    layers: Sequence[Layer],
    stack: Stack,
    held: Held,
    today: _dt.date,
    wanted: Sequence[str],
    limit: int,
    note: str = "",
    searches: Optional[_Searches] = None,
    now: Status = Status.UNSUPPORTED,
) -> Optional[List[_Found]]:
    """The fixes that keep ``held`` and every layer of ``wanted``, nearest first, each better
    than ``now`` (the status of what is installed); ``None`` when no stack keeps them at all."""
    searches = searches if searches is not None else _Searches(Candidates())
    space = build_space(matrix, layers, stack, today, searches.candidates)
    owned = [d for layer in layers for d in layer.dimensions]
    fixed = _fixed(matrix, space, layers)
    fixed_dims = {dim_name(d.name) for d in (*matrix.dimensions, *owned) if not d.changeable}
    # What is not installed is chosen freely (installing it is a change, but there is nothing to
    # keep): only what is installed is kept or changed, subset by subset.
    installed = {name for name, choice in space.current.items() if choice is not None}
    installed |= {space.adapter} if stack.env.adapter is not None else set()
    held_names = set(held.names())
    changeable = [PYTHON, TORCH, space.adapter] + [n for n in space.choices if n not in (PYTHON, TORCH, space.adapter)]
    changeable = [n for n in changeable if n not in held_names and n not in fixed_dims and n in installed]
    pinned = _pinned(space, held)
    roots = _roots(space, wanted)
    detected = [d.name for d in (*matrix.dimensions, *owned) if stack.env.dimension(d.name) is not None]
    judged = _Resolved(matrix, layers, stack, space.adapter, today, detected, note, now, space)

    # one resolution with everything free first: when no stack keeps what is held, no subset can
    free = {name: pinned.get(name, fixed.get(name, options)) for name, options in space.choices.items()}
    anywhere = _attempt(free, roots, searches)
    if anywhere is None:
        return None
    # What is installed that no stack keeping the held values can keep (PyPI's plain torch where
    # the adapter pairs with torch's +cpu build) changes in every fix: trying to keep it, subset by
    # subset, would spend the budget before the nearest stack (one resolution each tells).
    forced = {n for n in changeable if _attempt(dict(free, **{n: _kept(space, stack, n)}), roots, searches) is None}
    optional = [n for n in changeable if n not in forced]
    kept_names = {_changed_name(n) for n in installed}
    best: Optional[int] = None  # the smallest subset that gave a fix
    for size in range(len(optional) + 1):
        if best is not None and size > best + 1:
            break  # the nearest stacks, and those one change further: no farther
        for subset in itertools.combinations(optional, size):
            if searches.left <= 0:
                break
            chosen = set(subset) | forced
            names = {_changed_name(n) for n in chosen}
            if any(f.fix.cell.status is Status.SUPPORTED and (f.changes & kept_names) <= names for f in judged.found):
                continue  # a supported fix changes no more of what is installed: nothing here can be better
            mapping = _attempt(_changing(space, stack, chosen, pinned, fixed_dims, installed), roots, searches)
            if mapping is not None:
                judged(mapping)
                best = size if best is None and judged.found else best
    if not judged.found:  # the budget ran out, or the nearest stacks were not usable: the free one, if it is
        judged(anywhere)
    return judged.found


class _Resolved:
    """The stacks a search resolved, judged: each usable one better than what is installed, and
    not seen before, is a fix (``found``)."""

    def __init__(
        self,
        matrix: Matrix,
        layers: Sequence[Layer],
        stack: Stack,
        adapter: str,
        today: _dt.date,
        detected: Sequence[str],
        note: str,
        now: Status,
        space: Space,
    ) -> None:
        self.matrix, self.layers, self.stack, self.adapter, self.today = matrix, layers, stack, adapter, today
        self.detected, self.note, self.now, self.space = detected, note, now, space
        self.found: List[_Found] = []
        self.seen: Set[Tuple[Any, ...]] = set()

    def __call__(self, mapping: Mapping[str, Choice]) -> None:
        after, cell = _state(self.space, self.stack, mapping)
        verdict = judge_stack(self.matrix, self.layers, after, self.today)
        if verdict.status not in REACHABLE or verdict.status.rank >= self.now.rank:
            return  # not usable, or no better than what is installed: no fix
        changes = _changes(self.stack, after, self.adapter, self.detected)
        identity = (tuple(sorted(after.packages, key=lambda p: p[0])), after.env, cell.release.version)
        if not changes or identity in self.seen:
            return
        self.seen.add(identity)
        fix = _fix(self.matrix, self.layers, self.stack, after, cell, verdict.status, changes, self.note)
        rank = _rank(verdict.status, changes, fix.manual, cell, after)
        self.found.append(_Found(rank, frozenset(changes), fix, after))


def _kept(space: Space, stack: Stack, name: str) -> List[Choice]:
    """The candidates of ``name`` that keep it as installed."""
    if name == space.adapter:
        return [c for c in space.choices[name] if c.value.release.version == stack.env.adapter]
    current = space.current.get(name)
    return [current] if current is not None else []


def _changing(
    space: Space,
    stack: Stack,
    chosen: Set[str],
    pinned: Mapping[str, List[Choice]],
    fixed_dims: Set[str],
    installed: Set[str],
) -> Dict[str, List[Choice]]:
    """The candidates of a resolution that changes ``chosen`` only: what is held as held, what is
    chosen (or a fixed dimension not detected) and what is not installed free, the rest kept."""
    out = {}
    for name, options in space.choices.items():
        if name in pinned:
            out[name] = pinned[name]
        elif name in chosen or (name in fixed_dims and space.current.get(name) is None):
            out[name] = options
        elif name not in installed:
            out[name] = options  # not installed (or a dimension not detected): any
        else:
            out[name] = _kept(space, stack, name)  # installed: kept
    return out


def _changed_name(name: str) -> str:
    """How a fix's ``changes`` name what the resolver calls ``name`` (``dim:cann`` is ``cann``)."""
    return name[4:] if name.startswith("dim:") else name


def _listed(found: List[_Found], limit: int) -> List[_Found]:
    """The best ``limit`` fixes, none changing more than a listed fix of a status as good."""
    out: List[_Found] = []
    for item in sorted(found, key=lambda f: f.key):
        rank = REACHABLE.index(item.fix.cell.status)
        if any(REACHABLE.index(o.fix.cell.status) <= rank and len(o.changes) < len(item.changes) for o in out):
            continue
        out.append(item)
        if len(out) >= limit:
            break
    return out


# -- when no stack keeps what the user holds: the conflict, and every way out ------------------


class _Commitment(NamedTuple):
    """One thing the stack is asked to keep: a layer (at the release the user holds, if any) or
    a held value of a dimension; ``name`` is the resolver's."""

    name: str
    label: str
    layer: bool


def _dimension(matrix: Matrix, layers: Sequence[Layer], name: str) -> Optional[Dimension]:
    """The dimension ``name``: the adapter's, or one a layer owns (a driver, a device type)."""
    return matrix.dimension(name) or next((d for layer in layers for d in layer.dimensions if d.name == name), None)


def _commitments(
    matrix: Matrix, layers: Sequence[Layer], stack: Stack, held: Held, unheld: FrozenSet[str] = frozenset()
) -> List[_Commitment]:
    """What the stack is asked to keep; a layer of ``unheld`` (its version is one no fix keeps)
    is kept at any release, and named without a version."""
    held_versions = dict(held.packages)
    out = []
    for layer in layers:
        version = None if layer.name in unheld else held_versions.get(layer.name) or stack.version(layer.name)
        out.append(_Commitment(layer.name, f"{layer.distribution} {version}" if version else layer.distribution, True))
    for name, value in held.dimensions:
        dim = _dimension(matrix, layers, name)
        if dim is not None and dim.changeable:  # a value no one can change is the machine, not a choice
            out.append(_Commitment(dim_name(name), f"{name} {value}", False))
    return out


def _keeps(
    space: Space,
    matrix: Matrix,
    layers: Sequence[Layer],
    held: Held,
    kept: Sequence[_Commitment],
    searches: _Searches,
) -> bool:
    """Whether some stack keeps every one of ``kept`` (and what no one can change)."""
    names = {c.name for c in kept}
    pinned = _pinned(space, held)
    local: Dict[str, Sequence[Choice]] = dict(space.choices)
    local.update(_fixed(matrix, space, layers))
    local.update((name, options) for name, options in pinned.items() if name in names)
    return _attempt(local, _roots(space, [c.name for c in kept if c.layer]), searches) is not None


def _core(
    space: Space,
    matrix: Matrix,
    layers: Sequence[Layer],
    held: Held,
    commitments: List[_Commitment],
    searches: _Searches,
) -> List[_Commitment]:
    """A smallest set of the commitments no stack keeps together, found by the resolver: each one
    is left out in turn, and stays out when the rest still conflict (the layers are tried first,
    so a held value stays named when it is one side)."""
    core = list(commitments)
    for item in list(commitments):
        rest = [c for c in core if c is not item]
        if not _keeps(space, matrix, layers, held, rest, searches):
            core = rest
    return core


def _options(space: Space, held: Held, item: _Commitment) -> List[Choice]:
    """The candidates a commitment stands for: the held or installed release of a layer (else
    every release of it), a held value."""
    pinned = _pinned(space, held)
    if item.name in pinned:
        return pinned[item.name]
    current = space.current.get(item.name)
    return [current] if current is not None else list(space.choices.get(item.name, ()))


def _accepted(space: Space, option: Choice, name: str, depth: int = 0) -> Tuple[Optional[FrozenSet[int]], str]:
    """The candidates of ``name`` that ``option`` accepts, by its own needs, through the
    adapter builds it pins and through the layers it requires (``None``: it says nothing of
    ``name``), and how to say it."""
    if option.name == name:
        return frozenset((id(option),)), ""
    candidates = space.choices.get(name, ())
    direct = [n for n in option.needs if n.name == name]
    via = [n for n in option.needs if n.name == space.adapter] if name != space.adapter else []
    # a layer it requires (MindSpeed-LLM requires MindSpeed) decides through the releases it admits;
    # cycles are refused at validation, the depth only bounds a chain
    through = _through(space, option, name, depth) if depth < len(space.layers) else None
    if not direct and not via and through is None:
        return None, ""
    ok = [c for c in candidates if all(n.test(c.value) for n in direct)]
    if through is not None:
        ok = [c for c in ok if id(c) in through[0]]
        if not direct and not via:
            return frozenset(id(c) for c in ok), through[1]
    text = ", ".join(n.text for n in direct)
    if via:
        cells = [cell for cell in space.choices[space.adapter] if all(n.test(cell.value) for n in via)]
        ok = [c for c in ok if any(all(n.test(c.value) for n in cell.needs if n.name == name) for cell in cells)]
        if not direct:
            shown = ", ".join(dict.fromkeys(c.label for c in ok)) or f"a {_shown_name(name)} no build has"
            return frozenset(id(c) for c in ok), f"pins {_shown_name(space.adapter)} {via[0].text}, which needs {shown}"
    return frozenset(id(c) for c in ok), f"needs {_shown_name(name)} {text}"


def _through(space: Space, option: Choice, name: str, depth: int) -> Optional[Tuple[FrozenSet[int], str]]:
    """The candidates of ``name`` that the layers ``option`` requires accept, through every
    release each pin admits, and how to say it (``requires mindspeed ==26.1.0, which needs cann
    9.1.0``); ``None`` when no layer it requires says anything of ``name``."""
    allowed: Optional[FrozenSet[int]] = None
    said: List[str] = []
    for need in option.needs:
        if need.name not in space.layers or need.name == name:
            continue
        below = [c for c in space.choices.get(need.name, ()) if need.test(c.value)]
        found = [_accepted(space, c, name, depth + 1) for c in below]
        if not found or any(a is None for a, _t in found):
            continue  # a release it admits says nothing of the name
        union = frozenset().union(*(a for a, _t in found if a is not None))
        allowed = union if allowed is None else allowed & union
        inner = found[0][1] if len(found) == 1 else f"needs one of {len(found)} releases' {_shown_name(name)}"
        said.append(f"requires {need.name} {need.text}, which {inner}")
    return None if allowed is None else (allowed, "; ".join(said))


def _shown_name(name: str) -> str:
    return "Python" if name == PYTHON else _changed_name(name)


def _decider(space: Space, held: Held, core: List[_Commitment]) -> Optional[str]:
    """The name on which the commitments of ``core`` disagree, said side by side: ``vllm-ascend
    0.23.0 needs torch ==2.10.0; mindspeed-llm 26.1.0 needs torch ==2.7.1``, or ``old-layer 1.0.0
    pins torch-npu ==2.5.1, which needs cann 8.1.RC1; you hold cann 8.5.0``."""
    held_dims = [dim_name(n) for n, _v in held.dimensions]
    dims = [n for n in space.choices if n.startswith("dim:")]
    order = list(dict.fromkeys(held_dims + dims + [TORCH, space.adapter]))
    order += [n for n in space.choices if n not in order and n != PYTHON] + [PYTHON]
    options = {item: _options(space, held, item) for item in core}
    for name in order:
        sides: List[Tuple[FrozenSet[int], str]] = []
        for item in core:
            if not item.layer:
                if item.name == name:
                    sides.append((frozenset(id(c) for c in options[item]), f"you hold {item.label}"))
                continue
            accepted = [_accepted(space, option, name) for option in options[item]]
            if not accepted or any(a is None for a, _t in accepted):
                continue  # some release of it says nothing of the name
            union = frozenset().union(*(a for a, _t in accepted if a is not None))
            sides.append((union, _sides_of(options[item], accepted, item.label, name)))
        if len(sides) >= 2 and not frozenset.intersection(*(s for s, _t in sides)):
            return "; ".join(dict.fromkeys(t for _s, t in sides))
    return None


_LISTED = 3  # a layer kept at any of this many releases or fewer has each one's need said


def _sides_of(
    options: Sequence[Choice], accepted: Sequence[Tuple[Optional[FrozenSet[int]], str]], label: str, name: str
) -> str:
    """What a layer's candidates need of ``name``, said: one release's need, each of a few
    (``mindspeed-llm 26.1.0 needs cann 9.1.0, 26.0.0 needs cann 9.0.0``), or how many."""
    if len(options) == 1:
        return f"{label_of(options[0])} {accepted[0][1]}"
    if len(options) <= _LISTED:
        versions = [str(o.value.version) if isinstance(o.value, LayerRelease) else o.label for o in options]
        said = [f"{version} {text}" for version, (_a, text) in zip(versions, accepted)]
        return f"{label} {', '.join(said)}"
    return f"{label} needs one of {len(accepted)} releases' {_shown_name(name)}"


def _conflict(
    matrix: Matrix,
    layers: Sequence[Layer],
    stack: Stack,
    held: Held,
    today: _dt.date,
    searches: _Searches,
    unheld: FrozenSet[str] = frozenset(),
) -> Tuple[str, List[_Commitment]]:
    """Why no stack keeps what the user holds, and the commitments that decide it (``unheld``:
    the layers whose version no fix keeps, kept at any maintained release)."""
    space = build_space(matrix, layers, stack, today, searches.candidates)
    core = _core(space, matrix, layers, held, _commitments(matrix, layers, stack, held, unheld), searches)
    said = _decider(space, held, core)
    if said is not None:
        return said, core
    adapter = matrix.adapter.distribution
    if len(core) == 1 and core[0].layer:
        layer = next(layer for layer in layers if layer.name == core[0].name)
        version = None if layer.name in unheld else stack.version(layer.name) or dict(held.packages).get(layer.name)
        release = layer.release(version) if version is not None else None
        if release is not None:
            from ...matrix.stack_rules import unsupported_row

            row = unsupported_row(matrix, layer, release, today)
            if row is not None:
                return row, core
        which = "maintained release" if layer.name in unheld else "release"
        return f"no {which} of {layer.distribution} is a stack {adapter}'s matrix supports here", core
    if len(core) == 1:  # a held value no release supports
        return f"no {adapter} release supports {core[0].label}", core
    if not core:
        machine = ", ".join(f"{n} {v}" for n, v in stack.env.dimensions if v is not None) or "this machine"
        return f"no {adapter} release supports {machine}", core
    return f"no stack every matrix supports has {_together([c.label for c in core])} together", core


def _together(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def _requiring(layers: Sequence[Layer], stack: Stack, dropped: Layer) -> List[Layer]:
    """``dropped`` and every layer that requires it, through one another (MindSpeed-LLM pins
    MindSpeed: without MindSpeed, without MindSpeed-LLM too): the installed release's pins,
    else every release's."""
    out = [dropped]
    changed = True
    while changed:
        changed = False
        for layer in layers:
            if layer in out:
                continue
            version = stack.version(layer.name)
            release = layer.release(version) if version is not None else None
            releases = [release] if release is not None else list(layer.releases)
            gone = {o.name for o in out}
            if releases and all(any(p.name in gone for p in r.packages) for r in releases):
                out.append(layer)
                changed = True
    return out


_UNINSTALLED = "uninstall:"  # how a way out's compared changes name a layer it removes


def _way_out_key(item: _Found, gave_up: Tuple[str, ...], layer: bool) -> Tuple[Any, ...]:
    """The one rule of the ways out (docs/stacks.md): the better status, then the fewest things
    given up, then a held value before a layer (every layer kept), then the newest stack (its
    torch, its adapter release), then by name. Nothing here depends on what is installed."""
    torch = item.stack.env.torch
    adapter = item.fix.cell.release.version
    return (
        REACHABLE.index(item.fix.cell.status),
        len(gave_up),
        layer,
        tuple(-p for p in torch.release) if torch is not None else (),
        tuple(-p for p in adapter.release),
        gave_up,
    )


def _ways_out(
    matrix: Matrix,
    layers: Sequence[Layer],
    stack: Stack,
    held: Held,
    today: _dt.date,
    now: Status,
    searches: _Searches,
    adapter: Optional[Verdict] = None,
    unheld: FrozenSet[str] = frozenset(),
) -> List[_Found]:
    """Every way out of a conflict, each the nearest stack that gives up one thing: a held value
    (another value of a held dimension, another release of a held layer), or a layer (with the
    layers that require it). Ranked by :func:`_way_out_key`; one that gives up more than another
    and changes more, for a status no better, is left out (``unheld``: the layers at a release no
    fix keeps, whose move to a maintained release is not compared with uninstalling them)."""
    wanted = [layer.name for layer in layers]
    ways: List[Tuple[_Found, Tuple[str, ...], bool]] = []
    for name in held.names():  # give up one held value
        if name.startswith("dim:") and not getattr(_dimension(matrix, layers, name[4:]), "changeable", True):
            continue  # the machine (a SoC, an arch): nothing to give up
        what = held.describe(name)
        got = _search(matrix, layers, stack, held.without(name), today, wanted, 1, f"without {what}", searches, now)
        ways += [(f, (what,), False) for f in _listed(got or [], 1)]
    for layer in layers:  # give up one layer, and those that require it
        gone = _requiring(layers, stack, layer)
        rest = [other for other in layers if other not in gone]
        kept = Stack(stack.env, tuple(p for p in stack.packages if p[0] not in {g.name for g in gone}))
        rest_held = Held(held.dimensions, tuple((n, v) for n, v in held.packages if n not in {g.name for g in gone}))
        uninstall = [g.distribution for g in gone if stack.version(g.name) is not None]
        names = [g.distribution for g in gone]
        note = f"without {names[0]}" + (f" (and {_together(names[1:])}, which require it)" if len(names) > 1 else "")
        as_is = _dropped(matrix, gone, rest, kept, today, now, note, adapter) if uninstall else []
        got = as_is or _listed(
            _search(matrix, rest, kept, rest_held, today, [o.name for o in rest], 1, note, searches, now) or [], 1
        )
        commands = (f"pip uninstall -y {' '.join(uninstall)}",) if uninstall else ()
        for f in got:
            fix = f.fix if f in as_is else f.fix._replace(commands=commands + f.fix.commands)
            removed = [g.name for g in gone if stack.version(g.name) is not None]
            changes = tuple(dict.fromkeys((*removed, *fix.changes)))
            fix = fix._replace(changes=changes)
            # a layer at a release no fix keeps (end of life) moves to a maintained one: uninstalling
            # it is another change than that move, compared apart (a way out that keeps the layer on
            # another CANN does not change a superset of "without it")
            compared = frozenset(_UNINSTALLED + n if n in removed and n in unheld else n for n in changes)
            ways.append((f._replace(fix=fix, changes=compared), tuple(names), True))
    out: List[_Found] = []
    for item, _gave_up, _layer in sorted(ways, key=lambda w: _way_out_key(*w)):
        rank = REACHABLE.index(item.fix.cell.status)
        # a way out that changes more than another (what it gives up is among its changes), for a
        # status no better, is left out; an equal one is the same stack reached another way
        if any(REACHABLE.index(o.fix.cell.status) <= rank and o.changes <= item.changes for o in out) or any(
            REACHABLE.index(o.fix.cell.status) <= rank and o.changes < item.changes for o, _g, _l in ways
        ):
            continue
        out.append(item)
    return out


def _dropped(
    matrix: Matrix,
    gone: Sequence[Layer],
    rest: Sequence[Layer],
    kept: Stack,
    today: _dt.date,
    now: Status,
    note: str,
    adapter: Optional[Verdict] = None,
) -> List[_Found]:
    """The stack without the ``gone`` layers, as it is: a fix when what remains is usable and
    better than ``now`` (uninstall them). ``adapter``: the installed adapter's verdict, when known."""
    judged = judge_stack(matrix, rest, kept, today, adapter=adapter)
    if judged.status not in REACHABLE or judged.status.rank >= now.rank:
        return []
    torch, python = kept.env.torch, kept.env.python
    cell = next(
        (
            c
            for c in cells(matrix, judged.adapter.release, today)
            if torch is not None and c.line.holds(torch) and c.python == python
        ),
        None,
    )
    if cell is None or torch is None:
        return []
    names = " ".join(g.distribution for g in gone if kept.version(g.name) is None)
    summary = f"{note}: uninstall {'it' if len(gone) == 1 else 'them'}, the rest stays as installed ({judged.status})"
    packages = tuple((n, str(v)) for n, v in kept.packages if v is not None)
    fix = Fix(
        summary,
        (f"pip uninstall -y {names}",),
        tuple(g.name for g in gone),
        cell._replace(status=judged.status),
        packages=packages,
    )
    return [_Found((REACHABLE.index(judged.status), len(gone)), frozenset(g.name for g in gone), fix, kept)]


def _what_would_change(matrix: Matrix, layers: Sequence[Layer], core: List[_Commitment]) -> str:
    """What would have to change for a stack to keep ``core``: a release of one of its layers, or
    of the adapter, that supports them together."""
    adapter = matrix.adapter.distribution
    names = [layer.distribution for layer in layers if any(c.layer and c.name == layer.name for c in core)]
    if not core:
        return f"it would take a release of {adapter} for this machine"
    whom = f"{' or '.join(names)} (or of {adapter})" if names else adapter
    what = f"{_together([c.label for c in core])} together" if len(core) > 1 else core[0].label
    return f"it would take a release of {whom} that supports {what}"


_FROM_CLONE = ("checkout", "editable", "directory")  # installed from a clone: a fix acts on the clone


def _checkout(found: Provenance, ref: str, fetch: Optional[List[str]], shell: str) -> List[str]:
    """The commands that move the clone ``found`` is installed from to ``ref`` (fetched first
    when ``fetch`` says how) and keep it installed from there: an editable install of a
    pure-Python package follows its files as they are, one with compiled extensions is rebuilt
    in place, a folder install (``pip install CLONE``, a copy) is installed again."""
    assert found.source is not None
    source = quoted(found.source, shell)
    git = f"git -C {source}"
    out = (
        [" ".join([git, *(a if a.startswith("-") or a == "fetch" else quoted(a, shell) for a in fetch)])]
        if fetch
        else []
    )
    out.append(f"{git} checkout {quoted(ref, shell)}")
    if found.kind == "editable" and compiled(found.source):
        out.append(f"pip install --no-deps --no-build-isolation -e {source}")
    elif found.kind == "directory":
        out.append(f"pip install --no-deps {source}")
    return out


def _checkouts(
    layers: Sequence[Layer], before: Stack, after: Stack, changes: Tuple[str, ...], shell: str
) -> Tuple[List[str], List[str], Dict[str, str]]:
    """The packages ``changes`` moves that are installed from a clone (editable, a folder, a
    checkout on the import path): pip would replace the clone with a wheel, so the fix checks
    out the release in the clone, by the commit a layer pins, else by its tag (``vX.Y.Z`` or
    ``X.Y.Z``); without either, a step by hand that names the version. Their commands, their
    steps by hand, and each one's step in words (empty: said by hand)."""
    names = {layer.name: layer for layer in layers}
    commits = _git_pins_of(layers, after)
    commands: List[str] = []
    manual: List[str] = []
    said: Dict[str, str] = {}
    for name, version in after.packages:
        found = before.origin(name)
        if name not in changes or version is None or found is None or found.kind not in _FROM_CLONE:
            continue
        if found.source is None or git_worktree(found.source) is None:
            continue
        shown = names[name].distribution if name in names else name
        pin = commits.get(name)
        layer = names.get(name)
        release = layer.release(version) if layer is not None and layer.source is not None else None
        if layer is not None and layer.source is not None and release is not None and release.ref is not None:
            # the tag or commit its source's release is built from (v0.20.1-7.1.0: no tag says 0.20.1+7.1.0)
            fetch = fetch_argv(found.source, release.ref, found.url, layer.source.url)
            commands += _checkout(found, release.ref, fetch, shell)
            said[name] = f"check out {shown} {release.ref} in {found.source}"
        elif pin is not None and pin[0] == version:
            commands += _checkout(found, pin[1].ref, fetch_argv(found.source, pin[1].ref, found.url, pin[1].url), shell)
            said[name] = f"check out {shown} {pin[1].ref} in {found.source}"
        else:
            tag = release_tag(found.source, str(version))
            if tag is not None:
                commands += _checkout(found, tag, None, shell)
                said[name] = f"check out {shown} {tag} in {found.source}"
            else:
                manual.append(
                    f"check out {shown} {version} in {found.source} (its clone holds no tag v{version} or {version}; "
                    f"keep it installed from the clone: a wheel from pip would replace it)"
                )
                said[name] = ""
    return commands, manual, said


def _repin(name: str, found: Provenance, pin: PackagePin, shell: str) -> List[str]:
    """The commands that put the pinned commit of ``pin`` where ``found`` is installed."""
    assert pin.git is not None
    ref = pin.git.ref
    if found.kind in _FROM_CLONE and found.source is not None:
        fetch = fetch_argv(found.source, ref, found.url, pin.git.url)  # a shallow clone lacks the commit
        return _checkout(found, ref, fetch, shell)
    return [f"pip install --no-deps {quoted(f'{name} @ {pin.git.pip_url}@{ref}', shell)}"]


def _recommitted(matrix: Matrix, layers: Sequence[Layer], stack: Stack) -> Tuple[Stack, List[str], List[str]]:
    """``stack`` with every package an installed layer pins by commit at that commit: the stack,
    the commands (a checkout, or pip's VCS install) and the packages moved."""
    origins = dict(stack.provenance)
    shell = shell_of(matrix, stack.env)
    commands: List[str] = []
    moved: List[str] = []
    for layer in layers:
        version = stack.version(layer.name)
        release = layer.release(version) if version is not None else None
        for pin in release.packages if release is not None else ():
            found = origins.get(pin.name)
            if pin.git is None or found is None or found.kind == "wheel" or pin.name in moved:
                continue
            judged = judge_commit(found, pin.git.ref)
            if judged.ok is not False:
                continue
            commands += _repin(pin.name, found, pin, shell)
            origins[pin.name] = found._replace(
                commit=judged.pinned or pin.git.ref, requested=pin.git.ref, describe=None
            )
            moved.append(pin.name)
    return stack._replace(provenance=tuple(origins.items())), commands, moved


def _cell_here(matrix: Matrix, release: Optional[Release], stack: Stack, today: _dt.date) -> Optional[Cell]:
    """The adapter's cell of ``stack`` as installed (its release, torch line and Python)."""
    torch, python = stack.env.torch, stack.env.python
    if release is None or torch is None:
        return None
    found = next((c for c in cells(matrix, release, today) if c.line.holds(torch) and c.python == python), None)
    # the torch installed, with its build's label (2.10.0+cpu): what --emit pins and where from
    return found._replace(torch=torch) if found is not None else None


def stack_fixes(
    matrix: Matrix,
    layers: Sequence[Layer],
    stack: Stack,
    held: Held,
    today: _dt.date,
    limit: int = 3,
    now: Optional[Status] = None,
    adapter: Optional[Verdict] = None,
) -> StackFixes:
    """The nearest whole stacks every matrix supports, each better than ``now`` (the installed
    stack's status; judged when not given), or why there is none (see the module's docstring).
    ``adapter``: the installed adapter's verdict (without fixes), when the caller has it. A package
    at another commit than a layer pins is moved to it first (``git checkout``, or pip's VCS
    install): every fix starts with those commands."""
    repinned, commands, moved = _recommitted(matrix, layers, stack)
    if commands:
        judged = judge_stack(matrix, layers, repinned, today)
        cell = _cell_here(matrix, judged.adapter.release, repinned, today)
        summary = "move " + ", ".join(moved) + " to the commit" + ("s" if len(moved) > 1 else "") + " pinned"
        if judged.status in REACHABLE and cell is not None:
            fix = Fix(
                f"{summary} ({judged.status})",
                tuple(commands),
                tuple(moved),
                cell._replace(status=judged.status),
                packages=tuple((n, str(v)) for n, v in repinned.packages if v is not None),
            )
            return StackFixes((fix,), None, (repinned,))
        rest = _versions_fixes(matrix, layers, repinned, held, today, limit, judged.status, None)
        return rest._replace(
            fixes=tuple(
                f._replace(
                    summary=f"{summary}, then {f.summary}",
                    commands=tuple(commands) + f.commands,
                    changes=tuple(moved) + f.changes,
                )
                for f in rest.fixes
            )
        )
    if now is None:
        now = judge_stack(matrix, layers, stack, today, adapter=adapter).status
    return _versions_fixes(matrix, layers, stack, held, today, limit, now, adapter)


def _versions_fixes(
    matrix: Matrix,
    layers: Sequence[Layer],
    stack: Stack,
    held: Held,
    today: _dt.date,
    limit: int,
    now: Status,
    adapter: Optional[Verdict],
) -> StackFixes:
    """The stacks of other versions (:func:`stack_fixes`, once every package is at the commit pinned)."""
    wanted = [layer.name for layer in layers]
    unkept = _unkept(layers, stack, held)
    for gone in unkept:  # a release no fix lands on is not a choice to keep: it is what the fixes move
        held = held.without(gone.layer.name)
    held = _as_released(layers, held)
    searches = _Searches(Candidates())  # one answer's: every search below shares its candidates and budget
    found = _search(matrix, layers, stack, held, today, wanted, limit, searches=searches, now=now)
    if found:
        best = _listed(found, limit)
        said = _not_kept(unkept, "the fixes move it to a maintained release")
        return StackFixes(tuple(f.fix for f in best), None, tuple(f.stack for f in best), None, said)
    if found is not None:  # stacks keep what is held, and none is better than what is installed
        if now in REACHABLE:
            return StackFixes(
                (),
                None,
                (),
                f"no better combination: no stack every matrix supports with what you hold is better than {now} here; it would take a release marked supported",
                _not_kept(unkept),
            )
        return StackFixes(
            (),
            None,
            (),
            "no fix: no stack every matrix supports with what you hold was found within the search's budget; ask again with fewer layers held",
            _not_kept(unkept),
        )
    unheld = frozenset(gone.layer.name for gone in unkept)
    conflict, core = _conflict(matrix, layers, stack, held, today, searches, unheld)
    ways = _ways_out(matrix, layers, stack, held, today, now, searches, adapter, unheld)
    reason = None
    if not ways:
        reason = (
            "no fix: no stack gives up one of what you hold or one layer and keeps the rest; "
            + _what_would_change(matrix, layers, core)
        )
    in_core = {c.name for c in core if c.layer}
    said = _not_kept(unkept, conflict=in_core)
    return StackFixes(tuple(f.fix for f in ways), conflict, tuple(f.stack for f in ways), reason, said)


def _as_released(layers: Sequence[Layer], held: Held) -> Held:
    """``held`` with each layer version given as the release it is (``0.23.0+cpu`` is release
    0.23.0, as the layer's verdict judged it), which the resolver's candidates are."""
    by_name = {layer.name: layer for layer in layers}
    packages = []
    for name, version in held.packages:
        release = by_name[name].release(version) if name in by_name else None
        packages.append((name, release.version if release is not None else version))
    return held._replace(packages=tuple(packages))


class _Unkept(NamedTuple):
    """A layer whose held or installed version no fix keeps, and its release (None: none of its
    matrix's releases is that version)."""

    layer: Layer
    version: Version
    release: Optional[LayerRelease]


def _unkept(layers: Sequence[Layer], stack: Stack, held: Held) -> List[_Unkept]:
    """The layers held (``--companion``) or installed at a version no fix can land on: a release
    marked eol or broken (a fix lands on a supported, experimental or deprecated one only), or a
    version that is none of the releases of the layer's matrix."""
    asked = dict(held.packages)
    out = []
    for layer in layers:
        version = asked.get(layer.name) or stack.version(layer.name)
        if version is None:
            continue
        release = layer.release(version)
        if release is None or release.status not in REACHABLE:
            out.append(_Unkept(layer, version, release))
    return out


def _not_kept(unkept: Sequence[_Unkept], then: str = "", conflict: Optional[Set[str]] = None) -> Optional[str]:
    """What the answer says of each layer release no fix keeps: what it is, and where the fixes
    take it (``then``), or (``conflict``: the layers the conflict names) why no fix keeps the
    layer at another release."""
    said = []
    for gone in unkept:
        name = gone.layer.distribution
        release = gone.release
        builds = gone.layer.builds_of(gone.version) if release is None and not gone.version.local else ()
        if builds:  # several builds of its public version: which one is installed is unknown
            what = f"{name} {gone.version} is a build of {len(builds)} releases and its version does not say which"
        elif release is None:
            what = f"{name} {gone.version} is not a release its matrix describes"
        else:
            status = "end of life" if release.status is Status.EOL else f"marked {release.status}"
            what = f"{name} {gone.version} is {status}" + (f" ({release.reason})" if release.reason else "")
        text = f"{what}: no fix keeps it"
        if not any(r.status in REACHABLE for r in gone.layer.releases):
            text += f", and {name} has no maintained release (supported, experimental or deprecated)"
        elif conflict is not None and gone.layer.name in conflict:
            text += f", and no maintained release of {name} keeps what you hold (the conflict below)"
        elif then:
            text += f"; {then} of {name}"
        said.append(text)
    return "; ".join(said) or None


def install_stack(
    matrix: Matrix,
    layer: Layer,
    release: LayerRelease,
    today: _dt.date,
    platform: Sequence[Tuple[str, Value]] = (),
    candidates: Optional[Candidates] = None,
) -> Optional[Fix]:
    """The fix that installs ``release`` of ``layer`` and everything below it into a fresh
    environment (the stack table's command): the same search as :func:`stack_fixes`, holding
    the release and the dimension values it names, with the newest Python its torch and its
    own range admit. ``platform``: the machine's values of dimensions the release leaves open
    (``arch x86_64``: torch's +cpu build there), held too. ``candidates``: those the stack
    table's other rows built (a layer's releases, the adapter's cells), shared. ``None`` when the
    adapter's matrix supports no such stack."""
    torch = release.pin("torch")
    pythons = sorted(
        {
            p
            for line in matrix.torch
            if torch is None or any(torch.admits(v) for v in line.patches)
            for p in line.python
            if not p.free_threaded and (release.python is None or release.python.contains(p.version))
        },
        key=lambda p: p.version,
    )
    if not pythons:
        return None
    dims = []
    for name, constraint in release.dimensions:
        dim = matrix.dimension(name)
        exact = [v for v in (dim.values if dim is not None else ()) if constraint.contains(v)]
        if len(exact) == 1:
            dims.append((name, exact[0]))
    dims += [(name, value) for name, value in platform if name not in {n for n, _v in dims}]
    held = Held(tuple(dims), ((layer.name, release.version),))
    candidates = candidates if candidates is not None else Candidates()
    for python in reversed(pythons):  # the newest Python that has the whole stack
        env = Environment(python=python, dimensions=tuple(dims))
        stack = Stack(env, tuple((name, None) for name in stack_packages([layer])))
        found = [
            f
            for f in _search(matrix, [layer], stack, held, today, [layer.name], 1, searches=_Searches(candidates)) or []
            if PYTHON not in f.changes
        ]
        if found:
            return _listed(found, 1)[0].fix
    return None
