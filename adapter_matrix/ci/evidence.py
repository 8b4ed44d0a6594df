"""Evidence: what the result records say about the cells a release claims, and whether it still counts.

A claim in ``compat.yaml`` is a promise; a result record (written by a nox ``device(...)``
session, :mod:`adapter_matrix.ci.record`) is evidence. Each cell also writes a compact copy
of its record into the matrix's evidence folder (``evidence/<release>/<cell>.json``, in
git), so a release commit carries the evidence for what it claims.

Two questions, answered separately:

* :func:`verification_of` -- what the newest record says, from the records and the
  matrix alone (the ``verified`` view in the committed docs): *verified* (passed on the
  cell's torch patch), *stale* (passed, on another torch patch), *failed*, *unverified*.
* :func:`judge` -- whether that still counts today (the release gate, ``validate
  --results DIR --strict``): a pass is *fresh* while it is at most ``max-age-days`` old,
  ran every suite group and companion the matrix declares, and ran on the sources of its
  release: the hash a frozen release recorded (:mod:`adapter_matrix.ci.release`), else
  the current contents of the evidence ``sources`` (the adapter and its test suites,
  hashed by :func:`sources_hash`). So a change to the code ages the records of the
  unreleased code only; the record's ``commit`` says where it ran, for people to read.

Records are untrusted input (they arrive as CI artifacts): :func:`check_name` vets every
cell and release name before it becomes a path, and :func:`write_evidence` never writes
outside its folder.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from .. import limits
from ..backend import build_tables_text
from ..files import atomic_write, make_folders
from ..matrix.cellid import CellId
from ..matrix.diagnostics import Diagnostic, Mark
from ..matrix.model import Matrix, Status
from ..matrix.queries import Cell, cells
from ..names import canonical_name
from .frozen import FrozenRelease, read_frozen
from .plan import SESSION, PlanRow, plan
from .record import RecordSet, ResultRecord, TreeState
from .record_names import EvidenceError, check_name

__all__ = [
    "EVIDENCE_ENV",
    "EvidenceError",
    "evidence_path",
    "check_name",
    "shortfall",
    "Verification",
    "UNVERIFIED",
    "Freshness",
    "evidence_folder",
    "sources_hash",
    "git_state",
    "tree_state",
    "write_evidence",
    "RecordIndex",
    "index_records",
    "verification_of",
    "freshness_of",
    "judge",
    "claimed_supported",
    "GateFinding",
    "gate",
]

EVIDENCE_ENV = "ADAPTER_MATRIX_EVIDENCE"  # write the evidence records elsewhere (CI keeps the tracked folder untouched)


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


def sources_hash(matrix: Matrix, more: Sequence[str] = ()) -> str:
    """Hash of the evidence ``sources`` as they are now: 16 hex digits, ``""`` without sources.

    Each file counts with its path and bytes; a symlink with its target; a ``pyproject.toml``
    with its build tables only (:func:`~adapter_matrix.backend.build_tables_text`:
    bumping the version or correcting ``requires-python`` does not age the evidence, a
    ``[tool.scikit-build]`` change does). The matrix file
    itself never counts, wherever it lives (an adapter may ship it in its package): editing
    the claims does not age the evidence for them. ``more``: sources beside the matrix's
    (relative to its folder), such as a plugin's own files when its cells run on its adapter's
    matrix (``Adapter(layers=..., sources=...)``).
    """
    sources = [*matrix.evidence.sources, *more]
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
            if os.path.basename(rel) == "pyproject.toml":  # its build tables, not the metadata
                body = build_tables_text(body)
        digest.update(rel.encode() + b"\0" + body + b"\0")
    return digest.hexdigest()[:16]


def git_state(matrix: Matrix, more: Sequence[str] = ()) -> Tuple[Optional[str], Optional[bool]]:
    """The commit the tree is at, and whether the evidence sources (and ``more``) differ from it (``None`` outside git)."""
    base = _base(matrix)
    head = _git(base, "rev-parse", "HEAD")
    if head is None:
        return None, None
    claims = os.path.relpath(
        os.path.realpath(matrix.path), os.path.realpath(base)
    )  # the claim, not the code: never dirty
    sources = [*matrix.evidence.sources, *more] or ["."]
    status = _git(base, "status", "--porcelain", "--", *sources, f":(exclude){claims}")
    return head.strip(), bool(status and status.strip())


# -- writing -----------------------------------------------------------------------------


def _inside(folder: str, path: str) -> bool:
    top = os.path.realpath(folder)
    return os.path.commonpath([top, os.path.realpath(path)]) == top


def evidence_path(folder: str, record: ResultRecord) -> str:
    """Where the evidence form of ``record`` lives: ``folder/<release>/<cell>.json`` (``any``
    for a record without a release), its names vetted first (:func:`check_name`): records
    are untrusted input."""
    release = check_name(record.release or "any", "release")
    return os.path.join(folder, release, f"{check_name(str(record.cell), 'cell')}.json")


def write_evidence(folder: str, record: ResultRecord, matrix: Optional[Matrix] = None) -> str:
    """Write the evidence form of ``record`` to ``folder/<release>/<cell>.json``; returns the path.

    The names are vetted first (:func:`check_name`) and the path must resolve inside
    ``folder``. With ``matrix``, :class:`EvidenceError` (nothing written) for a record that
    is not evidence of its release or is weaker than the one it would replace:

    * its release is frozen in ``folder`` and it ran on other sources (the code of a later
      release: its record belongs to that release);
    * the adapter it ran is another release than the record names;
    * it ran fewer suite groups (``evidence: suites:``) or fewer companions (``ci:
      companions:``) than the matrix declares, short of something the committed record had,
      or finds unavailable a companion the committed record installed (a failed download).
    """
    path = evidence_path(folder, record)
    release_dir = os.path.dirname(path)
    release = os.path.basename(release_dir)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise EvidenceError(f"{folder}: not a folder \u2014 give the evidence folder (e.g. evidence)")
    if matrix is not None:
        _refuse_if_not_evidence(folder, release, path, record, matrix)
    make_folders(release_dir)  # a read-only checkout: one line, not an internal error
    if not _inside(folder, path):
        raise EvidenceError(f"{path}: outside the evidence folder {folder} (a symbolic link?) \u2014 nothing written")
    atomic_write(path, json.dumps(record.evidence_json(), indent=2, ensure_ascii=False) + "\n", follow=False)
    return path


def _refuse_if_not_evidence(folder: str, release: str, path: str, record: ResultRecord, matrix: Matrix) -> None:
    frozen = read_frozen(folder).get(release)
    ran_on = record.ran_on
    if frozen is not None and ran_on != frozen.sources_hash:
        raise EvidenceError(
            f"{path}: not written \u2014 release {release} is frozen with sources hash {frozen.sources_hash} "
            f"({frozen.path}), and this run tested {ran_on or 'unrecorded sources'}: changed code is a new release "
            f"(add one with status: experimental, bump the adapter's version, run its cells; docs/releasing.md)"
        )
    adapter = record.adapter
    try:
        other = adapter is not None and Version(Version(str(adapter)).public) != Version(Version(release).public)
    except InvalidVersion:
        other = False
    if other:
        raise EvidenceError(
            f"{path}: not written \u2014 the adapter under test is {adapter}, not release {release}: "
            f"run the cells of release {adapter} (`nox -t v{adapter}` in a matrix of several releases)"
        )
    cell = _cell_of(matrix, record)
    if cell is None or not os.path.exists(path):
        return
    short = shortfall(matrix, cell, record)
    # a companion the committed record installed cannot be unavailable now: a failed download
    unavailable = record.companions_unavailable or {}
    if not short and not unavailable:
        return
    try:
        with open(path, encoding="utf-8") as fh:
            committed = ResultRecord.from_json(json.loads(fh.read(limits.EVIDENCE_BYTES)), path)
        had, installed = set(shortfall(matrix, cell, committed)), committed.companions or {}
    except (OSError, ValueError, RecursionError):  # RecordError is a ValueError
        had, installed = set(), {}  # an unreadable record is no evidence worth keeping
    weaker = [s for s in short if s not in had]
    names = {canonical_name(n) for n in installed}
    weaker += [f"companion {n} (the committed record installed it)" for n in unavailable if canonical_name(n) in names]
    if weaker:
        raise EvidenceError(
            f"{path}: not written \u2014 this run is weaker than the committed record: it has no {', '.join(weaker)} "
            f"(the matrix declares them: evidence: suites:, ci: companions:); run the cell without narrowing it"
        )


def _cell_of(matrix: Matrix, record: ResultRecord) -> Optional[Cell]:
    """The cell a record names: its plan row's cell (the row id, e.g. ``py3.11-torch2.13-v0.2.0``), or a cell id."""
    name, release = record.cell, record.release or ""
    for row in plan(matrix, "full"):
        if row.id == name and str(row.cell.release.version) == release:
            return row.cell
    return next((c for c in cells(matrix) if c.id == name and str(c.release.version) == release), None)


