"""`check`'s pipeline: read the question, find the matrices, judge each, answer.

The command line (:mod:`adapter_matrix.cli.quick`) parses argv into a :class:`CheckRequest`,
calls :func:`run` and prints the :class:`CheckResult` it gets back, as ``validate`` prints
what :mod:`adapter_matrix.validation` returns. Nothing here prints or exits: a question
``check`` cannot answer raises :class:`CheckRefused`, which names the request's field at fault
(the command line words it as its option) and the exit code; warnings are returned.

What ``check`` reads outside this spoke (the adapter's libraries, the ``torch.backends`` entry
points, ``--deep``'s device run) comes in as :class:`Probes`: ``binary`` and ``device`` import
this spoke, so it cannot import them (tests/unit/test_layout.py). The import-time guard
(:mod:`.guard`) decides with the same :func:`decide`.
"""

from __future__ import annotations

import datetime as _dt
import os
import warnings
from typing import TYPE_CHECKING, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from ..answer import (
    CHECK_SCHEMA,
    Answer,
    AutoloadSection,
    BinarySection,
    CheckDocument,
    DeepSection,
    DiagnosticSeen,
    Invalid,
)
from ..errors import EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE, EXIT_WARNING, AdapterMatrixError, worst_exit_code
from ..matrix.diagnostics import Diagnostic, MatrixError
from ..matrix.discovery import Located
from ..matrix.model import Companion, Layer, LayerResult, LoadResult, Matrix, PythonVersion, Release
from .constraints import KeptPins
from .elsewhere import Target
from .judgment import Environment, Verdict
from .provenance import Survey
from .requirements import Pins as FilePins  # what a file installs (constraints' KeptPins: what to keep)

if TYPE_CHECKING:  # imported where a step runs: check's start-up loads only what it uses
    from .environment import Installed
    from .installed_companions import CompanionState
    from .stack.step import StackAnswer

__all__ = [
    "BinaryUsed",
    "CheckRefused",
    "CheckRequest",
    "CheckResult",
    "Probes",
    "Question",
    "decide",
    "matrix_paths",
    "read_question",
    "run",
]

BinaryUsed = Tuple[str, Optional[str]]  # a stored binary section an answer used: (distribution, torch it was built for)


class Probes(NamedTuple):
    """What ``check`` reads through the outer parts of the package."""

    # the binary section of an installed distribution (the release the matrix picked, or None),
    # in the environment judged (check --env's, or None: the running one)
    binary: Callable[[str, Optional[Release], Optional[Target]], Optional[BinarySection]]
    autoload: Callable[[Sequence[str]], AutoloadSection]  # the torch.backends lint of an import path
    deep: Callable[[LoadResult], DeepSection]  # --deep: torch imported, the adapter activated, a smoke
    # --emit requirements: the sha256 of a release's files on its index (name, version, index URL or None)
    # None: the index could not be read (said so, not "it gave none")
    hashes: Optional[Callable[[str, str, Optional[str]], Optional[Sequence[str]]]] = None


class CheckRequest(NamedTuple):
    """What ``check`` is asked, one field per option of the command line, and the
    :class:`Probes` it reads the outer parts through (the command line's:
    ``cli.quick._probes()``), as other requests carry their progress callables."""

    probes: Probes
    matrix: Sequence[str] = ()  # several: an adapter's matrix and its layers' (a stack)
    torch: Optional[str] = None
    python: Optional[str] = None
    adapter: Optional[str] = None  # a version (what-if), or a distribution's name (check that one)
    sets: Sequence[str] = ()
    companions: Sequence[str] = ()
    as_json: bool = False
    deep: bool = False
    no_binary: bool = False
    env: Optional[str] = None
    requirements: Optional[str] = None
    resolve: bool = False
    constraints: Optional[str] = None
    today: Optional[str] = None
    pythonpath: Optional[str] = None  # folders searched before the environment's, as PYTHONPATH's are
    emit: Optional[str] = None  # uv | requirements: the first fix as resolver input
    output: Optional[str] = None  # --emit's file (stdout when None)

    @property
    def plain(self) -> bool:
        """A question about this environment as installed, whose answer may be remembered."""
        return not (
            self.deep
            or self.env is not None
            or self.requirements is not None
            or self.resolve
            or self.constraints is not None
            or self.emit is not None
            or self.adapter
            or self.pythonpath is not None
        )


class CheckRefused(AdapterMatrixError):
    """A question ``check`` cannot answer. ``field`` is the :class:`CheckRequest` field at fault
    (None: the question as a whole) and ``problem`` the rest of the sentence after it (the
    command line puts the field's option in front); ``diagnostics``: the matrix file's, when
    that file is why."""

    def __init__(
        self,
        field: Optional[str],
        problem: str,
        exit_code: int = EXIT_USAGE,
        diagnostics: Sequence[Diagnostic] = (),
    ) -> None:
        super().__init__(f"{field}{problem}" if field else problem)
        self.field, self.problem, self.exit_code = field, problem, exit_code
        self.diagnostics = tuple(diagnostics)


