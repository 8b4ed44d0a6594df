"""Running the OpInfo sweep: worker processes, a new one after each crash.

The parent never imports torch. It starts :mod:`adapter_matrix.device.opsweep.worker`,
follows its log (the worker announces each task before running it), and when the worker
dies or a task outlives the timeout, records that task as ``crashed`` or ``timeout``
with the signal and the last lines of the worker's stderr (faulthandler names the
Python frame), then starts a new worker at the next task. One interpreter start per
crash, not per op: a sweep of ~2,800 tasks starts one worker when nothing crashes.

Several workers may run side by side (:func:`run_sweeps`' ``jobs``): the eager workers
and the compiled sample's, and a worker's plan dealt across shards (the compiled sample,
where compiling one op is seconds of one core). Each shard is its own line of processes,
restarted after its own crashes; the sweep's result is the same as from one process,
since no task's result depends on what ran before it in its process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, TypedDict

from ...errors import AdapterMatrixError
from .process import LogLine, PlannedTask, TaskResult, WorkerPlan

__all__ = [
    "OUTCOMES",
    "WORKERS",
    "COMPILED_WORKERS",
    "SweepError",
    "Task",
    "TaskJson",
    "SelectionJson",
    "Sweep",
    "Selection",
    "run_sweep",
    "run_sweeps",
    "signal_name",
]

# passed: every sample matched CPU; failed: a sample did not (or raised on the device
# only); crashed: the worker died in the task; timeout: the task outlived the limit;
# skipped: nothing to compare (no samples, or CPU raises for every one).
OUTCOMES = ("passed", "failed", "crashed", "timeout", "skipped")
WORKERS = ("adapter_matrix.device.opsweep.worker", "adapter_matrix.device.opsweep.generic")
COMPILED_WORKERS = ("adapter_matrix.device.opsweep.compiled",)  # the compiled sample (--compile)
STDERR_TAIL = 1500


class SweepError(AdapterMatrixError, RuntimeError):
    """The sweep could not run at all (the worker fails before its first task)."""


class TaskJson(TypedDict, total=False):
    """A task as a record holds it (:meth:`Task.to_json`): ``error``, ``note`` and ``detail``
    only when set."""

    op: str
    family: str
    dtype: str
    kind: str
    outcome: str
    samples: int
    seconds: float
    error: str
    note: str
    detail: str


class SelectionJson(TypedDict, total=False):
    """A sweep's selection as its record holds it; ``configs`` where a worker applied the
    adapter's test configs."""

    ops: List[str]
    dtypes: List[str]
    kinds: List[str]
    configs: str


@dataclass(frozen=True)
class Task:
    """One (op, dtype, kind) and what happened to it."""

    op: str
    family: str
    dtype: str
    kind: str  # forward | backward
    outcome: str
    error: Optional[str] = None
    note: Optional[str] = None
    samples: int = 0
    seconds: float = 0.0
    detail: Optional[str] = None  # a crash's stderr tail

    @property
    def key(self) -> str:
        return f"{self.op}/{self.dtype}/{self.kind}"

    def to_json(self) -> TaskJson:
        out: TaskJson = {
            "op": self.op,
            "family": self.family,
            "dtype": self.dtype,
            "kind": self.kind,
            "outcome": self.outcome,
            "samples": self.samples,
            "seconds": self.seconds,
        }
        if self.error:
            out["error"] = self.error
        if self.note:
            out["note"] = self.note
        if self.detail:
            out["detail"] = self.detail
        return out

    @classmethod
    def from_json(cls, data: TaskJson) -> Task:
        return cls(
            data["op"],
            data["family"],
            data["dtype"],
            data["kind"],
            data["outcome"],
            data.get("error"),
            data.get("note"),
            int(data.get("samples", 0)),
            float(data.get("seconds", 0.0)),
            data.get("detail"),
        )


@dataclass
class Sweep:
    """A finished sweep: the torch it ran on and every task's result, in op_db order."""

    torch: str
    python: str
    device: str
    tasks: List[Task]
    seconds: float
    workers: int  # processes started: 1 + crashes + timeouts
    selection: SelectionJson = field(default_factory=lambda: SelectionJson())
    absent: Optional[str] = None  # why a worker planned nothing (a capability the device declares absent)


