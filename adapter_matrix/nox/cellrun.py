"""One cell while it runs (:class:`CellRun`): its commands in the cell's environment, the
commands beside its steps (:class:`Beside`), its phases' timings, its op sweep, its tests and
their judgment. The steps in order are :func:`adapter_matrix.nox.sessions.run_cell`'s."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, NoReturn, Optional, Sequence, Tuple, TypeVar, cast

import nox

from ..ci import load as _load
from ..ci.plan import PlanRow
from ..ci.record import OpsSummary, ResultRecord, results_dir
from ..ci.suites import (
    SUITE_ROOT,
    SUMMARIES_ENV,
    TestCounts,
    judge,
    merge_suites,
    read_junit,
    read_summaries,
    write_summary,
)
from ..ci.verify import verify_environment
from ..ci.wheels import TOOL
from ..device.testimports import add_line, missing_module
from ..files import atomic_write
from ..matrix.model import Matrix
from .cellrecord import write_cell_records
from .cellstate import CellState
from .declarations import WHEELS_ENV, Adapter, Pytest, op_sweep_summary, op_tests_summary
from .declared import Cells

T = TypeVar("T")


def _cpu_seconds() -> float:
    """CPU time of this process and of the commands it ran (waited-for children), in seconds."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Beside:
    """A command running in the cell beside its steps (:meth:`CellRun.beside`)."""

    def __init__(
        self, cell: CellRun, what: str, proc: subprocess.Popen[bytes], log: str, codes: Tuple[int, ...]
    ) -> None:
        self.cell, self.what, self.proc, self.log, self.codes = cell, what, proc, log, codes

    def wait(self) -> int:
        """Wait for it to end; fail the cell, with the end of its log, unless it ended with one of its codes."""
        code = self.proc.wait()
        with open(self.log, "rb") as fh:
            tail = fh.read()[-4000:].decode("utf-8", "replace")
        if code not in self.codes:
            self.cell.session.log(tail)
            self.cell.fail(f"{self.what} exited with {code}")
        self.cell.session.log(f"{self.what}: done (exit {code}); its output: {self.log}")
        return code

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class CellRun(CellState):
    """One cell while it runs: the nox session, its plan row, and what its record will say
    (the :class:`CellState` fields it inherits, typed and declared there; the attributes below
    are how it runs, fixed when it starts).

    Hooks may set :attr:`refusals` (what a companion refusal probe kept); it and :attr:`ops`
    (the op sweep's summary, set when the cell's :class:`OpSweep` is done) go into the
    result record.
    """

    session: nox.Session
    row: PlanRow
    cells: Cells
    adapter: Adapter
    matrix: Matrix
    root: str
    results: str  # the results folder (results_dir)
    summaries: str  # where non-pytest suites leave their counts
    env: Dict[str, str]  # set for every command of the cell
    offline: List[str]  # the wheel folders of $ADAPTER_MATRIX_WHEELS: every install from them only
    _nested: List[Tuple[float, float]]  # wall and CPU time spent in phases inside the open ones
    _sweep: Optional[Beside]  # the op sweep, running beside the tests
    _beside: List[Beside]  # commands started beside the steps (beside())

    def __init__(self, session: nox.Session, row: PlanRow, cells_: Cells) -> None:
        super().__init__()
        self.session = session
        self.row = row
        self.adapter = cells_.adapter
        self.cells = cells_
        self.matrix = cells_.matrix
        self.root = cells_.root
        self.results = results_dir(self.root)
        # absolute: nox's tmp folder is relative to where nox started, and the op sweep runs
        # from another folder
        self.summaries = os.path.abspath(os.path.join(session.create_tmp(), "suites"))
        shutil.rmtree(self.summaries, ignore_errors=True)
        self.env = {"PIP_CONSTRAINT": "", **self.adapter.env}  # the cell decides torch, not a machine-wide pin
        self.offline = [p for p in os.environ.get(WHEELS_ENV, "").split(os.pathsep) if p]
        self._nested = []
        self._sweep = None
        self._beside = []

    # -- running things ---------------------------------------------------------------

    def install_options(self) -> List[str]:
        """The installer options of every install but torch's: offline, the wheel folders only."""
        return ["--no-index", *(o for folder in self.offline for o in ("--find-links", folder))] if self.offline else []

    def install(self, *requirements: str) -> None:
        self.session.install(*self.install_options(), *requirements, env=self.env)

    def run(
        self, *args: str, env: Optional[Mapping[str, str]] = None, codes: Sequence[int] = (0,), silent: bool = False
    ) -> Any:
        return self.session.run(*args, env={**self.env, **(env or {})}, success_codes=list(codes), silent=silent)

    def beside(
        self,
        what: str,
        *args: str,
        env: Optional[Mapping[str, str]] = None,
        codes: Sequence[int] = (0,),
        cwd: Optional[str] = None,
    ) -> Beside:
        """Start a command in the cell that runs beside the next steps (a suite that needs no
        other: the op sweep beside the tests, so that two suites that each keep one core busy
        share a 2-core machine); :meth:`Beside.wait` ends it. Its output goes to a log in the
        session's folder, shown (its end) when it fails. The record ends any still running.
        It runs in ``cwd``, else the adapter's root."""
        venv = str(self.session.virtualenv.location)
        environ = {
            **os.environ,
            **self.env,
            **(env or {}),
            "VIRTUAL_ENV": venv,
            "PATH": os.pathsep.join([os.path.join(venv, "bin"), os.environ.get("PATH", "")]),
        }
        log = os.path.join(self.session.create_tmp(), f"beside-{len(self._beside)}.log")
        self.session.log(f"{' '.join(args)}  (beside the next steps; output: {log})")
        with open(log, "wb") as out:
            proc = subprocess.Popen(list(args), env=environ, stdout=out, stderr=subprocess.STDOUT, cwd=cwd or self.root)
        started = Beside(self, what, proc, log, tuple(codes))
        self._beside.append(started)
        return started

    def json_run(self, *args: str, codes: Sequence[int] = (0,)) -> Dict[str, object]:
        """Run a command that prints one JSON document (after any log lines) and return it."""
        out = self.run(*args, codes=codes, silent=True)
        document: Dict[str, object] = json.loads(out[out.index("{") :])  # from its first brace: an object
        return document

    @property
    def summaries_env(self) -> Dict[str, str]:
        """The environment under which a non-pytest suite's :func:`write_summary` lands in this cell's record."""
        return {SUMMARIES_ENV: self.summaries}

    def verify(self, check: Mapping[str, object]) -> None:
        """Raise :class:`CellMismatch` unless ``check`` (``check --json``) saw this cell: its Python,
        torch and variant, each companion installed with torch, and a verdict that is not unsupported."""
        verify_environment(self.row, dict(check), self.attempt.picks if self.attempt else ())

    def check_json(self) -> Dict[str, object]:
        """The cell's own ``adapter-matrix check --json`` on this matrix (exit 0, 1 or 3): never the
        copy running nox, which would judge nox's environment instead of the cell's."""
        layers = [o for layer in self.adapter.layers for o in ("--matrix", os.path.join(self.root, layer))]
        return self.json_run(
            self.executable(TOOL), "check", "--json", "--matrix", self.matrix.path, *layers, codes=(0, 1, 3)
        )

    def load(self) -> _load.LoadReport:
        """Import the installed adapter and (``Adapter(load="tensor")``) create a tensor on the
        matrix's device, in the cell; fail the cell with the adapter's own error if it does not load."""
        adapter = self.matrix.adapter
        args = _load.command(adapter.distribution, adapter.device, self.adapter.load == "tensor")
        found = cast(_load.LoadReport, self.json_run("python", *args, codes=(0, 1)))  # load.main's document
        if not found.get("loaded"):
            self.fail(f"{adapter.distribution} is installed but does not load: {found.get('error')}")
        self.session.log(
            f"{adapter.distribution} loads: import {', '.join(found.get('modules', []))}"
            + (f"; a tensor on {found['tensor']}" if found.get("tensor") else "")
        )
        if found.get("note"):
            self.session.warn(found["note"])
        return found

    # -- the op sweep -----------------------------------------------------------------

    def sweep_plan(self) -> Tuple[str, bool]:
        """This run's op sweep: its mode (``none`` without an :class:`OpSweep`) and whether it
        adds the compiled sample; a wrong ``$ADAPTER_MATRIX_OPS*`` fails the cell before anything installs."""
        sweep = self.adapter.ops
        if sweep is None:
            return "none", False
        try:
            return sweep.run_mode(os.environ), sweep.run_compile(os.environ)
        except ValueError as exc:
            self.fail(str(exc))
            raise  # not reached: fail() ends the session

    @property
    def sweep_record(self) -> str:
        """Where the cell's op sweep writes its record: ``results/ops/<cell>.json``."""
        return os.path.join(self.results, "ops", f"{self.row.id}.json")

    def start_op_sweep(self) -> None:
        """Start the :class:`OpSweep` beside the tests: the cell's own ``adapter-matrix`` (the
        wheel), from the session's folder, so that neither it nor its workers (which start
        in a temporary folder) import anything from the adapter's source tree; the adapter is
        the one installed, built against this cell's torch."""
        sweep = self.adapter.ops
        mode, compiled = self.sweep_plan()
        if sweep is None or mode == "none":
            return
        expected = ["--expected", os.path.join(self.root, sweep.expected)] if sweep.expected else []
        self._sweep = self.beside(
            "the op sweep",
            self.executable(TOOL),
            "ops",
            "sweep",
            "--matrix",
            self.cells.matrix_file,
            *expected,
            "--output",
            self.sweep_record,
            "--jobs",
            str(sweep.jobs),
            "--timeout",
            str(sweep.timeout),
            *(["--sample"] if mode == "sample" else []),
            *(["--compile"] if compiled else []),
            *(["--activate", sweep.activate] if sweep.activate else []),
            env=self.summaries_env,  # its counts: the suite group `ops`
            codes=(0, 1),  # 1: a task disagrees, which the group's counts fail the cell for
            cwd=self.session.create_tmp(),
        )

    def finish_op_sweep(self) -> None:
        """Wait for the op sweep (the record's phase ``ops``: how long the tests left it to
        run) and keep its summary."""
        if self._sweep is None:
            return
        with self.phase("ops"):
            self._sweep.wait()
        log, self._sweep = self._sweep.log, None
        try:
            self.ops = op_sweep_summary(self.sweep_record, self.results)
        except (OSError, ValueError) as exc:  # a sweep that ended without its record (DocumentError is a ValueError)
            self.fail(f"the op sweep left no readable record ({exc}); its output: {log}")

    # -- PyTorch's test files (OpTests) --------------------------------------------------

    def op_tests_wanted(self) -> bool:
        """Whether this run runs the adapter's :class:`OpTests`; a wrong ``$ADAPTER_MATRIX_OPS_TESTS`` fails the cell."""
        declared = self.adapter.op_tests
        if declared is None:
            return False
        try:
            return declared.wanted(os.environ)
        except ValueError as exc:
            self.fail(str(exc))

    @property
    def op_tests_record(self) -> str:
        """Where the cell's ``ops tests`` writes its record: ``results/op-tests/<cell>.json``."""
        return os.path.join(self.results, "op-tests", f"{self.row.id}.json")

    def run_op_tests(self) -> None:
        """Run the :class:`OpTests` (after the tests and the op sweep: each file keeps a core
        busy) with the cell's own ``adapter-matrix``, from the session's folder; keep their
        summary in the record's ``ops.tests``, their counts per file in the suite groups."""
        declared = self.adapter.op_tests
        if declared is None or not self.op_tests_wanted():
            return
        root = self.root or os.getcwd()
        options = [
            *(["--pack", os.path.join(root, declared.pack)] if declared.pack else []),
            *(["--sha256", declared.sha256] if declared.sha256 else []),
            *(o for f in declared.files for o in ("--file", f)),
            *(o for f in declared.overrides for o in ("--overrides", os.path.join(root, f))),
            *(["--expected", os.path.join(root, declared.expected)] if declared.expected else []),
            *(["--control", declared.control] if declared.control else []),
            *(["--activate", declared.activate] if declared.activate else []),
        ]
        with self.phase("op-tests"):
            self.step(
                "adapter-matrix ops tests",
                self.run,
                self.executable(TOOL), "ops", "tests", "--matrix", self.cells.matrix_file, "--output",
                self.op_tests_record, "--jobs", str(declared.jobs), "--timeout", str(declared.timeout), *options,
                env=self.summaries_env, codes=(0, 1),
            )  # fmt: skip
        try:
            summary = op_tests_summary(self.op_tests_record)
        except (OSError, ValueError) as exc:
            self.fail(f"ops tests left no readable record ({exc})")
        self.ops = dataclasses.replace(self.ops, tests=summary) if self.ops is not None else OpsSummary(tests=summary)

    def step(self, what: str, run: Callable[..., T], *args: object, **kwargs: object) -> T:
        """Run one step; a failing command (a compile error, a crashed suite) fails the cell with a record."""
        try:
            return run(*args, **kwargs)
        except nox.command.CommandFailed as exc:
            self.fail(f"{what} failed: {exc.reason or exc}")

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a phase of the cell (the record's ``phases``, wall seconds, and ``phase_cpu``,
        CPU seconds of this process and the commands it ran). A phase inside another (a hook's
        ``probe`` inside ``build``) is its own: the outer one does not count it twice."""
        start, cpu = time.perf_counter(), _cpu_seconds()
        self._nested.append((0.0, 0.0))
        try:
            yield
        finally:
            spent, used = time.perf_counter() - start, _cpu_seconds() - cpu
            inner, inner_cpu = self._nested.pop()
            self.phases[name] = self.phases.get(name, 0.0) + spent - inner
            self.phase_cpu[name] = self.phase_cpu.get(name, 0.0) + used - inner_cpu
            if self._nested:
                outer, outer_cpu = self._nested[-1]
                self._nested[-1] = (outer + spent, outer_cpu + used)

    # -- the tests ----------------------------------------------------------------------

    def run_tests(self) -> Optional[str]:
        """Run the tests (``Adapter(tests=...)``) with nox's posargs; return the JUnit report of a pytest run."""
        tests, session = self.adapter.tests, self.session
        summaries = self.summaries_env
        if isinstance(tests, Pytest):
            junit = os.path.join(session.create_tmp(), "junit.xml")
            if os.path.exists(junit):
                os.unlink(junit)
            ignores = [o for path in tests.ignore for o in ("--ignore", path)]
            # `pytest`, not `python -m pytest`: the working directory stays off sys.path, so the
            # adapter imported is the installed wheel, never this source tree
            self.step(
                "the test run",
                self._pytest,
                junit,
                "pytest",
                tests.path,
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={junit}",
                "-o",
                "junit_family=xunit1",
                *tests.args,
                *ignores,
                *session.posargs,  # xunit1 names each test's file: its group
                env=summaries,
                codes=(0, 1),
            )
            _keep_junit(junit, self)
            return junit
        args = list(tests.args)
        if "{posargs}" in args:
            i = args.index("{posargs}")
            args[i : i + 1] = list(session.posargs)
        else:
            args += list(session.posargs)
        try:
            self.run(*args, env=summaries)
            outcome = TestCounts(passed=1)
        except nox.command.CommandFailed:
            outcome = TestCounts(failed=1)
        if not read_summaries(self.summaries):
            write_summary(tests.suite, outcome, self.summaries)
        return None

    def _pytest(self, junit: str, *args: str, env: Mapping[str, str], codes: Sequence[int]) -> Any:
        """The pytest run; a collection that cannot import a module ends with the module and the
        line to add to the noxfile (PyTorch's test machinery imports expecttest: issue 67)."""
        try:
            return self.run(*args, env=env, codes=codes)
        except nox.command.CommandFailed:
            report = ""
            if os.path.exists(junit):
                with open(junit, encoding="utf-8", errors="replace") as fh:
                    report = fh.read()
            module = missing_module(report)
            if module is None:
                raise
            self.fail(
                f"the tests could not be collected: no module named {module!r} in the cell; add {add_line(module)}"
            )

    def judge_suites(self, junit: Optional[str]) -> None:
        """The suite groups that count, from the JUnit report and the summaries; fail the cell on a problem."""
        root = self.adapter.tests.path if isinstance(self.adapter.tests, Pytest) else SUITE_ROOT
        ran = read_junit(junit, root) if junit and os.path.exists(junit) else {}
        suites = merge_suites(ran, read_summaries(self.summaries))
        wanted = self.adapter.suites if self.adapter.suites is not None else (self.matrix.evidence.suites or None)
        self.suites, problem = judge(suites, wanted, narrowed=bool(self.session.posargs))
        if problem:
            self.fail(problem)

    # -- the record -------------------------------------------------------------------

    def record(self, outcome: str, message: Optional[str] = None) -> ResultRecord:
        """Write the result record and, unless posargs narrowed the run, the evidence record."""
        for running in self._beside:  # a cell that ends early leaves nothing running
            running.stop()
        own = self.adapter.evidence
        return write_cell_records(
            self,
            self.row,
            self.session,
            outcome,
            message,
            results=self.results,
            matrix=self.matrix,
            evidence=os.path.join(self.root, own) if own else None,
        )

    def fail(self, message: str) -> NoReturn:
        self.record("failed", message)
        self.session.error(message)

    def executable(self, name: str) -> str:
        """The path of ``name`` in the cell's environment (its ``bin`` folder)."""
        return os.path.join(str(self.session.virtualenv.location), "bin", name)


def _keep_junit(junit: str, cell: CellRun) -> None:
    """The test run's report as ``results/junit/<cell>.xml``: each test's time (and, from the
    conformance suite, its CPU time) outlives the cell's environment (benchmarks/cell_split.py)."""
    if os.path.exists(junit):
        with open(junit, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        folder = os.path.join(cell.results, "junit")
        os.makedirs(folder, exist_ok=True)
        atomic_write(os.path.join(folder, f"{cell.row.id}.xml"), text, follow=False)