class CheckResult(NamedTuple):
    """What ``check`` answers: the exit code, the document (``--json`` prints it, the report
    renders it), or ``--constraints``' file; the warnings to print; whether it may be
    remembered, and the stored binary sections it was decided from."""

    exit_code: int
    document: Optional[CheckDocument]
    constraints: Optional[str] = None
    warnings: Tuple[str, ...] = ()  # one line each, without "warning: "
    diagnostics: Tuple[Diagnostic, ...] = ()  # of the installed matrices it could not load
    raised: Tuple[warnings.WarningMessage, ...] = ()  # Python warnings raised while answering
    memorable: bool = False
    binaries: Tuple[BinaryUsed, ...] = ()


class Question(NamedTuple):
    """A :class:`CheckRequest` read and refused once, in the terms its answer uses."""

    request: CheckRequest
    python: Optional[PythonVersion]
    torch: Optional[str]  # --torch, else the torch --requirements installs
    asked: Optional[str]  # the torch range of --requirements (torch>=2.12,<2.13) when it pins no exact one
    adapter: Optional[str]  # --adapter VERSION: a what-if pin of each matrix's adapter
    named: Optional[str]  # --adapter DIST: that distribution, with or without a matrix
    dimensions: Dict[str, str]  # --set
    companions: Dict[str, str]  # --companion
    when: Optional[_dt.date]  # --today, or None for today
    pins: Optional[FilePins]  # what --requirements installs
    binary: bool  # judge the installed binaries (not a what-if torch, Python or adapter)


# -- 1. read the question ------------------------------------------------------------------


def _pairs(
    values: Sequence[str], field: str, flag: str, example: str, what: str, read: Callable[[str], str] = str.strip
) -> Dict[str, str]:
    """``NAME=VALUE`` items, each value as ``read`` reads it; a name given twice with two values
    is refused (the last would win unsaid), the same value twice is one (a script that repeats
    an option)."""
    out: Dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise CheckRefused(field, f" {item!r}: write NAME=VALUE, e.g. {flag} {example}")
        name, value = name.strip(), read(value.strip())
        if out.get(name, value) != value:
            raise CheckRefused(field, f" names {name} twice ({name}={out[name]}, {name}={value}): give one {what}")
        out[name] = value
    return out


def _normalised(text: str) -> str:
    """A what-if version as PEP 440 writes it (``2.13.0+CPU`` is ``2.13.0+cpu``, ``2.6.0.POST5``
    ``2.6.0.post5``): the answer shows the version it judged, not the spelling typed. A text that
    is no version stays as typed, for the step that refuses it to quote."""
    from packaging.version import InvalidVersion, Version

    try:
        return str(Version(text))
    except InvalidVersion:
        return text


# what --companion may be mistaken for: the option that asks it (the adapter's name: --adapter)
_ASKED_ELSEWHERE = {"torch": "--torch", "python": "--python"}


def _companions(values: Sequence[str]) -> Dict[str, str]:
    """``--companion NAME=VERSION`` values: a name given twice (``vllm_ascend`` is ``vllm-ascend``)
    with two versions, or a name another option asks (torch, Python), is refused in one line."""
    if not values:
        return {}
    from ..names import canonical_name

    example = "torchvision=0.19.1 (or NAME=none: not installed)"
    out = _pairs(values, "companions", "--companion", example, "version", _normalised)
    seen: Dict[str, Tuple[str, str]] = {}
    for name, value in out.items():
        canonical = canonical_name(name)
        if canonical in _ASKED_ELSEWHERE:
            raise CheckRefused(None, _elsewhere(name, value, canonical, _ASKED_ELSEWHERE[canonical]))
        if canonical in seen and seen[canonical][1] != value:
            first = seen[canonical]
            raise CheckRefused(
                "companions",
                f" names {canonical} twice ({first[0]}={first[1]}, {name}={value}): give one version",
            )
        seen[canonical] = (name, value)
    return out


def _elsewhere(name: str, value: str, what: str, flag: str) -> str:
    """The one line that refuses ``--companion NAME=VALUE`` for a name another option asks."""
    shown = "Python" if what == "python" else what
    asked = f"{flag} {value}" if value != "none" else f"{flag} VERSION"
    return f"--companion {name}={value}: {shown} is asked with {asked}, not --companion"


