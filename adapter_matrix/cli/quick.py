"""`check` without typer: the start-up path of the command users run most.

Importing typer and click costs about 40 ms, a third of what ``adapter-matrix check``
takes, and the check must answer quickly (it is the first thing a user runs, and CI runs
it in every cell). :func:`main` therefore reads a plain ``check`` command line itself,
from :data:`CHECK_OPTIONS`, and answers through :func:`run_check`; every other command
line (``--help``, a typo, another command) goes to typer, which prints its usual help
and errors. The typer command in :mod:`adapter_matrix.cli.check` declares the same
options and calls the same :func:`run_check`; a test keeps the two declarations equal.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..errors import EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE, EXIT_WARNING, ChoiceError, worst_exit_code
from .base import (
    CommandError,
    date_or_exit,
    fail,
    fail_with,
    find_or_exit,
    print_diagnostics,
)

__all__ = ["CheckOption", "CHECK_OPTIONS", "CheckRequest", "parse_check", "run_check"]


class CheckOption(NamedTuple):
    """One option of ``check``: its flags, the keyword of :func:`run_check`, and its kind."""

    flags: Sequence[str]
    dest: str
    kind: str  # "value" (the last one given wins), "multiple" (repeatable) or "flag"


CHECK_OPTIONS = (
    CheckOption(("--matrix", "-m"), "matrix", "multiple"),
    CheckOption(("--torch",), "torch", "value"),
    CheckOption(("--python",), "python", "value"),
    CheckOption(("--adapter",), "adapter", "value"),
    CheckOption(("--set",), "sets", "multiple"),
    CheckOption(("--companion",), "companions", "multiple"),
    CheckOption(("--json",), "as_json", "flag"),
    CheckOption(("--deep",), "deep", "flag"),
    CheckOption(("--no-binary",), "no_binary", "flag"),
    CheckOption(("--env",), "env", "value"),
    CheckOption(("--requirements",), "requirements", "value"),
    CheckOption(("--resolve",), "resolve", "flag"),
    CheckOption(("--constraints",), "constraints", "value"),
    CheckOption(("--today",), "today", "value"),
)
_BY_FLAG = {flag: option for option in CHECK_OPTIONS for flag in option.flags}


class CheckRequest(NamedTuple):
    """What a ``check`` command line asks: one field per option of :data:`CHECK_OPTIONS` (its
    ``dest``), and ``command_line``: the console script's arguments after ``check``, under which
    a plain question's answer is remembered (:mod:`adapter_matrix.check.recall`); None for a
    caller in a process whose environment it patches."""

    matrix: Sequence[str] = ()  # several: an adapter's matrix and its layers' (a stack)
    torch: Optional[str] = None
    python: Optional[str] = None
    adapter: Optional[str] = None
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
    command_line: Optional[Sequence[str]] = None

    @property
    def plain(self) -> bool:
        """A question about this environment as installed, which may be remembered."""
        return not (
            self.deep
            or self.env is not None
            or self.requirements is not None
            or self.resolve
            or self.constraints is not None
            or self.adapter
        )


def parse_check(argv: Sequence[str]) -> Optional[Dict[str, Any]]:
    """The keywords of :func:`run_check` for ``check ARGV``, or None for anything else
    (help, an unknown option, a missing value, an argument): typer answers those."""
    args: Dict[str, Any] = {
        o.dest: [] if o.kind == "multiple" else False if o.kind == "flag" else None for o in CHECK_OPTIONS
    }
    i = 0
    while i < len(argv):
        token = argv[i]
        i += 1
        name, eq, attached = token.partition("=") if token.startswith("--") else (token[:2], "", token[2:])
        option = _BY_FLAG.get(name)
        if option is None or not token.startswith("-"):
            return None
        if option.kind == "flag":
            if eq or attached:
                return None
            args[option.dest] = True
            continue
        if eq or attached:
            value = attached
        elif i < len(argv):
            value, i = argv[i], i + 1
        else:
            return None
        if option.kind == "multiple":
            args[option.dest].append(value)
        else:
            args[option.dest] = value
    return args


def _parse_sets(values: List[str], option: str = "--set", example: str = "cann=8.0") -> Dict[str, str]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            fail(f"{option} {item!r}: write NAME=VALUE, e.g. {option} {example}")
        out[name.strip()] = value.strip()
    return out


def _mapped_check(request: CheckRequest) -> int:
    """:func:`_run_check` with the tool's errors mapped as every command maps them
    (:func:`~adapter_matrix.cli.base.fail_with`): ``check`` runs without typer's group."""
    from ..errors import AdapterMatrixError

    try:
        return _run_check(request)
    except AdapterMatrixError as exc:
        fail_with(exc)


