"""The sweep record: one JSON document per sweep, for CI artifacts, cell records and tables.

Everything a reader needs is decided here, once: each op's status (from its tasks and
their expectations), the counts per family and per dtype, the float32 match rate, and
the list of failures with their reasons. The ``ops`` table view only formats it.

An op's status is the worst of its tasks': ``unexpected`` (a task disagrees with the
expectations), ``failed`` (a known failure, crash or hang), ``unsupported`` (rejected by
design), ``passed``, else ``skipped`` (nothing could be compared).

The compiled sample (``ops sweep --compile``) is kept apart, under ``compiled``: its
tasks (kind ``compiled``, one per op) never enter the eager counts, so the eager numbers
of a sweep do not depend on whether it also compiled. A record without ``compiled`` (from
before it existed, or a sweep without ``--compile``) reads as "not run".
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections import OrderedDict
from typing import Dict, Iterable, List, Mapping, Optional, Tuple, TypedDict, TypeVar, cast

from packaging.version import InvalidVersion, Version

from ...errors import AdapterMatrixError
from ...files import JSONFileError, json_files
from ...matrix.model import minor_line
from .expected import Expectations, TaskVerdict
from .runner import OUTCOMES, SelectionJson, Sweep, TaskJson

__all__ = [
    "RECORD_SCHEMA",
    "RECORD_KIND",
    "OP_STATES",
    "SweepRecordError",
    "Float32Rate",
    "SweepProblem",
    "CompiledFailure",
    "SweepFailure",
    "TaskEvidence",
    "CompiledPart",
    "SweepRecord",
    "build_record",
    "compiled_record",
    "summary",
    "is_sweep_record",
    "read_record",
    "read_records",
    "per_line",
]

RECORD_SCHEMA = 1
RECORD_KIND = "op-sweep"
OP_STATES = ("passed", "failed", "unsupported", "skipped", "unexpected")
_SEVERITY = {"skipped": 0, "passed": 1, "unsupported": 2, "failed": 3, "unexpected": 4}
BROKEN = ("failed", "crashed", "timeout")


class Float32Rate(TypedDict):
    """The acceptance measure (:func:`_float32`): ops CPU runs in float32, those compared,
    those matching CPU; ``percent`` of the compared, None when none was."""

    ops: int
    compared: int
    matched: int
    percent: Optional[float]


class SweepProblem(TypedDict):
    """A task that disagrees with the expectations."""

    task: str  # op/dtype/kind
    outcome: str
    problem: Optional[str]
    error: Optional[str]


class CompiledFailure(TypedDict):
    """An op that did not pass, with what the expectations say of it (the compiled sample's:
    one task per op)."""

    op: str
    family: str
    state: str  # unexpected | failed | unsupported
    outcome: str
    reason: Optional[str]
    issue: Optional[str]
    problem: Optional[str]
    error: Optional[str]


class SweepFailure(CompiledFailure):
    """An op's tasks that did not pass for one reason (written with ``tasks`` after ``outcome``)."""

    tasks: List[str]  # dtype/kind


class TaskEvidence(TaskJson, total=False):
    """A task that did not simply pass: its JSON, what was expected of it, the disagreement."""

    expected: Dict[str, Optional[str]]
    problem: str


class CompiledPart(TypedDict):
    """The compiled sample's part of a record (:func:`compiled_record`)."""

    backend: str
    samples_per_op: int
    skipped: Optional[str]  # why nothing ran (the device declares the compiler absent)
    ok: bool
    ops: int
    outcomes: Dict[str, int]
    float32: Float32Rate
    seconds: float
    workers: int
    problems: List[SweepProblem]
    failures: List[CompiledFailure]
    tasks: List[TaskEvidence]


class _SweepRecordKeys(TypedDict):
    schema: int
    record: str
    torch: str
    torch_line: str
    python: str
    device: str
    mode: str  # full | sample | custom
    selection: SelectionJson
    expectations: str
    seconds: float
    workers: int
    timestamp: str
    ok: bool
    problems: List[SweepProblem]
    ops: int
    tasks_run: int
    float32: Float32Rate
    by_dtype: Dict[str, Dict[str, Dict[str, int]]]  # dtype -> kind -> outcome -> tasks
    families: Dict[str, Dict[str, int]]  # family -> op state -> ops
    failures: List[SweepFailure]
    tasks: List[TaskEvidence]


class SweepRecord(_SweepRecordKeys, total=False):
    """A sweep record (:func:`build_record`), its keys in the order written; ``compiled`` last,
    when the compiled sample ran."""

    compiled: CompiledPart


def _task_state(verdict: TaskVerdict) -> str:
    task = verdict.task
    if verdict.problem is not None:
        return "unexpected"
    if task.outcome in BROKEN:
        return "unsupported" if verdict.expected is not None and verdict.expected.outcome == "unsupported" else "failed"
    return task.outcome  # passed or skipped


def torch_line(version: str) -> str:
    try:
        v = Version(version)
    except InvalidVersion:
        return version
    return str(minor_line(v))


