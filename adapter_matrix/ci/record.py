"""The result record: the JSON file a ``device(...)`` session writes for its cell, declared once.

:class:`ResultRecord` declares every key of the record: its JSON type, what it means, and
whether the evidence form (the compact copy committed under ``evidence/``) keeps it. The
record's checks when it is read back (:func:`~adapter_matrix.documents.from_json`), its
evidence form (:meth:`ResultRecord.evidence_json`) and its reference in docs/evidence.md
(:func:`reference_markdown`) all come from that one declaration: a new key is one field
here.

A cell builds its record step by step, each step setting what it knows
(:meth:`~ResultRecord.planned`, :meth:`~ResultRecord.seen`, :meth:`~ResultRecord.built`,
:meth:`~ResultRecord.tested`, :meth:`~ResultRecord.on_sources`, then
:meth:`~ResultRecord.finished`), and writes it into ``results/`` (:func:`write_record`).
:func:`read_records` reads records back, recursively (a folder of downloaded CI
artifacts works as is): several folders merge by what the records say, the newest record of
each (cell, release) winning and two copies of one run required to agree, into a
:class:`RecordSet` with the releases frozen in those folders.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
import os
import platform
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypedDict,
    Union,
)

from .. import limits
from ..answer import Answer, CheckDocument, read_check
from ..documents import DocumentError, declare, from_json, json_type, keys_of, to_json, what_is
from ..errors import AdapterMatrixError
from ..files import JSONFileError, atomic_write, json_files
from ..matrix.cellid import CellId
from .frozen import FrozenRelease, read_frozen
from .plan import PlanRow
from .record_names import RELEASE_FILE, EvidenceError, check_name
from .suites import Suites, total

__all__ = [
    "RECORD_SCHEMA",
    "RESULTS_ENV",
    "CLOCK_SKEW",
    "RecordError",
    "OpsSummary",
    "ResultRecord",
    "RecordSet",
    "results_dir",
    "write_record",
    "read_records",
    "evidence_keys",
    "reference_markdown",
]


RESULTS_ENV = "ADAPTER_MATRIX_RESULTS"


RECORD_SCHEMA = 2  # 2: suites per group, the commit and the hash of the evidence sources


CLOCK_SKEW = _dt.timedelta(days=1)  # a record may be dated this far after the run that reads it (clocks differ)


class RecordError(AdapterMatrixError, ValueError):
    """A folder without records, or a record that is not one."""


# -- checks of single keys (a type check says no more than "a string") --------------------


def _plain_name(what: str) -> Callable[[str], Optional[str]]:
    def check(name: str) -> Optional[str]:
        try:
            check_name(name, what)
        except EvidenceError as exc:
            return str(exc)
        return None

    return check


def _when(stamp: str) -> Optional[_dt.datetime]:
    """The UTC time of an ISO ``stamp`` (``Z`` or an offset; none is UTC), or None."""
    try:
        when = _dt.datetime.fromisoformat(stamp[:-1] + "+00:00" if stamp.endswith("Z") else stamp)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def _iso_time(stamp: str) -> Optional[str]:
    return None if _when(stamp) else f"{stamp[:40]!r} is not an ISO date and time"


# -- the record's sections -----------------------------------------------------------------
# Small sections of a fixed shape: checked key by key when a record is read
# (documents.from_json), kept as the mappings they were read as. Every key is optional on
# reading: a record written before a key existed still reads, and is written back as it was.


class SourcesSeen(TypedDict, total=False):
    hash: str  # of the evidence sources' contents (ci/evidence.py's sources_hash)
    paths: List[str]


class TreeState(TypedDict, total=False):
    """The sources a cell ran on, as :func:`adapter_matrix.ci.evidence.tree_state` says
    (empty before they are read)."""

    commit: Optional[str]
    dirty: Optional[bool]
    sources: SourcesSeen


class BinarySummary(TypedDict, total=False):
    ok: bool
    libraries: int
    problems: List[str]  # each problem's message


class CompanionRefusal(TypedDict, total=False):
    installed: str  # the release built for another torch, installed with --no-deps
    exit_code: int
    reason: str
    fix: str  # check's first command


class BuildSeen(TypedDict, total=False):
    project: str
    version: Optional[str]  # from the wheel's name
    source_hash: Optional[str]
    build_seconds: Optional[float]
    compiled: bool  # compiled now, not taken from the build cache


class Float32Match(TypedDict, total=False):
    ops: int
    compared: int
    matched: int
    percent: Optional[float]  # null when none was compared


class CompiledSample(TypedDict, total=False):
    ok: bool
    skipped: Optional[str]  # why it did not run
    ops: int
    outcomes: Dict[str, int]
    problems: int
    float32: Optional[Float32Match]
    seconds: float


# -- the record ----------------------------------------------------------------------------


def _binary_summary(answer: Answer) -> Optional[BinarySummary]:
    """The record's ``binary``: the adapter's libraries and each installed layer's (a plugin's op
    library, read against the adapter's) as one check."""
    sections = [answer.binary] if answer.binary is not None else []
    if answer.stack is not None:
        sections += [layer.binary for layer in answer.stack.layers if layer.binary is not None]
    if not sections:
        return None
    summaries = [s.summary() for s in sections]
    return {
        "ok": all(ok for ok, _, _ in summaries),
        "libraries": sum(libraries for _, libraries, _ in summaries),
        "problems": [message for _, _, problems in summaries for message in problems],
    }


