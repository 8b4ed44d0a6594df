"""The candidates of a stack's resolution, and resolvelib's provider over them.

Each name of a stack (``python``, ``torch``, the adapter, each layer, each package a layer
pins, each dimension as ``dim:NAME``) has candidates, preferred first, and each candidate
needs values of the others: a layer release needs its pins, an adapter cell its torch, its
Python and its dimension values, a torch patch one of its line's Pythons. resolvelib (pip's
resolver) finds values that satisfy every need (:func:`resolve`); :mod:`.stack_fixes`
decides which names may change in each resolution and which stacks become fixes.
"""

from __future__ import annotations

import datetime as _dt
from functools import partial
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.model import (
    Constraint,
    Layer,
    LayerRelease,
    Matrix,
    PackagePin,
    PinSet,
    PythonVersion,
    Release,
    TorchLine,
    Value,
)
from ..matrix.queries import Cell, cells
from ..matrix.status import Status
from ..names import canonical_name
from .stack import Stack, stack_packages

__all__ = ["PYTHON", "TORCH", "REACHABLE", "Need", "Choice", "Space", "dim_name", "anything", "build_space", "resolve"]

PYTHON, TORCH = "python", "torch"
REACHABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)  # the statuses a fix may land in


def dim_name(name: str) -> str:
    """The resolver's name for a dimension (no distribution can be called ``dim:cann``)."""
    return f"dim:{name}"


class Need(NamedTuple):
    """A requirement: ``name`` must be a value ``test`` accepts (``text`` says which), for ``parent``."""

    name: str
    text: str
    parent: str
    test: Callable[[Any], bool]
    # the public versions it can admit, when it is a pin of exact versions: the resolver looks
    # those candidates up instead of testing every one (the adapter has a candidate per cell)
    only: Optional[FrozenSet[Version]] = None


class Choice(NamedTuple):
    """A candidate: one value of ``name`` and what it needs of the others."""

    name: str
    value: Any  # PythonVersion, torch Version, adapter Cell, LayerRelease, Version, dimension Value
    label: str
    status: Status
    needs: Tuple[Need, ...]
    version: Optional[Version] = None  # its public version, where it is a distribution's (a Need's ``only``)


# What a requirement accepts: module functions bound with functools.partial (typed, no lambdas).
def anything(_value: Any) -> bool:
    return True


def _admits(pin: PackagePin, version: Optional[Version]) -> bool:
    return version is not None and pin.admits(version)


def _admits_if_installed(pin: PackagePin, version: Optional[Version]) -> bool:
    return version is None or pin.admits(version)


def _adapter_admits(pin: PackagePin, cell: Cell) -> bool:
    return pin.admits(cell.release.version)


def _python_within(spec: PinSet, python: PythonVersion) -> bool:
    return spec.contains(python.version)


def _of_line(line: str, cell: Cell) -> bool:
    return cell.release.release_line == line


def _within(constraint: Constraint, value: Value) -> bool:
    return constraint.contains(value)


def _equal(want: Any, got: Any) -> bool:
    return bool(want == got)


def _same(want: Value, got: Value) -> bool:
    return got.same(want)


def _among(allowed: Tuple[PythonVersion, ...], python: PythonVersion) -> bool:
    return python in allowed


def _claims_torch(release: Release, line: TorchLine, torch: Version) -> bool:
    return (
        line.holds(torch)
        and release.torch.contains(Version(torch.public))
        and (release.variant is None or torch.local == release.variant)
    )


