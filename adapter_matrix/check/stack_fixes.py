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
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.model import (
    GitPin,
    Layer,
    LayerRelease,
    Matrix,
    PackagePin,
    Release,
    Value,
)
from ..matrix.queries import Cell, cells
from ..matrix.status import Status
from ..names import canonical_name
from .fixes import series_note, torch_index
from .judgment import Environment, Fix
from .provenance import Provenance, judge_commit
from .shell import quoted, shell_of
from .stack import Stack, judge_stack, stack_packages
from .stack_space import PYTHON, REACHABLE, TORCH, Choice, Need, Space, anything, build_space, dim_name, resolve

__all__ = ["Held", "StackFixes", "install_stack", "stack_fixes"]

_BUDGET = 400  # resolutions per search: a stack of 3 layers needs well under 100 (benchmarks/stack_check.py)


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
    """The fixes of a stack, and when none keeps what the user holds, why (``conflict``)."""

    fixes: Tuple[Fix, ...]
    conflict: Optional[str] = None
    stacks: Tuple[Stack, ...] = ()  # the stack each fix leaves, in the same order


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
        if name in mapping:
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
    adapter = canonical_name(matrix.adapter.distribution)
    env = after.env
    new_python = PYTHON in changes
    pip = f"python{env.python} -m pip" if new_python else "pip"
    manual = []
    # the dimensions the new stack constrains: the adapter cell's, and its layers' releases'
    constrained = {name for name, _v in cell.dimensions}
    for layer in layers:
        version = after.version(layer.name)
        release = layer.release(version) if version is not None else None
        constrained |= {name for name, _c in release.dimensions} if release is not None else set()
    owned = [d for layer in layers for d in layer.dimensions if matrix.dimension(d.name) is None]
    for dim in (*matrix.dimensions, *owned):  # the adapter's, and a layer's own (a driver)
        was, now = before.env.dimension(dim.name), env.dimension(dim.name)
        if dim.name in changes and was is not None and now is not None:
            if was.version is not None and now.version is not None:
                verb = "upgrade" if was.version < now.version else "downgrade"
            else:
                verb = "change"  # names (an enumeration): no direction
            note = series_note(cell.release, dim.name)
            manual.append(f"{verb} {dim.name} from {was} to {now} (not a pip package: install it yourself{note})")
        elif was is None and now is not None and dim.name in constrained:
            manual.append(f"make sure {dim.name} is {now} ({dim.name} could not be detected)")
    names = {layer.name: layer for layer in layers}
    shell = shell_of(matrix, env, dict(cell.dimensions))
    commits = _git_pins_of(layers, after)
    requirements: List[str] = []
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
            if version is None:
                continue
            shown = names[name].distribution if name in names else name
            git = commits.get(name)
            if git is not None and git[0] == version:  # the commit the release stands for, from its repository
                url = git[1].url if git[1].url.startswith("git+") else f"git+{git[1].url}"
                requirements.append(quoted(f"{shown} @ {url}@{git[1].ref}", shell))
                continue
            requirements.append(quoted(f"{shown}=={version}", shell))
            above = names.get(name)
            if above is not None and above.index_url:
                requirements.append(f"--extra-index-url {above.index_url}")
    commands = tuple(
        c for c in (torch_first, f"{pip} install " + " ".join(requirements) if requirements else None) if c
    )
    parts = []
    if new_python:
        parts.append(f"use Python {env.python}")
    by_hand = {d.name for d in (*matrix.dimensions, *owned)}
    shown_changes = [n for n in changes if n not in (PYTHON,) and n not in by_hand]
    if shown_changes:
        parts.append("install " + ", ".join(_named(n, before, after, adapter, matrix, cell) for n in shown_changes))
    steps = [m.split(" (")[0] for m in manual if not m.startswith("make sure")] + (
        [" and ".join(parts)] if parts else []
    )
    facts = [f"{names[n].distribution} {v}" for n, v in after.packages if n in names and v is not None]
    facts += [f"{matrix.adapter.distribution} {cell.release.version}", f"torch {env.torch}", f"Python {env.python}"]
    facts += [
        f"{name} {value}" for name, value in env.dimensions if value is not None and matrix.dimension(name) is not None
    ]
    summary = (
        (note + ": " if note else "")
        + (", then ".join(steps) or "nothing to change")
        + f" ({status}: {', '.join(facts)})"
    )
    fixed = cell._replace(status=status, torch=env.torch or cell.torch)
    packages = tuple((n, str(v)) for n, v in after.packages if v is not None)
    return Fix(summary, commands, changes, fixed, tuple(manual), shell, packages)


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