@dataclass(frozen=True)
class OpsSummary:
    """What a cell's record keeps of its op sweep (``adapter-matrix ops sweep``): counts, not
    the op lists, which stay in the sweep's own record (``record``). Every key is optional: a
    record written before a key existed reads, and is written back, with the keys it had."""

    mode: Optional[str] = declare("`sample`, `full` or `custom`: how much of op_db and module_db ran")
    ok: Optional[bool] = declare("whether every task ended as the expectations say")
    ops: Optional[int] = declare("the ops swept (an OpInfo variant or a module in a mode counts once)")
    tasks: Optional[Dict[str, int]] = declare("the tasks (an op in one dtype and direction) by outcome")
    families: Optional[Dict[str, Dict[str, int]]] = declare(
        "per op family (`unary`, `linalg`, `modules`, ...), its ops by status: passed, failed, unsupported, "
        "skipped, unexpected (the tables' op-coverage view per torch line)"
    )
    problems: Optional[int] = declare("the tasks that disagree with the expectations")
    float32: Optional[Float32Match] = declare(
        "`{ops, compared, matched, percent}`: the ops matching CPU in float32, forward and backward"
    )
    seconds: Optional[float] = declare("the sweep's wall time")
    workers: Optional[int] = declare("the worker processes it started (one more after each crash)")
    record: Optional[str] = declare("the sweep's own record, relative to the results folder")
    compiled: Optional[CompiledSample] = declare("the compiled sample's counts (`ops sweep --compile`), when it ran")
    tests: Optional[Dict[str, Any]] = declare(
        "PyTorch's own test files of a test pack (`ops tests`), when they ran: `{ok, files, new_failures, cpu_too, "
        "seconds}`, per file its outcomes and how it ended (completed, crashed in a test, timed out), the new "
        "failures' test ids"
    )
    keys: Optional[FrozenSet[str]] = declare("the keys its JSON had: it is written back with no others", json=False)

    @classmethod
    def _from_keys(cls, values: Dict[str, Any], keys: FrozenSet[str]) -> OpsSummary:
        return cls(**values, keys=keys)

    def _written(self, name: str) -> bool:
        if self.keys is not None:
            return name in self.keys
        if name in ("compiled", "tests"):  # absent: the sweep compiled nothing, no test files ran
            return getattr(self, name) is not None
        return True

    @classmethod
    def of(cls, summary: Mapping[str, object]) -> OpsSummary:
        """The summary :func:`adapter_matrix.device.opsweep.record.summary` made, checked key by key."""
        return from_json(cls, dict(summary), "the op sweep's summary")


