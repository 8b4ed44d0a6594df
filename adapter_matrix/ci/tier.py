"""Run a tier of cells in parts: the cells that lack a fresh passing record, line by line.

A tier of real torch releases (``edges``, ``full``) takes hours and tens of GB: it rarely fits
one sitting. :func:`select` decides, from the evidence folder alone and by the release gate's
own rule (:func:`adapter_matrix.ci.evidence.judge`), which cells of the tier still need a run;
:func:`run` runs them through the adapter's ``noxfile.py``, one torch line after another, so a
tier interrupted anywhere picks up where it stopped. ``adapter-matrix tier`` is the command.

Every record holds its cell's ``duration``: :func:`estimate` expects each cell to take what its
newest record took (else the median of its torch line's records, else of all), and a run says
``cell N/M`` with the time elapsed and an ETA from those durations, scaled by this run's pace.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from ..matrix.cellid import CellId
from ..matrix.model import Matrix
from .evidence import Verification, evidence_folder, freshness_of, index_records, judge
from .plan import PlanRow, plan
from .record import RESULTS_ENV, RecordSet, read_records
from .release import past_releases

__all__ = [
    "Step",
    "Expected",
    "select",
    "estimate",
    "forecast",
    "eta",
    "span",
    "lines",
    "run",
    "TierRun",
    "commit_message",
    "prune_uv_cache",
    "tool",
    "GRACE_SECONDS",
]

MATRIX_ENV = "ADAPTER_MATRIX_NOX_MATRIX"  # the matrix the nox cells read (adapter_matrix.nox)
DROP_ENVS_ENV = "ADAPTER_MATRIX_DROP_ENVS"  # each cell removes its environment when it is done
GRACE_SECONDS = 10.0  # after SIGTERM, how long nox and its cells have to end before SIGKILL
POLL_SECONDS = 5.0  # how often a run looks for the records of the cells of the line it runs


def span(seconds: float) -> str:
    """A duration as a person reads it: ``45 s``, ``1 min 35 s``, ``12 min``, ``4 h 05 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


@dataclass(frozen=True)
class Expected:
    """How long a cell is expected to take, and from what: ``its record`` (its newest one, of any
    release), ``the torch X.Y median`` (its line's records), ``the median of all records``;
    ``seconds`` None when no record holds a duration."""

    seconds: Optional[float]
    basis: str = "no record"

    def describe(self) -> str:
        if self.seconds is None:
            return "no record to time it"
        return f"expected {span(self.seconds)}" + ("" if self.basis == "its record" else f" ({self.basis})")


@dataclass(frozen=True)
class Step:
    """One selected row of the tier: what its evidence says, whether it runs, and how long it
    is expected to take."""

    row: PlanRow
    found: Verification
    runs: bool
    expected: Expected = Expected(None)

    def describe(self) -> str:
        """``run  device(...): stale (why); expected 9 min`` or ``skip device(...): verified DATE, torch X``."""
        if not self.runs:
            return f"skip {self.row.session}: verified {self.found.date}, torch {self.found.torch}"
        if self.found.counts:
            why = "--force"
        else:
            why = self.found.state + (f" ({self.found.reason})" if self.found.reason else "")
        return f"run  {self.row.session}: {why}; {self.expected.describe()}"


def evidence_records(matrix: Matrix) -> RecordSet:
    """The records of the matrix's evidence folder (none when it has no folder yet)."""
    folder = evidence_folder(matrix)
    return read_records(folder, allow_empty=True) if os.path.isdir(folder) else RecordSet()


def judged(matrix: Matrix, rows: Sequence[PlanRow], records: Optional[RecordSet] = None) -> List[Verification]:
    """What each row's evidence record says today, by the release gate's rule."""
    index = index_records(evidence_records(matrix) if records is None else records, matrix)
    rules = freshness_of(matrix, frozen=index.frozen)
    return [judge(row.cell, index, rules, matrix) for row in rows]


def _place(cell: str) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
    """(torch line, Python) of a cell or row id, whatever its release or dimensions."""
    line, python, _id = CellId(cell).sort_key
    return None if line == (999,) else (line, python)