def shortfall(matrix: Matrix, cell: Cell, record: ResultRecord) -> List[str]:
    """What ``record`` did not run of what the matrix declares for ``cell``: each suite group
    of ``evidence: suites:`` it has no counts for (``suite group workloads``), and each
    companion of ``ci: companions:`` with a release for the cell's torch that it neither
    installed nor found unavailable (``companion torchvision``; ``companions_unavailable``:
    the index had no build of it for the cell's Python, torchvision 0.20 for 3.13). Empty
    for a complete record."""
    suites = record.suites or {}
    have = {canonical_name(name) for name in [*(record.companions or {}), *(record.companions_unavailable or {})]}
    missing = [f"suite group {g}" for g in matrix.evidence.suites if g not in suites]
    for entry in matrix.ci_companions:
        comp = matrix.companion(entry.name)
        if comp is not None and comp.choose(cell.torch) is not None and canonical_name(comp.name) not in have:
            missing.append(f"companion {comp.name}")
    return missing


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
    release: Optional[str] = None  # the adapter release the record proves (its evidence folder)

    @property
    def counts(self) -> bool:
        """Whether this is evidence that the cell works."""
        return self.state == "verified"

    def as_dict(self) -> Dict[str, object]:
        return {
            "state": self.state,
            "date": self.date,
            "session": self.session,
            "torch": self.torch,
            "commit": self.commit,
            "reason": self.reason or None,
            "release": self.release,
        }