class _Provider:
    """resolvelib's provider over prepared candidates (``space``: name -> choices, preferred first)."""

    def __init__(self, space: Mapping[str, Sequence[Choice]]) -> None:
        self.space = space
        self.matches: Dict[Any, List[Choice]] = {}  # (name, its needs, its refused candidates) -> matches

    def _accepts(self, need: Need, choice: Choice) -> bool:
        # a need is asked of the same candidate again and again, within a resolution and across
        # the resolutions of one answer: remembered by identity, the entry holding both objects
        # (so that neither id can be reused while the entry stands)
        key = (id(need), id(choice))
        known = _MEMO.get(key)
        if known is None:
            known = _MEMO[key] = (need, choice, need.test(choice.value))
        return known[2]

    def identify(self, requirement_or_candidate: Any) -> str:
        return str(requirement_or_candidate.name)

    def get_preference(
        self, identifier: str, resolutions: Any, candidates: Any, information: Any, backtrack_causes: Any
    ) -> Any:
        return (identifier not in resolutions, len(self.space.get(identifier, ())))  # the most constrained first

    def find_matches(self, identifier: str, requirements: Any, incompatibilities: Any) -> List[Choice]:
        needs = list(requirements[identifier])
        bad = {id(c) for c in incompatibilities[identifier]}  # by identity: hashing a cell hashes its whole release
        # backtracking asks the same question again: the answer is remembered for this resolution
        key = (identifier, frozenset(id(n) for n in needs), frozenset(bad))
        found = self.matches.get(key)
        if found is None:
            options: Sequence[Choice] = self.space.get(identifier, ())
            pinned = [n.only for n in needs if n.only is not None]
            if pinned:  # exact pins: only the candidates of those versions can match
                wanted = frozenset.intersection(*pinned)
                options = [c for c in options if c.version in wanted]
            found = [c for c in options if id(c) not in bad and all(self._accepts(n, c) for n in needs)]
            self.matches[key] = found
        return found

    def is_satisfied_by(self, requirement: Need, candidate: Choice) -> bool:
        return self._accepts(requirement, candidate)

    def get_dependencies(self, candidate: Choice) -> Tuple[Need, ...]:
        return candidate.needs

    def narrow_requirement_selection(
        self, identifiers: Any, resolutions: Any, candidates: Any, information: Any, backtrack_causes: Any
    ) -> Any:
        return identifiers


_MEMO: Dict[Tuple[int, int], Tuple[Need, Choice, bool]] = {}  # what each need said of each candidate
_MEMO_LIMIT = 200_000  # entries: a few tens of MB at most, then it starts over


def resolve(space: Mapping[str, Sequence[Choice]], roots: Sequence[Need]) -> Dict[str, Choice]:
    """One resolution; raises resolvelib's ``ResolutionImpossible`` when none exists."""
    from resolvelib import BaseReporter, Resolver

    if len(_MEMO) > _MEMO_LIMIT:
        _MEMO.clear()
    provider = _Provider(space)
    resolver: Any = Resolver(provider, BaseReporter())  # type: ignore[arg-type]  # a duck-typed provider
    return dict(resolver.resolve(roots, max_rounds=500).mapping)


class Space(NamedTuple):
    """Every candidate of a stack, preferred first, and the installed choice of each name."""

    choices: Dict[str, List[Choice]]
    current: Dict[str, Optional[Choice]]  # None: not installed, or not detected
    adapter: str  # the adapter's canonical name
    layers: Tuple[str, ...]


def _pin_need(pin: PackagePin, parent: str, adapter: str) -> Need:
    text = pin.spec.requirement
    # any of several exact versions: the resolver's candidates are their union
    only = frozenset(Version(v.public) for v in pin.exact) if pin.spec.only_exact else None
    if pin.name == adapter:
        return Need(adapter, text, parent, partial(_adapter_admits, pin), only)
    if pin.optional:  # requires-if-installed: "not installed" (None) satisfies it too
        return Need(pin.name, f"{text} if installed", parent, partial(_admits_if_installed, pin))
    return Need(pin.name, text, parent, partial(_admits, pin), only)