def read_question(request: CheckRequest, target: Optional[Target]) -> Question:
    """``request`` read, or :class:`CheckRefused` for the first field at fault (in the order a
    user reads them)."""
    from .binary import is_distribution_name

    python = None
    if request.python is not None:
        try:
            python = PythonVersion.parse(request.python)
        except ValueError as exc:
            raise CheckRefused("python", f": {exc}") from None
    dimensions = _pairs(request.sets, "sets", "--set", "cann=8.0", "value")
    companions = _companions(request.companions)
    when = None
    if request.today is not None:
        from ..matrix.reader import parse_date  # YYYY-MM-DD on every Python, as the matrix reads dates

        try:
            when = parse_date(request.today)
        except ValueError:
            raise CheckRefused("today", f" {request.today!r}: write a date as YYYY-MM-DD") from None
    named, adapter = request.adapter, None
    if named is not None and not named.strip():
        raise CheckRefused(
            "adapter", f" {named!r}: give a version (2.10.0.post4) or an installed adapter's distribution name"
        )
    if named is not None and not is_distribution_name(named):
        adapter = _normalised(named)
        named = None
    torch, pins = request.torch, None
    if request.requirements is not None:  # what the file would install, assumed as --torch etc. would be
        from .requirements import RequirementsError, read_pins, resolve_pins

        try:
            pins = resolve_pins(request.requirements) if request.resolve else read_pins(request.requirements)
        except RequirementsError as exc:
            raise CheckRefused(None, str(exc)) from None
        torch = torch or pins.get("torch")
    elif request.resolve:
        raise CheckRefused("resolve", " resolves a --requirements FILE: give one")
    if request.deep and target is not None and not target.here:
        raise CheckRefused("deep", " imports torch in this process: it cannot judge another environment (--env)")
    torch = _normalised(torch) if torch is not None else None
    asked = pins.range("torch") if pins is not None and torch is None else None
    what_if = torch is not None or asked is not None or python is not None or adapter is not None
    if request.constraints is not None:
        from .constraints import FORMATS

        if request.constraints not in FORMATS:
            raise CheckRefused("constraints", f" {request.constraints!r}: write one of {', '.join(FORMATS)}")
        if what_if or request.as_json:
            raise CheckRefused(
                "constraints",
                " pins what is installed: it takes no --torch, --python, --adapter, --requirements or --json",
            )
    if request.emit is not None:
        from .emit import EMIT_FORMATS

        if request.emit not in EMIT_FORMATS:
            raise CheckRefused("emit", f" {request.emit!r}: write one of {', '.join(EMIT_FORMATS)}")
        if request.as_json or request.constraints is not None:
            raise CheckRefused("emit", " prints the first fix as resolver input: it takes no --json or --constraints")
    elif request.output is not None:
        raise CheckRefused("output", " is the file of --emit: give --emit uv or --emit requirements")
    binary = not request.no_binary and not what_if
    return Question(request, python, torch, asked, adapter, named, dimensions, companions, when, pins, binary)


# -- 2. find the matrices -----------------------------------------------------------------


def matrix_paths(
    explicit: Sequence[str], paths: Optional[Sequence[str]] = None, skipped: Optional[List[str]] = None
) -> List[Located]:
    """The matrices to judge: each of ``explicit`` (an adapter's and its layers'), else the usual
    discovery (./compat.yaml, else the installed adapters' and layers' registered matrices);
    ``skipped`` collects the distributions whose files could not be read (said as warnings)."""
    from ..matrix.discovery import find_matrices

    found: List[Located] = []
    asked: Sequence[Optional[str]] = explicit or [None]
    for path in asked:
        some = find_matrices(path, paths=paths, skipped=skipped)
        if not some:
            raise CheckRefused(None, "no ./compat.yaml and no installed adapter registers a matrix; pass --matrix PATH")
        found += some
    return found


def _matrices_of(distribution: str, explicit: Sequence[str], paths: Optional[Sequence[str]]) -> List[Located]:
    """The matrices that describe ``distribution`` (``--adapter DIST``): ``explicit``, else
    ./compat.yaml and the registered ones whose adapter it is; none is no error (the binary
    check answers alone)."""
    from ..matrix.cache import load_matrix
    from ..matrix.discovery import find_matrices, registered_matrices
    from ..names import canonical_name

    if explicit:
        return [located for path in explicit for located in find_matrices(path)]
    out: List[Located] = []
    for located in find_matrices(paths=paths) + registered_matrices(paths):
        try:
            described = load_matrix(located.path).matrix.adapter.distribution
        except MatrixError:
            continue
        if canonical_name(described) == canonical_name(distribution) and located.path not in [o.path for o in out]:
            out.append(located)
    return out[:1]


class _Loaded(NamedTuple):
    adapters: List[Tuple[Located, LoadResult]]
    layers: List[Tuple[Located, Layer]]  # the layers above an adapter
    invalid: List[Invalid]
    diagnostics: List[Diagnostic]


def _load(found: Sequence[Located]) -> _Loaded:
    from ..matrix.cache import load_any

    out = _Loaded([], [], [], [])
    for located in found:
        try:
            result: Union[LoadResult, LayerResult] = load_any(located.path)
        except MatrixError as exc:
            # one broken adapter among several registered ones must not silence the others
            if not (located.origin.startswith("entry point") and len(found) > 1):
                errors = sum(1 for d in exc.diagnostics if d.severity == "error")
                raise CheckRefused(
                    None,
                    f"{located.path}: {errors} error{'s' if errors != 1 else ''} in the matrix",
                    diagnostics=exc.diagnostics,
                ) from None
            out.diagnostics.extend(exc.diagnostics)
            errors_text = tuple(str(d) for d in exc.diagnostics if d.severity == "error")
            seen = tuple(DiagnosticSeen.of(d) for d in exc.diagnostics)
            out.invalid.append(Invalid(located.origin, located.path, errors_text, seen))
            continue
        if isinstance(result, LayerResult):
            out.layers.append((located, result.layer))
        else:
            out.adapters.append((located, result))
    return out


# -- 3. judge -----------------------------------------------------------------------------


def decide(matrix: Matrix, env: Environment, when: Optional[_dt.date] = None, with_fixes: bool = True) -> Verdict:
    """The verdict on ``env`` by ``matrix``: what ``check`` answers for each matrix and the
    import-time guard answers for an adapter being imported."""
    from .verdict import verdict

    return verdict(matrix, env, when, with_fixes=with_fixes)


class _Judged(NamedTuple):
    """One matrix's part of the answer."""

    answer: Answer
    binary: Optional[BinaryUsed]  # the stored binary section used
    kept: Union[KeptPins, str, None] = None  # --constraints: its pins, or why it has none
    emitted: Optional[str] = None  # --emit: the first fix as resolver input


