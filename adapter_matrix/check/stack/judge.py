"""The stack above the adapter, judged as one: every layer's pins and the adapter's matrix.

Users install stacks (vllm-ascend on vllm on torch_npu on torch on CANN), and each layer
pins the layers below it (docs/stacks.md). A stack is supported only when the adapter's
matrix supports what is installed **and** every installed layer's release pins exactly
what is installed: its torch, its adapter (by version or by the adapter's release line),
its other packages (vllm, triton-ascend) and the adapter's dimensions (CANN). A refusal
names the layer, the package and the pin.

:class:`Stack` is one state of the whole stack, as installed or as a fix would leave it;
:func:`judge_stack` decides it, and :mod:`.search` searches the states it would
accept. Both read the model only: the adapter's part is :func:`.verdict.verdict`'s.
"""

from __future__ import annotations

import datetime as _dt
from functools import partial
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ...matrix.diagnostics import Mark
from ...matrix.model import Constraint, Layer, LayerRelease, Matrix, PackagePin, Value
from ...matrix.status import Status
from ...names import canonical_name
from ..judgment import Environment, Verdict
from ..provenance import Provenance, judge_commit, missing_ref
from ..verdict import undetected, verdict

__all__ = [
    "OwnedReading",
    "Stack",
    "LayerVerdict",
    "StackVerdict",
    "judge_stack",
    "installed_stack",
    "stack_packages",
    "worst",
]


class Stack(NamedTuple):
    """One state of a stack: the environment the adapter's matrix judges (Python, torch, the
    adapter, the dimensions) and the version of every other package of the stack (the
    layers and what they pin), ``None`` where one is not installed. Names are canonical."""

    env: Environment
    packages: Tuple[Tuple[str, Optional[Version]], ...]
    # how each package is installed, where it was read (a state a fix leaves keeps the entries
    # of what it does not change): a git pin is judged by the commit it holds
    provenance: Tuple[Tuple[str, Provenance], ...] = ()
    built: Tuple[OwnedReading, ...] = ()  # each installed layer's own dimensions, as built and as on this machine

    def version(self, name: str) -> Optional[Version]:
        return dict(self.packages).get(canonical_name(name))

    def origin(self, name: str) -> Optional[Provenance]:
        return dict(self.provenance).get(canonical_name(name))


class OwnedReading(NamedTuple):
    """A dimension a layer owns, read twice: what its installed build was made for (vllm-ascend's
    wheel records its device generation) and what this machine is; each with where it was read."""

    layer: str  # canonical
    dimension: str
    built: Optional[Value]
    built_source: Optional[str]
    machine: Optional[Value]
    machine_source: Optional[str]
    mark: Mark
    machine_error: Optional[str] = None  # why this machine's value is unknown


class LayerVerdict(NamedTuple):
    """One layer's answer: the release its installed version is, its status, and each pin
    that what is installed breaks (``vllm-ascend 0.23.0 pins torch-npu ==2.10.0.post4, found
    2.10.0.post2``), with the rows that decided it."""

    layer: Layer
    installed: Optional[Version]
    release: Optional[LayerRelease]
    status: Status
    problems: Tuple[str, ...]
    decided_by: Tuple[Mark, ...]
    assumptions: Tuple[str, ...] = ()


class StackVerdict(NamedTuple):
    """The stack's answer: the adapter's verdict (without fixes) and each layer's; ``status``
    is the worst of them. ``assumptions``: one per dimension that could not be detected
    (replacing the adapter's own), ``problems``: the needs of the adapter an assumed value
    could not satisfy."""

    status: Status
    adapter: Verdict
    layers: Tuple[LayerVerdict, ...]
    assumptions: Tuple[str, ...] = ()
    problems: Tuple[str, ...] = ()

    @property
    def reasons(self) -> Tuple[str, ...]:
        """Why it is what it is: each layer's broken pins, each layer release that is not
        supported and why, then the adapter's reasons (all of them when nothing else is said)."""
        out = list(self.problems) + [p for v in self.layers for p in v.problems]
        out += [
            f"{v.layer.distribution} {v.release.version} is {v.status}"
            + (f": {v.release.reason}" if v.release.reason else "")
            for v in self.layers
            if v.release is not None and not v.problems and v.status is not Status.SUPPORTED
        ]
        if self.adapter.outcome is not Status.SUPPORTED or not out:
            out += list(self.adapter.reasons)
        return tuple(out)


def worst(statuses: Sequence[Status]) -> Status:
    """The least usable of ``statuses`` (supported when there are none)."""
    return max(statuses, key=lambda s: s.rank, default=Status.SUPPORTED)


