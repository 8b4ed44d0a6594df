"""What every command shares without typer: the exit codes (defined in
:mod:`adapter_matrix.errors`), matrix loading and error output. ``check`` answers through these alone, so its start-up
never pays for typer and click (see :mod:`adapter_matrix.cli.quick`).

Helpers import rich and the matrix modules when they run, never at import time. A
failure ends the command with ``SystemExit(code)``, which typer passes through as is.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, NoReturn, Optional, Sequence, TypeVar

from ..errors import EXIT_USAGE, AdapterMatrixError, ChoiceError

if TYPE_CHECKING:  # pragma: no cover
    from ..matrix.model import LoadResult


MATRIX_HELP = "Matrix file (default: ./compat.yaml, else the matrices of installed adapters)."


def console_for(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 200  # pipes and CI logs: do not squeeze tables to 80 columns
    return Console(stderr=stderr, highlight=False, emoji=False, soft_wrap=True, width=width)


class CommandError(SystemExit):
    """How :func:`fail` ends a command: a ``SystemExit`` (typer passes it through) that keeps
    its message, and the diagnostics of the matrix file at fault (:func:`fail_invalid`), so
    ``check --json`` can still print a JSON document that holds them."""

    def __init__(self, code: int, message: str, diagnostics: Sequence[Any] = ()) -> None:
        super().__init__(code)
        self.message = message
        self.diagnostics = tuple(diagnostics)


def say_error(message: str) -> None:
    """``error: MESSAGE`` on stderr, escaped (how every command ends on a user's error)."""
    from rich.markup import escape

    from ..files import printable

    console_for(stderr=True).print(f"[bold red]error:[/] {escape(printable(message, keep_newlines=True))}")


def fail(message: str, code: int = EXIT_USAGE, diagnostics: Sequence[Any] = ()) -> NoReturn:
    say_error(message)
    raise CommandError(code, message, diagnostics)


def fail_with(exc: AdapterMatrixError) -> NoReturn:
    """The one mapping of the tool's errors to the command line: ``error: MESSAGE`` on stderr
    and the error's :attr:`~adapter_matrix.errors.AdapterMatrixError.exit_code` (a matrix file's
    error keeps its diagnostics, for ``check --json``)."""
    from ..matrix.diagnostics import MatrixError

    fail(str(exc), exc.exit_code, exc.diagnostics if isinstance(exc, MatrixError) else ())


def print_diagnostics(diagnostics: List[Any]) -> None:
    from rich.markup import escape

    from ..files import printable

    err = console_for(stderr=True)
    for d in diagnostics:
        style = "yellow" if d.severity == "warning" else "red"
        err.print(f"[{style}]{escape(printable(d))}[/]", soft_wrap=True)


def load_or_exit(path: str, fresh: bool = False) -> LoadResult:
    """Load a matrix or exit 2 listing its errors. ``fresh`` bypasses the compiled cache."""
    from ..matrix.cache import load_matrix
    from ..matrix.diagnostics import MatrixError

    try:
        result = load_matrix(path, use_cache=not fresh)
    except MatrixError as exc:
        fail_invalid(path, exc)
    return result


def _invalid_line(path: str, exc: Any) -> str:
    errors = sum(1 for d in exc.diagnostics if d.severity == "error")
    return f"{path}: {errors} error{'s' if errors != 1 else ''} in the matrix"


def fail_invalid(path: str, exc: Any) -> NoReturn:
    """A file that is no valid matrix (a ``MatrixError``): its errors listed, then exit 2 (the
    :class:`CommandError` carries the diagnostics, for ``check --json``'s document)."""
    print_diagnostics(exc.diagnostics)
    fail(_invalid_line(path, exc), diagnostics=exc.diagnostics)


def say_invalid(path: str, exc: Any) -> None:
    """:func:`fail_invalid`'s lines without the exit: one invalid file among several checked."""
    print_diagnostics(exc.diagnostics)
    say_error(_invalid_line(path, exc))


def find_or_exit(explicit: Optional[str], paths: Optional[Sequence[str]] = None) -> List[Any]:
    from ..matrix.discovery import find_matrices

    found = find_matrices(explicit, paths=paths)
    if not found:
        fail("no ./compat.yaml and no installed adapter registers a matrix; pass --matrix PATH")
    return found


def one_matrix(explicit: Optional[str]) -> LoadResult:
    found = find_or_exit(explicit)
    if len(found) > 1:
        fail(
            "several installed adapters register a matrix ("
            + ", ".join(f.path for f in found)
            + "); pass --matrix PATH"
        )
    return load_or_exit(found[0].path)


TODAY_HELP = "Judge support windows on this date, YYYY-MM-DD (default: today)."


def date_or_exit(text: Optional[str]) -> Any:
    """``--today TEXT`` as a date (``None`` for today), or exit 2."""
    if text is None:
        return None

    from ..matrix.reader import parse_date

    try:  # the matrix's own reading: YYYY-MM-DD on every Python (3.11's fromisoformat takes 20240130)
        return parse_date(text)
    except ValueError:
        fail(f"--today {text!r}: write a date as YYYY-MM-DD")


def release_or_exit(result: LoadResult, text: Optional[str]) -> Any:
    """``--release TEXT``: the entries of an adapter version, or the packages of a release
    line (``7.3.0``); ``None`` without the option."""
    if text is None:
        return None
    from ..matrix.queries import select_releases

    found = select_releases(result.matrix, text)
    if not found:
        lines = ", ".join(result.matrix.release_lines())
        fail(
            f"--release {text}: no such release"
            + (f" or release line ({lines})" if lines else "")
            + f" in {result.matrix.path}"
        )
    return found


R = TypeVar("R")
T = TypeVar("T")


def run_or_exit(run: Callable[[R], T], request: R, options: Mapping[str, str]) -> T:
    """``run(request)``: a command's use case, outside the command line. Its refusal is printed as
    the command line words it: a :class:`~adapter_matrix.errors.ChoiceError` with the option of
    the request's field first (``options``: field -> option), any other error as it is."""
    try:
        return run(request)
    except ChoiceError as exc:
        fail(f"{options.get(exc.subject, exc.subject)} {exc}", exc.exit_code)
    except AdapterMatrixError as exc:
        fail_with(exc)