def _no_core_dumps() -> None:
    """A crashing worker must not leave a multi-GB core file in the working directory."""
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def signal_name(code: int) -> str:
    """How a process ended, in words: ``SIGSEGV`` for a negative code, else ``exit code N``."""
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _cause(stderr: str) -> str:
    """The line of a worker's stderr that says why it died."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for marker in ("what():", "Fatal Python error", "Assertion", "terminate called"):
        for line in lines:
            if marker in line:
                return line[:300]
    return lines[-1][:300] if lines else "no output"


def _read_log(path: str) -> List[LogLine]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return []
    records: List[LogLine] = []  # written by our worker (process.serve): read as it wrote them
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:  # a line cut short by the crash
            break
    return records


@dataclass(frozen=True)
class Selection:
    """One sweep of :func:`run_sweeps`: what its workers run, and across how many processes
    each worker's plan is dealt (task ``i`` to shard ``i % shards``: one shard per worker
    process, run side by side; a task's result does not depend on the others in its process)."""

    ops: Sequence[str] = ()
    dtypes: Sequence[str] = ("float32",)
    kinds: Sequence[str] = ("forward", "backward")
    workers: Sequence[str] = WORKERS
    shards: int = 1


def run_sweep(
    device: str,
    activate: str,
    ops: Sequence[str] = (),
    dtypes: Sequence[str] = ("float32",),
    kinds: Sequence[str] = ("forward", "backward"),
    timeout: float = 300.0,
    python: Optional[str] = None,
    progress: Optional[Callable[[Task, int, int], None]] = None,
    env: Optional[Dict[str, str]] = None,
    workers: Sequence[str] = WORKERS,
    shards: int = 1,
    jobs: int = 1,
) -> Sweep:
    """Run the selected tasks of each worker module; ``progress(task, done, total)`` after
    each task. ``workers`` are run with ``python -m``: the op_db worker and the module
    worker, or in the tests a stand-in that crashes and hangs on purpose. ``shards`` and
    ``jobs``: as :func:`run_sweeps`."""
    selection = Selection(tuple(ops), tuple(dtypes), tuple(kinds), tuple(workers), shards)
    return run_sweeps(device, activate, [selection], timeout, python, progress, env, jobs)[0]


def run_sweeps(
    device: str,
    activate: str,
    selections: Sequence[Selection],
    timeout: float = 300.0,
    python: Optional[str] = None,
    progress: Optional[Callable[[Task, int, int], None]] = None,
    env: Optional[Dict[str, str]] = None,
    jobs: int = 1,
) -> List[Sweep]:
    """Run several sweeps, at most ``jobs`` worker processes at a time (each shard of each
    worker of each selection is one; they start in that order, so put the longest first),
    and return one :class:`Sweep` per selection, its tasks in plan order as if one process
    had run them. A crash or a hang costs its own shard a restart, never another's."""
    parts = [(s, w, i) for s, sel in enumerate(selections) for w in sel.workers for i in range(max(1, sel.shards))]
    lock = threading.Lock()
    done: Dict[Tuple[int, str], int] = {}

    def run(part: Tuple[int, str, int]) -> _Part:
        s, worker, index = part
        sel = selections[s]

        def counted(task: Task, _done: int, total: int) -> None:
            if progress is not None:
                with lock:  # one count per worker module across its shards
                    done[(s, worker)] = done.get((s, worker), 0) + 1
                    progress(task, done[(s, worker)], total)

        return _run_worker(
            worker,
            device,
            activate,
            sel.ops,
            sel.dtypes,
            sel.kinds,
            timeout,
            python or sys.executable,
            counted,
            env,
            (index, max(1, sel.shards)),
        )

    if jobs > 1 and len(parts) > 1:
        with ThreadPoolExecutor(min(jobs, len(parts))) as pool:
            ran = list(pool.map(run, parts))
    else:
        ran = [run(p) for p in parts]
    out = []
    for s, sel in enumerate(selections):
        mine = [r for p, r in zip(parts, ran) if p[0] == s]
        by_worker = [[r for p, r in zip(parts, ran) if p[0] == s and p[1] == w] for w in sel.workers]
        tasks = [t for shards in by_worker for t in _merge(shards)]
        first = mine[0]
        out.append(
            Sweep(
                first.plan["torch"],
                first.plan["python"],
                device,
                tasks,
                round(max(r.ended for r in mine) - min(r.began for r in mine), 1),
                sum(r.workers for r in mine),
                _selection(sel, [r.plan for r in mine]),
                next((r.plan.get("absent") for r in mine if r.plan.get("absent")), None),
            )
        )
    return out


