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
import sys
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

from ..errors import EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE, EXIT_WARNING, worst_exit_code
from .base import (
    CommandError,
    date_or_exit,
    fail,
    fail_with,
    find_or_exit,
    load_or_exit,
    print_diagnostics,
)

__all__ = ["CheckOption", "CHECK_OPTIONS", "parse_check", "run_check"]


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
    CheckOption(("--today",), "today", "value"),
)
_BY_FLAG = {flag: option for option in CHECK_OPTIONS for flag in option.flags}


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


def _mapped_check(*args: Any) -> int:
    """:func:`_run_check` with the tool's errors mapped as every command maps them
    (:func:`~adapter_matrix.cli.base.fail_with`): ``check`` runs without typer's group."""
    from ..errors import AdapterMatrixError

    try:
        return _run_check(*args)
    except AdapterMatrixError as exc:
        fail_with(exc)


def run_check(
    matrix: Optional[str] = None,
    torch: Optional[str] = None,
    python: Optional[str] = None,
    adapter: Optional[str] = None,
    sets: Sequence[str] = (),
    as_json: bool = False,
    deep: bool = False,
    today: Optional[str] = None,
    companions: Sequence[str] = (),
) -> int:
    """Run ``check`` and print its report; returns the exit code (usage errors exit 2 themselves,
    with ``--json`` after printing a document that holds the error)."""
    if not as_json:
        return _mapped_check(matrix, torch, python, adapter, sets, as_json, deep, today, companions)
    try:
        return _mapped_check(matrix, torch, python, adapter, sets, as_json, deep, today, companions)
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


def _run_check(
    matrix: Optional[str],
    torch: Optional[str],
    python: Optional[str],
    adapter: Optional[str],
    sets: Sequence[str],
    as_json: bool,
    deep: bool,
    today: Optional[str],
    companions: Sequence[str],
) -> int:
    from ..answer import CHECK_SCHEMA, CheckDocument
    from ..check.companions import detect_companions, judge_companions, with_companions
    from ..check.environment import AssumptionError, detect_environment
    from ..check.report import answer_of, render_check
    from ..check.verdict import verdict
    from ..matrix.model import PythonVersion

    python_override = None
    if python is not None:
        try:
            python_override = PythonVersion.parse(python)
        except ValueError as exc:
            fail(f"--python: {exc}")
    overrides = _parse_sets(list(sets))
    assumed_companions = _parse_sets(list(companions), "--companion", "torchvision=0.19.1")
    when = date_or_exit(today)
    answers: List[Any] = []
    invalid: List[Any] = []
    found_matrices = find_or_exit(matrix)
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
        try:
            installed = detect_environment(
                result.matrix, python=python_override, torch=torch, adapter=adapter, dimensions=overrides
            )
            found = detect_companions(result.matrix, assumed_companions)
        except AssumptionError as exc:
            fail(_as_option(exc))
        judged = judge_companions(result.matrix, installed.environment, found)
        decided = with_companions(verdict(result.matrix, installed.environment, when), result.matrix, judged)
        answer = answer_of(result.matrix, located.origin, installed, decided, judged)
        if deep:
            from ..device.deep import deep_check
            from .device import shims_package

            shims_package(result)
            report = deep_check(result.matrix)
            failed = not report.ok and answer.exit_code in (EXIT_OK, EXIT_WARNING)
            answer = answer._replace(deep=report.as_dict(), exit_code=EXIT_UNSUPPORTED if failed else answer.exit_code)
        answers.append(answer)
    code = worst_exit_code(a.exit_code for a in answers) if answers else EXIT_USAGE
    for bad in invalid:
        fail_line = (
            f"{bad.matrix} ({bad.origin}) is not a valid matrix: no verdict for it; fix or uninstall that adapter"
        )
        sys.stderr.write(f"warning: {fail_line}\n")
    if as_json:
        _print_document(CheckDocument(CHECK_SCHEMA, code, None, tuple(answers), tuple(invalid)))
    else:
        from .base import console_for

        console = console_for() if sys.stdout.isatty() else None  # colors only where someone sees them
        for i, answer in enumerate(answers):
            if i:
                sys.stdout.write("\n")
            render_check(answer, console)
    sys.stdout.flush()
    return code


def main(argv: Sequence[str]) -> Optional[int]:
    """Answer ``check`` without typer when ``argv`` (after the program name) is a plain
    check command line; None when typer should take it."""
    if not argv or argv[0] != "check":
        return None
    args = parse_check(argv[1:])
    if args is None and "--json" in argv and not {"-h", "--help"} & set(argv):
        # typer answers the usage error on stderr; the document on stdout says the same
        error = "the command line is not one `check` takes (see `adapter-matrix check --help`)"
        _print_document(_refusal(EXIT_USAGE, error))
    return None if args is None else run_check(**args)
