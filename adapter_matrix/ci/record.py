"""The result record: the JSON file a ``device(...)`` session writes for its cell, the one
module that knows its format.

It writes the full record into ``results/`` (:func:`write_record`), gives its compact
evidence form (:func:`evidence_of`, the :data:`EVIDENCE_KEYS` that
:mod:`adapter_matrix.ci.evidence` commits), and reads either back (:func:`read_records`,
each vetted by :func:`check_record`). Records are read recursively, so a folder of
downloaded CI artifacts works as is, and several folders merge: the newest record of
each cell wins.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import AdapterMatrixError
from ..files import JSONFileError, atomic_write, json_files
from .frozen import read_frozen
from .names import RELEASE_FILE, EvidenceError, check_name
from .plan import PlanRow
from .suites import Suites, total

__all__ = [
    "RECORD_SCHEMA",
    "RESULTS_ENV",
    "EVIDENCE_KEYS",
    "CLOCK_SKEW",
    "RECORD_LIMIT",
    "RecordError",
    "Records",
    "results_dir",
    "write_record",
    "evidence_of",
    "check_record",
    "read_records",
]


RESULTS_ENV = "ADAPTER_MATRIX_RESULTS"


RECORD_SCHEMA = 2  # 2: suites per group, the commit and the hash of the evidence sources


CLOCK_SKEW = _dt.timedelta(days=1)  # a record may be dated this far after the run that reads it (clocks differ)


RECORD_LIMIT = 16 * 2**20  # bytes of one JSON file under a records folder: a result record is a few KB


# The keys of an evidence record, in the order they are written: what ran, where, and how it went.
# No logs, skip reasons or phase timings (those stay in results/): one small file per cell.
# `companions` are the companion packages the cell installed, `companions_unavailable` those of
# `ci: companions:` its index had no build of (name -> why); `ops` is the op sweep's summary
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
    "companions_unavailable",
    "ops",
)


# -- writing -----------------------------------------------------------------------------


def results_dir(root: str) -> str:
    return os.environ.get(RESULTS_ENV) or os.path.join(root, "results")


def write_record(
    folder: str,
    row: PlanRow,
    check: Optional[Dict[str, Any]],
    suites: Optional[Suites],
    build: Optional[Dict[str, Any]],
    phases: Dict[str, float],
    outcome: str,
    error: Optional[str] = None,
    tree: Optional[Dict[str, Any]] = None,
    ops: Optional[Dict[str, Any]] = None,
    refusals: Sequence[Dict[str, Any]] = (),
    unavailable: Optional[Mapping[str, str]] = None,
    phase_cpu: Optional[Mapping[str, float]] = None,
) -> Dict[str, Any]:
    """Write the cell's result record (JSON) to ``folder/<cell>.json`` and return it.

    ``tree`` is what the sources were: ``{commit, dirty, sources: {hash, paths}}``
    (:func:`adapter_matrix.ci.evidence.tree_state`). ``ops`` is the op sweep's summary
    (:func:`adapter_matrix.device.opsweep.record.summary`), when it ran. ``refusals`` are what :func:`adapter_matrix.ci.verify.verify_refusal` kept for each companion; ``unavailable`` names each companion of the cell its index had
    no build of, with why (``companions_unavailable``). ``phase_cpu`` is the CPU seconds of each of ``phases``
    (the session's and its commands'), what a phase costs however busy the machine was. The key order is fixed: :func:`evidence_of` keeps a subset of
    it, in that order, for the committed evidence folder.
    """
    env = check["checks"][0]["environment"] if check else {}
    counts = total(suites) if suites is not None else None
    tree = tree or {}
    companions = {
        c["name"]: c["installed"] for c in (check["checks"][0].get("companions", ()) if check else ()) if c["installed"]
    }
    record = {
        "schema": RECORD_SCHEMA,
        "cell": row.id,  # what ran: the plan row, which tests every cell it stands for
        "session": row.session,
        "release": str(row.cell.release.version),
        "outcome": outcome,
        "error": error,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": tree.get("commit"),
        "dirty": tree.get("dirty"),
        "sources": tree.get("sources"),
        "python": env.get("python") or str(row.cell.python),
        "python_minor": str(row.cell.python),
        "torch_claimed": str(row.cell.torch),
        "torch": env.get("torch"),
        "torch_variant": env.get("torch_variant"),
        "adapter": env.get("adapter"),
        "companions": companions,
        "companions_unavailable": dict(unavailable or {}),
        "companion_refusals": list(refusals),
        "source_hash": (build or {}).get("source_hash"),
        "platform": f"{platform.system()}-{platform.machine()}",
        "build_seconds": (build or {}).get("build_seconds"),  # the compile, now or when it was cached
        "build_cached": not (build or {}).get("compiled", False),
        "duration": round(sum(phases.values()), 2),
        "tests": None if counts is None else counts.as_dict(),
        "suites": None if suites is None else {group: c.as_dict() for group, c in sorted(suites.items())},
        "skips": list(counts.skips) if counts else [],
        "ops": ops,  # the OpInfo sweep: mode, task counts by outcome, float32 match rate, its record's path
        "phases": {k: round(v, 2) for k, v in phases.items()},
        "phase_cpu": {k: round(v, 2) for k, v in (phase_cpu or {}).items()},
    }
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{row.id}.json")
    atomic_write(path, json.dumps(record, indent=2) + "\n", follow=False)
    record["_path"] = path
    return record


def evidence_of(record: Mapping[str, Any]) -> Dict[str, Any]:
    """The evidence form of a result record: its :data:`EVIDENCE_KEYS`, in that order.

    The op sweep's summary loses its ``record`` (a path under ``results/``, not in git)."""
    kept = {key: record[key] for key in EVIDENCE_KEYS if key in record}
    if isinstance(kept.get("ops"), Mapping):
        kept["ops"] = {k: v for k, v in kept["ops"].items() if k != "record"}
    return kept