def _selection(sel: Selection, plans: Sequence[WorkerPlan]) -> SelectionJson:
    """A sweep's selection for its record, with the adapter's test configs where a worker
    applied them (torch 2.13+'s ``set_test_configs``: :mod:`.test_configs`)."""
    out: SelectionJson = {"ops": list(sel.ops), "dtypes": list(sel.dtypes), "kinds": list(sel.kinds)}
    configs = next((p["configs"] for p in plans if p.get("configs")), None)
    if configs:
        out["configs"] = configs
    return out


@dataclass
class _Part:
    """What one worker process line (a worker module's shard, with its restarts) left."""

    plan: WorkerPlan
    results: Dict[int, TaskResult]  # task index -> its result
    began: float
    ended: float
    workers: int  # processes started: 1 + crashes + timeouts


def _merge(shards: Sequence[_Part]) -> List[Task]:
    """The tasks of a worker module's plan in plan order, each from the shard that ran it."""
    planned = shards[0].plan["tasks"]
    results: Dict[int, TaskResult] = {}
    for part in shards:
        results.update(part.results)
    return [_task(t, results.get(i, {"outcome": "skipped", "error": "not run"})) for i, t in enumerate(planned)]


def _next_task(start: int, total: int, shard: Tuple[int, int]) -> Optional[int]:
    """The first task of ``shard`` at or after ``start``, if any."""
    index, count = shard
    first = start + (index - start) % count
    return first if first < total else None


def _run_worker(
    worker: str,
    device: str,
    activate: str,
    ops: Sequence[str],
    dtypes: Sequence[str],
    kinds: Sequence[str],
    timeout: float,
    python: str,
    progress: Optional[Callable[[Task, int, int], None]],
    env: Optional[Dict[str, str]],
    shard: Tuple[int, int] = (0, 1),
) -> _Part:
    """One line of worker processes over ``shard`` of the plan: a worker from the first task,
    a new one after the task each crash or hang took (recorded as crashed or timeout)."""
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="opsweep-") as folder:
        plan_path = os.path.join(folder, "plan.json")
        command = _command(python, worker, device, activate, plan_path, ops, dtypes, kinds, shard)
        said = _Said(plan_path, progress)
        start, workers = 0, 0
        while said.plan is None or _next_task(start, len(said.plan["tasks"]), shard) is not None:
            workers += 1
            ended = _follow(command, folder, workers, start, env, timeout, said)
            if said.plan is None:
                said.plan = _load_plan(plan_path)
                if said.plan is None:
                    stderr = ended.stderr()
                    raise SweepError(
                        f"the sweep's worker {worker} failed before its first task ({signal_name(ended.code)}): "
                        f"{_cause(stderr)}\n{stderr[-STDERR_TAIL:]}"
                    )
            if ended.running is None:  # it ran its tasks, or died between two
                left = _next_task(start, len(said.plan["tasks"]), shard) is not None
                if ended.code != 0 and left and not any(i >= start for i in said.results):
                    raise SweepError(f"the sweep's worker exited ({signal_name(ended.code)}) without running a task")
                start = max([start - 1] + list(said.results)) + 1
                continue
            said.add(ended.running, ended.lost(ended.running, timeout))
            start = ended.running + 1
    assert said.plan is not None
    return _Part(said.plan, said.results, began, time.perf_counter(), workers)