def estimate(records: RecordSet, rows: Sequence[PlanRow]) -> List[Expected]:
    """How long each row's cell is expected to take, from the records' durations: the newest
    record of its torch line and Python (any release: the cell's cost does not change with the
    adapter's version), else the median of its torch line's records, else of all records."""
    timed = sorted((r for r in records if r.duration), key=lambda r: r.timestamp)
    newest: Dict[Tuple[Tuple[int, ...], Tuple[int, ...]], float] = {}
    per_line: Dict[Tuple[int, ...], List[float]] = {}
    for record in timed:
        place = _place(record.cell)
        if place is not None and record.duration:
            newest[place] = record.duration
            per_line.setdefault(place[0], []).append(record.duration)
    everything = [r.duration for r in timed if r.duration]
    out = []
    for row in rows:
        place = _place(row.id)
        if place is not None and place in newest:
            out.append(Expected(newest[place], "its record"))
        elif place is not None and place[0] in per_line:
            out.append(Expected(statistics.median(per_line[place[0]]), f"the torch {row.cell.line.minor} median"))
        elif everything:
            out.append(Expected(statistics.median(everything), "the median of all records"))
        else:
            out.append(Expected(None))
    return out


def forecast(steps: Sequence[Step]) -> str:
    """What a tier would run, and how long it is expected to take in all."""
    running = [s for s in steps if s.runs]
    skipped = len(steps) - len(running)
    head = f"{len(running)} cell{'s' if len(running) != 1 else ''} to run" + (f", {skipped} skipped" if skipped else "")
    if not running:
        return head
    total = eta([s.expected.seconds for s in running], [])
    if total is None:
        return f"{head}: no record holds a duration to time them"
    guessed = sum(1 for s in running if s.expected.basis != "its record")
    return f"{head}: expected {span(total)}" + (
        f" ({guessed} timed by a median)" if guessed else " (each from its record)"
    )


def eta(remaining: Sequence[Optional[float]], done: Sequence[Tuple[Optional[float], float]]) -> Optional[float]:
    """Seconds until the ``remaining`` cells (their expected seconds, None when unknown) are
    done, at the pace of the cells ``done`` in this run ((expected, took) each: a machine that
    took 20% longer than the records so far takes 20% longer for the rest). A cell without an
    expectation counts as the mean of the others (or of the cells done); None when nothing tells."""
    known = [e for e in remaining if e is not None]
    took = [t for _e, t in done]
    fill = statistics.mean(known) if known else statistics.mean(took) if took else None
    if fill is None:
        return None if remaining else 0.0
    paced = [(e, t) for e, t in done if e]
    pace = sum(t for _e, t in paced) / sum(e for e, _t in paced if e) if paced else 1.0
    return pace * sum(e if e is not None else fill for e in remaining)