def _named(name: str, before: Stack, after: Stack, adapter: str, matrix: Matrix, cell: Cell) -> str:
    if name == TORCH:
        return f"torch {after.env.torch}"
    if name == adapter:
        return f"{matrix.adapter.distribution} {cell.release.version}"
    return f"{name} {dict(after.packages).get(name)}"


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


def _search(
    matrix: Matrix,
    layers: Sequence[Layer],
    stack: Stack,
    held: Held,
    today: _dt.date,
    wanted: Sequence[str],
    limit: int,
    note: str = "",
    budget: Optional[List[int]] = None,
) -> List[_Found]:
    """The fixes that keep ``held`` and every layer of ``wanted``, nearest first."""
    from resolvelib import ResolutionImpossible, ResolutionTooDeep

    budget = budget if budget is not None else [_BUDGET]
    space = build_space(matrix, layers, stack, today)
    held_names = set(held.names())
    owned = [d for layer in layers for d in layer.dimensions]
    fixed_dims = {dim_name(d.name) for d in (*matrix.dimensions, *owned) if not d.changeable}
    # What is not installed is chosen freely (installing it is a change, but there is nothing to
    # keep): only what is installed is kept or changed, subset by subset.
    installed = {name for name, choice in space.current.items() if choice is not None}
    installed |= {space.adapter} if stack.env.adapter is not None else set()
    changeable = [PYTHON, TORCH, space.adapter] + [n for n in space.choices if n not in (PYTHON, TORCH, space.adapter)]
    changeable = [n for n in changeable if n not in held_names and n not in fixed_dims and n in installed]
    # held values: the user's (a --set value the matrix does not list is still what they hold)
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
    roots = [
        Need(PYTHON, "", "the stack", anything),
        Need(TORCH, "", "the stack", anything),
        Need(space.adapter, "", "the stack", anything),
    ]
    roots += [Need(name, "", "the stack", anything) for name in wanted]
    detected = [d.name for d in (*matrix.dimensions, *owned) if stack.env.dimension(d.name) is not None]
    found: List[_Found] = []
    seen = set()
    # one resolution with everything free first: when no stack keeps what is held, no subset can
    free = {name: pinned.get(name, options) for name, options in space.choices.items()}
    for name in fixed_dims:
        if name not in pinned and space.current.get(name) is not None:
            free[name] = [space.current[name]]  # type: ignore[list-item]  # checked just above
    budget[0] -= 1
    try:
        resolve(free, roots)
    except (ResolutionImpossible, ResolutionTooDeep):
        return found
    kept_names = {_changed_name(n) for n in installed}
    best: Optional[int] = None  # the smallest subset that gave a fix
    for size in range(len(changeable) + 1):
        if best is not None and size > best + 1:
            break  # the nearest stacks, and those one change further: no farther
        for subset in itertools.combinations(changeable, size):
            if budget[0] <= 0:
                return found
            chosen = set(subset)
            names = {_changed_name(n) for n in chosen}
            if any(f.fix.cell.status is Status.SUPPORTED and (f.changes & kept_names) <= names for f in found):
                continue  # a supported fix changes no more of what is installed: nothing here can be better
            space_now = {}
            for name, options in space.choices.items():
                if name in pinned:
                    space_now[name] = pinned[name]
                elif name in chosen or (name in fixed_dims and space.current.get(name) is None):
                    space_now[name] = options
                elif name not in installed:
                    space_now[name] = options  # not installed (or a dimension not detected): any
                elif name == space.adapter:
                    space_now[name] = [c for c in options if c.value.release.version == stack.env.adapter]
                else:
                    space_now[name] = [space.current[name]]  # type: ignore[list-item]  # installed: kept
            budget[0] -= 1
            try:
                mapping = resolve(space_now, roots)
            except (ResolutionImpossible, ResolutionTooDeep):
                continue
            after, cell = _state(space, stack, mapping)
            judged = judge_stack(matrix, layers, after, today)
            if judged.status not in REACHABLE:
                continue
            changes = _changes(stack, after, space.adapter, detected)
            identity = (tuple(sorted(after.packages, key=lambda p: p[0])), after.env, cell.release.version)
            if not changes or identity in seen:
                continue
            seen.add(identity)
            fix = _fix(matrix, layers, stack, after, cell, judged.status, changes, note)
            found.append(_Found(_rank(judged.status, changes, fix.manual, cell, after), frozenset(changes), fix, after))
            best = size if best is None else min(best, size)
    return found


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


