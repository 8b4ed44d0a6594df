"""The ``adapter-matrix`` command line.

Exit codes (documented in docs/commands.md):

0  supported / clean
1  unsupported or broken (``check``); a failed ``--check`` or result (``table``, ``results``)
2  usage error, an invalid matrix, a result record that is not one (docs/releasing.md), or a
   file that cannot be read or written (a full disk, a read-only or missing folder, a FIFO or
   device given as a file: one message, docs/security.md)
3  supported with a warning: experimental, deprecated or end of life (``check``)
4  stopped by SIGTERM or SIGINT (``tier``)
5  an internal error: a bug of the tool, never a verdict (``check --json`` says so: ``internal``)

Start-up matters (``check`` must answer well under a second and never imports torch),
so each command imports what it needs when it runs, and a plain ``check`` command line
is answered without importing typer at all (:mod:`adapter_matrix.cli.quick`).

Each command group lives in its own module (``check``, ``validate``, ``init``, ``table``,
``ci``, ``device``, ``ops``); importing them registers their commands on :data:`app`, which this
package provides on first use.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a warm `check` never does)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["app", "main"]


def _app() -> Any:
    from . import check, ci, device, init, migrate, ops, table, validate  # noqa: F401  (registers the commands)
    from .common import app

    return app


def __getattr__(name: str) -> Any:  # PEP 562: `from adapter_matrix.cli import app` imports typer then
    if name == "app":
        return _app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] in (["--version"], ["-V"]):
        from .._version import __version__

        sys.stdout.write(f"adapter-matrix {__version__}\n")
        sys.exit(0)
    try:
        os.getcwd()
    except OSError:  # a shell left in a folder that was removed: every command reads paths from here
        from ..errors import EXIT_USAGE

        sys.stderr.write("error: the working directory no longer exists: cd into one that does\n")
        sys.exit(EXIT_USAGE)
    if sys.argv[1:2] == ["check"]:  # asked before, nothing changed since: its answer (check/recall.py)
        from ..check.recall import recall

        known = recall(sys.argv[2:])
        if known is not None:
            sys.stdout.write(known[1])
            sys.stdout.flush()
            sys.exit(known[0])
    from .quick import main as quick_main

    try:
        code = quick_main(sys.argv[1:], memo=True)  # a process of its own: its plain check may be remembered
        if code is not None:
            sys.exit(code)
        _app()()
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
    except Exception as exc:  # a bug of any command: its own exit code (5), never 1 (a verdict)
        from ..errors import EXIT_INTERNAL, TRACEBACK, internal_error

        if os.environ.get(TRACEBACK):
            raise
        sys.stderr.write(f"error: {internal_error(exc)}\n")
        sys.exit(EXIT_INTERNAL)
    finally:
        import gc

        gc.freeze()  # the process ends: no last collection walks what it read (a big layer: ~0.4 s)