def stack_packages(layers: Sequence[Layer]) -> Tuple[str, ...]:
    """The distributions a stack's state names besides torch and the adapter: the layers,
    then every package a layer release pins (vllm, triton-ascend), in the order first named."""
    names = [layer.name for layer in layers]
    below = {"torch"} | {canonical_name(layer.adapter) for layer in layers}
    for layer in layers:
        for release in layer.releases:
            names += [p.name for p in release.packages if p.name not in below]
    return tuple(dict.fromkeys(names))


Refusal = Tuple[str, Mark]  # a problem and the line of the matrix it comes from


def _judge_layer(matrix: Matrix, layer: Layer, stack: Stack, assumed: FrozenSet[str] = frozenset()) -> LayerVerdict:
    """Whether the installed release of ``layer`` accepts the rest of ``stack`` (``assumed``:
    the dimensions whose value is the stack's assumption, not a detected one)."""
    installed = stack.version(layer.name)
    if installed is None:
        return LayerVerdict(
            layer, None, None, Status.UNSUPPORTED, (f"{layer.distribution} is not installed",), (layer.mark,)
        )
    release = layer.release(installed)
    if release is None:
        return LayerVerdict(
            layer, installed, None, Status.UNSUPPORTED, (_not_described(layer, installed),), (layer.mark,)
        )
    who = f"{layer.distribution} {release.version}"
    env = stack.env
    pins, by_version = _pins_judged(matrix, release, stack, who)
    dimensions, undetected_ones = _dimensions_judged(release, env, who, assumed)
    built, built_assumed = _build_judged(layer, installed, stack)
    refused = [
        *_python_judged(release, env, who),
        *pins,
        *built,
        *_adapter_line_judged(matrix, release, env, who),
        *dimensions,
    ]
    status = Status.UNSUPPORTED if refused else release.status
    marks = tuple(mark for _, mark in refused) or (release.mark,)
    return LayerVerdict(
        layer,
        installed,
        release,
        status,
        tuple(text for text, _ in refused),
        marks,
        (*by_version, *undetected_ones, *built_assumed),
    )


def _not_described(layer: Layer, installed: Version) -> str:
    """Why an installed version of ``layer`` is none of its matrix's releases."""
    builds = layer.builds_of(installed) if not installed.local else ()
    if builds:  # several builds of one public version: the version does not say which is installed
        named = ", ".join(f"{r.version} from {r.ref}" if r.ref else str(r.version) for r in builds)
        return (
            f"{layer.distribution} {installed} is a build of {len(builds)} releases its matrix describes "
            f"({named}) and its version does not say which: install one of them by its tag"
        )
    known = ", ".join(str(r.version) for r in layer.releases)
    return f"{layer.distribution} {installed} is not a release its matrix describes (known: {known})"


def _python_judged(release: LayerRelease, env: Environment, who: str) -> List[Refusal]:
    if release.python is not None and not release.python.contains(env.python.version):
        return [(f"{who} supports Python {release.python}, not {env.python}", release.mark_of("python"))]
    return []


def _pins_judged(matrix: Matrix, release: LayerRelease, stack: Stack, who: str) -> Tuple[List[Refusal], List[str]]:
    """Each package the release pins against the stack: a git pin by its commit where the
    installed package has one, else by its version (with the assumption that makes)."""
    env = stack.env
    adapter_name = canonical_name(matrix.adapter.distribution)
    refused: List[Refusal] = []
    assumptions: List[str] = []
    for pin in release.packages:
        found = (
            env.torch if pin.name == "torch" else env.adapter if pin.name == adapter_name else stack.version(pin.name)
        )
        if found is None and pin.optional:
            continue  # requires-if-installed: nothing to check when it is absent
        by_commit = _commit(who, pin, stack.origin(pin.name)) if pin.git is not None and found is not None else None
        if by_commit is not None and by_commit[0] is not None:
            if not by_commit[0]:
                refused.append((by_commit[1], pin.mark))
            elif by_commit[1]:
                assumptions.append(by_commit[1])  # at the pinned commit, with files edited since
            continue  # judged by its commit, not by the version string its build calls itself
        if by_commit is not None:
            assumptions.append(by_commit[1])
        if found is None:
            refused.append((f"{who} needs {pin}, which is not installed", pin.mark))
        elif not pin.admits(found):
            refused.append((f"{who} pins {pin}, found {found}", pin.mark))
    return refused, assumptions