@dataclass(frozen=True)
class ResultRecord:
    """What one cell run says: what ran, where, and how it went.

    The fields are the record's keys, in the order they are written. ``evidence``: the
    evidence form keeps the key (a key name: keeps it, written after that key). No logs,
    skip reasons or phase timings in the evidence: one small file per cell in git.
    """

    schema: int = declare(
        f"the record format: {RECORD_SCHEMA} (suites per group, the commit, the sources hash)",
        default=RECORD_SCHEMA,
        evidence=True,
    )
    cell: CellId = declare(
        "what ran: the plan row's id, e.g. `py3.11-torch2.13` (`-v0.2.0` appended in a plan of several releases); "
        "it speaks for every cell of its release that the row tests (cells that differ only in a dimension no runner "
        "provides)",
        default=CellId(""),
        required=True,
        evidence=True,
        check=_plain_name("cell"),
    )
    session: Optional[str] = declare("the nox session that ran it, `device(ID)`", evidence=True)
    release: Optional[str] = declare(
        "the adapter release it is evidence for: its folder under `evidence/`",
        evidence=True,
        check=_plain_name("release"),
    )
    outcome: str = declare("`passed` or `failed`", default="", required=True, evidence=True)
    error: Optional[str] = declare("why it failed: the step and its message, or null", evidence=True)
    timestamp: str = declare(
        "when it ran, ISO 8601 in UTC",
        default="",
        required=True,
        evidence=True,
        expected="an ISO date and time",
        check=_iso_time,
    )
    commit: Optional[str] = declare("the git commit it ran on (null outside git)", evidence=True)
    dirty: Optional[bool] = declare("whether the evidence sources differed from that commit", evidence=True)
    sources: Optional[SourcesSeen] = declare(
        "`{paths, hash}`: the evidence sources and the hash of their contents when it ran (the gate compares the hash)",
        evidence=True,
    )
    python: Optional[str] = declare("the Python patch that ran, e.g. `3.11.9`", evidence=True)
    python_minor: Optional[str] = declare("the cell's Python, e.g. `3.11`")
    torch_claimed: Optional[str] = declare("the torch the cell claims, e.g. `2.13.0`", evidence=True)
    torch: Optional[str] = declare("the torch that ran, with its local label, e.g. `2.13.0+cpu`", evidence=True)
    torch_variant: Optional[str] = declare("its variant: the local label, e.g. `cpu`", evidence=True)
    adapter: Optional[str] = declare("the adapter version that ran", evidence=True)
    binary: Optional[BinarySummary] = declare(
        "the binary check in the cell: `{ok, libraries, problems}`, the adapter's libraries read as the loader "
        "will beside the cell's torch, and each installed layer's (a plugin's op library) beside the adapter's "
        "(null where check ran none)",
        evidence=True,
    )
    companions: Optional[Dict[str, str]] = declare(
        "the companion packages the cell installed, name → version", factory=dict, evidence="suites"
    )
    companions_unavailable: Optional[Dict[str, str]] = declare(
        "the companions of `ci: companions:` its index had no build of for the cell, name → why",
        factory=dict,
        evidence="companions",
    )
    companion_refusals: Optional[List[CompanionRefusal]] = declare(
        "what `check` answered for a companion built for another torch: `{installed, exit_code, reason, fix}`",
        factory=list,
    )
    source_hash: Optional[str] = declare("the hash of the compiled C++ core", evidence=True)
    platform: Optional[str] = declare("the OS and machine, e.g. `Linux-x86_64`", evidence=True)
    build_seconds: Optional[float] = declare("the compile, now or when it was cached, in seconds", evidence=True)
    build_cached: Optional[bool] = declare("whether the compile came from the build cache", evidence=True)
    builds: Optional[List[BuildSeen]] = declare(
        "each project the cell built against its torch, in order: `{project, version, source_hash, build_seconds, "
        "compiled}` (an adapter, then a plugin built against it; null where none was)",
        evidence=True,
    )
    duration: Optional[float] = declare("the whole session, in seconds", evidence=True)
    tests: Optional[Dict[str, int]] = declare("passed, failed, skipped and errors in total", evidence=True)
    suites: Optional[Dict[str, Dict[str, int]]] = declare(
        "the same per suite group (`evidence: suites:` names the groups a record must have run)", evidence=True
    )
    skips: Optional[List[str]] = declare("why each skipped test was skipped, one line each", factory=list)
    ops: Optional[OpsSummary] = declare(
        "the op sweep's summary: mode (`sample` or `full`), tasks by outcome, ops by status per family, the float32 "
        "match, seconds (the evidence form drops `record`, the path of the sweep's own record)",
        evidence=True,
    )
    phases: Optional[Dict[str, float]] = declare(
        "the seconds of each phase of the session: install, check, build, tests, ...", factory=dict
    )
    phase_cpu: Optional[Dict[str, float]] = declare(
        "the CPU seconds of each phase (the session's and its commands'): what a phase costs however busy "
        "the machine was",
        factory=dict,
    )
    path: Optional[str] = declare("the file it was read from or written to", json=False)
    keys: Optional[FrozenSet[str]] = declare("the keys its file had: it is written back with no others", json=False)

    # -- what a cell knows, step by step -------------------------------------------------

    @classmethod
    def planned(cls, row: PlanRow) -> ResultRecord:
        """What the plan says of the run before it starts."""
        return cls(
            cell=row.id,  # the plan row, which tests every cell it stands for
            session=row.session,
            release=str(row.cell.release.version),
            python=str(row.cell.python),
            python_minor=str(row.cell.python),
            torch_claimed=str(row.cell.torch),
            platform=f"{platform.system()}-{platform.machine()}",
            build_cached=True,
        )

    def seen(self, check: Union[CheckDocument, Mapping[str, object], None]) -> ResultRecord:
        """What ``check --json`` saw in the cell: the Python, torch and adapter installed, and
        the companions beside them. A check that printed no answer says nothing."""
        try:
            answer = read_check(check).answer if check is not None else None
        except (DocumentError, ValueError):  # not a document, or not one answer: the cell failed there
            answer = None
        if answer is None:
            return self
        env = answer.environment
        return dataclasses.replace(
            self,
            python=env.python or self.python,
            torch=env.torch,
            torch_variant=env.torch_variant,
            adapter=env.adapter,
            binary=_binary_summary(answer),
            companions={c.name: c.installed for c in answer.companions if c.installed},
        )

    def built(self, build: Optional[Mapping[str, Any]]) -> ResultRecord:
        """What the build step says (:func:`adapter_matrix.device.build.build_requirements`)."""
        build = build or {}
        return dataclasses.replace(
            self,
            source_hash=build.get("source_hash"),
            build_seconds=build.get("build_seconds"),
            build_cached=not build.get("compiled", False),
        )

    def compiled(self, builds: Sequence[BuildSeen]) -> ResultRecord:
        """The projects the cell built against its torch (none: the record says null)."""
        return dataclasses.replace(self, builds=[BuildSeen(**b) for b in builds] or None)

    def tested(self, suites: Optional[Suites]) -> ResultRecord:
        """The test counts, in all and per suite group, and why tests were skipped."""
        if suites is None:
            return self
        counts = total(suites)
        return dataclasses.replace(
            self,
            tests=counts.as_dict(),
            suites={group: c.as_dict() for group, c in sorted(suites.items())},
            skips=list(counts.skips),
        )

    def on_sources(self, tree: Optional[TreeState]) -> ResultRecord:
        """The sources it ran on: ``{commit, dirty, sources}`` (:func:`adapter_matrix.ci.evidence.tree_state`)."""
        tree = tree or {}
        return dataclasses.replace(
            self, commit=tree.get("commit"), dirty=tree.get("dirty"), sources=tree.get("sources")
        )

    def finished(
        self,
        outcome: str,
        error: Optional[str],
        phases: Mapping[str, float],
        now: Optional[_dt.datetime] = None,
        phase_cpu: Optional[Mapping[str, float]] = None,
    ) -> ResultRecord:
        """How it ended, when, and how long each phase took (wall and, where measured, CPU seconds)."""
        now = now or _dt.datetime.now(_dt.timezone.utc)
        return dataclasses.replace(
            self,
            outcome=outcome,
            error=error,
            timestamp=now.isoformat(timespec="seconds"),
            duration=round(sum(phases.values()), 2),
            phases={k: round(v, 2) for k, v in phases.items()},
            phase_cpu={k: round(v, 2) for k, v in (phase_cpu or {}).items()},
        )

    # -- what it says ----------------------------------------------------------------------

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def ran_on(self) -> Optional[str]:
        """The hash of the evidence sources it ran on, if it recorded one."""
        found = (self.sources or {}).get("hash")
        return found if isinstance(found, str) else None

    @property
    def when(self) -> _dt.datetime:
        """When it finished (a record read back has a valid timestamp: :func:`read_records`)."""
        found = _when(self.timestamp)
        if found is None:
            raise EvidenceError(
                f"{self.path or self.cell}: timestamp {self.timestamp!r} is not an ISO date and time \u2014 "
                "re-run the session to rewrite it"
            )
        return found

    @property
    def date(self) -> _dt.date:
        """The day it finished, as its timestamp writes it."""
        return self.when.date()

    # -- JSON ------------------------------------------------------------------------------

    @classmethod
    def _from_keys(cls, values: Dict[str, Any], keys: FrozenSet[str]) -> ResultRecord:
        return cls(**values, keys=keys)

    def _written(self, name: str) -> bool:
        return self.keys is None or name in self.keys

    def to_json(self) -> Dict[str, object]:
        """The full record, as ``results/<cell>.json`` holds it."""
        return to_json(self)

    def evidence_json(self) -> Dict[str, object]:
        """The evidence form: the keys :func:`evidence_keys` names, in that order; the op
        sweep's summary loses its ``record`` (a path under ``results/``, not in git)."""
        full = to_json(self, keep=lambda key: bool(key.tag("evidence")))
        kept = {name: full[name] for name in evidence_keys() if name in full}
        ops = kept.get("ops")
        if isinstance(ops, dict):
            kept["ops"] = {k: v for k, v in ops.items() if k != "record"}
        return kept

    @classmethod
    def from_json(cls, data: object, path: str) -> ResultRecord:
        """A record read from ``path``: :class:`RecordError` unless every key has the type
        the declaration gives it."""
        try:
            record = from_json(cls, data, "the record")
        except DocumentError as exc:
            raise RecordError(
                f"{path}: not a result record ({exc}) \u2014 delete it, or re-run its cell to rewrite it"
            ) from None
        return dataclasses.replace(record, path=path)


