"""Compatibility tables generated from the model: the views.

A *view* turns the model into a neutral :class:`Table`: columns, rows of
:class:`TableCell` (text made of plain and code spans, plus a state class such as
``supported``), a legend, and the machine-readable facts behind the rows. A *format*
(:mod:`adapter_matrix.tables.formats`) renders any table as text, so every view exists
in every format and every language. Views ask :mod:`adapter_matrix.matrix.queries` for the
cells; nothing here re-reads ``compat.yaml`` or re-decides a status.

Each view is a module of this package; this one names them (:data:`VIEWS`) and builds
and renders any of them. Views:

``grid``
    torch minor (newest first) x Python; a cell shows the cell's status. Without
    ``--release`` it aggregates every maintained (not end-of-life) release: a position
    served by several releases names the adapter versions that serve it.
``verified``
    the same grid for one release (the newest by default); a cell shows what the result
    records say: verified (the date, the torch that ran, the commit), stale (it ran another
    torch patch), failed, or claimed but not verified. It depends on the records and the
    matrix only; whether a pass is fresh enough for a release is the gate's question
    (``validate --results --strict``).
``releases``
    one row per adapter release: torch, Python, extra dimensions, status, support end;
    grouped by release line when the matrix has lines.
``dimension``
    an extra dimension's values (newest first) x torch minor; a cell names the adapter
    packages that serve that pair: the table torch_npu publishes (CANN x torch), every
    release included.
``capabilities``
    torch minor x feature, as the shim serving each line declares it (issue: a feature a
    release lacks is a declared capability, never a silent skip).
``ops``, ``op-dtypes``, ``op-failures``
    what PyTorch's OpInfo sweep found on the device per torch line, from op-sweep
    records.
``selector``
    one row per cell with the exact commands that install it (check's fixes, for a fresh
    environment); as HTML, the selector page: pick the values, copy the command.
``history``
    releases as a vendor publishes them: rows grouped by torch line, one per release and
    its post-releases (the newest build, the earlier ones, the torch per platform).
``companions``
    torch minor x companion package (torchvision, torchaudio): the releases built for each
    line, or the earlier releases whose open requirement admits it, or none.

The releases view also has a column per companion: the companion releases that pair with
the torch the adapter release supports, or the adapter's own pin.
"""

from __future__ import annotations

import datetime as _dt
from typing import Callable, Dict, Optional

from ...matrix.model import Matrix
from ...matrix.queries import Releases
from ..formats import render_table
from ..table import STATES, Column, Span, Table, TableCell
from ..words import LANGS
from .capabilities import capabilities
from .common import Records
from .companions import companions
from .dimension import dimension
from .grid import grid
from .history import history
from .op_dtypes import op_dtypes
from .op_failures import op_failures
from .ops import ops
from .releases import releases
from .selector import selector
from .verified import verified

__all__ = ["Span", "TableCell", "Column", "Table", "STATES", "VIEWS", "RECORDS", "build", "render"]

VIEWS: Dict[str, Callable[..., Table]] = {
    "grid": grid,
    "verified": verified,
    "releases": releases,
    "dimension": dimension,
    "capabilities": capabilities,
    "ops": ops,
    "op-dtypes": op_dtypes,
    "op-failures": op_failures,
    "companions": companions,
    "selector": selector,
    "history": history,
}
# Views drawn from records, and which: the nox cells' result records, or op-sweep records.
RECORDS: Dict[str, str] = {
    "verified": "results",
    "ops": "op-sweeps",
    "op-dtypes": "op-sweeps",
    "op-failures": "op-sweeps",
}


def build(
    matrix: Matrix,
    view: str = "grid",
    lang: str = "en",
    release: Releases = None,
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
    dimension: Optional[str] = None,
    picks: bool = True,
) -> Table:
    """The table of ``view`` (``dimension`` names the dimension of the dimension view;
    ``picks``: the selector's answer for every pick its page can express, which only its
    JSON and HTML carry); ``ValueError`` names the choices for a bad view, language or
    dimension."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGS)}")
    if dimension is not None and view != "dimension":
        raise ValueError(f"a dimension is chosen for the dimension view only, not {view}")
    extra: Dict[str, object] = {"name": dimension} if view == "dimension" else {}
    if view == "selector":
        extra["picks"] = picks
    return VIEWS[view](matrix, release=release, lang=lang, today=today, records=records, **extra)


def render(
    matrix: Matrix,
    view: str = "grid",
    fmt: str = "markdown",
    lang: str = "en",
    release: Releases = None,
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
    dimension: Optional[str] = None,
) -> str:
    """``view`` rendered as ``fmt`` (see :data:`adapter_matrix.tables.formats.FORMATS`)."""
    picks = fmt in ("json", "html")  # the selector page's picks are in its data only
    return render_table(build(matrix, view, lang, release, today, records, dimension, picks), fmt)