def run_check(**options: Any) -> int:
    """Run ``check`` with the keywords of :class:`CheckRequest` and print its report; returns the
    exit code (usage errors exit 2 themselves, with ``--json`` after printing a document that
    holds the error)."""
    request = CheckRequest(**options)
    if not request.as_json:
        return _mapped_check(request)
    try:
        return _mapped_check(request)
    except CommandError as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_USAGE
        _print_document(_refusal(code, exc.message, exc.diagnostics))
        raise


def _refusal(code: int, error: str, diagnostics: Sequence[Any] = ()) -> Any:
    """The ``check --json`` document of a command line ``check`` cannot answer (with the
    diagnostics of the matrix file at fault, when that is why)."""
    from ..answer import CHECK_SCHEMA, CheckDocument, DiagnosticSeen

    seen = tuple(DiagnosticSeen.of(d) for d in diagnostics)
    return CheckDocument(CHECK_SCHEMA, code, error, diagnostics=seen)


def _print_document(document: Any) -> None:
    sys.stdout.write(json.dumps(document.to_json(), indent=2) + "\n")
    sys.stdout.flush()


_OPTIONS = {"torch": "--torch", "adapter": "--adapter", "dimension": "--set", "companion": "--companion"}


def _as_option(exc: Any) -> str:
    """An :class:`~adapter_matrix.check.environment.AssumptionError` in the words of the
    option that assumed it: ``--set cann='8.x' is not a PEP 440 version``."""
    option = _OPTIONS[exc.kind]
    if exc.value is None:
        return f"{option} {exc.problem}"
    given = f"{exc.name}={exc.value!r}" if exc.name else repr(exc.value)
    return f"{option} {given} {exc.problem}"


def _invalid(located: Any, exc: Any) -> Any:
    """What ``check`` says of an installed matrix it cannot load (it answers for the others)."""
    from ..answer import DiagnosticSeen, Invalid

    errors = tuple(str(d) for d in exc.diagnostics if d.severity == "error")
    return Invalid(located.origin, located.path, errors, tuple(DiagnosticSeen.of(d) for d in exc.diagnostics))


def _run_check(request: CheckRequest) -> int:
    from ..check.facts import judge

    target = None
    if request.env is not None:  # another environment: its files, never its interpreter
        from ..check.elsewhere import locate

        try:
            target = locate(request.env)
        except ChoiceError as exc:
            fail(f"--{exc.subject} {exc}")
    judge(target)
    try:
        return _check_here(request, target)
    finally:
        judge(None)


def _check_here(request: CheckRequest, target: Any) -> int:
    """``request`` about this environment, or ``target`` (``--env``)'s. A plain question from
    the console script is remembered with what it was decided from (check/recall.py), for
    the console script's first lines to answer it again while none of that changed."""
    color = _color() and not request.as_json
    deps = paths = None
    from ..check.recall import NO_MEMO

    if request.command_line is not None and request.plain and not os.environ.get(NO_MEMO):
        from ..check.facts import search_path
        from ..check.recall import stamps

        paths = search_path()
        deps = stamps([m.path for m in _find(request.matrix)], paths)  # before the answer reads them
    heard = _Heard(sys.stderr)  # an answer that warned on stderr is not memoized
    sys.stderr = heard
    try:
        code, out, binaries = _answer(request, target, color)
    finally:
        sys.stderr = heard.stream
    sys.stdout.write(out)
    sys.stdout.flush()
    if deps is not None and paths is not None and binaries is not None and not heard.said:
        built_on = _built_on(binaries, paths)
        if built_on is not None:
            from ..check.recall import remember

            remember(request.command_line or (), {**deps, **built_on}, code, out)
    return code


