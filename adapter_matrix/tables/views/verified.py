"""The ``verified`` view: the grid for one release (the newest by default); a cell shows
what the result records say: verified (the date, the torch that ran, the commit), stale
(it ran another torch patch), failed, or claimed but not verified. It depends on the
records and the matrix only; whether a pass is fresh enough for a release is the gate's
question (``validate --results --strict``).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Optional, Tuple

from ...ci.evidence import Verification, index_records, verification_of
from ...ci.record import RecordSet
from ...matrix.model import Matrix, Status
from ...matrix.queries import (
    Cell,
    Releases,
    chosen,
)
from ..table import Span, Table, TableCell, fill, plain
from ..words import word
from .common import Records, cell_facts, grid_table, status_cell

__all__ = ["verified"]


def _evidence_cell(evidence: Verification, lang: str, proves: bool = False) -> TableCell:
    """``verified 2026-12-01, torch 2.13.0 at `1a2b3c4```; stale and failed ones say why in the
    title. ``proves``: the record's release is frozen, and the cell names it (``, proves 0.1.0``)."""
    if evidence.state == "unverified":
        return plain(word("unverified", lang), "unverified")
    at: Tuple[Span, ...] = ()
    if evidence.commit:
        at = fill(word("at_commit", lang), "", commit=Span(evidence.commit[:7], code=True)).spans
    if proves and evidence.release:
        at += (Span(word("proves", lang).format(release=evidence.release)),)
    return fill(
        word(f"{evidence.state}_cell", lang),
        evidence.state,
        evidence.reason,
        date=Span(evidence.date or ""),
        torch=Span(evidence.torch or "?"),
        at=at,
    )


def verified(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
) -> Table:
    """Like ``grid`` for one release (the newest by default), but each claimed cell shows
    what the result records say about it."""
    if not isinstance(records, RecordSet):
        raise ValueError("the verified view needs the result records: give --results DIR (or results=DIR in a marker)")
    index = index_records(records, matrix, today)
    asked = chosen(matrix, release) if release is not None else tuple(r for r in [matrix.newest_release] if r)
    if len(asked) > 1:
        raise ValueError(
            "the verified view shows one release: name a package version with --release (or release= in a marker)"
        )
    # Once a folder holds frozen releases (adapter-matrix release), a release not frozen in it is
    # unreleased code: its records prove work in progress, so its cells are not yet verified.
    frozen = index.frozen.get(str(asked[0].version)) if asked else None
    unreleased = bool(index.frozen) and bool(asked) and frozen is None

    def shown(c: Cell) -> TableCell:
        if c.status is Status.BROKEN:  # known not to work: its status is the answer, not missing evidence
            return status_cell(c, lang)
        if unreleased:
            return plain(word("unreleased", lang), "unreleased", word("unreleased_about", lang))
        return _evidence_cell(verification_of(c, index), lang, proves=frozen is not None)

    table = grid_table(
        matrix, asked, lang, today, "verified", shown, lambda c: cell_facts(c, verification_of(c, index))
    )
    if frozen is not None:
        at = word("at_commit", lang).format(commit=frozen.commit[:7]) if frozen.commit else ""
        title = table.title + word("frozen_title", lang).format(version=frozen.version, date=frozen.date, at=at)
    elif unreleased:
        title = table.title + word("unreleased_title", lang).format(version=asked[0].version)
    else:
        return table
    return dataclasses.replace(table, title=title)