def build_record(
    sweep: Sweep,
    verdicts: List[TaskVerdict],
    expectations: Expectations,
    mode: str,
    compiled: Optional[CompiledPart] = None,
) -> SweepRecord:
    """The JSON document of a judged sweep (``mode``: full, sample or custom), with the
    compiled sample's part (:func:`compiled_record`) when it ran. ``ok``: both parts
    agree with the expectations."""
    by_op: OrderedDict[str, List[TaskVerdict]] = OrderedDict()
    for verdict in verdicts:
        by_op.setdefault(verdict.task.op, []).append(verdict)

    by_dtype: Dict[str, Dict[str, Dict[str, int]]] = {}
    for verdict in verdicts:
        t = verdict.task
        counts = by_dtype.setdefault(t.dtype, {}).setdefault(t.kind, dict.fromkeys(OUTCOMES, 0))
        counts[t.outcome] += 1

    families: Dict[str, Dict[str, int]] = {}
    failures: List[SweepFailure] = []
    f32: Float32Rate = {"ops": 0, "compared": 0, "matched": 0, "percent": None}  # percent: set below
    for op, op_verdicts in by_op.items():
        states = [_task_state(v) for v in op_verdicts]
        state = max(states, key=_SEVERITY.__getitem__)
        family = op_verdicts[0].task.family
        families.setdefault(family, dict.fromkeys(OP_STATES, 0))[state] += 1
        _float32(op_verdicts, f32)
        failures.extend(_op_failures(op, family, op_verdicts, states))
    f32["percent"] = round(100.0 * f32["matched"] / f32["compared"], 2) if f32["compared"] else None

    problems = _problems(verdicts)
    record: SweepRecord = {
        "schema": RECORD_SCHEMA,
        "record": RECORD_KIND,
        "torch": sweep.torch,
        "torch_line": torch_line(sweep.torch),
        "python": sweep.python,
        "device": sweep.device,
        "mode": mode,
        "selection": sweep.selection,
        "expectations": expectations.path,
        "seconds": sweep.seconds,
        "workers": sweep.workers,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "ok": not problems and (compiled is None or compiled["ok"]),
        "problems": problems,
        "ops": len(by_op),
        "tasks_run": len(verdicts),
        "float32": f32,
        "by_dtype": by_dtype,
        "families": {f: families[f] for f in sorted(families)},
        "failures": failures,
        "tasks": _task_evidence(verdicts),
    }
    if compiled is not None:
        record["compiled"] = compiled
    return record


def _op_failures(op: str, family: str, op_verdicts: List[TaskVerdict], states: List[str]) -> List[SweepFailure]:
    """An op's tasks that did not pass, grouped by their state, problem, expectation and outcome."""
    # (state, problem, the expectation's mark, outcome) -> its tasks
    groups: OrderedDict[Tuple[str, Optional[str], object, str], SweepFailure] = OrderedDict()
    for verdict, task_state in zip(op_verdicts, states):
        if task_state not in ("unexpected", "failed", "unsupported"):
            continue
        t, entry = verdict.task, verdict.expected
        key = (task_state, verdict.problem, entry.mark if entry else None, t.outcome)
        group = groups.setdefault(
            key,
            {
                "op": op,
                "family": family,
                "state": task_state,
                "outcome": t.outcome,
                "tasks": [],
                "reason": entry.reason if entry else None,
                "issue": entry.issue if entry else None,
                "problem": verdict.problem,
                "error": t.error,
            },
        )
        group["tasks"].append(f"{t.dtype}/{t.kind}")
    return list(groups.values())


def _problems(verdicts: List[TaskVerdict]) -> List[SweepProblem]:
    return [
        {"task": v.task.key, "outcome": v.task.outcome, "problem": v.problem, "error": v.task.error}
        for v in verdicts
        if v.problem is not None
    ]


def _task_evidence(verdicts: List[TaskVerdict]) -> List[TaskEvidence]:
    """Every task that did not simply pass, with its error: the evidence behind the counts."""
    return [_evidence(v) for v in verdicts if v.task.outcome != "passed" or v.problem or v.task.note]


def _evidence(verdict: TaskVerdict) -> TaskEvidence:
    out = cast(TaskEvidence, verdict.task.to_json())  # a new dict, the task's keys first
    if verdict.expected:
        out["expected"] = verdict.expected.to_json()
    if verdict.problem:
        out["problem"] = verdict.problem
    return out


