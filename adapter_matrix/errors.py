"""The one base of the errors a user can cause, each with the exit code it ends a command with.

Like cibuildwheel's errors with their ``return_code``: a module raises a subclass of
:class:`AdapterMatrixError` with a one-line message (``compat.yaml:12:5: ...``), and
:mod:`adapter_matrix.cli` maps every one of them the same way, in one place: it prints
``error: MESSAGE`` and exits with :attr:`~AdapterMatrixError.exit_code`. No module below
the CLI prints or exits.

Exit codes (docs/commands.md): 0 supported, 1 unsupported or failed, 2 a usage error (a
bad file, option or input), 3 works with a warning, 4 stopped by a signal (``tier``).
"""

from __future__ import annotations

__all__ = ["AdapterMatrixError", "EXIT_UNSUPPORTED", "EXIT_USAGE", "EXIT_INTERRUPTED"]

EXIT_UNSUPPORTED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 4  # SIGTERM or SIGINT stopped a long run (tier); what finished is kept


class AdapterMatrixError(Exception):
    """An error the user can fix; its message is one line (or one per diagnostic)."""

    exit_code: int = EXIT_USAGE