UNVERIFIED = Verification("unverified")


class RecordIndex:
    """The records of a folder, found by cell.

    A record names what its session ran (``cell``): the plan row's id, e.g.
    ``py3.11-torch2.4`` (``-v2.0.0`` appended in a matrix of several releases). One row
    tests every cell that differs from it only in dimension values no runner provides,
    so a cell's record is the one under its own id, else its row's, for its release
    (a record of another release says nothing about it), else one without a release
    (written by hand), which speaks for every release.
    """

    def __init__(self, records: RecordSet, matrix: Optional[Matrix] = None, today: Optional[_dt.date] = None):
        self.frozen: Mapping[str, FrozenRelease] = records.frozen  # the releases frozen where the records are
        self.records: Dict[Tuple[str, str], ResultRecord] = {}
        for record in records:
            self.records[(record.cell, record.release or "")] = record
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

    def for_cell(self, cell: Cell) -> Optional[ResultRecord]:
        row = self.row_for(cell)
        release = str(cell.release.version)
        for key in ((cell.id, release), (row.id, release) if row else None, (cell.id, "")):
            if key in self.records:
                return self.records[key]
        return None


def _place(cell: Cell) -> Tuple[str, str, str]:
    return (str(cell.release.version), cell.torch_row, str(cell.python))


def index_records(records: RecordSet, matrix: Optional[Matrix] = None, today: Optional[_dt.date] = None) -> RecordIndex:
    """:class:`RecordIndex` of ``records``; with ``matrix``, a row's record counts for the cells it tests."""
    return RecordIndex(records, matrix, today)


def _torch_ran(record: ResultRecord) -> Optional[Version]:
    text = record.torch or record.torch_claimed
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

    def seen(state: str, reason: str = "") -> Verification:
        return Verification(
            state,
            date=record.date.isoformat(),
            session=record.session or cell.id,
            torch=str(ran) if ran else None,
            commit=record.commit or None,
            reason=reason,
            release=record.release or str(cell.release.version),
        )

    if not record.passed:
        return seen("failed", record.error or "the session failed")
    if ran != cell.torch:
        return seen("stale", f"ran torch {ran or 'unknown'}; the cell claims torch {cell.torch}")
    return seen("verified")


# -- whether it still counts -------------------------------------------------------------


@dataclass(frozen=True)
class Freshness:
    """The rules a passing record must meet today: its age and the sources it ran on.

    ``frozen`` are the frozen releases (:mod:`adapter_matrix.ci.release`): a record of one
    is judged against the hash the release recorded; any other against ``sources_hash``,
    the working tree's."""

    max_age_days: int
    sources_hash: str  # "" when the matrix names no sources
    today: _dt.date
    frozen: Mapping[str, FrozenRelease] = dataclasses.field(default_factory=dict)

    def expected_hash(self, release: str) -> str:
        found = self.frozen.get(release)
        return found.sources_hash if found is not None else self.sources_hash


def freshness_of(
    matrix: Matrix, today: Optional[_dt.date] = None, frozen: Optional[Mapping[str, FrozenRelease]] = None
) -> Freshness:
    """The freshness rules of ``matrix`` (its ``evidence`` section) on ``today``, hashing its sources now."""
    return Freshness(matrix.evidence.max_age_days, sources_hash(matrix), today or _dt.date.today(), dict(frozen or {}))