_OPTION_OF_ASSUMED = {"torch": "torch", "adapter": "adapter", "dimension": "sets", "companion": "companions"}


class _Asked(NamedTuple):
    """What one matrix is asked: the question read against its adapter, companions and layers."""

    torch: Optional[str]  # --torch, or the torch --requirements' range is judged at
    adapter: Optional[str]  # --adapter VERSION, or the adapter the file pins
    companions: Dict[str, str]  # --companion and the file's companion pins
    stack: Dict[str, str]  # --companion naming a stack's package (a layer, vllm)
    notes: Tuple[str, ...]  # what the file's ranges were taken to install


def _not_companions(companions: Dict[str, str], matrix: Matrix, layers: Sequence[Layer]) -> None:
    """Refuse a ``--companion`` that names the adapter (``--adapter``) or a dimension (``--set``),
    and a stack package's version that is not one."""
    from packaging.version import InvalidVersion, Version

    from ..names import canonical_name

    adapter = canonical_name(matrix.adapter.distribution)
    owned = {d.name for layer in layers for d in layer.dimensions}
    for name, value in companions.items():
        if canonical_name(name) == adapter:
            raise CheckRefused(
                None, _elsewhere(name, value, f"{matrix.adapter.distribution} (the adapter)", "--adapter")
            )
        if matrix.dimension(name) is not None or name in owned:
            raise CheckRefused(
                None, f"--companion {name}={value}: {name} is a dimension, set with --set {name}={value}"
            )
    if not layers:
        return
    from .stack.step import split_overrides

    for name, value in split_overrides(companions, layers)[1].items():
        try:
            Version(value) if value != "none" else None
        except InvalidVersion:
            raise CheckRefused("companions", f" {name}={value!r} is not a PEP 440 version (or none)") from None


def _asked(question: Question, matrix: Matrix, layers: Sequence[Layer], target: Optional[Target]) -> _Asked:
    distribution, pins = matrix.adapter.distribution, question.pins
    pinned = dict(question.companions)
    _not_companions(pinned, matrix, layers)
    stack_versions: Dict[str, str] = {}
    if layers:  # --companion may name a stack's package (a layer, vllm) as well as a companion
        from .stack.step import split_overrides

        pinned, stack_versions = split_overrides(pinned, layers)
    torch = question.torch
    notes: Tuple[str, ...] = ()
    if pins is not None:
        from .requirements import kept_ranges

        ranged, notes, unknown = kept_ranges(pins, [distribution, *(c.name for c in matrix.companions)], target)
        if distribution in unknown and not question.adapter:  # pip would replace the adapter: by which release?
            raise CheckRefused(None, notes[0])  # the adapter comes first, so its note does
        pinned.update(
            (c.name, pins.get(c.name) or ranged.get(c.name) or "none")
            for c in matrix.companions
            if c.name not in pinned
        )
        if question.asked is not None:  # a torch range: judged at the one line of the matrix it admits
            torch, note = _ranged(matrix, question.asked, pins.source, distribution, target)
            notes = (note, *notes)
    from_file = pins.get(distribution) if pins is not None else None
    adapter_pin = question.adapter or (_normalised(from_file) if from_file is not None else None)
    return _Asked(torch, adapter_pin, pinned, stack_versions, notes)


def _judge(
    question: Question,
    located: Located,
    result: LoadResult,
    target: Optional[Target],
    probes: Probes,
    layers: Sequence[Layer] = (),
    looked: Optional[Survey] = None,
) -> _Judged:
    """One matrix's verdict on this environment (or the one the question assumes), and with
    ``layers`` (those above its adapter) the stack's. Each step hands a value to the next; the
    answer is built once, from all of them."""
    from .installed_companions import judge_companions, with_companions
    from .report import answer_of

    matrix = result.matrix
    asked = _asked(question, matrix, layers, target)
    installed, found = _detected(question, matrix, layers, asked, target)
    companions = judge_companions(matrix, installed.environment, found)
    decided = with_companions(decide(matrix, installed.environment, question.when, not layers), matrix, companions)
    stack = _stacked(question, matrix, layers, installed, decided, asked, target, looked, probes) if layers else None
    if stack is not None:
        decided = stack.verdict
        # the layers' own dimensions (vllm-ascend's device_type) are said beside the adapter's
        installed = installed._replace(detections=installed.detections + stack.detections)
    decided, section, used = _binary_folded(question, matrix, installed, decided, stack, target, probes)
    decided = _ranges_folded(question, matrix, decided, asked, target)
    decided = _broken_torch(decided, installed.torch_error)
    # check --env: say which environment was judged (not the running one, --pythonpath or not)
    where = target.description if target is not None and not target.here else None
    answer = answer_of(
        matrix,
        located.origin,
        installed,
        decided,
        companions,
        stack=stack.seen if stack is not None else None,
        binary=section,
        location=where,
        deep=_deep(question, result, probes),
    )
    kept = _pins_kept(question, matrix, installed, decided, companions, stack)
    return _Judged(answer, used, kept, _fix_emitted(question, matrix, layers, decided, probes))


_TORCH_ABSENT = "torch is not installed"


