"""The stack folded into ``check``'s answer: the layers' verdicts and the stack's fixes.

``check`` judges each adapter's matrix as before; when layers sit on that adapter (their
matrices installed, or given with ``--matrix``), :func:`with_stack` makes the answer the
stack's: the worst status of the adapter and every layer, the layers' broken pins as its
reasons, and whole stacks as its fixes (:mod:`.search`), so that no fix repairs the
adapter by breaking a layer.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ...answer import BinarySection, LayerSeen, StackSeen
from ...matrix.model import Dimension, Layer, Matrix, PackagePin, Value
from ...matrix.status import Status
from ...names import canonical_name
from ..detectors import Detection
from ..facts import distribution_version
from ..judgment import Environment, Verdict
from ..provenance import Provenance
from .judge import OwnedReading, installed_stack, judge_stack, stack_packages
from .search import Held, stack_fixes

if TYPE_CHECKING:
    from ..elsewhere import Target
    from ..provenance import Survey

__all__ = ["StackAnswer", "StackQuestion", "split_overrides", "with_stack"]

# The binary check of an installed layer's own libraries (a plugin's op library), by its
# distribution name; None when it is not read (a what-if question, --no-binary).
LayerBinary = Callable[[str], Optional[BinarySection]]


class StackQuestion(NamedTuple):
    """What ``check`` asks of a stack besides the environment: assumed versions of the stack's
    packages (``--companion vllm=0.23.0``; ``none``: not installed), and the ``--set`` values."""

    versions: Mapping[str, str]  # canonical name -> version text or "none"
    dimensions: Mapping[str, str]  # --set NAME=VALUE
    target: Optional[Target] = None  # check --env: the environment whose packages are read
    # the import path's checkouts and copies, surveyed once per answer (None: surveyed here)
    looked: Optional[Survey] = None


def split_overrides(overrides: Mapping[str, str], layers: Sequence[Layer]) -> Tuple[Dict[str, str], Dict[str, str]]:
    """``--companion`` values as (the adapter's companions', the stack's packages')."""
    names = set(stack_packages(layers))
    companions: Dict[str, str] = {}
    stack: Dict[str, str] = {}
    for name, value in overrides.items():
        (stack if canonical_name(name) in names else companions)[name] = value
    return companions, {canonical_name(k): v for k, v in stack.items()}


def _held(matrix: Matrix, layers: Sequence[Layer], question: StackQuestion) -> Held:
    """What the user holds: each ``--set`` value, and each layer version given with ``--companion``."""
    dims: List[Tuple[str, Value]] = []
    owned = {d.name: d for layer in layers for d in layer.dimensions}
    for name, text in question.dimensions.items():
        dim = matrix.dimension(name) or owned.get(name)
        if dim is not None:
            try:
                dims.append((name, dim.value(text)))
            except ValueError:
                continue  # the environment's detection already refused it
    layer_names = {layer.name for layer in layers}
    packages = []
    for name, text in question.versions.items():
        if name in layer_names and text != "none":
            try:
                packages.append((name, Version(text)))
            except InvalidVersion:
                continue
    return Held(tuple(dims), tuple(packages))


def _versions(layers: Sequence[Layer], question: StackQuestion) -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {}
    for name in stack_packages(layers):
        given = question.versions.get(name)
        out[name] = (
            (None if given == "none" else given) if given is not None else distribution_version(name, question.target)
        )
    return out


class StackAnswer(NamedTuple):
    """The stack step's part of the answer."""

    verdict: Verdict  # the adapter's verdict made the stack's (the layers' binaries not yet folded in)
    seen: StackSeen  # the stack section, each installed layer's binary section in it
    pins: Tuple[Tuple[str, str], ...]  # what the stack holds besides torch and the adapter (--constraints)
    # the layers' own dimensions as read on this machine: shown beside the adapter's (report, JSON, env)
    detections: Tuple[Detection, ...] = ()


def _git_pins(layers: Sequence[Layer], name: str) -> List[PackagePin]:
    return [p for layer in layers for r in layer.releases for p in r.packages if p.name == name and p.git is not None]


def _release_of_ref(layer: Layer, found: Provenance) -> Optional[str]:
    """The release of ``layer`` whose ``ref`` the installed build is (pip's VCS install asked for
    it, or a clone's HEAD is its commit): torchvision_npu's tags v0.20.1-7.0.0 and v0.20.1-7.1.0
    both build 0.20.1, and only the ref says which release is installed."""
    from ..provenance import judge_commit

    for release in reversed(layer.releases):  # the newest first: a ref named twice is refused by validate
        if release.ref is not None and judge_commit(found, release.ref).ok:
            return str(release.version)
    return None