def _built_on(binaries: List[Tuple[str, Optional[str]]], paths: Sequence[str]) -> Optional[Dict[str, Any]]:
    """What the stored binary sections (``(distribution, pin)`` each) and the autoload lint an
    answer used were decided from, while they hold; None when one is not stored."""
    from ..binary.autoload import autoload_entry
    from ..binary.section import binary_entry
    from ..memo import entry_deps

    deps: Dict[str, Any] = {}
    for entry in [binary_entry(d, pin) for d, pin in binaries] + [autoload_entry(paths)]:
        held = None if entry is None else entry_deps(entry)
        if held is None:
            return None
        deps.update(held)
    return deps


def _color() -> bool:
    """Colors only where someone sees them, and not when they asked for none (NO_COLOR)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


class _Heard:
    """Stands in for stderr while ``check`` answers the long way, to know whether it said
    anything there."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.said = stream, False

    def write(self, text: str) -> int:
        self.said = self.said or bool(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class _Question(NamedTuple):
    """A ``check`` request read and refused once, in the terms its answer uses."""

    request: CheckRequest
    python: Any  # --python as a PythonVersion, or None
    torch: Optional[str]  # --torch, else the torch --requirements installs
    asked: Optional[str]  # the torch range of --requirements (torch>=2.12,<2.13) when it pins no exact one
    adapter: Optional[str]  # --adapter VERSION: a what-if pin of each matrix's adapter
    named: Optional[str]  # --adapter DIST: that distribution, with or without a matrix
    dimensions: Dict[str, str]  # --set
    companions: Dict[str, str]  # --companion
    when: Any  # --today, or None for today
    pins: Any  # what --requirements installs, or None
    binary: bool  # judge the installed binaries (not a what-if torch, Python or adapter)


def _question(request: CheckRequest, target: Any) -> _Question:
    """``request`` read, or exit 2 naming the option at fault (in the order a user reads them)."""
    from ..check.binary import is_distribution_name
    from ..matrix.model import PythonVersion

    python = None
    if request.python is not None:
        try:
            python = PythonVersion.parse(request.python)
        except ValueError as exc:
            fail(f"--python: {exc}")
    dimensions = _parse_sets(list(request.sets))
    companions = _parse_sets(list(request.companions), "--companion", "torchvision=0.19.1")
    when = date_or_exit(request.today)
    named, adapter = request.adapter, None
    if named is not None and not is_distribution_name(named):
        named, adapter = None, request.adapter
    torch, pins = request.torch, None
    if request.requirements is not None:  # what the file would install, assumed as --torch etc. would be
        from ..check.requirements import RequirementsError, read_pins, resolve_pins

        try:
            pins = resolve_pins(request.requirements) if request.resolve else read_pins(request.requirements)
        except RequirementsError as exc:
            fail(str(exc))
        torch = torch or pins.get("torch")
    elif request.resolve:
        fail("--resolve resolves a --requirements FILE: give one")
    if request.deep and target is not None:
        fail("--deep imports torch in this process: it cannot judge another environment (--env)")
    asked = pins.range("torch") if pins is not None and torch is None else None
    what_if = torch is not None or asked is not None or python is not None or adapter is not None
    if request.constraints is not None:
        from ..check.constraints import FORMATS

        if request.constraints not in FORMATS:
            fail(f"--constraints {request.constraints!r}: write one of {', '.join(FORMATS)}")
        if what_if or request.as_json:
            fail(
                "--constraints pins what is installed: it takes no --torch, --python, --adapter, --requirements or --json"
            )
    binary = not request.no_binary and not what_if
    return _Question(request, python, torch, asked, adapter, named, dimensions, companions, when, pins, binary)


class _Judged(NamedTuple):
    """One matrix's part of the answer."""

    answer: Any  # the Answer `check --json` prints for it
    binary: Optional[Tuple[str, Optional[str]]]  # the stored binary section used: (distribution, pin)
    kept: Any = None  # --constraints: its pins, or why it has none (a str)


def _answer(
    request: CheckRequest, target: Any, color: bool
) -> Tuple[int, str, Optional[List[Tuple[str, Optional[str]]]]]:
    """``check`` the long way: (exit code, what to print, and the binary sections it used, as
    ``(distribution, pin)``; None when it must not be remembered: a matrix whose dimensions a
    detector reads, an invalid matrix)."""
    question = _question(request, target)
    paths = target.paths if target is not None else None  # `check --env`: that environment's adapters
    found = _matrices_of(question.named, request.matrix, paths) if question.named else _find(request.matrix, paths)
    judged: List[_Judged] = []
    invalid: List[Any] = []
    memorable = True
    adapters: List[Tuple[Any, Any]] = []
    layers: List[Tuple[Any, Any]] = []  # (located, Layer): the layers above an adapter
    for located in found:
        # one broken adapter among several registered ones must not silence the others
        if located.origin.startswith("entry point") and len(found) > 1:
            result = _load_tolerant(located, invalid)
        else:
            result = _load_any_or_exit(located.path)
        if result is None:
            continue
        if hasattr(result, "layer"):
            layers.append((located, result.layer))
        else:
            adapters.append((located, result))
    for located, result in adapters:
        # a dimension read by a detector (a file, a command) can change without a stamp
        memorable = memorable and all(d.name in question.dimensions for d in result.matrix.dimensions)
        above = [
            layer for _l, layer in layers if layer.name_of_adapter == _canonical(result.matrix.adapter.distribution)
        ]
        judged.append(_judge(question, located, result, target, above))
    described = {_canonical(r.matrix.adapter.distribution) for _l, r in adapters}
    for located, layer in layers:  # a layer whose adapter's matrix is not here cannot be judged
        if layer.name_of_adapter not in described:
            invalid.append(_orphan(located, layer))
    if request.constraints is not None:
        return EXIT_OK, _constraints(judged, request.constraints), None
    answers = [j.answer for j in judged]
    if question.named and not answers:
        answer = _unmatrixed(question.named, question.pins)
        if target is not None:
            answer = answer._replace(environment=answer.environment._replace(location=target.description))
        answers.append(answer)
    code, out = _render(answers, invalid, request.as_json, color)
    binaries = [j.binary for j in judged if j.binary is not None]
    return code, out, binaries if memorable and not invalid and answers else None


def _canonical(name: str) -> str:
    from ..names import canonical_name

    return canonical_name(name)


def _find(explicit: Sequence[str], paths: Optional[Sequence[str]] = None) -> List[Any]:
    """The matrices to judge: each ``--matrix`` (an adapter's and its layers'), else the usual
    discovery (./compat.yaml, else the installed adapters' and layers' registered matrices)."""
    if not explicit:
        return find_or_exit(None, paths)
    return [located for path in explicit for located in find_or_exit(path, paths)]


def _load_any_or_exit(path: str) -> Any:
    """An adapter's matrix or a layer's, or exit 2 listing its errors."""
    from ..matrix.cache import load_any
    from ..matrix.diagnostics import MatrixError
    from .base import fail_invalid

    try:
        return load_any(path)
    except MatrixError as exc:
        fail_invalid(path, exc)


def _orphan(located: Any, layer: Any) -> Any:
    """A layer judged without its adapter's matrix: no verdict, and what to do."""
    from ..answer import Invalid

    return Invalid(
        located.origin,
        located.path,
        (
            f"layer {layer.distribution} sits on {layer.adapter}, and no matrix of {layer.adapter} was found: "
            f"install {layer.adapter} (its matrix comes with it) or pass its compat.yaml with --matrix",
        ),
    )


def _load_tolerant(located: Any, invalid: List[Any]) -> Any:
    """The matrix at ``located``, or None after saying why it is invalid (added to ``invalid``)."""
    from ..matrix.cache import load_any
    from ..matrix.diagnostics import MatrixError

    try:
        return load_any(located.path)
    except MatrixError as exc:
        print_diagnostics(exc.diagnostics)
        invalid.append(_invalid(located, exc))
        return None


def _judge(question: _Question, located: Any, result: Any, target: Any, layers: Sequence[Any] = ()) -> _Judged:
    """One matrix's verdict on this environment (or the one the question assumes), and with
    ``layers`` (those above its adapter) the stack's."""
    from ..binary.section import binary_section
    from ..check.binary import built_for, with_binary, with_pins
    from ..check.environment import AssumptionError, detect_environment
    from ..check.installed_companions import detect_companions, judge_companions, with_companions
    from ..check.report import answer_of
    from ..check.verdict import verdict

    matrix, pins = result.matrix, question.pins
    distribution = matrix.adapter.distribution
    pinned = dict(question.companions)
    stack_versions: Dict[str, str] = {}
    if layers:  # --companion may name a stack's package (a layer, vllm) as well as a companion
        from ..check.stack_answer import split_overrides

        pinned, stack_versions = split_overrides(pinned, layers)
    torch = question.torch
    notes: Tuple[str, ...] = ()
    if pins is not None:
        from ..check.requirements import kept_ranges

        ranged, notes, unknown = kept_ranges(pins, [distribution, *(c.name for c in matrix.companions)])
        if distribution in unknown and not question.adapter:  # pip would replace the adapter: by which release?
            fail(notes[0])  # the adapter comes first, so its note does
        pinned.update(
            (c.name, pins.get(c.name) or ranged.get(c.name) or "none")
            for c in matrix.companions
            if c.name not in pinned
        )
        if question.asked is not None:  # a torch range: judged at the one line of the matrix it admits
            torch, note = _ranged_or_exit(matrix, question.asked, pins.source, distribution)
            notes = (note, *notes)
    adapter_pin = question.adapter or (pins.get(distribution) if pins is not None else None)
    try:
        installed = detect_environment(
            matrix, python=question.python, torch=torch, adapter=adapter_pin, dimensions=question.dimensions
        )
        found = detect_companions(matrix, pinned)
    except AssumptionError as exc:
        fail(_as_option(exc))
    except ValueError as exc:
        fail(str(exc))
    companions = judge_companions(matrix, installed.environment, found)
    decided = with_companions(
        verdict(matrix, installed.environment, question.when, with_fixes=not layers), matrix, companions
    )
    stack = None
    stack_pins: Tuple[Tuple[str, str], ...] = ()
    if layers:
        import datetime as _dt

        from ..check.stack_answer import StackQuestion, with_stack

        stack_question = StackQuestion(stack_versions, question.dimensions)
        today = question.when or _dt.date.today()
        decided, stack, stack_pins = with_stack(matrix, layers, installed.environment, decided, stack_question, today)
    section = used = None
    if question.binary and installed.adapter_text is not None:
        section = binary_section(distribution, decided.release)
        decided = with_binary(decided, section)
        if section is not None:
            used = (distribution, built_for(decided.release))
    if question.binary and stack is not None:  # each installed layer's libraries, against the adapter's
        layers_seen = []
        for layer in stack.layers:
            own = binary_section(layer.name) if layer.installed is not None else None
            decided = with_binary(decided, own)
            layers_seen.append(layer._replace(binary=own))
        stack = stack._replace(layers=tuple(layers_seen))
    if pins is not None and torch is not None:
        decided = with_pins(decided, distribution, adapter_pin, torch, pins.source, question.asked)
    if notes:  # what the file's ranges were taken to install: said, never silently assumed
        decided = decided._replace(assumptions=decided.assumptions + tuple(notes))
    answer = answer_of(matrix, located.origin, installed, decided, companions)
    if stack is not None:
        answer = answer._replace(stack=stack)
    if section is not None:
        answer = answer._replace(binary=section)
    if target is not None:  # check --env: say which environment was judged
        answer = answer._replace(environment=answer.environment._replace(location=target.description))
    if question.request.deep:
        from ..device.deep import deep_check_isolated
        from .device import shims_package

        shims_package(result)
        report = deep_check_isolated(matrix.path)
        failed = not report.ok and answer.exit_code in (EXIT_OK, EXIT_WARNING)
        answer = answer._replace(deep=report.as_dict(), exit_code=EXIT_UNSUPPORTED if failed else answer.exit_code)
    kept: Any = None
    if question.request.constraints is not None:
        from ..check.constraints import NothingToKeep, keep_pins

        try:
            kept = keep_pins(matrix, installed.environment, decided, companions, stack_pins)
        except NothingToKeep as exc:
            kept = str(exc)
    return _Judged(answer, used, kept)


def _ranged_or_exit(matrix: Any, asked: str, source: str, distribution: str) -> Tuple[str, str]:
    """The torch a file's range (``torch>=2.12,<2.13``) is judged at in ``matrix`` and the
    assumption that says so; exit 1 when it admits no torch the matrix describes, 2 when it
    admits several lines (which one pip installs depends on its index)."""
    from ..check.binary import built_for_installed, minor_of
    from ..check.requirements import ranged_torch

    ranged = ranged_torch(matrix, asked)
    if ranged.torch is not None:
        return ranged.torch, (
            f"torch {ranged.torch}: the newest release of {asked} this matrix describes ({source} pins no exact "
            f"torch: pip installs the newest its index has, or keeps an installed torch the range admits)"
        )
    if not ranged.lines:
        described = ", ".join(str(line.minor) for line in matrix.torch)
        fail(
            f"{source} asks for {asked}, which admits no torch release this matrix describes ({described})",
            code=EXIT_UNSUPPORTED,
        )
    found = built_for_installed(distribution)
    hint = ""
    if found is not None:
        line = found[1].line or minor_of(found[1].exact or "")
        major, minor = line.split(".")[:2]
        hint = (
            f"; {distribution} {found[0]} (installed) was built for torch {line}: "
            f"torch>={line},<{major}.{int(minor) + 1} keeps to it"
        )
    fail(
        f"{source} asks for {asked}, which admits torch {', '.join(ranged.lines)} of this matrix: which one pip "
        f"installs depends on its index and on what is installed, so check cannot judge it; pin torch in it "
        f"(torch==X.Y.Z), or --resolve asks pip's resolver (it needs the file's index){hint}"
    )


def _constraints(judged: List[_Judged], constraints: str) -> str:
    """``check --constraints``: the pins of every adapter that works here; exit 1 when none does."""
    from ..check.constraints import render_pins

    kept = [j.kept for j in judged if not isinstance(j.kept, str)]
    refused = [j.kept for j in judged if isinstance(j.kept, str)]
    if not kept:
        fail("; ".join(refused) or "nothing to pin: no matrix was found", code=EXIT_UNSUPPORTED)
    for reason in refused:  # another adapter works: its pins are written, this one is named
        sys.stderr.write(f"warning: {reason}\n")
    return render_pins(kept, constraints)


def _render(answers: List[Any], invalid: List[Any], as_json: bool, color: bool) -> Tuple[int, str]:
    """The exit code and the report (or ``--json`` document) of ``answers``, with the
    ``torch.backends`` entry points ``import torch`` will run and the plugin chain above them."""
    from ..answer import CHECK_SCHEMA, CheckDocument
    from ..binary.autoload import autoload_lines, autoload_section
    from ..check.facts import search_path
    from ..check.report import render_check, render_lines

    code = worst_exit_code(a.exit_code for a in answers) if answers else EXIT_USAGE
    autoload = autoload_section(search_path())
    if not autoload["ok"] and code != EXIT_USAGE:
        code = worst_exit_code([code, EXIT_UNSUPPORTED])
    for bad in invalid:
        if bad.errors and bad.errors[0].startswith("layer "):  # a layer without its adapter's matrix: say what to do
            sys.stderr.write(f"warning: {bad.matrix} ({bad.origin}): {bad.errors[0]}\n")
            continue
        sys.stderr.write(
            f"warning: {bad.matrix} ({bad.origin}) is not a valid matrix: no verdict for it; fix or uninstall that adapter\n"
        )
    if as_json:
        document = CheckDocument(CHECK_SCHEMA, code, None, tuple(answers), tuple(invalid), autoload)
        return code, json.dumps(document.to_json(), indent=2) + "\n"
    out = "\n".join(render_check(answer, color) for answer in answers)
    out += render_lines(autoload_lines(autoload), color)  # the plugin chain, the problems: often nothing
    return code, out


def _matrices_of(distribution: str, explicit: Sequence[str], paths: Optional[Sequence[str]] = None) -> List[Any]:
    """The matrices that describe ``distribution`` (``--adapter DIST``): ``--matrix``, else
    ./compat.yaml and the registered ones whose adapter it is; none is no error (the
    binary check answers alone)."""
    from ..matrix.cache import load_matrix
    from ..matrix.diagnostics import MatrixError
    from ..matrix.discovery import find_matrices, registered_matrices
    from ..names import canonical_name

    if explicit:
        return [located for path in explicit for located in find_matrices(path)]
    out: List[Any] = []
    for located in find_matrices(paths=paths) + registered_matrices(paths):
        try:
            described = load_matrix(located.path).matrix.adapter.distribution
        except MatrixError:
            continue
        if canonical_name(described) == canonical_name(distribution) and located.path not in [o.path for o in out]:
            out.append(located)
    return out[:1]


def _unmatrixed(distribution: str, pins: Any = None) -> Any:
    """``check --adapter DIST`` for an adapter without a matrix: its binary check alone
    (with ``--requirements``: the torch it was built for against the file's)."""
    from packaging.version import InvalidVersion, Version

    from ..binary.section import binary_section
    from ..check.binary import binary_document
    from ..check.environment import current_python
    from ..check.facts import distribution_version
    from ..check.outcome import Environment

    if pins is not None:
        from ..check.binary import pins_document

        if distribution_version(distribution) is None:
            fail(f"--adapter {distribution}: no distribution of that name is installed (nor is it a version)")
        python, full, implementation = current_python()
        return _typed(pins_document(distribution, pins, python, full, implementation))
    section = binary_section(distribution)
    if section is None:
        fail(f"--adapter {distribution}: no distribution of that name is installed (nor is it a version)")
    python, full, implementation = current_python()
    torch_text = distribution_version("torch")
    try:
        torch = Version(torch_text) if torch_text else None
    except InvalidVersion:
        torch = None
    env = Environment(python=python, python_full=full, implementation=implementation, torch=torch)
    return _typed(binary_document(distribution, section, env, torch_text))


def _typed(document: Dict[str, Any]) -> Any:
    """An answer built as JSON (an adapter without a matrix) as the declared :class:`Answer`."""
    from ..answer import Answer
    from ..documents import from_json

    return from_json(Answer, document, "the answer")


def main(argv: Sequence[str], memo: bool = False) -> Optional[int]:
    """Answer ``check`` without typer when ``argv`` (after the program name) is a plain
    check command line; None when typer should take it. ``memo``: remember a plain
    question's answer (:class:`CheckRequest`'s ``command_line``)."""
    if not argv or argv[0] != "check":
        return None
    args = parse_check(argv[1:])
    if args is None and "--json" in argv and not {"-h", "--help"} & set(argv):
        # typer answers the usage error on stderr; the document on stdout says the same
        error = "the command line is not one `check` takes (see `adapter-matrix check --help`)"
        _print_document(_refusal(EXIT_USAGE, error))
    return None if args is None else run_check(**args, command_line=tuple(argv[1:]) if memo else None)
