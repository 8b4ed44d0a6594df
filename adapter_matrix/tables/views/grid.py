"""The ``grid`` view: torch minor (newest first) x Python; a cell shows the cell's status.
Without ``--release`` it aggregates every maintained (not end-of-life) release: a position
served by several releases names the adapter versions that serve it.
"""

from __future__ import annotations

import datetime as _dt
from typing import Optional

from ...matrix.model import Matrix
from ...matrix.queries import (
    Releases,
)
from ..table import Table
from .common import Records, cell_facts, grid_table, shown_releases, status_cell

__all__ = ["grid"]


def grid(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
) -> Table:
    """torch minor (newest first) x Python; each cell shows its status, for the releases
    asked for or (by default) every maintained release."""
    return grid_table(
        matrix, shown_releases(matrix, release, today), lang, today, "grid", lambda c: status_cell(c, lang), cell_facts
    )