@functools.lru_cache(maxsize=None)
def evidence_keys() -> Tuple[str, ...]:
    """The keys of the evidence form, in the order it writes them (from the ``evidence`` tags)."""
    keys = keys_of(ResultRecord)
    order = [key.name for key in keys if key.tag("evidence") is True]
    for key in keys:
        after = key.tag("evidence")
        if isinstance(after, str):  # written after another evidence key (in order of declaration)
            order.insert(order.index(after) + 1, key.name)
    return tuple(order)


def reference_markdown() -> str:
    """The reference of the record for docs/evidence.md: a table of its keys (JSON type,
    whether the evidence form keeps it, meaning) and the evidence form's key order."""
    kept = evidence_keys()
    lines = ["| key | JSON type | evidence | meaning |", "| --- | --- | --- | --- |"]
    for key in keys_of(ResultRecord):
        lines.append(f"| `{key.name}` | {json_type(key.hint)} | {'yes' if key.name in kept else 'no'} | {key.doc} |")
    order = ", ".join(f"`{name}`" for name in kept)
    ops = ["| key | JSON type | meaning |", "| --- | --- | --- |"]
    ops += [f"| `{key.name}` | {json_type(key.hint)} | {key.doc} |" for key in keys_of(OpsSummary)]
    return (
        "\n".join(lines)
        + f"\n\nThe evidence record writes its keys in this order: {order}.\n\n"
        + "The keys of `ops`, the op sweep's summary (each may be absent from an older record):\n\n"
        + "\n".join(ops)
        + "\n"
    )


