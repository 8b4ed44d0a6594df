"""The one base of the errors a user can cause, and the exit codes every command ends with.

Like cibuildwheel's errors with their ``return_code``: a module raises a subclass of
:class:`AdapterMatrixError` with a one-line message (``compat.yaml:12:5: ...``), and
:mod:`adapter_matrix.cli` maps every one of them the same way, in one place: it prints
``error: MESSAGE`` and exits with :attr:`~AdapterMatrixError.exit_code`. No module below
the CLI prints or exits.

The exit codes (docs/commands.md) are defined here and nowhere else: 0 supported, 1
unsupported or failed, 2 a usage error (a bad file, option or input), 3 works with a
warning, 4 stopped by a signal (``tier``; what finished is kept), 5 an internal error (a bug
of the tool, never a verdict: a script can tell a crash from "unsupported"). A verdict's code is :attr:`adapter_matrix.matrix.status.Status.exit_code`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a warm `check` never does)
if TYPE_CHECKING:
    from typing import Iterable

__all__ = [
    "AdapterMatrixError",
    "EXIT_OK",
    "EXIT_UNSUPPORTED",
    "EXIT_USAGE",
    "EXIT_WARNING",
    "EXIT_INTERRUPTED",
    "EXIT_INTERNAL",
    "internal_error",
    "worst_exit_code",
]

EXIT_OK = 0
EXIT_UNSUPPORTED = 1  # unsupported, broken, or a failed check
EXIT_USAGE = 2  # a bad file, option or input
EXIT_WARNING = 3  # works, with a warning: experimental, deprecated, end of life
EXIT_INTERRUPTED = 4  # SIGTERM or SIGINT stopped a long run (tier); what finished is kept
EXIT_INTERNAL = 5  # a bug of the tool: an exception no module expected (never 1, which is a verdict)
TRACEBACK = "ADAPTER_MATRIX_TRACEBACK"  # set: an internal error prints its traceback too


def internal_error(exc: BaseException) -> str:
    """The one message of an internal error: what it was, that it is the tool's, what to do."""
    return (
        f"internal error: {type(exc).__name__}: {exc} (a bug of adapter-matrix, not a verdict on your environment; "
        f"{TRACEBACK}=1 prints where it happened: please report it with that output)"
    )


def worst_exit_code(codes: Iterable[int]) -> int:
    """The worst of several answers' codes: a usage error, then unsupported, then a warning."""
    found = set(codes)
    return next((code for code in (EXIT_USAGE, EXIT_UNSUPPORTED, EXIT_WARNING) if code in found), EXIT_OK)


class AdapterMatrixError(Exception):
    """An error the user can fix; its message is one line (or one per diagnostic)."""

    exit_code: int = EXIT_USAGE


class ChoiceError(AdapterMatrixError, ValueError):
    """A value the caller chose cannot be used (a torch line the index lacks, a version that is
    not PEP 440, a folder that is no environment). ``subject`` names the choice (``torch``,
    ``version``, ``python``, ``tool-ref``, ``env``) and the message starts at the value: the
    library words no command-line option, and a command line puts its own in front."""

    def __init__(self, subject: str, message: str) -> None:
        super().__init__(message)
        self.subject = subject
