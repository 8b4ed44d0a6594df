"""`check` without typer: the start-up path of the command users run most.

Importing typer and click costs about 40 ms, a third of what ``adapter-matrix check`` takes,
and the check must answer quickly (it is the first thing a user runs, and CI runs it in every
cell). :func:`main` therefore reads a plain ``check`` command line itself, from
:data:`CHECK_OPTIONS`, the one declaration of its options (the typer command in
:mod:`adapter_matrix.cli.check` is built from it, for ``--help`` and errors), and answers
through :func:`run_check`. This module parses, remembers and prints: the answer is
:mod:`adapter_matrix.check.pipeline`'s.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Sequence, Union

from ..errors import EXIT_USAGE
from .base import MATRIX_HELP, TODAY_HELP

if TYPE_CHECKING:
    from ..answer import DeepSection
    from ..check.pipeline import BinaryUsed, CheckResult, Probes
    from ..matrix.diagnostics import Diagnostic
    from ..matrix.model import LoadResult
    from ..memo import Stamp

__all__ = ["CheckOption", "CHECK_OPTIONS", "parse_check", "run_check", "main"]


class CheckOption(NamedTuple):
    """One option of ``check``: its flags, its field of the pipeline's ``CheckRequest``, its kind
    ("value": the last one given wins, "multiple": repeatable, "flag") and its help."""

    flags: Sequence[str]
    dest: str
    kind: str
    help: str
    metavar: Optional[str] = None


_STACK = " Repeatable: an adapter's matrix and the matrices of the layers above it (a stack)."
CHECK_OPTIONS = (
    CheckOption(("--matrix", "-m"), "matrix", "multiple", MATRIX_HELP + _STACK),
    CheckOption(("--torch",), "torch", "value", "Assume this torch version instead of the installed one."),
    CheckOption(("--python",), "python", "value", "Assume this Python (e.g. 3.9) instead of this interpreter."),
    CheckOption(("--adapter",), "adapter", "value", "Assume this adapter version instead of the installed one; or, "
                "a distribution name, check that installed adapter (its binaries alone when it ships no compat.yaml)."),
    CheckOption(("--set",), "sets", "multiple", "Assume an extra dimension's version, NAME=VALUE (repeatable)."),
    CheckOption(("--companion",), "companions", "multiple", "Assume a companion's or a stack package's version (a "
                "layer, vllm), NAME=VERSION, or NAME=none for not installed (repeatable); a layer's version given so "
                "is held by the fixes."),
    CheckOption(("--json",), "as_json", "flag", "Print the documented JSON document instead of a report."),
    CheckOption(("--deep",), "deep", "flag", "Also import torch, activate the adapter and run a timed smoke on its "
                "device."),
    CheckOption(("--no-binary",), "no_binary", "flag", "Skip the binary check (the adapter's libraries against the "
                "installed torch)."),
    CheckOption(("--env",), "env", "value", "Judge another environment from its files, without running it: a "
                "virtual environment, a prefix, a site-packages folder or an image's unpacked root."),
    CheckOption(("--pythonpath",), "pythonpath", "value", "Folders searched before the environment's own, as "
                "PYTHONPATH's are (separated by the path separator): source checkouts of the stack's layers on it "
                "are judged by their commit."),
    CheckOption(("--requirements",), "requirements", "value", "Judge what this requirements file (or pylock.toml, "
                "uv.lock) would install, before installing it: its exact pins."),
    CheckOption(("--resolve",), "resolve", "flag", "With --requirements: ask pip's resolver what it would install "
                "(ranges, no lock)."),
    CheckOption(("--constraints",), "constraints", "value", "Print the pins that keep this working environment as "
                "it is: a pip constraints file, or a [tool.uv] block (override-dependencies) for pyproject.toml.",
                "pip|uv"),
    CheckOption(("--emit",), "emit", "value", "Print the first fix as resolver input: a [tool.uv] block for "
                "pyproject.toml (explicit indexes, a source per package), or a requirements file that is also a "
                "constraints file, pinning every package of the stack (with hashes where the index gives them).",
                "uv|requirements"),
    CheckOption(("--output", "-o"), "output", "value", "With --emit: write it to this file, atomically.", "FILE"),
    CheckOption(("--today",), "today", "value", TODAY_HELP),
)  # fmt: skip
_BY_FLAG = {flag: option for option in CHECK_OPTIONS for flag in option.flags}
_FLAG_OF = {option.dest: option.flags[0] for option in CHECK_OPTIONS}

Arguments = Dict[str, Union[bool, str, List[str], None]]


def parse_check(argv: Sequence[str]) -> Optional[Arguments]:
    """The keywords of :func:`run_check` for ``check ARGV``, or None for anything else (help, an
    unknown option, a missing value, an argument): typer answers those."""
    args: Arguments = {
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
        held = args[option.dest]
        if isinstance(held, list):
            held.append(value)
        else:
            args[option.dest] = value
    return args


def _probes() -> Probes:
    """What the pipeline reads through binary/ and device/ (it lives in check/, below them)."""
    from ..binary.autoload import autoload_section
    from ..binary.section import binary_section
    from ..check.pipeline import Probes

    def deep(result: LoadResult) -> DeepSection:
        from ..device.deep import deep_check_isolated

        return deep_check_isolated(result.matrix.path).section()

    said: List[bool] = []

    def hashes(name: str, version: str, index: Optional[str]) -> Optional[Sequence[str]]:
        from ..upstream.hashes import release_hashes  # the HTTP client: only when --emit asks

        if not said:  # an index that does not answer is waited for (seconds): say what is happening
            said.append(True)
            sys.stderr.write("reading each package's file hashes from its index (--emit requirements)\n")
            sys.stderr.flush()
        return release_hashes(name, version, index)

    return Probes(binary_section, autoload_section, deep, hashes)


def run_check(command_line: Optional[Sequence[str]] = None, **options: object) -> int:
    """Answer ``check`` with the keywords of :class:`~adapter_matrix.check.pipeline.CheckRequest`,
    print it and return its exit code; a refusal is printed as ``error: ...`` (with ``--json``,
    also as a document that holds it). ``command_line``: the arguments after ``check`` under
    which a plain question's answer is remembered (check/recall.py); None: not remembered."""
    from ..check.pipeline import CheckRefused, CheckRequest, matrix_paths, run
    from ..errors import AdapterMatrixError
    from ..matrix.diagnostics import MatrixError

    request = CheckRequest(_probes(), **options)  # type: ignore[arg-type]
    try:
        deps = paths = None
        if command_line is not None and request.plain:
            from ..check.facts import search_path
            from ..check.recall import NO_MEMO, stamps

            if not os.environ.get(NO_MEMO):
                paths = search_path()
                deps = stamps([m.path for m in matrix_paths(request.matrix)], paths)  # before the answer reads them
        result = run(request)
    except CheckRefused as exc:
        if exc.diagnostics:
            from .base import print_diagnostics

            print_diagnostics(list(exc.diagnostics))
        flag = _FLAG_OF[exc.field] if exc.field else ""
        return _refused(f"{flag}{exc.problem}", exc.exit_code, exc.diagnostics, request.as_json)
    except AdapterMatrixError as exc:
        diagnostics = exc.diagnostics if isinstance(exc, MatrixError) else ()
        return _refused(str(exc), exc.exit_code, diagnostics, request.as_json)
    except Exception as exc:  # a bug: its own exit code and document, never read as a verdict
        return _internal(exc, request.as_json)
    out = _printed(result, request.as_json)
    if deps is not None and paths is not None and result.memorable:
        built_on = _built_on(result.binaries, paths)
        if built_on is not None:
            from ..check.recall import remember

            remember(command_line or (), {**deps, **built_on}, result.exit_code, out)
    return result.exit_code


