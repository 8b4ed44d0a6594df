"""Result records of test sessions: read, aggregate, and tell whether everything passed.

A record is the JSON file a ``device(...)`` session writes (``adapter_matrix.ci.cells``):
the full one in ``results/``, its compact evidence copy in ``evidence/`` (both read the
same way). Records are read recursively, so a folder of downloaded CI artifacts works as
is, and several folders merge: the newest record of each cell wins.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ..files import JSONFileError, json_files
from .frozen import read_frozen
from .names import RELEASE_FILE, EvidenceError, check_name

__all__ = ["RecordError", "Records", "CLOCK_SKEW", "RECORD_LIMIT", "Summary", "check_record", "read_records", "summarize", "render_markdown"]

CLOCK_SKEW = _dt.timedelta(days=1)  # a record may be dated this far after the run that reads it (clocks differ)
RECORD_LIMIT = 16 * 2**20  # bytes of one JSON file under a records folder: a result record is a few KB


class RecordError(ValueError):
    """A folder without records, or a record that is not one."""


class Records(List[Dict[str, Any]]):
    """The records of some folders, and (``frozen``) the releases frozen in them
    (:func:`adapter_matrix.ci.release.read_frozen`): the gate and the verified view judge
    a frozen release's records against its hash."""

    frozen: Mapping[str, Any]

    def __init__(self, records: Sequence[Dict[str, Any]] = (), frozen: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(records)
        self.frozen = dict(frozen or {})


@dataclass(frozen=True)
class Summary:
    records: List[Dict[str, Any]]
    missing: List[str]  # expected cells without a record

    @property
    def failed(self) -> List[Dict[str, Any]]:
        return [r for r in self.records if r.get("outcome") != "passed"]

    @property
    def ok(self) -> bool:
        return not self.failed and not self.missing


# The keys a record is read by, and the JSON types each may hold (None: may be null).
_STRINGS = ("session", "error", "commit", "python", "torch_claimed", "torch", "torch_variant", "adapter", "source_hash", "platform")
_MAPPINGS = ("sources", "tests", "suites", "companions", "ops")
_NUMBERS = ("build_seconds", "duration")


def _type(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), f"a {type(value).__name__}")


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
        for path, record in (entry for folder in folders for entry in json_files(folder, RECORD_LIMIT, skip=(RELEASE_FILE,))):
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


def summarize(records: List[Dict[str, Any]], expected: Optional[Sequence[str]] = None) -> Summary:
    seen = {r["cell"] for r in records}
    missing = [cell for cell in (expected or ()) if cell not in seen]
    return Summary(records, missing)


def _tests(record: Dict[str, Any]) -> str:
    t = record.get("tests") or {}
    return f"{t.get('passed', 0)}/{t.get('failed', 0)}/{t.get('skipped', 0)}/{t.get('errors', 0)}" if t else "-"


def _workloads(record: Dict[str, Any]) -> str:
    """The workloads group's passed/failed/skipped, "-" when the cell did not report the group."""
    w = (record.get("suites") or {}).get("workloads")
    return f"{w.get('passed', 0)}/{w.get('failed', 0)}/{w.get('skipped', 0)}" if w else "-"


def _op_sweep(record: Dict[str, Any]) -> str:
    """How much of the op sweep ran: ``full`` with the float32 match rate, ``sample``, or "-"."""
    ops = record.get("ops")
    if not isinstance(ops, dict):  # a record from before the summary was kept: only the suite counts
        return "ran" if (record.get("suites") or {}).get("ops") else "-"
    f32 = ops.get("float32") if isinstance(ops.get("float32"), dict) else {}
    if ops.get("mode") == "full" and f32.get("compared"):
        return f"full, f32 {f32.get('matched', 0)}/{f32['compared']}"
    return str(ops.get("mode") or "-")


def rows(summary: Summary) -> List[List[str]]:
    """Table rows: cell, Python, torch, outcome, tests p/f/s/e, workloads p/f/s, op sweep,
    build s, duration s, when, commit."""
    out = []
    for r in summary.records:
        build = f"{r.get('build_seconds') or 0:.0f}" + (" (cached)" if r.get("build_cached") else "")
        out.append(
            [
                r["cell"],
                str(r.get("python", "")),
                str(r.get("torch") or r.get("torch_claimed", "")),
                r["outcome"],
                _tests(r),
                _workloads(r),
                _op_sweep(r),
                build,
                f"{r.get('duration', 0):.0f}",
                str(r.get("timestamp", ""))[:16].replace("T", " "),
                str(r.get("commit") or "")[:7] + ("+" if r.get("dirty") else ""),
            ]
        )
    for cell in summary.missing:
        out.append([cell, "", "", "missing", "-", "-", "-", "-", "-", "", ""])
    return out


HEADERS = ["cell", "Python", "torch", "outcome", "tests p/f/s/e", "workloads p/f/s", "op sweep", "build s", "duration s", "when (UTC)", "commit"]


def render_markdown(summary: Summary) -> str:
    body = [HEADERS] + rows(summary)
    widths = [max(len(r[i]) for r in body) for i in range(len(HEADERS))]
    line = lambda cols: "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |"  # noqa: E731
    return "\n".join([line(body[0]), "| " + " | ".join("-" * w for w in widths) + " |"] + [line(r) for r in body[1:]]) + "\n"
