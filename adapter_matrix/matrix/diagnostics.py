"""Positions in a source file and the diagnostics reported against them.

Every user-facing problem with a matrix file is a :class:`Diagnostic`: where it is
(``compat.yaml:12:5``), what is wrong, and how to fix it. Loaders and validators
collect diagnostics instead of raising, so that a user sees every problem at once.
"""

from __future__ import annotations

import os
from typing import Iterable, List, NamedTuple, Optional, Sequence

from ..errors import AdapterMatrixError

__all__ = ["Mark", "Diagnostic", "Diagnostics", "MatrixError", "UNKNOWN_MARK", "display_path", "read_matrix_file"]


class Mark(NamedTuple):
    """A 1-based line and column in a named file."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        if self.line <= 0:  # the whole file (it cannot be read): no position to point at
            return self.file
        return f"{self.file}:{self.line}:{self.column}"


UNKNOWN_MARK = Mark("<unknown>", 0, 0)


class Diagnostic(NamedTuple):
    """One problem found in a matrix file.

    ``message`` says what is wrong; ``hint`` says how to fix it. ``severity`` is
    ``"error"`` (the file is unusable) or ``"warning"`` (the file works, but a user
    probably did not mean it).
    """

    mark: Mark
    message: str
    hint: str = ""
    severity: str = "error"

    def __str__(self) -> str:
        label = "warning: " if self.severity == "warning" else ""
        tail = f" \u2014 {self.hint}" if self.hint else ""
        return f"{self.mark}: {label}{self.message}{tail}"


class Diagnostics:
    """An ordered collection of diagnostics, filled while loading one file."""

    def __init__(self) -> None:
        self.items: List[Diagnostic] = []

    def error(self, mark: Mark, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic(mark, message, hint, "error"))

    def warning(self, mark: Mark, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic(mark, message, hint, "warning"))

    def extend(self, other: Iterable[Diagnostic]) -> None:
        self.items.extend(other)

    @property
    def errors(self) -> List[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    @property
    def warnings(self) -> List[Diagnostic]:
        return [d for d in self.items if d.severity == "warning"]

    def sorted(self) -> List[Diagnostic]:
        return sorted(self.items, key=lambda d: (d.mark.file, d.mark.line, d.mark.column))


class MatrixError(AdapterMatrixError):
    """A matrix file that cannot be used; carries every diagnostic found."""

    def __init__(self, diagnostics: Sequence[Diagnostic], path: Optional[str] = None) -> None:
        self.diagnostics = list(diagnostics)
        self.path = path
        super().__init__("\n".join(str(d) for d in self.diagnostics))


def read_matrix_file(path: str) -> bytes:
    """The bytes of a matrix file; an unreadable one (missing, not a regular file, larger
    than :data:`~adapter_matrix.limits.MAX_READ_BYTES`) is a :class:`MatrixError`."""
    from ..files import FileReadError, printable, read_regular

    try:
        return read_regular(path)
    except FileReadError as exc:
        raise MatrixError(
            [Diagnostic(Mark(printable(path), 0, 0), f"cannot read the matrix: {exc.reason}", "pass --matrix PATH")],
            path,
        ) from None


def display_path(path: str) -> str:
    """``path`` relative to the working directory when inside it: short, clickable messages."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return rel if not rel.startswith("..") else path