def _internal(exc: Exception, as_json: bool) -> int:
    """An exception no module expected: said as an internal error (exit code 5), with a
    ``--json`` document that says so; the traceback only when asked for."""
    from ..errors import EXIT_INTERNAL, TRACEBACK, internal_error
    from .base import say_error

    if os.environ.get(TRACEBACK):
        import traceback

        traceback.print_exception(exc)
    message = internal_error(exc)
    say_error(message)
    if as_json:
        _print_refusal(EXIT_INTERNAL, message, internal=True)
    return EXIT_INTERNAL


def _refused(message: str, code: int, diagnostics: Sequence[Diagnostic], as_json: bool) -> int:
    from .base import say_error

    say_error(message)
    if as_json:
        _print_refusal(code, message, diagnostics)
    return code


def _printed(result: CheckResult, as_json: bool) -> str:
    """Print ``result``: its warnings on stderr, then the report, the document or the pins on
    stdout, which it returns (the memo keeps it)."""
    import warnings

    from .base import print_diagnostics

    for raised in result.raised:
        warnings.showwarning(raised.message, raised.category, raised.filename, raised.lineno, raised.file, raised.line)
    if result.diagnostics:
        print_diagnostics(list(result.diagnostics))
    for warning in result.warnings:
        sys.stderr.write(f"warning: {warning}\n")
    if result.document is None:
        out = result.constraints or ""
    elif as_json:
        out = json.dumps(result.document.to_json(), indent=2) + "\n"
    else:
        from ..binary.autoload import autoload_lines
        from ..check.recall import terminal_width
        from ..check.report import render_check, render_lines

        # colors only where someone sees them, and not when they asked for none (NO_COLOR)
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        width = terminal_width()  # a terminal's lines wrapped between words, a command between its arguments
        out = "\n".join(render_check(answer, color, width) for answer in result.document.checks)
        if not result.document.checks and result.document.invalid:  # exit 2: the warnings above say why
            sys.stderr.write("error: no verdict: no matrix found can judge this environment (see the warnings above)\n")
        if result.document.autoload is not None:  # the plugin chain, the problems: often nothing
            out += render_lines(autoload_lines(result.document.autoload), color, width)
    sys.stdout.write(out)
    sys.stdout.flush()
    return out