# -- writing -------------------------------------------------------------------------------


def results_dir(root: str) -> str:
    return os.environ.get(RESULTS_ENV) or os.path.join(root, "results")


def write_record(folder: str, record: ResultRecord) -> ResultRecord:
    """Write ``record`` to ``folder/<cell>.json``; returns it with its ``path``."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{record.cell}.json")
    atomic_write(path, json.dumps(record.to_json(), indent=2) + "\n", follow=False)
    return dataclasses.replace(record, path=path)


# -- reading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordSet:
    """The records of some folders, sorted by cell, and the releases frozen in those folders
    (:func:`adapter_matrix.ci.frozen.read_frozen`): the gate and the verified view judge
    a frozen release's records against its hash."""

    records: Tuple[ResultRecord, ...] = ()
    frozen: Mapping[str, FrozenRelease] = dataclasses.field(default_factory=dict)
    skipped: Tuple[str, ...] = ()  # "PATH: not a result record (why): skipped", one per JSON file that is none

    def __iter__(self) -> Iterator[ResultRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


def _same_run(kept: ResultRecord, copy: ResultRecord) -> None:
    """Records are merged by what they say: two of one cell and release at the same time are
    copies of one run (a record and its evidence form, one cell in two downloaded artifacts),
    and must agree on what both hold; :class:`RecordError` naming both when they do not."""
    mine, theirs = kept.evidence_json(), copy.evidence_json()
    differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if differ:
        raise RecordError(
            f"{copy.path}: cell {copy.cell} of release {copy.release or '(none)'} at {copy.timestamp} is also in "
            f"{kept.path}, and the two disagree on {', '.join(differ)} — one run has one record: delete the wrong "
            "copy, or re-run the cell"
        )


def read_records(
    folders: Union[str, Sequence[str]], allow_empty: bool = False, now: Optional[_dt.datetime] = None
) -> RecordSet:
    """Every result record under ``folders``: the newest per (cell, adapter release), sorted by cell,
    with the releases frozen in those folders.

    ``RecordError`` for a missing folder, a file that is not JSON (or too large, or not
    UTF-8), a record that is not one (:meth:`ResultRecord.from_json`) or dated after ``now``
    (the reading run's clock, UTC) plus :data:`CLOCK_SKEW`, two copies of one run (same cell,
    release and time) that disagree, a broken ``release.json``, or (unless ``allow_empty``) no
    records at all. The other documents a cell writes there (op-sweep and ``ops tests``
    records) are skipped; any other JSON file (``[]``, another tool's) is skipped and named in
    :attr:`RecordSet.skipped`, for the command to warn of it.
    """
    folders = [folders] if isinstance(folders, str) else list(folders)
    for folder in folders:
        if not os.path.isdir(folder):
            raise RecordError(f"{folder}: no such folder" if not os.path.exists(folder) else f"{folder}: not a folder")
    now = now or _dt.datetime.now(_dt.timezone.utc)
    by_cell: Dict[Tuple[str, Optional[str]], ResultRecord] = {}
    skipped: List[str] = []
    try:
        for path, data in (
            entry for folder in folders for entry in json_files(folder, limits.RECORD_LIMIT, skip=(RELEASE_FILE,))
        ):
            if not isinstance(data, dict) or "cell" not in data or "outcome" not in data:
                if not _cell_document(data):  # a file dropped there by hand or by another tool: said, not read
                    skipped.append(f"{path}: not a result record ({_not_a_record(data)}): skipped")
                continue
            record = ResultRecord.from_json(data, path)
            if record.when > now + CLOCK_SKEW:
                raise RecordError(
                    f"{path}: dated {record.timestamp}, after this run ({now.isoformat(timespec='seconds')}) by more than the "
                    f"{CLOCK_SKEW.days}-day clock skew allowed \u2014 a record cannot come from the future: delete it, or fix "
                    "the clock of the machine that wrote it and re-run its cell"
                )
            key = (record.cell, record.release)  # one release's evidence never hides another's
            old = by_cell.get(key)
            if old is not None and record.timestamp == old.timestamp:
                _same_run(old, record)  # two copies of one run (the full record and its evidence form)
            elif old is None or record.timestamp > old.timestamp:
                by_cell[key] = record
        frozen = read_frozen(folders)
    except JSONFileError as exc:
        raise RecordError(f"{exc.path}: not a result record ({exc.reason})") from None
    except EvidenceError as exc:
        raise RecordError(str(exc)) from None
    if not by_cell and not allow_empty:
        raise RecordError(f"{', '.join(folders)}: no result records")
    ordered = sorted(by_cell, key=lambda k: (by_cell[k].cell.sort_key, str(k[1])))
    return RecordSet(tuple(by_cell[k] for k in ordered), frozen, tuple(skipped))


# The other documents a cell writes under results/ (results/ops/, results/op-tests/), by the key
# that names their kind: device.opsweep.record and device.optests.packrecord write them, and a
# spoke does not import another, so their kinds are named here.
_CELL_DOCUMENTS = (("record", "op-sweep"), ("kind", "op-tests"))


def _cell_document(data: object) -> bool:
    return isinstance(data, dict) and any(data.get(key) == kind for key, kind in _CELL_DOCUMENTS)


def _not_a_record(data: object) -> str:
    """Why a JSON document is not a result record, in a few words."""
    if not isinstance(data, dict):
        return f"{what_is(data)}, not a mapping with a cell and an outcome"
    missing = " and ".join(f'"{key}"' for key in ("cell", "outcome") if key not in data)
    return f"{'an empty mapping' if not data else 'a mapping'} without {missing}"
