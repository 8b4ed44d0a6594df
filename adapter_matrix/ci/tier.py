"""Run a tier of cells in parts: the cells that lack a fresh passing record, line by line.

A tier of real torch releases (``edges``, ``full``) takes hours and tens of GB: it rarely fits
one sitting. :func:`select` decides, from the evidence folder alone and by the release gate's
own rule (:func:`adapter_matrix.ci.evidence.judge`), which cells of the tier still need a run;
:func:`run` runs them through the adapter's ``noxfile.py``, one torch line after another, so a
tier interrupted anywhere picks up where it stopped. ``adapter-matrix tier`` is the command.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence

from ..matrix.model import Matrix
from .evidence import Verification, evidence_folder, freshness_of, index_records, judge
from .plan import PlanRow, plan
from .record import RecordSet, read_records
from .release import past_releases

__all__ = ["Step", "select", "lines", "run", "TierRun", "commit_message", "prune_uv_cache", "tool", "GRACE_SECONDS"]

MATRIX_ENV = "ADAPTER_MATRIX_NOX_MATRIX"  # the matrix the nox cells read (adapter_matrix.nox)
DROP_ENVS_ENV = "ADAPTER_MATRIX_DROP_ENVS"  # each cell removes its environment when it is done
GRACE_SECONDS = 10.0  # after SIGTERM, how long nox and its cells have to end before SIGKILL


@dataclass(frozen=True)
class Step:
    """One selected row of the tier: what its evidence says, and whether it runs."""

    row: PlanRow
    found: Verification
    runs: bool

    def describe(self) -> str:
        """``run  device(...): stale (why)`` or ``skip device(...): verified DATE, torch X``."""
        if not self.runs:
            return f"skip {self.row.session}: verified {self.found.date}, torch {self.found.torch}"
        if self.found.counts:
            return f"run  {self.row.session}: --force"
        return f"run  {self.row.session}: {self.found.state}" + (f" ({self.found.reason})" if self.found.reason else "")


def judged(matrix: Matrix, rows: Sequence[PlanRow]) -> List[Verification]:
    """What each row's evidence record says today, by the release gate's rule."""
    folder = evidence_folder(matrix)
    records = read_records(folder, allow_empty=True) if os.path.isdir(folder) else RecordSet()
    index = index_records(records, matrix)
    rules = freshness_of(matrix, frozen=index.frozen)
    return [judge(row.cell, index, rules, matrix) for row in rows]


def select(
    matrix: Matrix,
    strategy: str,
    tags: Sequence[str] = (),
    pythons: Sequence[str] = (),
    force: bool = False,
) -> List[Step]:
    """The rows of ``strategy`` that carry any of ``tags`` (nox tags: ``torch2.4``, ``py3.8``,
    ``edges``) and run one of ``pythons`` (both optional), each with its evidence. A row runs
    unless it has a fresh passing record (or ``force``). Rows of a release frozen on other
    sources than the tree's are not planned: this tree cannot produce their evidence."""
    rows = [
        r
        for r in plan(matrix, strategy, skip=past_releases(matrix))
        if (not tags or set(tags) & set(r.tags)) and (not pythons or str(r.cell.python) in pythons)
    ]
    return [Step(row, found, force or not found.counts) for row, found in zip(rows, judged(matrix, rows))]


def lines(steps: Sequence[Step]) -> Dict[str, List[PlanRow]]:
    """The rows that run, grouped by torch line in plan order: a line's Pythons run back to
    back, so they share the torch wheels in the installer's cache."""
    out: Dict[str, List[PlanRow]] = {}
    for step in steps:
        if step.runs:
            out.setdefault(str(step.row.cell.line.minor), []).append(step.row)
    return out


def free_gb(path: str) -> float:
    return shutil.disk_usage(path).free / 2**30