# -- reading -----------------------------------------------------------------------------


class RecordError(AdapterMatrixError, ValueError):
    """A folder without records, or a record that is not one."""


class Records(List[Dict[str, Any]]):
    """The records of some folders, and (``frozen``) the releases frozen in them
    (:func:`adapter_matrix.ci.release.read_frozen`): the gate and the verified view judge
    a frozen release's records against its hash."""

    frozen: Mapping[str, Any]

    def __init__(self, records: Sequence[Dict[str, Any]] = (), frozen: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(records)
        self.frozen = dict(frozen or {})


# The keys a record is read by, and the JSON types each may hold (None: may be null).
_STRINGS = (
    "session",
    "error",
    "commit",
    "python",
    "torch_claimed",
    "torch",
    "torch_variant",
    "adapter",
    "source_hash",
    "platform",
)


_MAPPINGS = ("sources", "tests", "suites", "companions", "companions_unavailable", "ops")


_NUMBERS = ("build_seconds", "duration")


def _type(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), f"a {type(value).__name__}"
    )


def _counts_ok(counts: Any) -> bool:
    return isinstance(counts, dict) and all(isinstance(n, int) and not isinstance(n, bool) for n in counts.values())


def check_record(path: str, record: Dict[str, Any], now: Optional[_dt.datetime] = None) -> None:
    """:class:`RecordError` naming ``path`` unless ``record`` is a result record the tool can
    judge: a plain cell and release name (:func:`adapter_matrix.ci.evidence.check_name`),
    each key of the type the writer gives it, an ISO timestamp no later than ``now`` (the
    reading run's clock, UTC) plus :data:`CLOCK_SKEW`."""

    def bad(why: str) -> RecordError:
        return RecordError(f"{path}: not a result record ({why}) — delete it, or re-run its cell to rewrite it")

    try:
        check_name(record.get("cell"), "cell")
        if record.get("release") is not None:
            check_name(record["release"], "release")
    except EvidenceError as exc:
        raise bad(str(exc)) from None
    if not isinstance(record.get("outcome"), str):
        raise bad(f"outcome is {_type(record.get('outcome'))}, expected a string")
    for key in _STRINGS:
        if record.get(key) is not None and not isinstance(record[key], str):
            raise bad(f"{key} is {_type(record[key])}, expected a string or null")
    for key in _MAPPINGS:
        if record.get(key) is not None and not isinstance(record[key], dict):
            raise bad(f"{key} is {_type(record[key])}, expected a mapping or null")
    for key in _NUMBERS:
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise bad(f"{key} is {_type(value)}, expected a number or null")
    for key in ("dirty", "build_cached"):
        if record.get(key) is not None and not isinstance(record[key], bool):
            raise bad(f"{key} is {_type(record[key])}, expected true, false or null")
    if record.get("tests") is not None and not _counts_ok(record["tests"]):
        raise bad("tests holds something other than whole numbers")
    suites = record.get("suites") or {}
    if not all(isinstance(group, str) and _counts_ok(counts) for group, counts in suites.items()):
        raise bad("suites is not a mapping of suite group to whole-number counts")
    if not all(isinstance(v, str) for v in (record.get("companions") or {}).values()):
        raise bad("companions is not a mapping of name to version")
    if not all(isinstance(v, str) for v in (record.get("companions_unavailable") or {}).values()):
        raise bad("companions_unavailable is not a mapping of name to reason")
    sources = record.get("sources") or {}
    if sources.get("hash") is not None and not isinstance(sources["hash"], str):
        raise bad(f"sources.hash is {_type(sources['hash'])}, expected a string")
    stamp = record.get("timestamp")
    if not isinstance(stamp, str):
        raise bad(f"timestamp is {_type(stamp)}, expected an ISO date and time")
    try:
        when = _dt.datetime.fromisoformat(stamp[:-1] + "+00:00" if stamp.endswith("Z") else stamp)
    except ValueError:
        raise bad(f"timestamp {stamp[:40]!r} is not an ISO date and time") from None
    when = when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)
    now = now or _dt.datetime.now(_dt.timezone.utc)
    if when > now + CLOCK_SKEW:
        raise RecordError(
            f"{path}: dated {stamp}, after this run ({now.isoformat(timespec='seconds')}) by more than the "
            f"{CLOCK_SKEW.days}-day clock skew allowed — a record cannot come from the future: delete it, or fix the clock "
            "of the machine that wrote it and re-run its cell"
        )