def _provenance(
    matrix: Matrix,
    layers: Sequence[Layer],
    question: StackQuestion,
    versions: Dict[str, Optional[str]],
    notes: Optional[List[str]] = None,
) -> List[Provenance]:
    """How each package of the stack is installed (not those whose version the question
    assumes); ``versions`` gets what each is, judged by its commit: the release of the tag it is
    at, or the release a git pin names for its commit; a checkout no metadata describes too."""
    from ..provenance import current_survey, judge_commit, stack_provenance

    looked = question.looked if question.looked is not None else current_survey(question.target)
    out = []
    below = ("torch", canonical_name(matrix.adapter.distribution))  # how they are installed: said, never changed
    sourced = {layer.name: layer for layer in layers if layer.source is not None}
    repositories = {layer.name: layer.source.url for layer in layers if layer.source is not None}
    for name in (*below, *stack_packages(layers)):
        if name in question.versions:
            continue
        pins = _git_pins(layers, name)
        urls = [p.git.url for p in pins if p.git is not None]
        urls += [repositories[name]] if name in repositories else []
        found = stack_provenance(name, question.target, looked, urls)
        if found is None:
            continue
        out.append(found)
        if found.kind == "wheel" or name in below:
            continue
        version = found.built_version if found.kind != "checkout" else found.version
        if name in sourced:  # built from its source: the release whose ref it was built from
            version = _release_of_ref(sourced[name], found) or version
        for pin in pins:
            assert pin.git is not None
            if found.commit is not None and judge_commit(found, pin.git.ref).ok:
                version = str(pin.spec.specs[0].specifier).lstrip("=")  # the release the pinned commit stands for
                break
        if version is None and pins and found.kind == "checkout":
            version = str(pins[0].spec.specs[0].specifier).lstrip("=")  # judged by its commit against that pin
        if version is not None:
            versions[name] = version
        elif found.kind == "checkout" and versions.get(name) is not None and notes is not None:
            # a checkout at no tag hides the installed copy: its version is the installed one's, said
            notes.append(
                f"{name}: Python imports the checkout {found.source or found.path}"
                f"{f' ({found.past})' if found.past else ''}, which hides the installed {name} {versions[name]} and "
                f"is at no release's tag: judged as {versions[name]}"
            )
    return out


def _built(matrix: Matrix, layers: Sequence[Layer], question: StackQuestion) -> List[OwnedReading]:
    """Each layer dimension of an installed layer, read as built and on this machine."""
    from ..facts import distribution_folder, search_path

    out = []
    for layer in layers:
        for dim in layer.dimensions:
            if matrix.dimension(dim.name) is not None:
                continue  # a clash: the pipeline refused it
            machine, machine_source, machine_error = _machine(dim, question)
            built: Optional[Value] = None
            built_source = None
            folder = distribution_folder(layer.distribution, search_path(question.target)) if dim.built else None
            if folder is not None and layer.name not in question.versions:
                built_text, built_source = _read_built(dim, folder[0])
                built = _as_value(dim, built_text)
            out.append(
                OwnedReading(
                    layer.name, dim.name, built, built_source, machine, machine_source, dim.mark, machine_error
                )
            )
    return out


def _no_build_for_this_machine(layers: Sequence[Layer], misbuilt: Sequence[OwnedReading]) -> str:
    """Why no fix follows a build made for another device than this machine's: a version names
    no build, so no version the matrices name repairs it; and what would."""
    names = {layer.name: layer.distribution for layer in layers}
    builds = " and ".join(f"{names.get(b.layer, b.layer)} for {b.dimension} {b.machine}" for b in misbuilt)
    return (
        f"no fix: no version the matrices name is a build of {builds} (the device a wheel was built for is "
        f"not in its version); it would take a build made for this machine, installed in its place"
    )


def _as_value(dim: Dimension, text: Optional[str]) -> Optional[Value]:
    if text is None:
        return None
    try:
        return dim.value(dim.named(text))
    except ValueError:
        return None


def _machine(dim: Dimension, question: StackQuestion) -> Tuple[Optional[Value], Optional[str], Optional[str]]:
    """This machine's value of a layer's dimension, where it was read, and why it is unknown."""
    from ..detectors import detect

    if dim.name in question.dimensions:
        return _as_value(dim, question.dimensions[dim.name]), "--set", None
    found = detect(dim, question.target)
    return _as_value(dim, found.value), found.source, found.error