def _build_judged(layer: Layer, installed: Version, stack: Stack) -> Tuple[List[Refusal], List[str]]:
    """The layer's own dimensions as it was built against this machine's: refused when they
    differ; when this machine's cannot be detected, assumed to be the build's (said, as any
    dimension that could not be detected is)."""
    refused: List[Refusal] = []
    assumptions: List[str] = []
    for reading in stack.built:
        if reading.layer != layer.name or reading.built is None:
            continue
        if reading.machine is None:
            why = f" ({reading.machine_error})" if reading.machine_error else ""
            assumptions.append(
                f"{undetected(reading.dimension)}{why}; assumed {reading.built}, which the build of "
                f"{layer.distribution} {installed} is made for ({reading.built_source})"
            )
            continue
        if not reading.built.same(reading.machine):
            refused.append(
                (
                    f"{layer.distribution} {installed} was built for {reading.dimension} {reading.built} "
                    f"({reading.built_source}), but this machine is {reading.dimension} {reading.machine} "
                    f"({reading.machine_source}): install a build of {layer.distribution} made for {reading.machine}",
                    reading.mark,
                )
            )
    return refused, assumptions


def _adapter_line_judged(matrix: Matrix, release: LayerRelease, env: Environment, who: str) -> List[Refusal]:
    """The adapter's release line the layer release needs."""
    if release.adapter_line is None:
        return []
    line = _adapter_line(matrix, env)
    needs = f"{who} needs {matrix.adapter.distribution} of release line {release.adapter_line}"
    if env.adapter is None:
        return [(f"{needs}, which is not installed", release.mark_of("adapter-line"))]
    if line != release.adapter_line:
        found = f"{needs}, found {env.adapter}" + (f" (release line {line})" if line else " (of no release line)")
        return [(found, release.mark_of("adapter-line"))]
    return []


def _dimensions_judged(
    release: LayerRelease, env: Environment, who: str, assumed: FrozenSet[str]
) -> Tuple[List[Refusal], List[str]]:
    """The dimensions the release constrains: refused when outside, assumed when undetected."""
    refused: List[Refusal] = []
    assumptions: List[str] = []
    for name, constraint in release.dimensions:
        value = env.dimension(name)
        if value is None:
            assumptions.append(f"{undetected(name)}; assumed it satisfies {who}'s {constraint}")
        elif not constraint.contains(value):
            found_or_assumed = "assumed" if name in assumed else "found"
            refused.append(
                (f"{who} needs {name} {constraint}, {found_or_assumed} {value}", release.mark_of("dimensions"))
            )
    return refused, assumptions


def _commit(who: str, pin: PackagePin, found: Optional[Provenance]) -> Optional[Tuple[Optional[bool], str]]:
    """A git pin against the installed package: (True, ""), (False, the refusal), (None, why it is
    judged by its version instead), or None for a wheel (no commit to compare: its version is)."""
    assert pin.git is not None
    if found is None:
        return None
    if found.kind == "wheel":
        return (
            None,
            f"{pin.name} {found.version} is a wheel, which records no commit: judged by its version against {who}'s pin of {pin.git.ref}",
        )
    judged = judge_commit(found, pin.git.ref)
    if judged.ok is None:
        return None, f"{pin.name}: {judged.text}; judged by its version against {who}'s pin"
    if judged.ok and found.dirty:
        return True, (
            f"{pin.name}: {found.kind} {found.source or found.path} is at {who}'s pinned commit "
            f"{(judged.commit or '')[:12]} with uncommitted changes: judged by its commit, which its files no longer are"
        )
    if judged.ok:
        return True, ""
    commit = (judged.commit or "")[:12]
    where = f"{found.kind} {found.source or (found.url if found.kind == 'vcs' else None) or found.path}"
    pinned = f" ({judged.pinned[:12]})" if judged.pinned and not judged.pinned.startswith(pin.git.ref) else ""
    distance = f": {judged.distance} the pin" if judged.distance else ""
    if not distance and found.kind != "vcs" and found.source is not None:
        missing = missing_ref(found.source, pin.git.ref)  # then the fix fetches it before the checkout
        distance = f": the clone does not hold the pinned commit ({missing})" if missing else ""
    return False, f"{who} pins {pin.name} at {pin.git.ref}{pinned} ({pin.spec}), found {commit}{distance} ({where})"


def _adapter_line(matrix: Matrix, env: Environment) -> Optional[str]:
    """The release line of the installed adapter (torch_npu 2.10.0.post4 is of 26.1.0)."""
    if env.adapter is None:
        return None
    lines = {r.release_line for r in matrix.releases_of(env.adapter) if r.release_line}
    return next(iter(lines)) if len(lines) == 1 else None


