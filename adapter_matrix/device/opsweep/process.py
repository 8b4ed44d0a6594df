"""The worker side of the sweep's protocol, shared by the op worker and the module worker.

A worker is started as ``python -m MODULE --device D --activate M --plan P --log L
--start N [--ops ...] [--dtypes ...] [--kinds ...] [--shard I/K]``. With ``--start 0`` it
writes its plan (every task of the selection, in a fixed order) to ``P``; then, for each
task from ``N`` on (with ``--shard I/K``, each task whose index is I modulo K: K workers
share the plan, one shard each), it appends ``{"start": i}`` to ``L`` before running it and the result after,
flushing each line, so that the parent (:mod:`.runner`) can tell which task a crash
interrupted and start a new worker after it.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import sys
import time
import warnings
from types import ModuleType
from typing import IO, Callable, List, Mapping, Optional, Sequence, Tuple, TypedDict, TypeVar

from ...files import atomic_write
from .activation import activate

__all__ = [
    "MESSAGE_CHARS",
    "PlannedTask",
    "TaskResult",
    "LogLine",
    "PlanAbout",
    "WorkerPlan",
    "arguments",
    "shard",
    "start_torch",
    "serve",
    "message",
]

MESSAGE_CHARS = 400


class PlannedTask(TypedDict):
    """One task of a worker's plan, as the plan file holds it."""

    op: str
    family: str
    dtype: str
    kind: str  # forward | backward | compiled


class TaskResult(TypedDict, total=False):
    """What a worker says of a task (its log line), or the runner of a task that killed it:
    ``outcome`` always, the rest as the worker or the runner knows them."""

    outcome: str
    samples: int
    compared: int
    error: str
    note: str
    detail: str  # a crash's stderr tail (the runner's)
    task: int  # the task's index in the plan
    seconds: float


class LogLine(TaskResult, total=False):
    """A line of a worker's log: ``{"start": i}`` before task ``i``, its result after."""

    start: int


class PlanAbout(TypedDict, total=False):
    """What a worker says of its plan beside the tasks: why it has none (a capability the
    device declares absent), the adapter's test configs it applied."""

    absent: Optional[str]
    configs: str


class WorkerPlan(PlanAbout, total=False):
    """A worker's plan file: the torch and Python it runs, every task of its selection."""

    torch: str
    python: str
    tasks: List[PlannedTask]


T = TypeVar("T", bound=PlannedTask)  # a worker's task: what the plan holds, and what its runner needs


def arguments(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", required=True)
    parser.add_argument(
        "--activate",
        default="",
        help="module whose import activates the device, or module:function (an autoload entry point)",
    )
    parser.add_argument("--plan", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--ops", default="", help="comma-separated ids (default: all)")
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--kinds", default="forward,backward")
    parser.add_argument("--shard", type=shard, default=(0, 1), help="I/K: only the tasks whose index is I modulo K")
    return parser


def shard(value: str) -> Tuple[int, int]:
    """``I/K`` (0 <= I < K) as ``(I, K)``."""
    try:
        index, count = (int(part) for part in value.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected I/K, e.g. 0/2") from None
    if not 0 <= index < count:
        raise argparse.ArgumentTypeError(f"{value!r}: I must be at least 0 and below K")
    return index, count


def start_torch(args: argparse.Namespace) -> ModuleType:
    """Import torch and activate the device, ready for PyTorch's test machinery."""
    faulthandler.enable(file=sys.stderr, all_threads=False)  # a crash names the Python frame
    warnings.simplefilter("ignore")
    # torch.testing._internal.common_utils parses sys.argv when imported (and would take
    # --log for its --log-suffix): it must see none of ours.
    sys.argv = sys.argv[:1]
    import torch

    if args.activate:
        activate(torch, args.activate, args.device)
    module: ModuleType = torch  # Any to mypy (pyproject.toml: torch's annotations are not checked)
    return module


def message(exc: BaseException) -> str:
    """One line: the exception's type and its message, whitespace collapsed, cut short."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:MESSAGE_CHARS]


def _write(log: IO[str], record: Mapping[str, object]) -> None:  # a LogLine
    log.write(json.dumps(record) + "\n")
    log.flush()


def serve(
    args: argparse.Namespace,
    torch: ModuleType,
    tasks: Sequence[T],
    run: Callable[[T], TaskResult],
    about: Optional[PlanAbout] = None,
) -> int:
    """Write the plan (on the first start) and run the tasks from ``--start`` on. ``about``:
    more for the plan, such as why a worker has no tasks (``absent``)."""
    if args.start == 0:
        plan: WorkerPlan = {
            **(about or {}),
            "torch": torch.__version__,
            "python": sys.version.split()[0],
            "tasks": list(tasks),
        }
        atomic_write(args.plan, json.dumps(plan))
    mine, count = args.shard
    with open(args.log, "a", encoding="utf-8") as log:
        for index in range(args.start, len(tasks)):
            if index % count != mine:
                continue
            _write(log, {"start": index})
            began = time.perf_counter()
            try:
                result = run(tasks[index])
            except Exception as exc:
                result = {"outcome": "failed", "error": f"harness: {message(exc)}"}
            result["task"] = index  # after what the task said, as dict.update(task=, seconds=) put them
            result["seconds"] = round(time.perf_counter() - began, 3)
            _write(log, result)
    return 0