def _broken_torch(decided: Verdict, torch_error: Optional[str]) -> Verdict:
    """``decided`` for a torch whose dist-info is there but unreadable (``torch_error``): not
    "not installed" but what it is, and its fixes reinstall torch (pip's ``--force-reinstall``:
    a plain install may take the broken folder for the version it asks for)."""
    if torch_error is None:
        return decided
    reasons = tuple(f"torch is {torch_error}: reinstall it" if r == _TORCH_ABSENT else r for r in decided.reasons)
    fixes = tuple(
        fix._replace(
            summary=fix.summary.replace("install torch ", "reinstall torch ", 1)
            if fix.summary.startswith("install torch ")
            else fix.summary,
            commands=tuple(
                c.replace(" install ", " install --force-reinstall ", 1) if "torch==" in c else c for c in fix.commands
            ),
        )
        for fix in decided.fixes
    )
    return decided._replace(reasons=reasons, fixes=fixes)


def _detected(
    question: Question, matrix: Matrix, layers: Sequence[Layer], asked: _Asked, target: Optional[Target]
) -> Tuple[Installed, List[Tuple[Companion, Optional[str], str]]]:
    """The environment and its companions as installed, what the question assumes laid over them."""
    from .environment import AssumptionError, detect_environment
    from .installed_companions import detect_companions

    owned = {d.name for layer in layers for d in layer.dimensions}  # a layer's own: judged with the stack
    unknown = set(question.dimensions) - owned - {d.name for d in matrix.dimensions}
    if unknown and owned:  # the layers' own are --set's too: the refusal names them with the adapter's
        declared = [d.name for d in matrix.dimensions] + sorted(owned)
        raise CheckRefused(
            "sets",
            f" names unknown dimension(s) {', '.join(sorted(unknown))}; the matrices declare: {', '.join(declared)}",
        )
    _owned_values(layers, question.dimensions)
    try:
        installed = detect_environment(
            matrix,
            python=question.python,
            torch=asked.torch,
            adapter=asked.adapter,
            dimensions={k: v for k, v in question.dimensions.items() if k not in owned},
            target=target,
        )
        return installed, detect_companions(matrix, asked.companions, target)
    except AssumptionError as exc:
        raise CheckRefused(_OPTION_OF_ASSUMED[exc.kind], _assumed(exc)) from None
    except ValueError as exc:
        raise CheckRefused(None, str(exc)) from None


def _owned_values(layers: Sequence[Layer], sets: Dict[str, str]) -> None:
    """Refuse a ``--set`` value of a dimension a layer owns (vllm-ascend's ``device_type``) that
    is none of its values, as the adapter's dimensions are refused (never silently unset)."""
    for dim in (d for layer in layers for d in layer.dimensions):
        text = sets.get(dim.name)
        if text is None:
            continue
        try:
            value = dim.value(dim.named(text))
        except ValueError:
            raise CheckRefused("sets", f" {dim.name}={text!r} is not a PEP 440 version") from None
        if dim.kind == "enum" and not any(value.same(v) for v in dim.values):
            known = ", ".join(str(v) for v in dim.values)
            raise CheckRefused("sets", f" {dim.name}={text!r} is not one of its values ({known})")


def _stacked(
    question: Question,
    matrix: Matrix,
    layers: Sequence[Layer],
    installed: Installed,
    decided: Verdict,
    asked: _Asked,
    target: Optional[Target],
    looked: Optional[Survey],
    probes: Probes,
) -> StackAnswer:
    """The adapter's verdict made the stack's: each layer's pins judged, fixes that are whole stacks."""
    from .stack.step import StackQuestion, with_stack

    stack_question = StackQuestion(asked.stack, question.dimensions, target, looked)
    today = question.when or _dt.date.today()
    layer_binary = (lambda name: probes.binary(name, None, target)) if question.binary else None
    return with_stack(matrix, layers, installed.environment, decided, stack_question, today, layer_binary)


def _binary_folded(
    question: Question,
    matrix: Matrix,
    installed: Installed,
    decided: Verdict,
    stack: Optional[StackAnswer],
    target: Optional[Target],
    probes: Probes,
) -> Tuple[Verdict, Optional[BinarySection], Optional[BinaryUsed]]:
    """``--binary``: the adapter's libraries read (and each installed layer's, against the
    adapter's), a problem folded into the verdict; with the section and the stored one used."""
    from .binary import built_for, with_binary

    distribution = matrix.adapter.distribution
    section = used = None
    if question.binary and installed.adapter_text is not None:
        section = probes.binary(distribution, decided.release, target)
        decided = with_binary(decided, section)
        if section is not None:
            used = (distribution, built_for(decided.release))
    for layer in stack.seen.layers if stack is not None else ():
        decided = with_binary(decided, layer.binary)
    return decided, section, used


def _ranges_folded(
    question: Question, matrix: Matrix, decided: Verdict, asked: _Asked, target: Optional[Target]
) -> Verdict:
    """``--requirements``: what the file pins folded in, and what its ranges were taken to install
    said, never silently assumed."""
    from .binary import with_pins

    pins = question.pins
    if pins is not None and asked.torch is not None:
        distribution = matrix.adapter.distribution
        decided = with_pins(decided, distribution, asked.adapter, asked.torch, pins.source, question.asked, target)
    if asked.notes:
        decided = decided._replace(assumptions=decided.assumptions + asked.notes)
    return decided


