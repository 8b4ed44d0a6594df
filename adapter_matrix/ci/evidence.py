"""Evidence: what the result records say about the cells a release claims, and whether it still counts.

A claim in ``compat.yaml`` is a promise; a result record (written by a nox ``device(...)``
session, :mod:`adapter_matrix.ci.cells`) is evidence. Each cell also writes a compact copy
of its record into the matrix's evidence folder (``evidence/<release>/<cell>.json``, in
git), so a release commit carries the evidence for what it claims.

Two questions, answered separately:

* :func:`verification_of` -- what the newest record says, from the records and the
  matrix alone (the ``verified`` view in the committed docs): *verified* (passed on the
  cell's torch patch), *stale* (passed, on another torch patch), *failed*, *unverified*.
* :func:`judge` -- whether that still counts today (the release gate, ``validate
  --results DIR --strict``): a pass is *fresh* while it is at most ``max-age-days`` old
  and ran on the current contents of the evidence ``sources`` (the adapter and its test
  suites, hashed by :func:`sources_hash`). A change to any of them ages every record;
  the record's ``commit`` says where it ran, for people to read.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ..files import atomic_write
from ..matrix.diagnostics import Diagnostic, Mark
from ..matrix.model import Matrix, Status
from ..matrix.queries import Cell, cells
from .plan import SESSION, PlanRow, plan

__all__ = [
    "EVIDENCE_ENV",
    "EVIDENCE_KEYS",
    "EvidenceError",
    "Verification",
    "UNVERIFIED",
    "Freshness",
    "evidence_folder",
    "sources_hash",
    "git_state",
    "evidence_of",
    "write_evidence",
    "RecordIndex",
    "index_records",
    "verification_of",
    "freshness_of",
    "judge",
    "claimed_supported",
    "gate",
]

EVIDENCE_ENV = "ADAPTER_MATRIX_EVIDENCE"  # write the evidence records elsewhere (CI keeps the tracked folder untouched)

# The keys of an evidence record, in the order they are written: what ran, where, and how it went.
# No logs, skip reasons or phase timings (those stay in results/): one small file per cell.
# `companions` are the companion packages the cell installed; `ops` is the op sweep's summary
# (mode, tasks by outcome, float32 match), not its per-op record.
EVIDENCE_KEYS: Tuple[str, ...] = (
    "schema",
    "cell",
    "session",
    "release",
    "outcome",
    "error",
    "timestamp",
    "commit",
    "dirty",
    "sources",
    "python",
    "torch_claimed",
    "torch",
    "torch_variant",
    "adapter",
    "source_hash",
    "platform",
    "build_seconds",
    "build_cached",
    "duration",
    "tests",
    "suites",
    "companions",
    "ops",
)


class EvidenceError(ValueError):
    """An evidence source that does not exist, or a record that cannot be judged."""


# -- where evidence lives and what it ran on ---------------------------------------------


def _base(matrix: Matrix) -> str:
    """The folder the matrix's relative paths start from: the matrix file's, as it was named.

    A symlink is not followed: a repository whose ``compat.yaml`` links to the copy inside
    its adapter package keeps its paths relative to the repository root.
    """
    return os.path.dirname(os.path.abspath(matrix.path))


def evidence_folder(matrix: Matrix, environ: Optional[Mapping[str, str]] = None) -> str:
    """``$ADAPTER_MATRIX_EVIDENCE``, else the ``evidence.folder`` of the matrix, next to it."""
    environ = os.environ if environ is None else environ
    return environ.get(EVIDENCE_ENV) or os.path.join(_base(matrix), matrix.evidence.folder)


def _git(base: str, *args: str) -> Optional[str]:
    try:
        proc = subprocess.run(["git", "-C", base, *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


_SKIPPED_DIRS = {"__pycache__", "build", "dist"}


def _walk(base: str, source: str) -> List[str]:
    """Files under ``source`` outside git: no hidden files, caches or compiled objects."""
    top = os.path.join(base, source)
    if os.path.isfile(top) or os.path.islink(top):
        return [source]
    found = []
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
        for name in files:
            if not name.startswith(".") and not name.endswith((".pyc", ".pyo", ".so")):
                found.append(os.path.relpath(os.path.join(folder, name), base))
    return found


def _source_files(base: str, sources: Sequence[str]) -> List[str]:
    """The files of ``sources``: as git sees the tree (tracked and untracked, not ignored), else walked."""
    listed = _git(base, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *sources)
    if listed is not None:
        files = {p for p in listed.split("\0") if p}
    else:
        files = {f for s in sources for f in _walk(base, s)}
    return sorted(f.replace(os.sep, "/") for f in files if os.path.lexists(os.path.join(base, f)))


def sources_hash(matrix: Matrix) -> str:
    """Hash of the evidence ``sources`` as they are now: 16 hex digits, ``""`` without sources.

    Each file counts with its path and bytes; a symlink with its target. The matrix file
    itself never counts, wherever it lives (an adapter may ship it in its package): editing
    the claims does not age the evidence for them.
    """
    sources = matrix.evidence.sources
    if not sources:
        return ""
    base = _base(matrix)
    missing = [s for s in sources if not os.path.lexists(os.path.join(base, s))]
    if missing:
        raise EvidenceError(
            f"{matrix.evidence.mark}: evidence source {missing[0]!r} does not exist in {base} \u2014 fix `evidence: sources:`"
        )
    claims = os.path.realpath(matrix.path)  # the matrix is the claim, not the code under test
    digest = hashlib.sha256()
    for rel in _source_files(base, sources):
        path = os.path.join(base, rel)
        if os.path.realpath(path) == claims and not os.path.islink(path):
            continue
        if os.path.islink(path):
            body = os.readlink(path).encode()
        else:
            with open(path, "rb") as fh:
                body = fh.read()
        digest.update(rel.encode() + b"\0" + body + b"\0")
    return digest.hexdigest()[:16]


def git_state(matrix: Matrix) -> Tuple[Optional[str], Optional[bool]]:
    """The commit the tree is at, and whether the evidence sources differ from it (``None`` outside git)."""
    base = _base(matrix)
    head = _git(base, "rev-parse", "HEAD")
    if head is None:
        return None, None
    status = _git(base, "status", "--porcelain", "--", *(matrix.evidence.sources or (".",)))
    return head.strip(), bool(status and status.strip())


# -- writing -----------------------------------------------------------------------------


def evidence_of(record: Mapping[str, Any]) -> Dict[str, Any]:
    """The evidence form of a result record: its :data:`EVIDENCE_KEYS`, in that order.

    The op sweep's summary loses its ``record`` (a path under ``results/``, not in git)."""
    kept = {key: record[key] for key in EVIDENCE_KEYS if key in record}
    if isinstance(kept.get("ops"), Mapping):
        kept["ops"] = {k: v for k, v in kept["ops"].items() if k != "record"}
    return kept