def _layer_choice(layer: Layer, release: LayerRelease, adapter: str) -> Choice:
    parent = f"{layer.distribution} {release.version}"
    needs = [_pin_need(pin, parent, adapter) for pin in release.packages]
    if release.python is not None:
        needs.append(Need(PYTHON, str(release.python), parent, partial(_python_within, release.python)))
    if release.adapter_line is not None:
        needs.append(
            Need(
                adapter,
                f"of release line {release.adapter_line}",
                parent,
                partial(_of_line, release.adapter_line),
            )
        )
    for name, constraint in release.dimensions:
        needs.append(Need(dim_name(name), str(constraint), parent, partial(_within, constraint)))
    label = f"{layer.distribution} {release.version}"
    return Choice(layer.name, release, label, release.status, tuple(needs), Version(release.version.public))


def _cell_choice(matrix: Matrix, cell: Cell, adapter: str) -> Choice:
    release, line = cell.release, cell.line
    parent = f"{matrix.adapter.distribution} {release.version}"

    needs = [
        Need(TORCH, str(release.torch), parent, partial(_claims_torch, release, line)),
        Need(PYTHON, f"=={cell.python}", parent, partial(_equal, cell.python)),
    ]
    needs += [Need(dim_name(n), f"=={v}", parent, partial(_same, v)) for n, v in cell.dimensions]
    return Choice(adapter, cell, parent, cell.status, tuple(needs), Version(release.version.public))


_CELLS: Dict[Tuple[int, _dt.date], Tuple[Matrix, List[Choice]]] = {}
_LAYERS: Dict[Tuple[int, str], Tuple[Layer, List[Choice]]] = {}
_TORCHES: Dict[Tuple[int, Optional[str]], Tuple[Matrix, List[Choice]]] = {}


def _torch_choices(matrix: Matrix, label: Optional[str]) -> List[Choice]:
    """Every patch of every torch line, newest first, in one variant family (``label``), each
    needing one of its line's Pythons; built once per matrix and family."""
    cached = _TORCHES.get((id(matrix), label))
    if cached is not None and cached[0] is matrix:
        return cached[1]
    out: List[Choice] = []
    for line in matrix.torch:
        for patch in line.patches:
            version = Version(f"{patch}+{label}") if label else patch
            need = Need(PYTHON, f"one of torch {line.minor}'s wheels", f"torch {version}", partial(_among, line.python))
            out.append(Choice(TORCH, version, f"torch {version}", Status.SUPPORTED, (need,), Version(version.public)))
    out.sort(key=lambda c: c.value, reverse=True)
    _TORCHES[(id(matrix), label)] = (matrix, out)
    return out


def _layer_choices(layer: Layer, adapter: str) -> List[Choice]:
    """The usable releases of ``layer``, newest first, built once per layer (like the adapter's
    cells: the searches of one answer, and the stack table's rows, share them and their memo)."""
    cached = _LAYERS.get((id(layer), adapter))
    if cached is not None and cached[0] is layer:
        return cached[1]
    out = [
        _layer_choice(layer, r, adapter)
        for r in sorted(layer.releases, key=lambda r: r.version, reverse=True)
        if r.status in REACHABLE
    ]
    _LAYERS[(id(layer), adapter)] = (layer, out)
    return out


def _adapter_choices(matrix: Matrix, today: _dt.date) -> List[Choice]:
    """Each usable cell of the adapter's matrix, the newest release first; computed once per
    matrix and day (a search builds several spaces, the stack table one per row)."""
    key = (id(matrix), today)
    cached = _CELLS.get(key)
    if cached is not None and cached[0] is matrix:
        return cached[1]
    adapter = canonical_name(matrix.adapter.distribution)
    usable = [c for c in cells(matrix, today=today) if c.status in REACHABLE]
    seen = set()
    out = []
    for cell in sorted(usable, key=lambda c: (c.release.version, c.torch, c.python.version), reverse=True):
        unique = (id(cell.release), cell.line.minor, cell.python, cell.dimensions)
        if unique not in seen:
            seen.add(unique)
            out.append(_cell_choice(matrix, cell, adapter))
    _CELLS.clear()  # one matrix at a time: a process judges one stack
    _LAYERS.clear()
    _TORCHES.clear()
    _MEMO.clear()
    _CELLS[key] = (matrix, out)
    return out


