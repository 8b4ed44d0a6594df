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
    load_or_exit,
    print_diagnostics,
)

__all__ = ["CheckOption", "CHECK_OPTIONS", "CheckRequest", "parse_check", "run_check"]


class CheckOption(NamedTuple):
    """One option of ``check``: its flags, the keyword of :func:`run_check`, and its kind."""

    flags: Sequence[str]
    dest: str
    kind: str  # "value" (the last one given wins), "multiple" (repeatable) or "flag"


CHECK_OPTIONS = (
    CheckOption(("--matrix", "-m"), "matrix", "value"),
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

    matrix: Optional[str] = None
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
        _print_document(_refusal(exc.code if isinstance(exc.code, int) else EXIT_USAGE, exc.message))
        raise


def _refusal(code: int, error: str) -> Any:
    """The ``check --json`` document of a command line ``check`` cannot answer."""
    from ..answer import CHECK_SCHEMA, CheckDocument

    return CheckDocument(CHECK_SCHEMA, code, error)


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
    from ..answer import Invalid

    return Invalid(located.origin, located.path, tuple(str(d) for d in exc.diagnostics if d.severity == "error"))


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
        deps = stamps([m.path for m in find_or_exit(request.matrix)], paths)  # before the answer reads them
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


def _answer(
    request: CheckRequest, target: Any, color: bool
) -> Tuple[int, str, Optional[List[Tuple[str, Optional[str]]]]]:
    """``check`` the long way: (exit code, what to print, and the binary sections it used, as
    ``(distribution, pin)``; None when it must not be remembered: a matrix whose dimensions a
    detector reads, an invalid matrix)."""
    from ..answer import CHECK_SCHEMA, CheckDocument
    from ..binary.section import binary_section
    from ..check.binary import built_for, is_distribution_name, with_binary, with_pins
    from ..check.environment import AssumptionError, detect_environment
    from ..check.installed_companions import detect_companions, judge_companions, with_companions
    from ..check.report import answer_of, render_check
    from ..check.verdict import verdict
    from ..matrix.model import PythonVersion

    # the request's values this answer changes as it goes (--adapter DIST, --requirements' torch)
    matrix, torch, python, adapter = request.matrix, request.torch, request.python, request.adapter
    as_json, deep, constraints, requirements = request.as_json, request.deep, request.constraints, request.requirements
    python_override = None
    if python is not None:
        try:
            python_override = PythonVersion.parse(python)
        except ValueError as exc:
            fail(f"--python: {exc}")
    overrides = _parse_sets(list(request.sets))
    assumed_companions = _parse_sets(list(request.companions), "--companion", "torchvision=0.19.1")
    when = date_or_exit(request.today)
    answers: List[Any] = []
    invalid: List[Any] = []
    named = None  # `--adapter DIST`: that distribution, with or without a matrix
    if adapter is not None and is_distribution_name(adapter):
        named, adapter = adapter, None
    pins = None
    if requirements is not None:  # what the file would install, assumed as --torch etc. would be
        from ..check.requirements import RequirementsError, read_pins, resolve_pins

        try:
            pins = resolve_pins(requirements) if request.resolve else read_pins(requirements)
        except RequirementsError as exc:
            fail(str(exc))
        torch = torch or pins.get("torch")
    elif request.resolve:
        fail("--resolve resolves a --requirements FILE: give one")
    if deep and target is not None:
        fail("--deep imports torch in this process: it cannot judge another environment (--env)")
    # the binary check judges the installed files: not a what-if torch, Python or adapter
    what_if = torch is not None or python is not None or adapter is not None
    binary = not request.no_binary and not what_if
    if constraints is not None:
        from ..check.constraints import FORMATS

        if constraints not in FORMATS:
            fail(f"--constraints {constraints!r}: write one of {', '.join(FORMATS)}")
        if what_if or as_json:
            fail(
                "--constraints pins what is installed: it takes no --torch, --python, --adapter, --requirements or --json"
            )
    kept: List[Any] = []
    refused: List[str] = []
    binaries: List[Tuple[str, Optional[str]]] = []  # the stored binary sections this answer used
    memorable = True
    paths = target.paths if target is not None else None  # `check --env`: that environment's adapters
    found_matrices = _matrices_of(named, matrix, paths) if named else find_or_exit(matrix, paths)
    for located in found_matrices:
        if located.origin.startswith("entry point") and len(found_matrices) > 1:
            from ..matrix.cache import load_matrix
            from ..matrix.diagnostics import MatrixError

            try:
                result = load_matrix(located.path)
            except MatrixError as exc:  # one broken adapter must not silence the others
                print_diagnostics(exc.diagnostics)
                invalid.append(_invalid(located, exc))
                continue
        else:
            result = load_or_exit(located.path)
        pinned = dict(assumed_companions)
        if pins is not None:
            pinned.update(
                (c.name, pins.get(c.name) or "none") for c in result.matrix.companions if c.name not in pinned
            )
        adapter_pin = adapter or (pins.get(result.matrix.adapter.distribution) if pins is not None else None)
        try:
            installed = detect_environment(
                result.matrix, python=python_override, torch=torch, adapter=adapter_pin, dimensions=overrides
            )
            found = detect_companions(result.matrix, pinned)
        except AssumptionError as exc:
            fail(_as_option(exc))
        except ValueError as exc:
            fail(str(exc))
        judged = judge_companions(result.matrix, installed.environment, found)
        decided = with_companions(verdict(result.matrix, installed.environment, when), result.matrix, judged)
        # a dimension read by a detector (a file, a command) can change without a stamp
        memorable = memorable and all(d.name in overrides for d in result.matrix.dimensions)
        section = None
        if binary and installed.adapter_text is not None:
            section = binary_section(result.matrix.adapter.distribution, decided.release)
            decided = with_binary(decided, section)
            if section is not None:
                binaries.append((result.matrix.adapter.distribution, built_for(decided.release)))
        if pins is not None and torch is not None:
            decided = with_pins(decided, result.matrix.adapter.distribution, adapter_pin, torch, pins.source)
        answer = answer_of(result.matrix, located.origin, installed, decided, judged)
        if section is not None:
            answer = answer._replace(binary=section)
        if target is not None:  # check --env: say which environment was judged
            answer = answer._replace(environment=answer.environment._replace(location=target.description))
        if deep:
            from ..device.deep import deep_check_isolated
            from .device import shims_package

            shims_package(result)
            report = deep_check_isolated(result.matrix.path)
            failed = not report.ok and answer.exit_code in (EXIT_OK, EXIT_WARNING)
            answer = answer._replace(deep=report.as_dict(), exit_code=EXIT_UNSUPPORTED if failed else answer.exit_code)
        answers.append(answer)
        if constraints is not None:
            from ..check.constraints import NothingToKeep, keep_pins

            try:
                kept.append(keep_pins(result.matrix, installed.environment, decided, judged))
            except NothingToKeep as exc:
                refused.append(str(exc))
    if constraints is not None:
        if not kept:
            fail("; ".join(refused) or "nothing to pin: no matrix was found", code=EXIT_UNSUPPORTED)
        for reason in refused:  # another adapter works: its pins are written, this one is named
            sys.stderr.write(f"warning: {reason}\n")
        from ..check.constraints import render_pins

        return 0, render_pins(kept, constraints), None
    if named and not answers:
        answers.append(_unmatrixed(named, pins))
        if target is not None:
            answers[-1] = answers[-1]._replace(
                environment=answers[-1].environment._replace(location=target.description)
            )
    code = worst_exit_code(a.exit_code for a in answers) if answers else EXIT_USAGE
    from ..binary.autoload import autoload_lines, autoload_section
    from ..check.facts import search_path

    autoload = autoload_section(search_path())  # the torch.backends entry points `import torch` will run
    if not autoload["ok"] and code != EXIT_USAGE:
        code = worst_exit_code([code, EXIT_UNSUPPORTED])
    for bad in invalid:
        fail_line = (
            f"{bad.matrix} ({bad.origin}) is not a valid matrix: no verdict for it; fix or uninstall that adapter"
        )
        sys.stderr.write(f"warning: {fail_line}\n")
    if as_json:
        document = CheckDocument(CHECK_SCHEMA, code, None, tuple(answers), tuple(invalid), autoload)
        out = json.dumps(document.to_json(), indent=2) + "\n"
    else:
        out = "\n".join(render_check(answer, color) for answer in answers)
        if not autoload["ok"]:
            from ..check.report import render_lines

            out += render_lines(autoload_lines(autoload), color)
    return code, out, binaries if memorable and not invalid and answers else None


def _matrices_of(distribution: str, explicit: Optional[str], paths: Optional[Sequence[str]] = None) -> List[Any]:
    """The matrices that describe ``distribution`` (``--adapter DIST``): ``--matrix``, else
    ./compat.yaml and the registered ones whose adapter it is; none is no error (the
    binary check answers alone)."""
    from ..matrix.cache import load_matrix
    from ..matrix.diagnostics import MatrixError
    from ..matrix.discovery import find_matrices, registered_matrices
    from ..names import canonical_name

    if explicit:
        return find_matrices(explicit)
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