def write_evidence(folder: str, record: Mapping[str, Any]) -> str:
    """Write the evidence form of ``record`` to ``folder/<release>/<cell>.json``; returns the path."""
    release = str(record.get("release") or "any")
    path = os.path.join(folder, release, f"{record['cell']}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, json.dumps(evidence_of(record), indent=2, ensure_ascii=False) + "\n")
    return path


# -- what a record says ------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    """The evidence for one cell.

    ``state`` is ``verified``, ``stale``, ``failed`` or ``unverified``; ``reason`` says why
    a record is stale or failed. ``torch`` is the torch that ran, ``commit`` where.
    """

    state: str
    date: Optional[str] = None  # YYYY-MM-DD (UTC) of the record
    session: Optional[str] = None  # the session that wrote it, e.g. device(py3.11-torch2.13)
    torch: Optional[str] = None
    commit: Optional[str] = None
    reason: str = ""

    @property
    def counts(self) -> bool:
        """Whether this is evidence that the cell works."""
        return self.state == "verified"

    def as_dict(self) -> Dict[str, Any]:
        return {
            "state": self.state,
            "date": self.date,
            "session": self.session,
            "torch": self.torch,
            "commit": self.commit,
            "reason": self.reason or None,
        }


UNVERIFIED = Verification("unverified")


def _record_date(record: Mapping[str, Any]) -> _dt.date:
    stamp = str(record.get("timestamp", ""))
    try:
        return _dt.date.fromisoformat(stamp[:10])
    except ValueError:
        where = record.get("_path", record.get("cell", "?"))
        raise EvidenceError(f"{where}: timestamp {stamp!r} is not an ISO date \u2014 re-run the session to rewrite it") from None


class RecordIndex:
    """The records of a folder, found by cell.

    A record names what its session ran (``cell``): the plan row's id, e.g.
    ``py3.11-torch2.4`` (``-v2.0.0`` appended in a matrix of several releases). One row
    tests every cell that differs from it only in dimension values no runner provides,
    so a cell's record is the one under its own id, else its row's, for its release
    (a record of another release says nothing about it), else one without a release
    (written by hand), which speaks for every release.
    """

    def __init__(self, records: Sequence[Dict[str, Any]], matrix: Optional[Matrix] = None, today: Optional[_dt.date] = None):
        self.records: Dict[Tuple[str, str], Dict[str, Any]] = {}
        for record in records:
            _record_date(record)  # a broken timestamp is reported now, not in the middle of a table
            self.records[(str(record["cell"]), str(record.get("release") or ""))] = record
        self._rows: Dict[Tuple[str, str, str], List[PlanRow]] = {}
        for row in plan(matrix, "full", today=today) if matrix is not None else ():
            self._rows.setdefault(_place(row.cell), []).append(row)

    def row_for(self, cell: Cell) -> Optional[PlanRow]:
        """The plan row (nox session) that tests ``cell``, if the plan has one."""
        have = set(cell.dimensions)
        return next((r for r in self._rows.get(_place(cell), ()) if set(r.requires) <= have), None)

    def session_for(self, cell: Cell) -> str:
        row = self.row_for(cell)
        return row.session if row else f"{SESSION}({cell.id})"

    def for_cell(self, cell: Cell) -> Optional[Dict[str, Any]]:
        row = self.row_for(cell)
        release = str(cell.release.version)
        for key in ((cell.id, release), (row.id, release) if row else None, (cell.id, "")):
            if key in self.records:
                return self.records[key]
        return None


def _place(cell: Cell) -> Tuple[str, str, str]:
    return (str(cell.release.version), str(cell.line.minor), str(cell.python))


def index_records(records: Sequence[Dict[str, Any]], matrix: Optional[Matrix] = None, today: Optional[_dt.date] = None) -> RecordIndex:
    """:class:`RecordIndex` of ``records``; with ``matrix``, a row's record counts for the cells it tests."""
    return RecordIndex(records, matrix, today)


def _torch_ran(record: Mapping[str, Any]) -> Optional[Version]:
    text = record.get("torch") or record.get("torch_claimed")
    try:
        return Version(Version(str(text)).public) if text else None
    except InvalidVersion:
        return None


def verification_of(cell: Cell, records: RecordIndex) -> Verification:
    """What the newest record of ``cell`` says (:meth:`RecordIndex.for_cell`). Depends on
    the records and the matrix only."""
    record = records.for_cell(cell)
    if record is None:
        return UNVERIFIED
    ran = _torch_ran(record)
    commit = str(record["commit"]) if record.get("commit") else None
    date, session = _record_date(record).isoformat(), str(record.get("session") or cell.id)

    def judged(state: str, reason: str = "") -> Verification:
        return Verification(state, date, session, str(ran) if ran else None, commit, reason)

    if record.get("outcome") != "passed":
        return judged("failed", str(record.get("error") or "the session failed"))
    if ran != cell.torch:
        return judged("stale", f"ran torch {ran or 'unknown'}; the cell claims torch {cell.torch}")
    return judged("verified")


# -- whether it still counts -------------------------------------------------------------


@dataclass(frozen=True)
class Freshness:
    """The rules a passing record must meet today: its age and the sources it ran on."""

    max_age_days: int
    sources_hash: str  # "" when the matrix names no sources
    today: _dt.date


def freshness_of(matrix: Matrix, today: Optional[_dt.date] = None) -> Freshness:
    """The freshness rules of ``matrix`` (its ``evidence`` section) on ``today``, hashing its sources now."""
    return Freshness(matrix.evidence.max_age_days, sources_hash(matrix), today or _dt.date.today())


def judge(cell: Cell, records: RecordIndex, rules: Freshness) -> Verification:
    """:func:`verification_of`, with a pass that is too old or ran on other sources turned ``stale``."""
    found = verification_of(cell, records)
    if found.state != "verified":
        return found
    record = records.for_cell(cell) or {}
    age = (rules.today - _record_date(record)).days
    if age > rules.max_age_days:
        reason = f"the record is {age} days old; records count for {rules.max_age_days} days (evidence: max-age-days)"
        return Verification("stale", found.date, found.session, found.torch, found.commit, reason)
    ran_on = (record.get("sources") or {}).get("hash") if isinstance(record.get("sources"), dict) else None
    if rules.sources_hash and ran_on != rules.sources_hash:
        where = f"commit {found.commit[:10]}" if found.commit else "its run"
        reason = (
            f"the evidence sources changed since {where} (hash {ran_on or 'not recorded'}, now {rules.sources_hash})"
        )
        return Verification("stale", found.date, found.session, found.torch, found.commit, reason)
    return found


# -- the release gate --------------------------------------------------------------------


def _claim_mark(cell: Cell) -> Mark:
    """Where the claim is made: the exception that decided the cell, else the release's status."""
    return cell.decided_by[1] if len(cell.decided_by) > 1 else cell.release.mark_of("status")


def claimed_supported(matrix: Matrix, today: Optional[_dt.date] = None) -> List[Cell]:
    """The cells the matrix claims as ``supported`` on ``today``: the ones the gate asks evidence for."""
    return [c for c in cells(matrix, today=today) if c.status is Status.SUPPORTED]


def gate(
    matrix: Matrix, records: Sequence[Dict[str, Any]], today: Optional[_dt.date] = None, strict: bool = False
) -> List[Diagnostic]:
    """One finding per cell claimed ``supported`` without a fresh passing record (:func:`judge`),
    at the line that claims it; warnings, or errors when ``strict``."""
    rules = freshness_of(matrix, today)
    index = index_records(records, matrix, rules.today)
    found = []
    for cell in claimed_supported(matrix, rules.today):
        evidence = judge(cell, index, rules)
        if evidence.counts:
            continue
        what = {"unverified": "no record", "failed": f"failed on {evidence.date}", "stale": f"stale, passed on {evidence.date}"}
        detail = f" ({evidence.reason})" if evidence.reason else ""
        found.append(
            Diagnostic(
                _claim_mark(cell),
                f"cell {cell.id} of release {cell.release.version} is claimed supported without a fresh passing record: "
                f"{what[evidence.state]}{detail}",
                f'run `nox -s "{index.session_for(cell)}"` and commit its record from {matrix.evidence.folder}/',
                "error" if strict else "warning",
            )
        )
    return found
