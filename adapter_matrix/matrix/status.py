"""The support status of a cell, which is also ``check``'s verdict: one word for each, one enum.

The matrix declares a status per release and per exception; a cell has the one that
decides it; ``check`` answers with the status of the environment's cell (``unsupported``
when no cell claims it) and exits with its code. :func:`~adapter_matrix.check.guard.require`
reads it inside ``import torch``, so this module imports nothing heavy.
"""

from __future__ import annotations

import enum

from ..errors import EXIT_OK, EXIT_UNSUPPORTED, EXIT_WARNING

__all__ = ["Status"]


class Status(str, enum.Enum):
    """Support status of a release or of one of its cells, from best to worst.

    ``unsupported`` is for exceptions only: it takes cells out of a release's claim
    (no table, plan or fix shows them; ``check`` answers unsupported with the reason)."""

    SUPPORTED = "supported"
    EXPERIMENTAL = "experimental"
    DEPRECATED = "deprecated"
    EOL = "eol"
    BROKEN = "broken"
    UNSUPPORTED = "unsupported"

    def __str__(self) -> str:
        return self.value

    @property
    def exit_code(self) -> int:
        """0 supported; 3 works with a warning; 1 unsupported or known broken."""
        if self is Status.SUPPORTED:
            return EXIT_OK
        return EXIT_UNSUPPORTED if self.blocks else EXIT_WARNING

    @property
    def blocks(self) -> bool:
        """Known not to work: ``require`` refuses to activate the adapter."""
        return self in (Status.BROKEN, Status.UNSUPPORTED)

    @property
    def warns(self) -> bool:
        """Works, but ``require`` warns: support is ending or has ended."""
        return self in (Status.DEPRECATED, Status.EOL)

    @property
    def rank(self) -> int:
        """From best (0) to worst: the verdict keeps the best answer, a fix must improve on it."""
        return list(Status).index(self)