def _conflict(matrix: Matrix, layers: Sequence[Layer], stack: Stack, held: Held, today: _dt.date) -> str:
    """Why no stack keeps what the user holds: the pins that disagree, as resolvelib found them
    with every installed layer as installed."""
    from resolvelib import ResolutionImpossible, ResolutionTooDeep

    space = build_space(matrix, layers, stack, today)
    local: Dict[str, List[Choice]] = {n: list(opts) for n, opts in space.choices.items()}
    keep = []
    for layer in layers:  # every installed layer as installed
        installed = space.current.get(layer.name)
        if installed is not None:
            local[layer.name] = [installed]
            keep.append(layer.name)
    for name, value in held.dimensions:
        local[dim_name(name)] = [c for c in local.get(dim_name(name), []) if c.value.same(value)]
    roots = [Need(n, "", "the stack", anything) for n in [PYTHON, TORCH, space.adapter, *keep]]
    try:
        resolve(local, roots)
    except ResolutionImpossible as exc:
        by_name: Dict[str, List[str]] = {}
        for info in exc.causes:
            if info.parent is None:
                continue  # the stack's own roots ("a torch"): not a side of the conflict
            by_name.setdefault(info.requirement.name, []).append(
                f"{info.parent.label} needs {_shown(info.requirement)}"
            )
        clash = max(by_name.items(), key=lambda kv: len(set(kv[1])), default=None)
        if clash is not None:
            return "; ".join(dict.fromkeys(clash[1]))
    except ResolutionTooDeep:
        pass
    return "no release of each layer agrees with the others on " + ", ".join(held.describe(n) for n in held.names())


def _shown(need: Need) -> str:
    name = need.name[4:] if need.name.startswith("dim:") else need.name
    return f"{name} {need.text}"


def _dropped(matrix: Matrix, layer: Layer, rest: Sequence[Layer], stack: Stack, today: _dt.date) -> List[_Found]:
    """The stack without ``layer``, as it is: a fix when what remains is usable (uninstall it)."""
    kept = Stack(stack.env, tuple(p for p in stack.packages if p[0] != layer.name))
    judged = judge_stack(matrix, rest, kept, today)
    if judged.status not in REACHABLE:
        return []
    torch, python = stack.env.torch, stack.env.python
    cell = next(
        (
            c
            for c in cells(matrix, judged.adapter.release, today)
            if torch is not None and c.line.holds(torch) and c.python == python
        ),
        None,
    )
    if cell is None or stack.env.torch is None:
        return []
    summary = f"without {layer.distribution}: uninstall it, the rest stays as installed ({judged.status})"
    packages = tuple((n, str(v)) for n, v in kept.packages if v is not None)
    fix = Fix(
        summary,
        (f"pip uninstall -y {layer.distribution}",),
        (layer.name,),
        cell._replace(status=judged.status),
        packages=packages,
    )
    return [_Found((REACHABLE.index(judged.status), 1), frozenset((layer.name,)), fix, kept)]


def _repin(name: str, found: Provenance, pin: PackagePin, shell: str) -> List[str]:
    """The commands that put the pinned commit of ``pin`` where ``found`` is installed."""
    assert pin.git is not None
    ref = pin.git.ref
    if found.kind in ("checkout", "editable", "directory") and found.source is not None:
        out = [f"git -C {quoted(found.source, shell)} checkout {quoted(ref, shell)}"]
        if found.kind == "editable":
            out.append(f"pip install --no-deps -e {quoted(found.source, shell)}")  # compiled parts are rebuilt
        elif found.kind == "directory":
            out.append(f"pip install --no-deps {quoted(found.source, shell)}")
        return out
    url = pin.git.url if pin.git.url.startswith("git+") else f"git+{pin.git.url}"
    return [f"pip install --no-deps {quoted(f'{name} @ {url}@{ref}', shell)}"]


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
    return next((c for c in cells(matrix, release, today) if c.line.holds(torch) and c.python == python), None)