def _command(
    python: str,
    worker: str,
    device: str,
    activate: str,
    plan_path: str,
    ops: Sequence[str],
    dtypes: Sequence[str],
    kinds: Sequence[str],
    shard: Tuple[int, int],
) -> List[str]:
    """A worker's command line, but where its log goes and the task it starts at."""
    command = [
        python,
        "-m",
        worker,
        "--device",
        device,
        "--activate",
        activate,
        "--plan",
        plan_path,
        "--ops",
        ",".join(ops),
        "--dtypes",
        ",".join(dtypes),
        "--kinds",
        ",".join(kinds),
    ]
    if shard[1] > 1:  # a worker of another adapter may not know the option: not passed unless sharding
        command += ["--shard", f"{shard[0]}/{shard[1]}"]
    return command


@dataclass
class _Said:
    """What a line of worker processes has said so far: its plan (once written), each task's
    result; ``progress`` is told of each result."""

    plan_path: str
    progress: Optional[Callable[[Task, int, int], None]]
    plan: Optional[WorkerPlan] = None
    results: Dict[int, TaskResult] = field(default_factory=dict)

    def add(self, index: int, result: TaskResult) -> None:
        self.results[index] = result
        if self.plan is None:
            self.plan = _load_plan(self.plan_path)
        if self.progress is not None and self.plan is not None:  # the worker writes the plan first
            self.progress(_task(self.plan["tasks"][index], result), len(self.results), len(self.plan["tasks"]))


class _Ended(NamedTuple):
    """How one worker process ended: its exit code, the task it was in (None: between tasks)
    and since when, whether the timeout killed it, the file holding its stderr."""

    code: int
    running: Optional[int]
    since: float
    timed_out: bool
    err_path: str

    def stderr(self) -> str:
        with open(self.err_path, encoding="utf-8", errors="replace") as fh:
            return fh.read()

    def lost(self, running: int, timeout: float) -> TaskResult:
        """The result of task ``running``, which the process died in (or was killed in)."""
        if self.timed_out:
            record: TaskResult = {
                "outcome": "timeout",
                "error": f"no result after {timeout:.0f} s; the worker was killed",
            }
        else:
            stderr = self.stderr()
            record = {
                "outcome": "crashed",
                "error": f"{signal_name(self.code)}: {_cause(stderr)}",
                "detail": stderr[-STDERR_TAIL:],
            }
        record["task"] = running
        record["seconds"] = round(time.perf_counter() - self.since, 3)
        return record


def _follow(
    command: List[str],
    folder: str,
    number: int,
    start: int,
    env: Optional[Dict[str, str]],
    timeout: float,
    said: _Said,
) -> _Ended:
    """Start worker process ``number`` at task ``start`` and follow its log until it exits, or
    until a task outlives ``timeout`` (then kill it); each result goes to ``said``."""
    log_path = os.path.join(folder, f"log-{number}.jsonl")
    err_path = os.path.join(folder, f"stderr-{number}.txt")
    with open(err_path, "w", encoding="utf-8") as err:
        # cwd: the temporary folder, so `python -m` puts no source tree on sys.path
        proc = subprocess.Popen(
            command + ["--log", log_path, "--start", str(start)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
            cwd=folder,
            preexec_fn=_no_core_dumps,
        )
        running: Optional[int] = None
        since, seen = time.perf_counter(), 0
        while True:
            code = proc.poll()
            lines = _read_log(log_path)
            for line in lines[seen:]:
                if "start" in line:
                    running, since = line["start"], time.perf_counter()
                else:
                    said.add(line["task"], line)
                    running = None
            seen = len(lines)
            if code is not None:
                return _Ended(code, running, since, False, err_path)
            if running is not None and time.perf_counter() - since > timeout:
                proc.kill()
                return _Ended(proc.wait(), running, since, True, err_path)
            time.sleep(0.2)


def _load_plan(path: str) -> Optional[WorkerPlan]:
    try:
        with open(path, encoding="utf-8") as fh:
            plan: WorkerPlan = json.load(fh)  # written by our worker (process.serve)
            return plan
    except (FileNotFoundError, ValueError):
        return None


def _task(planned: PlannedTask, record: TaskResult) -> Task:
    return Task(
        planned["op"],
        planned["family"],
        planned["dtype"],
        planned["kind"],
        record["outcome"],
        record.get("error"),
        record.get("note"),
        int(record.get("samples", 0)),
        float(record.get("seconds", 0.0)),
        record.get("detail"),
    )