def _built_on(binaries: Sequence[BinaryUsed], paths: Sequence[str]) -> Optional[Dict[str, Stamp]]:
    """What the stored binary sections (``(distribution, pin)`` each) and the autoload lint an
    answer used were decided from, while they hold; None when one is not stored."""
    from ..binary.autoload import autoload_entry
    from ..binary.section import binary_entry
    from ..memo import entry_deps

    deps: Dict[str, Stamp] = {}
    for entry in [binary_entry(d, pin) for d, pin in binaries] + [autoload_entry(paths)]:
        held = None if entry is None else entry_deps(entry)
        if held is None:
            return None
        deps.update(held)
    return deps


def _print_refusal(code: int, error: str, diagnostics: Sequence[Diagnostic] = (), internal: bool = False) -> None:
    """The ``check --json`` document of a command line ``check`` cannot answer (with the
    diagnostics of the matrix file at fault, when that is why; ``internal``: a bug of the tool)."""
    from ..answer import CHECK_SCHEMA, CheckDocument, DiagnosticSeen

    seen = tuple(DiagnosticSeen.of(d) for d in diagnostics)
    document = CheckDocument(CHECK_SCHEMA, code, error, diagnostics=seen, internal=internal)
    sys.stdout.write(json.dumps(document.to_json(), indent=2) + "\n")
    sys.stdout.flush()


# options of other commands that a check command line takes another way
_ELSEWHERE = {"--dimension": "check takes a dimension's value with --set NAME=VALUE (--dimension is table's)"}


def _misplaced(argv: Sequence[str]) -> Optional[str]:
    """What a check command line that names another command's option means instead."""
    for token in argv:
        said = _ELSEWHERE.get(token.partition("=")[0])
        if said is not None:
            return f"{token.partition('=')[0]}: {said}"
    return None


def main(argv: Sequence[str], memo: bool = False) -> Optional[int]:
    """Answer ``check`` without typer when ``argv`` (after the program name) is a plain check
    command line; None when typer should take it. ``memo``: remember a plain question's answer."""
    if not argv or argv[0] != "check":
        return None
    args = parse_check(argv[1:])
    if args is None and not {"-h", "--help"} & set(argv):
        misplaced = _misplaced(argv[1:])
        if misplaced is not None:  # another command's option, which typer would mistake for a typo of another
            from .base import say_error

            say_error(misplaced)
            if "--json" in argv:
                _print_refusal(EXIT_USAGE, misplaced)
            return EXIT_USAGE
    if args is None and "--json" in argv and not {"-h", "--help"} & set(argv):
        # typer answers the usage error on stderr; the document on stdout says the same
        error = "the command line is not one `check` takes (see `adapter-matrix check --help`)"
        _print_refusal(EXIT_USAGE, error)
    return None if args is None else run_check(tuple(argv[1:]) if memo else None, **args)