def _pins_kept(
    question: Question,
    matrix: Matrix,
    installed: Installed,
    decided: Verdict,
    companions: Sequence[CompanionState],
    stack: Optional[StackAnswer],
) -> Union[KeptPins, str, None]:
    """``--constraints``: the pins to keep, or why there are none (None: not asked)."""
    if question.request.constraints is None:
        return None
    from .constraints import NothingToKeep, keep_pins

    try:
        return keep_pins(matrix, installed.environment, decided, companions, stack.pins if stack else ())
    except NothingToKeep as exc:
        return str(exc)


def _fix_emitted(
    question: Question, matrix: Matrix, layers: Sequence[Layer], decided: Verdict, probes: Probes
) -> Optional[str]:
    """``--emit``: the first fix as a resolver's input (None: not asked, or no fix)."""
    if question.request.emit is None or not decided.fixes:
        return None
    from .emit import fix_pins, render_emitted

    first = decided.fixes[0]
    pins = fix_pins(matrix, layers, first)
    return render_emitted(question.request.emit, pins, first.summary, probes.hashes, first)


def _deep(question: Question, result: LoadResult, probes: Probes) -> Optional[DeepSection]:
    """``--deep``: torch imported, the adapter activated, a smoke on its device (None: not asked)."""
    if not question.request.deep:
        return None
    if result.matrix.adapter.shims is None:
        raise CheckRefused(
            None,
            f"{result.matrix.path} declares no shims package (adapter: shims:): this command works on an adapter with shims",
        )
    return probes.deep(result)


def _assumed(exc: AdapterMatrixError) -> str:
    """An :class:`~.environment.AssumptionError` as the rest of a sentence after its option:
    `` cann='8.x' is not a PEP 440 version``."""
    from .environment import AssumptionError

    assert isinstance(exc, AssumptionError)
    if exc.value is None:
        return f" {exc.problem}"
    given = f"{exc.name}={exc.value!r}" if exc.name else repr(exc.value)
    return f" {given} {exc.problem}"


def _ranged(matrix: Matrix, asked: str, source: str, distribution: str, target: Optional[Target]) -> Tuple[str, str]:
    """The torch a file's range (``torch>=2.12,<2.13``) is judged at in ``matrix`` and the
    assumption that says so; refused (exit 1) when it admits no torch the matrix describes,
    (exit 2) when it admits several lines (which one pip installs depends on its index)."""
    from .binary import built_for_installed, minor_of
    from .requirements import ranged_torch

    ranged = ranged_torch(matrix, asked)
    if ranged.torch is not None:
        return ranged.torch, (
            f"torch {ranged.torch}: the newest release of {asked} this matrix describes ({source} pins no exact "
            f"torch: pip installs the newest its index has, or keeps an installed torch the range admits)"
        )
    if not ranged.lines:
        described = ", ".join(str(line.minor) for line in matrix.torch)
        raise CheckRefused(
            None,
            f"{source} asks for {asked}, which admits no torch release this matrix describes ({described})",
            EXIT_UNSUPPORTED,
        )
    found = built_for_installed(distribution, target)
    hint = ""
    if found is not None:
        line = found[1].line or minor_of(found[1].exact or "")
        major, minor = line.split(".")[:2]
        hint = (
            f"; {distribution} {found[0]} (installed) was built for torch {line}: "
            f"torch>={line},<{major}.{int(minor) + 1} keeps to it"
        )
    raise CheckRefused(
        None,
        f"{source} asks for {asked}, which admits torch {', '.join(ranged.lines)} of this matrix: which one pip "
        f"installs depends on its index and on what is installed, so check cannot judge it; pin torch in it "
        f"(torch==X.Y.Z), or --resolve asks pip's resolver (it needs the file's index){hint}",
    )


def _unmatrixed(distribution: str, pins: Optional[FilePins], target: Optional[Target], probes: Probes) -> Answer:
    """``check --adapter DIST`` for an adapter without a matrix: its binary check alone (with
    ``--requirements``: the torch it was built for against the file's)."""
    from packaging.version import InvalidVersion, Version

    from .binary import binary_answer, pins_answer
    from .environment import current_python
    from .facts import distribution_version

    missing = CheckRefused(
        "adapter", f" {distribution}: no distribution of that name is installed (nor is it a version)"
    )
    python, full, implementation = current_python(target)
    if pins is not None:
        if distribution_version(distribution, target) is None:
            raise missing
        return pins_answer(distribution, pins, python, full, implementation, target)
    section = probes.binary(distribution, None, target)
    if section is None:
        raise missing
    torch_text = distribution_version("torch", target)
    try:
        torch = Version(torch_text) if torch_text else None
    except InvalidVersion:
        torch = None
    env = Environment(python=python, python_full=full, implementation=implementation, torch=torch)
    return binary_answer(distribution, section, env, torch_text)


# -- 4. answer ----------------------------------------------------------------------------


def _named_described(question: Question, found: _Loaded) -> None:
    """``--adapter NAME`` with ``--matrix``: NAME must be the adapter a matrix given describes (a
    version-like word that is not a version, ``latest``, was otherwise dropped unsaid)."""
    from ..names import canonical_name

    if not question.named or not question.request.matrix or not found.adapters:
        return
    described = [r.matrix.adapter.distribution for _l, r in found.adapters]
    if canonical_name(question.named) not in {canonical_name(d) for d in described}:
        raise CheckRefused(
            "adapter",
            f" {question.named!r} is neither a version nor the adapter --matrix describes ({', '.join(described)})",
        )


