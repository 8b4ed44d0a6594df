"""What the result records of test sessions say about the cells a release claims.

A claim in ``compat.yaml`` is a promise; a result record (written by a nox
``device(...)`` session, read by :func:`adapter_matrix.ci.results.read_records`) is
evidence. A cell is *verified* when the newest record for it passed, *failed* when
the newest record failed, and *unverified* (claimed but not verified) without one.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from ..matrix.queries import Cell

__all__ = ["Verification", "UNVERIFIED", "index_records", "verification_of"]

Records = Mapping[Tuple[str, str], Dict[str, Any]]


@dataclass(frozen=True)
class Verification:
    """The evidence for one cell: ``verified``, ``failed`` or ``unverified``."""

    state: str
    date: Optional[str] = None  # YYYY-MM-DD (UTC) of the record
    session: Optional[str] = None  # the session that wrote it, e.g. device(py3.11-torch2.13)


UNVERIFIED = Verification("unverified")


def _record_date(record: Dict[str, Any]) -> str:
    stamp = str(record.get("timestamp", ""))
    try:
        return _dt.date.fromisoformat(stamp[:10]).isoformat()
    except ValueError:
        where = record.get("_path", record.get("cell", "?"))
        raise ValueError(f"{where}: timestamp {stamp!r} is not an ISO date \u2014 re-run the session to rewrite it") from None


def index_records(records: Sequence[Dict[str, Any]]) -> Records:
    """Records keyed by (cell id, adapter release); a record without a release (written
    by hand) is keyed by the empty string and speaks for every release."""
    out: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for record in records:
        _record_date(record)  # a broken timestamp is reported now, not in the middle of a table
        out[(str(record["cell"]), str(record.get("release") or ""))] = record
    return out


def verification_of(cell: Cell, records: Records) -> Verification:
    """The evidence for ``cell``: its own release's record first, else a release-less one.

    A record of another adapter release says nothing about this one: the cell id
    (``py3.11-torch2.13``) does not name the release, so the release is matched too.
    """
    record = records.get((cell.id, str(cell.release.version))) or records.get((cell.id, ""))
    if record is None:
        return UNVERIFIED
    state = "verified" if record.get("outcome") == "passed" else "failed"
    return Verification(state, _record_date(record), str(record.get("session") or cell.id))