def stack_fixes(
    matrix: Matrix, layers: Sequence[Layer], stack: Stack, held: Held, today: _dt.date, limit: int = 3
) -> StackFixes:
    """The nearest whole stacks every matrix supports (see the module's docstring). A package at
    another commit than a layer pins is moved to it first (``git checkout``, or pip's VCS
    install): every fix starts with those commands."""
    repinned, commands, moved = _recommitted(matrix, layers, stack)
    if commands:
        judged = judge_stack(matrix, layers, repinned, today)
        cell = _cell_here(matrix, judged.adapter.release, repinned, today)
        summary = "move " + ", ".join(moved) + " to the commit" + ("s" if len(moved) > 1 else "") + " pinned"
        if judged.status in REACHABLE and cell is not None:
            fix = Fix(
                f"{summary} ({judged.status})", tuple(commands), tuple(moved), cell._replace(status=judged.status)
            )
            return StackFixes((fix,), None, (repinned,))
        rest = _versions_fixes(matrix, layers, repinned, held, today, limit)
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
    return _versions_fixes(matrix, layers, stack, held, today, limit)


def _versions_fixes(
    matrix: Matrix, layers: Sequence[Layer], stack: Stack, held: Held, today: _dt.date, limit: int
) -> StackFixes:
    wanted = [layer.name for layer in layers]
    budget = [_BUDGET]
    best = _listed(_search(matrix, layers, stack, held, today, wanted, limit, budget=budget), limit)
    if best:
        return StackFixes(tuple(f.fix for f in best), None, tuple(f.stack for f in best))
    conflict = _conflict(matrix, layers, stack, held, today)
    relaxed: List[_Found] = []
    for name in held.names():  # give up one held value
        note = f"without {held.describe(name)}"
        relaxed += _listed(_search(matrix, layers, stack, held.without(name), today, wanted, 1, note, budget), 1)
    if len(layers) > 1:  # give up one layer of the stack
        for layer in layers:
            rest = [other for other in layers if other is not layer]
            installed = stack.version(layer.name) is not None
            as_is = _dropped(matrix, layer, rest, stack, today) if installed else []
            if as_is:
                relaxed += as_is
                continue
            kept = Stack(stack.env, tuple(p for p in stack.packages if p[0] != layer.name))
            note = f"without {layer.distribution}"
            got = _listed(_search(matrix, rest, kept, held, today, [o.name for o in rest], 1, note, budget), 1)
            uninstall = (f"pip uninstall -y {layer.distribution}",) if installed else ()
            relaxed += [f._replace(fix=f.fix._replace(commands=uninstall + f.fix.commands)) for f in got]
    # the relaxations together obey the rule of every list: none changes more than a listed one as good
    listed = _listed(relaxed, len(relaxed))
    return StackFixes(tuple(f.fix for f in listed), conflict, tuple(f.stack for f in listed))


def install_stack(
    matrix: Matrix,
    layer: Layer,
    release: LayerRelease,
    today: _dt.date,
    platform: Sequence[Tuple[str, Value]] = (),
) -> Optional[Fix]:
    """The fix that installs ``release`` of ``layer`` and everything below it into a fresh
    environment (the stack table's command): the same search as :func:`stack_fixes`, holding
    the release and the dimension values it names, with the newest Python its torch and its
    own range admit. ``platform``: the machine's values of dimensions the release leaves open
    (``arch x86_64``: torch's +cpu build there), held too. ``None`` when the adapter's matrix
    supports no such stack."""
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
    for python in reversed(pythons):  # the newest Python that has the whole stack
        env = Environment(python=python, dimensions=tuple(dims))
        stack = Stack(env, tuple((name, None) for name in stack_packages([layer])))
        found = [f for f in _search(matrix, [layer], stack, held, today, [layer.name], 1) if PYTHON not in f.changes]
        if found:
            return _listed(found, 1)[0].fix
    return None