def read_records(
    folders: Union[str, Sequence[str]], allow_empty: bool = False, now: Optional[_dt.datetime] = None
) -> Records:
    """Every result record under ``folders``: the newest per (cell, adapter release), sorted by cell,
    with the releases frozen in those folders (:class:`Records`).

    ``RecordError`` for a missing folder, a file that is not JSON (or too large, or not
    UTF-8), a record that fails :func:`check_record`, a broken ``release.json``, or (unless
    ``allow_empty``) no records at all. Other JSON documents (op-sweep records) are skipped.
    """
    folders = [folders] if isinstance(folders, str) else list(folders)
    for folder in folders:
        if not os.path.isdir(folder):
            raise RecordError(f"{folder}: no such folder" if not os.path.exists(folder) else f"{folder}: not a folder")
    by_cell: Dict[Any, Dict[str, Any]] = {}
    try:
        for path, record in (
            entry for folder in folders for entry in json_files(folder, RECORD_LIMIT, skip=(RELEASE_FILE,))
        ):
            if not isinstance(record, dict) or "cell" not in record or "outcome" not in record:
                continue  # other JSON files (op-sweep records, junit conversions) are not ours
            check_record(path, record, now)
            record["_path"] = path
            key = (record["cell"], record.get("release"))  # one release's evidence never hides another's
            old = by_cell.get(key)
            if old is None or record["timestamp"] > old["timestamp"]:
                by_cell[key] = record
        frozen = read_frozen(folders)
    except JSONFileError as exc:
        raise RecordError(f"{exc.path}: not a result record ({exc.reason})") from None
    except EvidenceError as exc:
        raise RecordError(str(exc)) from None
    if not by_cell and not allow_empty:
        raise RecordError(f"{', '.join(folders)}: no result records")
    return Records([by_cell[k] for k in sorted(by_cell, key=lambda k: (_cell_key(k[0]), str(k[1])))], frozen)


def _cell_key(cell: str) -> tuple:
    """Sort py3.9-torch2.10 after py3.13-torch2.9: by torch line, then Python."""
    try:
        py, torch = cell.split("-torch", 1)
        t = tuple(int(x) for x in torch.split("-")[0].split("."))
        p = tuple(int(x) for x in py[2:].rstrip("t").split("."))
        return (t, p, cell)
    except ValueError:
        return ((999,), (999,), cell)