def build_space(matrix: Matrix, layers: Sequence[Layer], stack: Stack, today: _dt.date) -> Space:
    """Every candidate the matrices give, each name's newest first (Python: nearest first)."""
    env = stack.env
    adapter = canonical_name(matrix.adapter.distribution)
    choices: Dict[str, List[Choice]] = {}
    current: Dict[str, Optional[Choice]] = {}
    # Python: the installed one, then by distance (a new Python is a new environment)
    pythons = sorted(
        {p for line in matrix.torch for p in line.python} | {env.python},
        key=lambda p: (
            p != env.python,
            p.free_threaded != env.python.free_threaded,
            abs(p.version.minor - env.python.version.minor),
            -p.version.minor,
        ),
    )
    choices[PYTHON] = [Choice(PYTHON, p, f"Python {p}", Status.SUPPORTED, ()) for p in pythons]
    current[PYTHON] = choices[PYTHON][0]
    # torch: every patch of every line, in the installed torch's variant family; with none
    # installed, of every family a release needs (torch-npu's x86_64 cells: torch's +cpu
    # build), PyPI's build first where a release takes either
    if env.torch is not None:
        torches = _torch_choices(matrix, env.torch.local)
    else:
        labels = [None] + sorted({r.variant for r in matrix.releases if r.variant is not None})
        torches = sorted(
            (c for label in labels for c in _torch_choices(matrix, label)),
            key=lambda c: (Version(c.value.public), c.value.local is None),
            reverse=True,
        )
    choices[TORCH] = torches
    current[TORCH] = next((c for c in torches if env.torch is not None and c.value == env.torch), None)
    # the adapter: each usable cell of its matrix, the newest release first
    choices[adapter] = _adapter_choices(matrix, today)
    current[adapter] = None  # the adapter's current choice depends on torch and Python: compared by version
    # the layers and what they pin
    for layer in layers:
        choices[layer.name] = _layer_choices(layer, adapter)
        installed_version = stack.version(layer.name)
        entry = layer.release(installed_version) if installed_version is not None else None
        current[layer.name] = next((c for c in choices[layer.name] if entry is not None and c.value == entry), None)
    for name in stack_packages(layers):
        if name in choices:
            continue
        pins = [p for layer in layers for r in layer.releases for p in r.packages if p.name == name]
        named = {v for p in pins for v in p.exact}
        installed = stack.version(name)
        versions = sorted(named | ({installed} if installed is not None else set()), reverse=True)
        choices[name] = [Choice(name, v, f"{name} {v}", Status.SUPPORTED, (), Version(v.public)) for v in versions]
        current[name] = next((c for c in choices[name] if c.value == installed), None)
        if installed is None and any(p.optional for p in pins):
            # a package pinned only if installed stays absent, unless a layer requires it
            choices[name].insert(0, Choice(name, None, f"no {name}", Status.SUPPORTED, ()))
    owned = [d for layer in layers for d in layer.dimensions if matrix.dimension(d.name) is None]
    for dim in (*matrix.dimensions, *owned):  # the adapter's dimensions, and those a layer owns
        if dim_name(dim.name) in choices:
            continue
        value = env.dimension(dim.name)
        values = sorted(dim.values, key=lambda v: v.order, reverse=True)
        if value is not None and not any(v.same(value) for v in values):
            values.append(value)
        name = dim_name(dim.name)
        choices[name] = [Choice(name, v, f"{dim.name} {v}", Status.SUPPORTED, ()) for v in values]
        current[name] = next((c for c in choices[name] if value is not None and c.value.same(value)), None)
    return Space(choices, current, adapter, tuple(layer.name for layer in layers))
