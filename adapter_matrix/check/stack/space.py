"""The candidates of a stack's resolution, and resolvelib's provider over them.

Each name of a stack (``python``, ``torch``, the adapter, each layer, each package a layer
pins, each dimension as ``dim:NAME``) has candidates, preferred first, and each candidate
needs values of the others: a layer release needs its pins, an adapter cell its torch, its
Python and its dimension values, a torch patch one of its line's Pythons. resolvelib (pip's
resolver) finds values that satisfy every need (:func:`resolve`); :mod:`.search`
decides which names may change in each resolution and which stacks become fixes.
"""

from __future__ import annotations

import datetime as _dt
from functools import partial
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from packaging.version import Version

from ...matrix.model import (
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
from ...matrix.queries import Cell, cells
from ...matrix.status import Status
from ...names import canonical_name
from ..judgment import Environment
from .judge import Stack, stack_packages

__all__ = [
    "PYTHON",
    "TORCH",
    "REACHABLE",
    "Need",
    "Choice",
    "Space",
    "Candidates",
    "dim_name",
    "anything",
    "build_space",
    "label_of",
    "resolve",
]

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


def _release_admits(pin: PackagePin, release: LayerRelease) -> bool:
    """A pin on another layer of the stack (MindSpeed-LLM pins MindSpeed): its candidates are
    that layer's releases, not bare versions."""
    return pin.admits(release.version)


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

    def __init__(
        self, space: Mapping[str, Sequence[Choice]], candidates: Candidates, first: FrozenSet[str] = frozenset()
    ) -> None:
        self.space = space
        self.candidates = candidates  # what each need said of each candidate, across resolutions
        self.first = first  # the layers: each candidate decides much below it
        self.matches: Dict[Any, List[Choice]] = {}  # (name, its needs, its refused candidates) -> matches

    def _accepts(self, need: Need, choice: Choice) -> bool:
        return self.candidates.accepts(need, choice)

    def identify(self, requirement_or_candidate: Any) -> str:
        return str(requirement_or_candidate.name)

    def get_preference(
        self, identifier: str, resolutions: Any, candidates: Any, information: Any, backtrack_causes: Any
    ) -> Any:
        # the layers first (a release pins most of what is below it: choosing it first leaves the
        # small names few candidates, where choosing them first leaves a layer's releases to be
        # refused one by one), then the most constrained first
        return (identifier not in resolutions, identifier not in self.first, len(self.space.get(identifier, ())))

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


_MEMO_LIMIT = 200_000  # needs asked of candidates: a few tens of MB at most, then it starts over


class Candidates:
    """The candidates of one adapter's stacks, built once and shared by every search that asks
    for them (the resolutions of one answer, the stack table's rows: a layer of 5,000 releases
    is otherwise 5,000 candidates built again per resolution), and what each need said of each
    candidate. Whoever asks (one answer, one table) makes one and passes it down: no module
    keeps it, so a long-lived process (the guard, a test run) holds nothing between answers."""

    def __init__(self) -> None:
        # each entry holds the objects its key names by id (so that neither id can be reused
        # while the entry stands): the matrix or layer, then what was built from it
        self.cells: Dict[Tuple[int, _dt.date, Tuple[Tuple[str, Value], ...]], Tuple[Matrix, List[Choice]]] = {}
        # per layer: its candidates, and every version it names of each package (what a fix can install)
        self.layers: Dict[Tuple[int, str, FrozenSet[str]], Tuple[Layer, List[Choice], Dict[str, Set[Version]]]] = {}
        self.torches: Dict[Tuple[int, Optional[str]], Tuple[Matrix, List[Choice]]] = {}
        self.accepted: Dict[Tuple[int, int], Tuple[Need, Choice, bool]] = {}  # what each need said of each candidate

    def accepts(self, need: Need, choice: Choice) -> bool:
        # a need is asked of the same candidate again and again, within a resolution and across
        # the resolutions of one answer: remembered by identity
        key = (id(need), id(choice))
        known = self.accepted.get(key)
        if known is None:
            known = self.accepted[key] = (need, choice, need.test(choice.value))
        return known[2]


def _prune(space: Mapping[str, Sequence[Choice]], candidates: Candidates) -> Dict[str, List[Choice]]:
    """``space`` without the candidates that need what no candidate offers, until none does
    (arc consistency): a kept value (Python 3.11, CANN 9.1.0 held) leaves out every release
    of a layer that needs another before the resolver tries them one by one: a layer of 5,000
    releases is otherwise a backtrack per release. Each need is asked once per round (layer
    releases share theirs: :func:`_layer_choices`)."""
    out = {name: list(options) for name, options in space.items()}
    while True:
        supported: Dict[int, bool] = {}
        changed = False
        for name, options in out.items():
            viable: Dict[int, bool] = {}  # by the needs tuple: a layer's releases share theirs
            kept = []
            for c in options:
                ok = viable.get(id(c.needs))
                if ok is None:
                    ok = viable[id(c.needs)] = all(_supported(n, out, supported, candidates) for n in c.needs)
                if ok:
                    kept.append(c)
            if len(kept) != len(options):
                out[name] = kept
                changed = True
        if not changed:
            return out


def _supported(
    need: Need, space: Mapping[str, Sequence[Choice]], supported: Dict[int, bool], candidates: Candidates
) -> bool:
    known = supported.get(id(need))
    if known is None:
        options = space.get(need.name, ())
        known = supported[id(need)] = any(
            candidates.accepts(need, c) for c in options if need.only is None or c.version in need.only
        )
    return known


def resolve(
    space: Mapping[str, Sequence[Choice]],
    roots: Sequence[Need],
    candidates: Candidates,
    first: FrozenSet[str] = frozenset(),
) -> Dict[str, Choice]:
    """One resolution (``candidates``: what the needs said so far; ``first``: the names to choose
    first, the layers); raises resolvelib's ``ResolutionImpossible`` when none exists."""
    from resolvelib import BaseReporter, Resolver

    if len(candidates.accepted) > _MEMO_LIMIT:
        candidates.accepted.clear()
    provider = _Provider(_prune(space, candidates), candidates, first)
    resolver: Any = Resolver(provider, BaseReporter())  # type: ignore[arg-type]  # a duck-typed provider
    return dict(resolver.resolve(roots, max_rounds=500).mapping)


class Space(NamedTuple):
    """Every candidate of a stack, preferred first, and the installed choice of each name."""

    choices: Dict[str, List[Choice]]
    current: Dict[str, Optional[Choice]]  # None: not installed, or not detected
    adapter: str  # the adapter's canonical name
    layers: Tuple[str, ...]


def _pin_need(pin: PackagePin, parent: str, adapter: str, layers: FrozenSet[str]) -> Need:
    text = pin.spec.requirement
    # any of several exact versions: the resolver's candidates are their union
    only = frozenset(Version(v.public) for v in pin.exact) if pin.spec.only_exact else None
    if pin.name == adapter:
        return Need(adapter, text, parent, partial(_adapter_admits, pin), only)
    if pin.name in layers:  # a layer of the stack: its candidates are its releases
        return Need(pin.name, text, parent, partial(_release_admits, pin), only)
    if pin.optional:  # requires-if-installed: "not installed" (None) satisfies it too
        return Need(pin.name, f"{text} if installed", parent, partial(_admits_if_installed, pin))
    return Need(pin.name, text, parent, partial(_admits, pin), only)


def _layer_choice(
    layer: Layer,
    release: LayerRelease,
    adapter: str,
    layers: FrozenSet[str],
    shared: Dict[Tuple[str, str], Need],
    tuples: Dict[Tuple[int, ...], Tuple[Need, ...]],
) -> Choice:
    """One release as a candidate. ``shared``: the needs of the layer's releases so far, by name
    and text: releases that need the same thing share one object, which the memo and the
    pruning ask once (a layer's text decides its test: within one file, one parse)."""
    parent = layer.distribution
    needs = []
    for pin in release.packages:
        need = shared.get((pin.name, pin.spec.text))
        needs.append(need if need is not None else _pin_need(pin, parent, adapter, layers))
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
    for pin, need in zip(release.packages, needs):  # a pin is looked up by the text as written
        shared.setdefault((pin.name, pin.spec.text), need)
    needs = [shared.setdefault((n.name, n.text), n) for n in needs]
    # releases that need the same share one tuple too: the pruning asks each tuple once
    together = tuples.setdefault(tuple(id(n) for n in needs), tuple(needs))
    # the label is the layer's name (a release's version is its value: said when needed, not 5,000 times)
    return Choice(layer.name, release, layer.distribution, release.status, together, _public(release.version))


def _public(version: Version) -> Version:
    """``version`` without its local label (parsed again only when it has one)."""
    return version if version.local is None else Version(version.public)


def label_of(choice: Choice) -> str:
    """How an answer names a candidate: a layer's release with its version (``vllm-ascend 0.23.0``)."""
    return f"{choice.label} {choice.value.version}" if isinstance(choice.value, LayerRelease) else choice.label


def _cell_choice(matrix: Matrix, cell: Cell, adapter: str, shared: Dict[Any, Need]) -> Choice:
    """One usable cell as a candidate; ``shared``: the needs of the cells so far (the cells of one
    release and torch line share their torch need, those of one Python theirs, ...), which the
    memo and the pruning ask once."""
    release, line = cell.release, cell.line
    parent = f"{matrix.adapter.distribution} {release.version}"
    torch = shared.get((id(release), line.minor))
    if torch is None:
        # a release that pins exact torch versions (torch_npu's do) is looked up, not tested one by one
        pins = release.pins
        only = frozenset(_public(v) for v in pins) if pins and len(pins) == len(release.torch.specifier) else None
        torch = shared[(id(release), line.minor)] = Need(
            TORCH, str(release.torch), parent, partial(_claims_torch, release, line), only
        )
    needs = [
        torch,
        shared.setdefault(
            (PYTHON, cell.python), Need(PYTHON, f"=={cell.python}", parent, partial(_equal, cell.python))
        ),
    ]
    for n, v in cell.dimensions:
        need = shared.get((n, v))
        if need is None:
            need = shared[(n, v)] = Need(dim_name(n), f"=={v}", parent, partial(_same, v))
        needs.append(need)
    return Choice(adapter, cell, parent, cell.status, tuple(needs), _public(release.version))


def _torch_choices(candidates: Candidates, matrix: Matrix, label: Optional[str]) -> List[Choice]:
    """Every patch of every torch line, newest first, in one variant family (``label``), each
    needing one of its line's Pythons; built once per matrix and family."""
    cached = candidates.torches.get((id(matrix), label))
    if cached is not None and cached[0] is matrix:
        return cached[1]
    out: List[Choice] = []
    for line in matrix.torch:
        for patch in line.patches:
            version = Version(f"{patch}+{label}") if label else patch
            need = Need(PYTHON, f"one of torch {line.minor}'s wheels", f"torch {version}", partial(_among, line.python))
            out.append(Choice(TORCH, version, f"torch {version}", Status.SUPPORTED, (need,), Version(version.public)))
    out.sort(key=lambda c: c.value, reverse=True)
    candidates.torches[(id(matrix), label)] = (matrix, out)
    return out


def _layer_choices(
    candidates: Candidates, layer: Layer, adapter: str, layers: FrozenSet[str]
) -> Tuple[List[Choice], Dict[str, Set[Version]]]:
    """The usable releases of ``layer``, newest first, and every version it names of each package,
    built once per layer and stack (like the adapter's cells: the searches of one answer, and the
    stack table's rows, share them and their memo). ``layers``: the stack's layers, whose pins on
    one another name releases."""
    key = (id(layer), adapter, layers)
    cached = candidates.layers.get(key)
    if cached is not None and cached[0] is layer:
        return cached[1], cached[2]
    shared: Dict[Tuple[str, str], Need] = {}
    tuples: Dict[Tuple[int, ...], Tuple[Need, ...]] = {}
    out = [
        _layer_choice(layer, r, adapter, layers, shared, tuples)
        for r in sorted(layer.releases, key=lambda r: r.version, reverse=True)
        if r.status in REACHABLE
    ]
    exact: Dict[str, Set[Version]] = {}
    for r in layer.releases:
        for p in r.packages:
            exact.setdefault(p.name, set()).update(p.exact)
    candidates.layers[key] = (layer, out, exact)
    return out, exact


def _adapter_choices(
    candidates: Candidates, matrix: Matrix, today: _dt.date, fixed: Tuple[Tuple[str, Value], ...] = ()
) -> List[Choice]:
    """Each usable cell of the adapter's matrix, the newest release first, of the releases that
    accept the values no one can change (``fixed``: an arch, a SoC detected); computed once per
    matrix, day and machine (a search builds several spaces, the stack table one per row)."""
    key = (id(matrix), today, fixed)
    cached = candidates.cells.get(key)
    if cached is not None and cached[0] is matrix:
        return cached[1]
    adapter = canonical_name(matrix.adapter.distribution)
    here = [r for r in matrix.releases if all(c.contains(v) for n, v in fixed for name, c in r.dimensions if name == n)]
    usable = [c for c in cells(matrix, here, today=today) if c.status in REACHABLE]
    seen = set()
    out = []
    shared: Dict[Any, Need] = {}
    for cell in sorted(usable, key=lambda c: (c.release.version, c.torch, c.python.version), reverse=True):
        unique = (id(cell.release), cell.line.minor, cell.python, cell.dimensions)
        if unique not in seen:
            seen.add(unique)
            out.append(_cell_choice(matrix, cell, adapter, shared))
    candidates.cells[key] = (matrix, out)
    return out


def _torches(candidates: Candidates, matrix: Matrix, env: Environment) -> List[Choice]:
    """torch: every patch of every line, in the installed torch's variant family, then (when the
    matrix lets a fix move to another family: torch-npu's +cpu build on x86_64) in the others;
    with none installed, of every family a release needs, PyPI's build first where a release
    takes either."""
    if env.torch is not None:
        label = env.torch.local
        torches = list(_torch_choices(candidates, matrix, label))
        if matrix.variants_changeable:
            for other in dict.fromkeys(r.variant for r in matrix.releases):
                if other != label:
                    torches += _torch_choices(candidates, matrix, other)
        return torches
    labels = [None] + sorted({r.variant for r in matrix.releases if r.variant is not None})
    return sorted(
        (c for label in labels for c in _torch_choices(candidates, matrix, label)),
        key=lambda c: (Version(c.value.public), c.value.local is None),
        reverse=True,
    )


def build_space(
    matrix: Matrix, layers: Sequence[Layer], stack: Stack, today: _dt.date, candidates: Candidates
) -> Space:
    """Every candidate the matrices give, each name's newest first (Python: nearest first);
    ``candidates``: those built already for this answer (or table), which it adds to."""
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
    torches = choices[TORCH] = _torches(candidates, matrix, env)
    current[TORCH] = next((c for c in torches if env.torch is not None and c.value == env.torch), None)
    # the adapter: each usable cell of its matrix, the newest release first (of this machine's releases)
    fixed = tuple(
        (d.name, value) for d in matrix.dimensions if not d.changeable and (value := env.dimension(d.name)) is not None
    )
    choices[adapter] = _adapter_choices(candidates, matrix, today, fixed)
    current[adapter] = None  # the adapter's current choice depends on torch and Python: compared by version
    # the layers and what they pin
    names = frozenset(layer.name for layer in layers)
    exact: Dict[str, Set[Version]] = {}  # every version a layer names of each package
    for layer in layers:
        choices[layer.name], named_here = _layer_choices(candidates, layer, adapter, names)
        for name, pinned in named_here.items():
            exact.setdefault(name, set()).update(pinned)
        installed_version = stack.version(layer.name)
        entry = layer.release(installed_version) if installed_version is not None else None
        current[layer.name] = next((c for c in choices[layer.name] if entry is not None and c.value == entry), None)
    for name in stack_packages(layers):
        if name in choices:
            continue
        named = exact.get(name, set())
        installed = stack.version(name)
        versions = sorted(named | ({installed} if installed is not None else set()), reverse=True)
        choices[name] = [Choice(name, v, f"{name} {v}", Status.SUPPORTED, (), Version(v.public)) for v in versions]
        current[name] = next((c for c in choices[name] if c.value == installed), None)
        if installed is None and any(
            p.optional for layer in layers for r in layer.releases for p in r.packages if p.name == name
        ):
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