def tool(name: str) -> Optional[str]:
    """``name`` next to this interpreter (a virtual environment's own), else on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def prune_uv_cache(echo: Callable[[str], None]) -> None:
    """Drop torch, triton and the CUDA wheels (nvidia-*, cuda-*) from uv's cache (the rest
    stays): the next torch line downloads its own versions anyway."""
    uv = tool("uv")
    if not uv:
        return
    cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True).stdout.strip()
    if not cache:
        return
    names = {"torch", "triton"} | {
        p.name for p in Path(cache).glob("wheels-*/*/*") if p.is_dir() and p.name.startswith(("nvidia", "cuda-"))
    }
    echo(f"dropping {len(names)} package(s) from uv's cache: torch, triton, nvidia-*, cuda-*")
    subprocess.run([uv, "cache", "clean", *sorted(names)], check=False, capture_output=True)


def commit_message(minor: str, rows: Sequence[PlanRow], found: Sequence[Verification]) -> str:
    """``evidence: torch 2.4, 1 of 2 cells passed, 1 failed`` and a line per cell."""
    states = [v.state for v in found]
    head = f"evidence: torch {minor}, {states.count('verified')} of {len(rows)} cells passed"
    failed = states.count("failed")
    return (
        head
        + (f", {failed} failed" if failed else "")
        + "\n\n"
        + "\n".join(f"{r.cell.id}: {v.state}" + (f" ({v.reason})" if v.reason else "") for r, v in zip(rows, found))
    )


@dataclass
class TierRun:
    """How a :func:`run` went: the final judgement of every selected row, and the costs."""

    final: Dict[str, int]
    selected: int
    ran: int
    minutes: float
    free_at_start: float
    lowest_free: float
    # set when a signal stopped the tier: the cell that was running, and the signal's name
    interrupted: Optional[str] = None
    signal: Optional[str] = None
    not_started: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.interrupted is None and self.signal is None and self.final.get("verified", 0) == self.selected


class _Stop(Exception):
    """A SIGTERM or SIGINT arrived while a torch line ran."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGINT become :class:`_Stop` in the tier's own process while it waits for a
    line; the previous handlers come back afterwards (only the main thread may set them)."""

    def stop(signum: int, frame: Optional[FrameType]) -> None:
        raise _Stop(signum)

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _stop_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """End nox and everything it started (its cells' interpreters, their workers): nox runs in a
    process group of its own, so one signal reaches all of them; SIGKILL after ``grace``."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # the group may outlive its leader (a cell's child that ignored SIGTERM): make sure
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _finished(matrix: Matrix, rows: Sequence[PlanRow], since: float) -> List[bool]:
    """Whether each row's evidence record was written by this run (after ``since``)."""
    folder = evidence_folder(matrix)
    out = []
    for r in rows:
        path = os.path.join(folder, str(r.cell.release.version), f"{r.id}.json")
        try:
            out.append(os.stat(path, follow_symlinks=False).st_mtime >= since)
        except OSError:
            out.append(False)
    return out


def _commit(matrix: Matrix, minor: str, rows: Sequence[PlanRow], docs: Sequence[str], cwd: str) -> None:
    """Commit the evidence records of ``rows`` and the ``docs`` whose verified tables show
    them (regenerated first; only those files, whatever else the index holds)."""
    folder = evidence_folder(matrix)
    paths = [
        p
        for p in (os.path.join(folder, str(r.cell.release.version), f"{r.id}.json") for r in rows)
        if os.path.exists(p)
    ]
    if not paths:
        return
    if docs:
        update = [sys.executable, "-m", "adapter_matrix", "table", "--matrix", matrix.path, "--update", *docs]
        subprocess.run(update, cwd=cwd, check=False)
        paths += list(docs)
    message = commit_message(minor, rows, judged(matrix, rows))
    subprocess.run(["git", "add", "--", *paths], cwd=cwd, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message, "--", *paths], cwd=cwd, check=False)


def run(
    matrix: Matrix,
    steps: Sequence[Step],
    nox: Sequence[str],
    cwd: str,
    echo: Callable[[str], None],
    commit: bool = False,
    docs: Sequence[str] = (),
    min_free_gb: float = 25.0,
    environ: Optional[Mapping[str, str]] = None,
    grace: Optional[float] = None,
) -> TierRun:
    """Run the rows of ``steps`` that need it with the ``nox`` command line, in ``cwd`` (where
    the adapter's ``noxfile.py`` is), one torch line per nox invocation. A failing cell does not
    stop the tier. Before each line, below ``min_free_gb`` of free disk, the torch wheels leave
    uv's cache. With ``commit``, each line's records are committed as soon as it is done.

    SIGTERM or SIGINT stops the tier cleanly: nox's whole process group is ended (SIGTERM, then
    SIGKILL after ``grace`` seconds, default :data:`GRACE_SECONDS`), the records of the cells that finished stay (and are
    committed with ``commit``), and the result names the cell that was running and the cells
    that never started (:attr:`TierRun.interrupted`)."""
    env = dict(os.environ if environ is None else environ)
    env.update({MATRIX_ENV: os.path.abspath(matrix.path), DROP_ENVS_ENV: "1"})
    started, free_at_start = time.monotonic(), free_gb(cwd)
    lowest = free_at_start
    todo = lines(steps)
    stopped: Optional[_Stop] = None
    interrupted: Optional[str] = None
    not_started: List[str] = []
    for minor, rows in todo.items():
        if free_gb(cwd) < min_free_gb:
            echo(f"== {free_gb(cwd):.0f} GB free, below {min_free_gb:g}")
            prune_uv_cache(echo)
        echo(f"== torch {minor}: {', '.join(r.session for r in rows)} ({free_gb(cwd):.0f} GB free)")
        line_started = time.time()
        try:
            with _stop_on_signals():
                # a group of its own: a stop must reach every cell's processes, not nox alone
                proc = subprocess.Popen(
                    [*nox, "-s", *(r.session for r in rows)], cwd=cwd, env=env, start_new_session=True
                )
                try:
                    proc.wait()
                except _Stop as stop:
                    _stop_group(proc, GRACE_SECONDS if grace is None else grace)
                    stopped = stop
        except _Stop as late:  # arrived between the start and the wait: nothing else ran yet
            stopped = late
        lowest = min(lowest, free_gb(cwd))
        if commit:
            _commit(matrix, minor, rows, docs, cwd)
        if stopped is not None:
            done = _finished(matrix, rows, line_started)
            pending = [r.session for r, d in zip(rows, done) if not d]
            interrupted = pending[0] if pending else None
            later = [r.session for rs in list(todo.values())[list(todo).index(minor) + 1 :] for r in rs]
            not_started = pending[1:] + later
            break
    final: Dict[str, int] = {}
    for found in judged(matrix, [s.row for s in steps]):
        final[found.state] = final.get(found.state, 0) + 1
    return TierRun(
        final=final,
        selected=len(steps),
        ran=sum(len(r) for r in todo.values()),
        minutes=(time.monotonic() - started) / 60,
        free_at_start=free_at_start,
        lowest_free=lowest,
        interrupted=interrupted,
        signal=str(stopped) if stopped is not None else None,
        not_started=not_started,
    )