def select(
    matrix: Matrix,
    strategy: str,
    tags: Sequence[str] = (),
    pythons: Sequence[str] = (),
    force: bool = False,
    records: Optional[RecordSet] = None,
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
    records = evidence_records(matrix) if records is None else records
    return [
        Step(row, found, force or not found.counts, expected)
        for row, found, expected in zip(rows, judged(matrix, rows, records), estimate(records, rows))
    ]


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


class _Clock:
    """Where a run is, said as each cell starts and ends: ``cell N/M``, the time elapsed, the
    ETA (:func:`eta`). A cell has ended when its result or evidence record is written after its
    line started (each cell writes its own file); the cells of a line run one after another, in
    order, so the next one starts then."""

    def __init__(
        self,
        rows: Sequence[PlanRow],
        expected: Mapping[str, Optional[float]],
        folders: Sequence[str],
        echo: Callable[[str], None],
    ) -> None:
        self.rows, self.expected, self.folders, self.echo = list(rows), expected, folders, echo
        self.began = time.monotonic()
        self.next = 0  # the next cell to start, in self.rows
        self.current: Optional[Tuple[int, float]] = None  # (its index, when it started: monotonic)
        self.done: List[Tuple[Optional[float], float]] = []

    def _cell(self, index: int) -> str:
        return f"== cell {index + 1}/{len(self.rows)} {self.rows[index].session}"

    def start(self) -> None:
        index, self.next = self.next, self.next + 1
        self.current = (index, time.monotonic())
        expected = self.expected.get(self.rows[index].id)
        left = eta([self.expected.get(r.id) for r in self.rows[index:]], self.done)
        at = time.strftime("%H:%M", time.localtime(time.time() + left)) if left is not None else ""
        self.echo(
            self._cell(index)
            + (f", expected {span(expected)}" if expected else "")
            + f": {span(time.monotonic() - self.began)} elapsed, ETA "
            + (f"{span(left)} (at {at})" if left is not None else "unknown (no record holds a duration)")
        )

    def _written(self, index: int, since: float) -> bool:
        row = self.rows[index]
        for path in (os.path.join(f, f"{row.id}.json") for f in self.folders):
            try:
                if os.stat(path, follow_symlinks=False).st_mtime >= since:
                    return True
            except OSError:
                continue
        return False

    def poll(self, last: int, since: float) -> None:
        """Ends the running cell if its record was written after ``since`` (its line's start, a
        wall time), then starts the next up to ``last`` (the index of the line's last cell), as
        often as that holds."""
        while self.current is not None and self._written(self.current[0], since):
            index, started = self.current
            took = time.monotonic() - started
            self.done.append((self.expected.get(self.rows[index].id), took))
            self.echo(f"{self._cell(index)} ended after {span(took)}")
            self.current = None
            if self.next <= last:
                self.start()

    def line_over(self, last: int, since: float) -> None:
        """nox ended the line: what it ran has ended, and a cell it never reached is said so."""
        self.poll(last, since)
        if self.current is not None:
            self.echo(f"{self._cell(self.current[0])} ended without a record")
            self.current = None
        while self.next <= last:
            self.echo(f"{self._cell(self.next)} did not run: nox ended before it")
            self.next += 1


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


def _run_line(
    command: List[str],
    cwd: str,
    env: Dict[str, str],
    clock: _Clock,
    cells: int,
    line_started: float,
    grace: Optional[float],
) -> Optional[_Stop]:
    """Run one torch line's nox ``command`` (its ``cells`` sessions), saying each cell as it
    ends; the stop that ended it early (its process group ended), else None."""
    last = clock.next + cells - 1  # the index of the line's last cell
    try:
        with _stop_on_signals():
            # a group of its own: a stop must reach every cell's processes, not nox alone
            proc = subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True)
            clock.start()
            try:
                while True:  # the line's cells run one after another: say each as it ends
                    try:
                        proc.wait(timeout=POLL_SECONDS)
                        break
                    except subprocess.TimeoutExpired:
                        clock.poll(last, line_started)
                clock.line_over(last, line_started)
            except _Stop as stop:
                _stop_group(proc, GRACE_SECONDS if grace is None else grace)
                return stop
    except _Stop as late:  # arrived between the start and the wait: nothing else ran yet
        return late
    return None


def _final_states(matrix: Matrix, steps: Sequence[Step]) -> Dict[str, int]:
    """How many of the steps' rows are in each state once the tier ran."""
    final: Dict[str, int] = {}
    for found in judged(matrix, [s.row for s in steps]):
        final[found.state] = final.get(found.state, 0) + 1
    return final


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
    folders = [
        env.get(RESULTS_ENV) or os.path.join(cwd, "results"),
        *{os.path.join(evidence_folder(matrix), str(r.cell.release.version)) for rs in todo.values() for r in rs},
    ]
    expected: Dict[str, Optional[float]] = {s.row.id: s.expected.seconds for s in steps if s.runs}
    clock = _Clock([r for rs in todo.values() for r in rs], expected, folders, echo)
    stopped: Optional[_Stop] = None
    interrupted: Optional[str] = None
    not_started: List[str] = []
    for minor, rows in todo.items():
        if free_gb(cwd) < min_free_gb:
            echo(f"== {free_gb(cwd):.0f} GB free, below {min_free_gb:g}")
            prune_uv_cache(echo)
        echo(f"== torch {minor}: {', '.join(r.session for r in rows)} ({free_gb(cwd):.0f} GB free)")
        line_started = time.time()
        stopped = _run_line([*nox, "-s", *(r.session for r in rows)], cwd, env, clock, len(rows), line_started, grace)
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
    return TierRun(
        final=_final_states(matrix, steps),
        selected=len(steps),
        ran=sum(len(r) for r in todo.values()),
        minutes=(time.monotonic() - started) / 60,
        free_at_start=free_at_start,
        lowest_free=lowest,
        interrupted=interrupted,
        signal=str(stopped) if stopped is not None else None,
        not_started=not_started,
    )