def _answer(question: Question, target: Optional[Target], probes: Probes) -> CheckResult:
    from ..names import canonical_name
    from .facts import search_path

    request = question.request
    paths = target.paths if target is not None else None  # `check --env`: that environment's adapters
    unreadable: List[str] = []  # distributions whose files cannot be read: said, then left out
    if question.named:
        located = _matrices_of(question.named, request.matrix, paths)
    else:
        located = matrix_paths(request.matrix, paths, unreadable)
    import gc

    # the matrices loaded live as long as the answer: no collection runs while they are unpickled,
    # nor walks them again while the answer is searched (a layer of 5,000 releases is a million
    # objects); :func:`run` unfreezes them when it returns
    gc.disable()
    try:
        found = _load(located)
    finally:
        gc.enable()
    gc.freeze()
    _named_described(question, found)
    from .provenance import current_survey

    looked = current_survey(target)
    _checkout_layers(found, looked.layer_files)
    _installed_adapters_below(found, paths)
    _refuse_cycles([layer for _l, layer in found.layers])
    invalid = found.invalid
    judged: List[_Judged] = []
    memorable = True
    for place, result in found.adapters:
        # a dimension read by a detector (a file, a command) can change without a stamp
        memorable = memorable and all(d.name in question.dimensions for d in result.matrix.dimensions)
        adapter = canonical_name(result.matrix.adapter.distribution)
        above = [layer for _l, layer in found.layers if layer.name_of_adapter == adapter]
        _refuse_clashes(result.matrix, above)
        judged.append(_judge(question, place, result, target, probes, above, looked))
    # so can a dimension a layer owns (vllm-ascend's device generation, read from the environment)
    memorable = memorable and all(d.name in question.dimensions for _l, layer in found.layers for d in layer.dimensions)
    described = {canonical_name(r.matrix.adapter.distribution) for _l, r in found.adapters}
    for place, layer in found.layers:  # a layer whose adapter's matrix is not here cannot be judged
        if layer.name_of_adapter not in described:
            invalid.append(_orphan(place, layer))
    warned = [_invalid_warning(bad) for bad in invalid] + [s.warning() for s in looked.shadowed]
    warned += list(dict.fromkeys(unreadable))
    diagnostics = tuple(found.diagnostics)
    if request.constraints is not None:
        return _constraints(
            judged, request.constraints, diagnostics
        )  # the pins alone: as before, no warning per invalid matrix
    if request.emit is not None:
        return _emitted(judged, request, diagnostics)
    answers = [j.answer for j in judged]
    if question.named and not answers:
        answer = _unmatrixed(question.named, question.pins, target, probes)
        if target is not None and not target.here:
            answer = answer._replace(environment=answer.environment._replace(location=target.description))
        answers.append(answer)
    code = worst_exit_code(a.exit_code for a in answers) if answers else EXIT_USAGE
    autoload = probes.autoload(search_path(target))
    if not autoload.ok and code != EXIT_USAGE:
        code = worst_exit_code([code, EXIT_UNSUPPORTED])
    shadowed = tuple(s.warning() for s in looked.shadowed)
    document = CheckDocument(CHECK_SCHEMA, code, None, tuple(answers), tuple(invalid), autoload, shadowed=shadowed)
    binaries = tuple(j.binary for j in judged if j.binary is not None)
    # a clone's HEAD moves without a dist-info to stamp: an answer that read one is not remembered
    cloned = any(c.source for c in looked.checkouts) or any(
        p.get("kind") != "wheel" for a in answers if a.stack is not None for p in a.stack.provenance or ()
    )
    memorable = memorable and request.plain and not invalid and bool(answers) and not cloned
    return CheckResult(code, document, None, tuple(warned), diagnostics, (), memorable, binaries)


def _checkout_layers(found: _Loaded, files: Sequence[Tuple[str, str]]) -> None:
    """The layers whose matrix comes with a checkout on the import path (its compat.yaml), judged
    as an installed layer's registered matrix is; a layer already given is not read twice."""
    from ..matrix.cache import load_any

    given = {layer.name for _l, layer in found.layers}
    for package, path in files:
        try:
            result = load_any(path)
        except MatrixError as exc:
            found.diagnostics.extend(exc.diagnostics)
            continue
        if isinstance(result, LayerResult) and result.layer.name not in given:
            found.layers.append((Located(path, f"checkout of {package}"), result.layer))
            given.add(result.layer.name)


def _installed_adapters_below(found: _Loaded, paths: Optional[Sequence[str]]) -> None:
    """The registered matrix of each installed adapter a layer sits on, when the matrices found
    (``--matrix``, ./compat.yaml: a layer's own checkout) hold the layer but not its adapter: the
    adapter's matrix comes with it, as the discovery of installed matrices finds it."""
    from ..matrix.cache import load_any
    from ..matrix.discovery import registered_matrices
    from ..names import canonical_name

    described = {canonical_name(r.matrix.adapter.distribution) for _l, r in found.adapters}
    wanted = {layer.name_of_adapter for _l, layer in found.layers} - described
    if not wanted:
        return
    read = {located.path for located, _r in found.adapters} | {located.path for located, _l in found.layers}
    for located in registered_matrices(paths):
        if located.path in read:
            continue
        try:
            result = load_any(located.path)
        except MatrixError:
            continue  # a broken registered matrix of another adapter is no answer to this layer
        if isinstance(result, LoadResult) and canonical_name(result.matrix.adapter.distribution) in wanted:
            found.adapters.append((located, result))
            wanted.discard(canonical_name(result.matrix.adapter.distribution))