def _read_built(dim: Dimension, site: str) -> Tuple[Optional[str], Optional[str]]:
    """What the installed build says it was made for: its detectors, a relative file read
    in the folder the layer is installed in."""
    import os

    from ..detectors import run_detector

    for declared in dim.built:
        detector = declared
        if detector.kind == "file" and not os.path.isabs(detector.target[0]):
            detector = detector._replace(target=(os.path.join(site, detector.target[0]),))
        value, _error = run_detector(detector)
        if value is not None:
            return value, declared.describe()  # as the layer's matrix names it: the installed layer's file
    return None, None


def with_stack(
    matrix: Matrix,
    layers: Sequence[Layer],
    env: Environment,
    decided: Verdict,
    question: StackQuestion,
    today: _dt.date,
    binary: Optional[LayerBinary] = None,
) -> StackAnswer:
    """``decided`` (the adapter's verdict, companions folded in) as the stack's verdict, the
    stack section of the answer (with ``binary``, each installed layer's binary section), and
    what the stack holds besides torch and the adapter, as installed (``check --constraints``
    pins it)."""
    versions = _versions(layers, question)
    as_pip_sees = dict(versions)  # before the commits judge them: what a constraint can hold
    notes: List[str] = []
    provenance = _provenance(matrix, layers, question, versions, notes)
    built = _built(matrix, layers, question)
    machine = tuple((b.dimension, b.machine) for b in built if b.machine is not None)
    env = env._replace(dimensions=env.dimensions + tuple(dict(machine).items()))  # the layers' own, beside
    stack = installed_stack(env, layers, versions, provenance, built)
    judged = judge_stack(matrix, layers, stack, today, adapter=decided._replace(fixes=()))
    status = judged.status
    seen = tuple(
        LayerSeen(
            name=v.layer.distribution,
            matrix=v.layer.path,
            installed=str(v.installed) if v.installed is not None else None,
            release=str(v.release.version) if v.release is not None else None,
            status=v.status,
            problems=v.problems,
            decided_by=tuple(str(m) for m in v.decided_by),
            binary=binary(v.layer.distribution) if binary is not None and v.installed is not None else None,
            provenance=_seen(stack.origin(v.layer.name)),
        )
        for v in judged.layers
    )
    out = decided._replace(
        outcome=status,
        reasons=judged.reasons,
        decided_by=tuple(m for v in judged.layers if v.problems for m in v.decided_by) + decided.decided_by,
        # one assumption per dimension that could not be detected (the stack's, replacing the adapter's)
        assumptions=judged.adapter.assumptions
        + judged.assumptions
        + tuple(a for v in judged.layers for a in v.assumptions)
        + tuple(notes),
        fixes=(),
    )
    conflict = no_fix = not_kept = None
    # a build made for another device than this machine's: no version of the matrices repairs it,
    # the refusal says what to install (a build for this machine)
    misbuilt = [b for b in built if b.built is not None and b.machine is not None and not b.built.same(b.machine)]
    if misbuilt:  # said as no fix (its reason), never a refusal without a fix or a reason (issue 66)
        no_fix = _no_build_for_this_machine(layers, misbuilt)
    if status is not Status.SUPPORTED and not misbuilt:
        holding = _held(matrix, layers, question)
        found = stack_fixes(matrix, layers, stack, holding, today, now=status, adapter=decided._replace(fixes=()))
        out = out._replace(fixes=found.fixes)
        conflict, no_fix, not_kept = found.conflict, found.reason, found.not_kept
    # as installed: a build of tag v0.20.1-7.1.0 is release 0.20.1+7.1.0, and pip sees its 0.20.1
    held = tuple(
        (name, text) for name, version in stack.packages if version is not None and (text := as_pip_sees[name])
    )
    origins = tuple(p.to_json() for _n, p in stack.provenance)
    detections = tuple(  # read on this machine, or unknown beside an installed build made for one
        Detection(b.dimension, str(b.machine) if b.machine is not None else None, b.machine_source, b.machine_error)
        for b in built
        if b.machine is not None or b.built is not None
    )
    return StackAnswer(out, StackSeen(seen, conflict, origins or None, no_fix, not_kept), held, detections)


def _seen(found: Optional[Provenance]) -> Optional[Dict[str, Optional[str]]]:
    return found.to_json() if found is not None else None
