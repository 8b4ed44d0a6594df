"""The ``adapter-matrix`` command line.

Exit codes (documented in the README):

0  supported / clean
1  unsupported or broken (``check``); a failed ``--check`` or result (``table``, ``results``)
2  usage error or an invalid matrix
3  supported with a warning: experimental, deprecated or end of life (``check``)

Start-up matters (``check`` must answer well under a second and never imports torch),
so each command imports what it needs when it runs.

Each command group lives in its own module (``check``, ``validate``, ``init``, ``table``,
``ci``, ``device``); importing them registers their commands on :data:`app`.
"""

from __future__ import annotations

import sys

from . import check, ci, device, init, table, validate  # noqa: F401  (registers the commands)
from .common import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