def _refuse_clashes(matrix: Matrix, layers: Sequence[Layer]) -> None:
    """A dimension a layer owns must not be one its adapter's matrix defines: refused at its line."""
    for layer in layers:
        for dim in layer.dimensions:
            if matrix.dimension(dim.name) is not None:
                diagnostic = Diagnostic(
                    dim.mark,
                    f"layer dimension {dim.name} clashes with {matrix.adapter.distribution}'s dimension {dim.name} "
                    f"({matrix.dimension(dim.name).mark})",  # type: ignore[union-attr]  # checked just above
                    f"rename it, or constrain the adapter's {dim.name} in the releases' dimensions:",
                )
                raise CheckRefused(None, f"{layer.path}: 1 error in the matrix", diagnostics=(diagnostic,))


def _refuse_cycles(layers: Sequence[Layer]) -> None:
    """Layers that require one another in a cycle are no stack: refused as ``validate`` refuses
    them, at the pin that closes the cycle (exit 2)."""
    from ..matrix.stack_rules import layer_cycles

    cycles = layer_cycles(list(layers))
    if cycles:
        raise CheckRefused(
            None, f"{cycles[0].mark.file}: layers that require one another in a cycle", diagnostics=cycles
        )


def _orphan(located: Located, layer: Layer) -> Invalid:
    """A layer judged without its adapter's matrix: no verdict, and what to do."""
    return Invalid(
        located.origin,
        located.path,
        (
            f"layer {layer.distribution} sits on {layer.adapter}, and no matrix of {layer.adapter} was found: "
            f"install {layer.adapter} (its matrix comes with it) or pass its compat.yaml with --matrix",
        ),
    )


def _invalid_warning(bad: Invalid) -> str:
    if bad.errors and bad.errors[0].startswith("layer "):  # a layer without its adapter's matrix: say what to do
        return f"{bad.matrix} ({bad.origin}): {bad.errors[0]}"
    return f"{bad.matrix} ({bad.origin}) is not a valid matrix: no verdict for it; fix or uninstall that adapter"


def _constraints(judged: List[_Judged], constraints: str, diagnostics: Tuple[Diagnostic, ...]) -> CheckResult:
    """``check --constraints``: the pins of every adapter that works here; refused (exit 1) when none does."""
    from .constraints import render_pins

    kept = [j.kept for j in judged if isinstance(j.kept, KeptPins)]
    refused = [j.kept for j in judged if isinstance(j.kept, str)]
    if not kept:
        raise CheckRefused(None, "; ".join(refused) or "nothing to pin: no matrix was found", EXIT_UNSUPPORTED)
    # another adapter works: its pins are written, this one is named
    return CheckResult(EXIT_OK, None, render_pins(kept, constraints), tuple(refused), diagnostics)


def _emitted(judged: List[_Judged], request: CheckRequest, diagnostics: Tuple[Diagnostic, ...]) -> CheckResult:
    """``check --emit``: the first fix of each answer that has one, printed or written to
    ``--output``; refused when none has a fix (exit 1 when one is unsupported, else 2)."""
    texts = [j.emitted for j in judged if j.emitted is not None]
    if not texts:
        worst = worst_exit_code(j.answer.exit_code for j in judged) if judged else EXIT_USAGE
        if worst in (EXIT_OK, EXIT_WARNING):
            raise CheckRefused(
                "emit", " has no fix to print: this environment is usable (--constraints pins it as it is)"
            )
        raise CheckRefused("emit", " has no fix to print: check finds none (run check for why)", EXIT_UNSUPPORTED)
    text = "\n".join(texts)
    if request.output is not None:
        from ..files import atomic_write

        atomic_write(request.output, text)
        return CheckResult(EXIT_OK, None, "", (), diagnostics)
    return CheckResult(EXIT_OK, None, text, (), diagnostics)


def run(request: CheckRequest) -> CheckResult:
    """``check``'s answer to ``request``: :class:`CheckRefused` when it cannot answer it (and the
    tool's other errors, :class:`~adapter_matrix.errors.AdapterMatrixError`, as they come).
    The environment judged (``--env``'s, else this one) is located once here and passed down to
    every step that reads it: nothing below keeps it."""
    target = None
    if request.env is not None:  # another environment: its files, never its interpreter
        from ..errors import ChoiceError
        from .elsewhere import locate

        try:
            target = locate(request.env)
        except ChoiceError as exc:
            raise CheckRefused("env", f" {exc}") from None
    from .elsewhere import with_front

    target = with_front(target, (request.pythonpath or "").split(os.pathsep))
    try:
        with warnings.catch_warnings(record=True) as raised:  # the filters as set: returned, not printed
            question = read_question(request, target)
            result = _answer(question, target, request.probes)
    finally:
        import gc

        gc.unfreeze()  # what _answer froze: a process that asks again collects as before
    return result._replace(raised=tuple(raised), memorable=result.memorable and not raised and not result.warnings)