def judge(cell: Cell, records: RecordIndex, rules: Freshness, matrix: Optional[Matrix] = None) -> Verification:
    """:func:`verification_of`, with a pass turned ``stale`` when it is too old, ran on other
    sources than its release's, or (with ``matrix``) ran less than it declares (:func:`shortfall`)."""
    found = verification_of(cell, records)
    if found.state != "verified":
        return found
    record = records.for_cell(cell)
    assert record is not None  # verified: it has a record

    def stale(reason: str) -> Verification:
        return dataclasses.replace(found, state="stale", reason=reason)

    age = (rules.today - record.date).days
    if age > rules.max_age_days:
        return stale(
            f"the record is {age} days old; records count for {rules.max_age_days} days (evidence: max-age-days)"
        )
    release = str(cell.release.version)
    expected, ran_on = rules.expected_hash(release), record.ran_on
    if expected and ran_on != expected:
        if release in rules.frozen:
            return stale(
                f"it ran on sources hash {ran_on or 'not recorded'}; release {release} was frozen with {expected}"
            )
        where = f"commit {found.commit[:10]}" if found.commit else "its run"
        return stale(f"the evidence sources changed since {where} (hash {ran_on or 'not recorded'}, now {expected})")
    short = shortfall(matrix, cell, record) if matrix is not None else []
    if short:
        return stale(f"it ran without {', '.join(short)} (evidence: suites:, ci: companions:)")
    return found


# -- the release gate --------------------------------------------------------------------


def _claim_mark(cell: Cell) -> Mark:
    """Where the claim is made: the exception that decided the cell, else the release's status."""
    return cell.decided_by[1] if len(cell.decided_by) > 1 else cell.release.mark_of("status")


def claimed_supported(matrix: Matrix, today: Optional[_dt.date] = None) -> List[Cell]:
    """The cells the matrix claims as ``supported`` on ``today``: the ones the gate asks evidence for."""
    return [c for c in cells(matrix, today=today) if c.status is Status.SUPPORTED]


class GateFinding(NamedTuple):
    """One finding of the release gate: a release claimed supported that is not frozen
    (``cell`` None), or a cell claimed supported without a fresh passing record."""

    release: str
    cell: Optional[CellId]
    diagnostic: Diagnostic  # at the line that claims it, with the fix

    @property
    def message(self) -> str:
        return self.diagnostic.message


def gate(
    matrix: Matrix, records: RecordSet, today: Optional[_dt.date] = None, strict: bool = False
) -> List[GateFinding]:
    """The release gate: one finding per cell claimed ``supported`` without a fresh passing
    record (:func:`judge`), at the line that claims it, and one per release claimed
    ``supported`` that is not frozen in the folders ``records`` were read from;
    warnings, or errors when ``strict``."""
    index = index_records(records, matrix, today)
    rules = freshness_of(matrix, today, index.frozen)
    severity = "error" if strict else "warning"
    found = []
    claimed = claimed_supported(matrix, rules.today)
    for release in dict.fromkeys(c.release for c in claimed):
        version = str(release.version)
        if version not in rules.frozen:
            found.append(
                GateFinding(
                    version,
                    None,
                    Diagnostic(
                        release.mark_of("status"),
                        f"release {version} is claimed supported but is not frozen: its records would be judged "
                        f"against whatever the code is now",
                        f"once its cells pass, run `adapter-matrix release {version}` and commit "
                        f"{matrix.evidence.folder}/{version}/release.json (docs/releasing.md)",
                        severity,
                    ),
                )
            )
    for cell in claimed:
        evidence = judge(cell, index, rules, matrix)
        if evidence.counts:
            continue
        what = {
            "unverified": "no record",
            "failed": f"failed on {evidence.date}",
            "stale": f"stale, passed on {evidence.date}",
        }
        detail = f" ({evidence.reason})" if evidence.reason else ""
        found.append(
            GateFinding(
                str(cell.release.version),
                cell.id,
                Diagnostic(
                    _claim_mark(cell),
                    f"cell {cell.id} of release {cell.release.version} is claimed supported without a fresh passing "
                    f"record: {what[evidence.state]}{detail}",
                    f'run `nox -s "{index.session_for(cell)}"` and commit its record from {matrix.evidence.folder}/',
                    severity,
                ),
            )
        )
    return found


def tree_state(matrix: Matrix, more: Sequence[str] = ()) -> TreeState:
    """What a record says about the sources it ran on: the commit, whether the evidence
    sources (and ``more``, relative to the matrix's folder) differed from it, and their hash
    (:func:`sources_hash`)."""
    commit, dirty = git_state(matrix, more)
    return {
        "commit": commit,
        "dirty": dirty,
        "sources": {"hash": sources_hash(matrix, more), "paths": [*matrix.evidence.sources, *more]},
    }