def compiled_record(sweep: Sweep, verdicts: List[TaskVerdict], backend: str, samples: int) -> CompiledPart:
    """The compiled sample's part of a record: per op (one task each) passed, failed,
    crashed, timeout or skipped; the float32 match rate (ops that match eager CPU of
    those that could be compared); the failures with their expectations. ``skipped``
    holds the reason when the device declares the compiler absent (then nothing ran)."""
    outcomes = dict.fromkeys(OUTCOMES, 0)
    failures: List[CompiledFailure] = []
    for verdict in verdicts:
        t, entry = verdict.task, verdict.expected
        outcomes[t.outcome] += 1
        state = _task_state(verdict)
        if state in ("unexpected", "failed", "unsupported"):
            failures.append(
                {
                    "op": t.op,
                    "family": t.family,
                    "state": state,
                    "outcome": t.outcome,
                    "reason": entry.reason if entry else None,
                    "issue": entry.issue if entry else None,
                    "problem": verdict.problem,
                    "error": t.error,
                }
            )
    compared = len(verdicts) - outcomes["skipped"]
    problems = _problems(verdicts)
    return {
        "backend": backend,
        "samples_per_op": samples,
        "skipped": sweep.absent,
        "ok": not problems,
        "ops": len(verdicts),
        "outcomes": outcomes,
        "float32": {
            "ops": len(verdicts),
            "compared": compared,
            "matched": outcomes["passed"],
            "percent": round(100.0 * outcomes["passed"] / compared, 2) if compared else None,
        },
        "seconds": sweep.seconds,
        "workers": sweep.workers,
        "problems": problems,
        "failures": failures,
        "tasks": _task_evidence(verdicts),
    }


def _float32(op_verdicts: List[TaskVerdict], f32: Float32Rate) -> None:
    """The acceptance measure: of the ops CPU supports in float32 (and that CPU can run,
    i.e. not skipped), how many match CPU forward and, where differentiable, backward."""
    tasks = {v.task.kind: v.task for v in op_verdicts if v.task.dtype == "float32"}
    forward = tasks.get("forward")
    if forward is None:
        return
    f32["ops"] += 1
    if forward.outcome == "skipped":
        return
    f32["compared"] += 1
    backward = tasks.get("backward")
    if forward.outcome == "passed" and (backward is None or backward.outcome in ("passed", "skipped")):
        f32["matched"] += 1


def summary(record: SweepRecord, path: Optional[str] = None) -> Dict[str, object]:
    """What a nox cell's result record carries of a sweep: counts (per outcome, and per family
    and op status), not the op lists; the record declares its keys (``ci.record.OpsSummary``)."""
    totals = dict.fromkeys(OUTCOMES, 0)
    for kinds in record["by_dtype"].values():
        for counts in kinds.values():
            for outcome, n in counts.items():
                totals[outcome] = totals.get(outcome, 0) + n
    out: Dict[str, object] = {
        "mode": record["mode"],
        "ok": record["ok"],
        "ops": record["ops"],
        "tasks": totals,
        "families": record["families"],  # ops by status per family: the op-coverage view per torch line
        "problems": len(record["problems"]),
        "float32": record["float32"],
        "seconds": record["seconds"],
        "workers": record["workers"],
        "record": path,
    }
    compiled = record.get("compiled")
    if isinstance(compiled, dict):  # absent from records before --compile, and without it
        out["compiled"] = {
            "ok": compiled["ok"],
            "skipped": compiled.get("skipped"),
            "ops": compiled["ops"],
            "outcomes": compiled["outcomes"],
            "problems": len(compiled["problems"]),
            "float32": compiled["float32"],
            "seconds": compiled["seconds"],
        }
    return out


class SweepRecordError(AdapterMatrixError, ValueError):
    """A folder without sweep records, or a file that claims to be one and is not."""


def is_sweep_record(data: object) -> bool:
    return isinstance(data, dict) and data.get("record") == RECORD_KIND and data.get("schema") == RECORD_SCHEMA


def read_record(path: str) -> SweepRecord:
    """A sweep record from disk; ``ValueError`` when the file is not one."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not is_sweep_record(data):
        raise ValueError(f"{path}: not an op-sweep record (schema {RECORD_SCHEMA})")
    record: SweepRecord = data  # one this module wrote (its kind and schema say so)
    return record


def _line_key(line: str) -> Tuple[int, ...]:
    try:
        return tuple(int(x) for x in line.split("."))
    except ValueError:
        return (0,)


R = TypeVar("R", bound=Mapping[str, object])  # a sweep record, or a cell's record of one (tables/views/ops.py)


def per_line(sweeps: Iterable[R]) -> List[R]:
    """Of sweeps (each with ``torch_line``, ``mode``, ``timestamp``), per torch line the newest
    full sweep, else the newest of any mode; newest line first. The op-coverage views pick
    their rows by this rule, from sweep records and from the cells' result records alike."""
    best: Dict[str, R] = {}
    for data in sweeps:
        line = str(data["torch_line"])  # each a string (torch_line, an ISO timestamp): as written
        rank = (data.get("mode") == "full", str(data.get("timestamp", "")))
        old = best.get(line)
        if old is None or rank > (old.get("mode") == "full", str(old.get("timestamp", ""))):
            best[line] = data
    return [best[line] for line in sorted(best, key=_line_key, reverse=True)]


def read_records(folder: str) -> List[Dict[str, object]]:
    """The sweep records under ``folder`` (recursively; other JSON files are ignored), one per
    torch line (:func:`per_line`)."""
    if not os.path.isdir(folder):
        raise SweepRecordError(f"{folder}: no such folder")
    try:
        found = per_line(data for _path, data in json_files(folder) if is_sweep_record(data))
    except JSONFileError as exc:
        raise SweepRecordError(f"{exc.path}: unreadable ({exc.reason})") from None
    if not found:
        raise SweepRecordError(f"{folder}: no op-sweep records")
    return found