def judge_stack(
    matrix: Matrix,
    layers: Sequence[Layer],
    stack: Stack,
    today: Optional[_dt.date] = None,
    adapter: Optional[Verdict] = None,
) -> StackVerdict:
    """The verdict on ``stack``: the adapter's matrix (``adapter``: its verdict, when the caller
    has it) and every layer of ``layers``, each layer judged against what is installed."""
    today = today or _dt.date.today()
    if adapter is None:
        adapter = verdict(matrix, stack.env, today, with_fixes=False)
    assumed, assumptions, problems = _assume(matrix, layers, stack, adapter)
    if assumed:
        dims = dict(stack.env.dimensions)
        dims.update(assumed)
        stack = stack._replace(env=stack.env._replace(dimensions=tuple(dims.items())))
        names = frozenset(assumed)
        adapter = adapter._replace(
            assumptions=tuple(a for a in adapter.assumptions if not any(a.startswith(undetected(n)) for n in names))
        )
    judged = tuple(_judge_layer(matrix, layer, stack, frozenset(assumed)) for layer in layers)
    status = worst([adapter.outcome] + [v.status for v in judged] + [Status.UNSUPPORTED] * bool(problems))
    return StackVerdict(status, adapter, judged, assumptions, problems)


def _score(
    needs: Sequence[Tuple[str, Constraint]], mine: Optional[Constraint], value: Value
) -> Tuple[int, bool, Tuple[int, object]]:
    """How well an assumed value serves: the layers whose need it satisfies, then the adapter's, then the newest."""
    kept = sum(1 for _who, c in needs if c.contains(value))
    return kept, mine is None or mine.contains(value), value.order


def _assume(
    matrix: Matrix, layers: Sequence[Layer], stack: Stack, adapter: Verdict
) -> Tuple[Dict[str, Value], Tuple[str, ...], Tuple[str, ...]]:
    """One assumption per dimension that could not be detected and that the stack constrains:
    the value of the adapter's matrix that satisfies the most layers (then the adapter, then the
    newest), the sentence that says so, and each need of the adapter it leaves unsatisfied (a
    layer's is its own problem, judged against the assumed value)."""
    env = stack.env
    assumed: Dict[str, Value] = {}
    notes: List[str] = []
    problems: List[str] = []
    releases = [
        (f"{layer.distribution} {r.version}", r)
        for layer in layers
        for r in [layer.release(v) for v in [stack.version(layer.name)] if v is not None]
        if r is not None
    ]
    own = adapter.release
    for dim in matrix.dimensions:
        if env.dimension(dim.name) is not None:
            continue
        needs: List[Tuple[str, Constraint]] = [
            (who, c) for who, r in releases for name, c in r.dimensions if name == dim.name
        ]
        mine = own.constraint(dim.name) if own is not None else None
        if not needs:
            continue  # the adapter's own need alone: its verdict's assumption says it
        adapter_who = f"{matrix.adapter.distribution} {own.label}" if own is not None else ""

        value = max(dim.values, key=partial(_score, needs, mine), default=None)
        if value is None:
            continue
        assumed[dim.name] = value
        kept = [who for who, c in needs if c.contains(value)]
        missed = [f"{who} needs {c}" for who, c in needs if not c.contains(value)]
        if mine is not None and not mine.contains(value):
            missed.insert(0, f"{adapter_who} needs {mine}")
            wanted = " and ".join(f"{who} needs {c}" for who, c in needs if c.contains(value))
            problems.append(
                f"{adapter_who} needs {dim.name} {mine} while {wanted or 'the layers need ' + str(value)} "
                f"({undetected(dim.name)}: no one value satisfies both)"
            )
        notes.append(
            f"{undetected(dim.name)}; assumed {value}"
            + (f", which {' and '.join(kept)} need{'s' if len(kept) == 1 else ''}" if kept else "")
            + (f" ({'; '.join(missed)}: not satisfied)" if missed else "")
        )
    return assumed, tuple(notes), tuple(problems)


def installed_stack(
    env: Environment,
    layers: Sequence[Layer],
    versions: Dict[str, Optional[str]],
    provenance: Sequence[Provenance] = (),
    built: Sequence[OwnedReading] = (),
) -> Stack:
    """The stack as installed: ``env`` and the versions read of every package it names
    (``versions``: canonical name -> the installed version text, or None), with how each is
    installed (``provenance``) and each layer's own dimensions as built and as on this machine."""
    out = []
    for name in stack_packages(layers):
        text = versions.get(name)
        try:
            out.append((name, Version(text) if text else None))
        except ValueError:
            out.append((name, None))
    return Stack(env, tuple(out), tuple((p.name, p) for p in provenance), tuple(built))
