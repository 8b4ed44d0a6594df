"""nox sessions for any adapter's matrix: one ``device(...)`` cell per plan row.

In an adapter repository's ``noxfile.py`` (docs/nox.md has every option)::

    from adapter_matrix.nox import Adapter, Pytest, cells

    cells(Adapter(projects=["."], tests=Pytest("tests")))

declares ``device(py3.11-torch2.13)`` and its siblings: the ids, tags (``torch2.13``,
``py3.11``, ``smoke``, ...) and Pythons that ``adapter-matrix plan`` prints, so ``nox -t
smoke``, ``nox -p 3.11`` and the rows of ``plan --format github`` select the same cells.

Each cell, in a fresh environment of the cell's Python:

1. installs the cell's torch from the matrix's source and variant (its fallbacks after
   it) together with its companions (``ci: companions:``) in one resolver call;
2. installs the adapter: the ``projects`` folders built into wheels (sdist first, as an
   index serves them), with their dependencies, and adapter-matrix itself (the copy running
   nox). A pure-Python project is built once per nox run; a compiled one (``torch`` among its
   build requirements) in each cell, against the cell's torch (:mod:`.ci.adapterbuild`);
3. proves with the cell's own ``adapter-matrix check --json`` that the environment is the
   cell it claims (Python, torch, variant, companions, a verdict that is not unsupported);
4. builds the native part (``build``), if the adapter has one;
5. imports the adapter as installed and creates a tensor on the matrix's device
   (``adapter: device:``): an adapter that installs but does not load fails here, with its error;
   then checks again, so the binary check also reads a core compiled at the build or the
   first import (the record's ``binary`` is this second check's);
6. runs the tests (a pytest path, or a command), with ``nox ... -- ARGS`` passed on, and,
   with ``Adapter(ops=OpSweep())``, beside them PyTorch's own op tests on the device
   (``adapter-matrix ops sweep``: the sample, or the whole op_db with ``OpSweep(mode="full")``
   or ``$ADAPTER_MATRIX_OPS=full``), run from the installed wheels only, never this tree;
7. writes the result record to ``results/`` (the sweep's counts per family under ``ops``,
   its own record under ``results/ops/``) and the evidence record to the matrix's
   evidence folder (a run narrowed with posargs writes no evidence).

Offline: ``ADAPTER_MATRIX_WHEELS=/opt/wheels:/path/to/wheelhouse`` (folders, ``:``
separated) installs everything, torch included, from those folders and never from an
index (``--no-index --find-links ...``).

Hooks (``after_check``, ``after_tests``; ``build`` may be a function too) receive the
:class:`CellRun`, which runs commands in the cell and holds what the record will say.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import nox

from .ci import adapterbuild as _adapterbuild
from .ci import evidence as _evidence
from .ci import load as _load
from .ci.evidence import tree_state
from .ci.install import InstallAttempt, cell_companions, install_attempts
from .ci.interpreters import expose
from .ci.plan import SESSION, PlanRow, plan
from .ci.record import OpsSummary, ResultRecord, results_dir, write_record
from .ci.release import past_releases
from .ci.suites import (
    SUITE_ROOT,
    SUMMARIES_ENV,
    Suites,
    TestCounts,
    judge,
    merge_suites,
    read_junit,
    read_summaries,
    write_summary,
)
from .ci.verify import CellMismatch, verify_environment, verify_refusal
from .ci.wheels import TOOL, WheelBuildError, build_wheels, tool_wheel
from .device import opsweep as _opsweep
from .device.build import build_requirements as _build_requirements
from .device.opsweep.record import read_record as _read_sweep
from .device.opsweep.record import summary as _sweep_summary
from .files import atomic_write
from .matrix.cache import load_matrix
from .matrix.model import Matrix

__all__ = [
    "WHEELS_ENV",
    "DROP_ENV",
    "EXTRAS_ENV",
    "SESSION",
    "Pytest",
    "Command",
    "OpSweep",
    "Adapter",
    "CellRun",
    "Beside",
    "Cells",
    "CellMismatch",  # what a cell's check saw differs from the cell (ci/verify.py)
    "cells",
    "write_summary",  # a suite that is not a pytest run gives the record its counts (ci/suites.py)
    "TestCounts",
    "expose_pythons",
    "verify_refusal",  # a companion refusal probe's judge (ci/verify.py)
    "native_build_requirements",
    "OPS_ENV",
    "SWEEP_MODES",
    "OPS_COMPILE_ENV",
    "COMPILE_MODES",
    "op_sweep_requirements",
    "op_sweep_summary",
    "OpsSummary",  # what a record keeps of an op sweep (ci/record.py)
]

WHEELS_ENV = "ADAPTER_MATRIX_WHEELS"  # offline: install only from these folders (os.pathsep separated)
DROP_ENV = "ADAPTER_MATRIX_DROP_ENVS"  # remove each cell's environment when it is done (disk)
EXTRAS_ENV = "ADAPTER_MATRIX_CELL_EXTRAS"  # more requirements after the adapter (space separated)
OPS_ENV = _opsweep.OPS_ENV  # sample (default), full or none: how much of PyTorch's OpInfo tests an op sweep runs
SWEEP_MODES = _opsweep.SWEEP_MODES
OPS_COMPILE_ENV = _opsweep.OPS_COMPILE_ENV  # on (default) or off: whether an op sweep adds the compiled sample
COMPILE_MODES = _opsweep.COMPILE_MODES
expose_pythons = expose  # put interpreters of these feature releases on PATH (pyenv's, uv's), for other sessions


def _cpu_seconds() -> float:
    """CPU time of this process and of the commands it ran (waited-for children), in seconds."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def native_build_requirements(torch: str) -> List[str]:
    """What ``adapter-matrix build`` (the native part, from the shims' ``csrc``) needs beside ``torch`` (a version)."""
    return _build_requirements(torch)


def op_sweep_requirements(torch: str) -> List[str]:
    """What ``adapter-matrix ops sweep`` needs beside ``torch`` (a version)."""
    return _opsweep.requirements(torch)


def op_sweep_summary(path: str, results: str) -> OpsSummary:
    """The counts a result record keeps of the sweep record at ``path`` (named relative to ``results``)."""
    return OpsSummary.of(_sweep_summary(_read_sweep(path), os.path.relpath(path, results)))


@dataclass(frozen=True)
class Pytest:
    """Run pytest on ``path`` (its sub-folders are suite groups of their own, a file
    directly in it counts under the folder's name). ``pytest`` is installed in the cell."""

    path: str = "tests"
    args: Sequence[str] = ()
    ignore: Sequence[str] = ()  # files or folders under path not to run


@dataclass(frozen=True)
class Command:
    """Run a command (``{posargs}`` in it is replaced by nox's posargs, else they are
    appended). It reports its counts with :func:`write_summary`; a command that reports
    none counts as one test of the group ``suite``, passed when it exits 0."""

    args: Sequence[str]
    suite: str = "tests"


@dataclass(frozen=True)
class OpSweep:
    """PyTorch's own op tests (OpInfo, ModuleInfo) on the adapter's device in each cell:
    ``adapter-matrix ops sweep`` beside the tests, on one core, after the adapter loads
    (built against the cell's torch, activated as its users do: its import or its
    ``torch.backends`` entry point). docs/op-coverage.md is the guide.

    ``mode``: ``sample`` (the expectations' fixed sample, about a minute) or ``full`` (all of
    op_db and module_db); ``$ADAPTER_MATRIX_OPS`` (``sample``, ``full``, ``none``) overrides
    it for a run, as a tier sets it. ``compile``: add the compiled sample (inductor);
    ``$ADAPTER_MATRIX_OPS_COMPILE`` (``on``, ``off``) overrides. ``expected``: the
    expectations file (relative to ``root``); by default the per-torch-line files next to the
    matrix (``op-sweep/torch-X.Y.yaml``, ``op-sweep/pytorch-disabled-tests-X.Y.json``), which
    ``ops sweep --write-expected`` starts. ``activate``: what activates the device, when the
    distribution's metadata does not say (``module`` or ``module:function``).

    The sweep's counts go to the suite group ``ops`` (a task that disagrees with the
    expectations fails the cell), its record to ``results/ops/<cell>.json``, its summary, with
    ops by status per family, to the result record's ``ops``.
    """

    mode: str = "sample"
    compile: bool = False
    expected: Optional[str] = None
    activate: Optional[str] = None
    jobs: int = 1  # beside the tests, which keep a core busy of their own
    timeout: float = 300.0  # seconds one task may run before its worker is killed

    def __post_init__(self) -> None:
        if self.mode not in ("sample", "full"):
            raise ValueError(f"OpSweep(mode={self.mode!r}): choose sample or full")
        if self.jobs < 1:
            raise ValueError(f"OpSweep(jobs={self.jobs}): at least 1")

    def run_mode(self, environ: Mapping[str, str]) -> str:
        """This run's mode: ``$ADAPTER_MATRIX_OPS`` if set, else :attr:`mode`; ``ValueError`` names the choices."""
        mode = environ.get(OPS_ENV) or self.mode
        if mode not in SWEEP_MODES:
            raise ValueError(f"${OPS_ENV}={mode!r}: choose from {', '.join(SWEEP_MODES)}")
        return mode

    def run_compile(self, environ: Mapping[str, str]) -> bool:
        """Whether this run adds the compiled sample: ``$ADAPTER_MATRIX_OPS_COMPILE`` if set, else :attr:`compile`."""
        mode = environ.get(OPS_COMPILE_ENV) or ("on" if self.compile else "off")
        if mode not in COMPILE_MODES:
            raise ValueError(f"${OPS_COMPILE_ENV}={mode!r}: choose from {', '.join(COMPILE_MODES)}")
        return mode == "on"


@dataclass(frozen=True)
class Adapter:
    """What a cell needs to know about the adapter.

    ``projects``: folders (relative to ``root``) built into wheels and installed, in order.
    A compiled project is installed as soon as it is built, so a later one builds against it:
    ``projects=["../my-adapter", "."]`` builds a plugin of the adapter against the adapter just
    built (its build requirement on the adapter is met by that wheel, not by an index).
    ``layers``: the matrices of layers above the adapter that a project is (a plugin's
    ``compat.yaml``, docs/stacks.md): the cell's ``check`` judges the stack, the layer's binaries
    against the adapter's included. ``evidence``: the folder the evidence records go to, when
    not the matrix's (a plugin's cells run on its adapter's matrix, its records stay its own).
    ``sources``: files and folders (relative to ``root``) a record ran on beside the matrix's
    ``evidence: sources:``, so that changing them ages the records (a plugin's own code).
    ``tests``: a :class:`Pytest` or a :class:`Command`. ``suites``: the suite groups that
    count (the record keeps only these; each must pass at least one test); ``None``:
    the matrix's ``evidence: suites:``, or every group that ran when it names none. ``build``: the native part, a command printing JSON
    (``("adapter-matrix", "build", "--json")``) or a function of the :class:`CellRun`
    returning a dict (``source_hash``, ``build_seconds``, ``compiled``) or ``None``.
    ``requirements``: more to install with the adapter (a list, or a function of the
    plan row). ``env``: set for every command of the cell (a driver's version, say).
    ``ops``: an :class:`OpSweep`, PyTorch's own op tests on the device beside the tests.
    """

    matrix: str = "compat.yaml"
    projects: Sequence[str] = (".",)
    tests: Union[Pytest, Command] = Pytest()
    suites: Optional[Sequence[str]] = None
    build: Union[Sequence[str], Callable[[CellRun], Optional[Dict[str, Any]]], None] = None
    requirements: Union[Sequence[str], Callable[[PlanRow], Sequence[str]]] = ()
    layers: Sequence[str] = ()
    evidence: Optional[str] = None
    sources: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    after_check: Optional[Callable[[CellRun], None]] = None
    after_tests: Optional[Callable[[CellRun], None]] = None
    description: str = "Install this cell's torch and the adapter's wheels, check the environment, run the tests."
    root: Optional[str] = None  # the folder the paths are relative to (default: where nox runs, the noxfile's)
    # a project that compiles against torch (``torch`` in its build requirements) is built in each
    # cell (ci/adapterbuild.py): from its sdist unless ``sdist`` is off, within ``build_timeout`` s,
    # by ``build_command`` when given (the adapter's own: it leaves one wheel in ``{out}``)
    sdist: bool = True
    build_timeout: float = _adapterbuild.DEFAULT_TIMEOUT
    build_command: Optional[Sequence[str]] = None
    # before the tests: import the adapter and create a tensor on its device ("tensor"), or only
    # import it ("import", for an adapter whose device holds no memory yet)
    load: str = "tensor"
    ops: Optional[OpSweep] = None

    def __post_init__(self) -> None:
        if self.load not in _load.LOAD_MODES:
            raise ValueError(f"Adapter(load={self.load!r}): choose from {', '.join(_load.LOAD_MODES)}")


class Beside:
    """A command running in the cell beside its steps (:meth:`CellRun.beside`)."""

    def __init__(self, cell: CellRun, what: str, proc: subprocess.Popen, log: str, codes: Tuple[int, ...]) -> None:
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


class CellRun:
    """One cell while it runs: the nox session, its plan row, and what its record will say.

    Hooks may set :attr:`refusals` (what a companion refusal probe kept); it and :attr:`ops`
    (the op sweep's summary, set when the cell's :class:`OpSweep` is done) go into the
    result record.
    """

    def __init__(self, session: nox.Session, row: PlanRow, cells_: Cells) -> None:
        self.session = session
        self.row = row
        self.adapter = cells_.adapter
        self.cells = cells_
        self.matrix: Matrix = cells_.matrix
        self.root = cells_.root
        self.results = results_dir(self.root)
        # where non-pytest suites leave counts; absolute, because nox's tmp folder is relative to
        # where nox started and the op sweep runs from another folder
        self.summaries = os.path.abspath(os.path.join(session.create_tmp(), "suites"))
        shutil.rmtree(self.summaries, ignore_errors=True)
        self.env: Dict[str, str] = {
            "PIP_CONSTRAINT": "",
            **self.adapter.env,
        }  # the cell decides torch, not a machine-wide pin
        self.phases: Dict[str, float] = {}
        self.phase_cpu: Dict[str, float] = {}
        self._nested: List[Tuple[float, float]] = []  # wall and CPU time spent in phases inside the open ones
        self.check: Optional[Dict[str, Any]] = None
        self.build: Optional[Dict[str, Any]] = None
        self.builds: List[Dict[str, Any]] = []  # each project built against the cell's torch, in order
        self.suites: Optional[Suites] = None
        self.ops: Optional[OpsSummary] = None
        self._sweep: Optional[Beside] = None  # the op sweep, running beside the tests
        self.refusals: List[Dict[str, Any]] = []
        self.companions_unavailable: Dict[str, str] = {}  # companion name -> why the index had none
        self.attempt: Optional[InstallAttempt] = None
        self.tree: Dict[str, Any] = {}
        self.offline = [p for p in os.environ.get(WHEELS_ENV, "").split(os.pathsep) if p]
        self._beside: List[Beside] = []  # commands started beside the steps (beside())

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

    def json_run(self, *args: str, codes: Sequence[int] = (0,)) -> Dict[str, Any]:
        """Run a command that prints one JSON document (after any log lines) and return it."""
        out = self.run(*args, codes=codes, silent=True)
        return json.loads(out[out.index("{") :])

    @property
    def summaries_env(self) -> Dict[str, str]:
        """The environment under which a non-pytest suite's :func:`write_summary` lands in this cell's record."""
        return {SUMMARIES_ENV: self.summaries}

    def verify(self, check: Mapping[str, Any]) -> None:
        """Raise :class:`CellMismatch` unless ``check`` (``check --json``) saw this cell: its Python,
        torch and variant, each companion installed with torch, and a verdict that is not unsupported."""
        verify_environment(self.row, dict(check), self.attempt.picks if self.attempt else ())

    def check_json(self) -> Dict[str, Any]:
        """The cell's own ``adapter-matrix check --json`` on this matrix (exit 0, 1 or 3): never the
        copy running nox, which would judge nox's environment instead of the cell's."""
        layers = [o for layer in self.adapter.layers for o in ("--matrix", os.path.join(self.root, layer))]
        return self.json_run(self._bin(TOOL), "check", "--json", "--matrix", self.matrix.path, *layers, codes=(0, 1, 3))

    def load(self) -> Dict[str, Any]:
        """Import the installed adapter and (``Adapter(load="tensor")``) create a tensor on the
        matrix's device, in the cell; fail the cell with the adapter's own error if it does not load."""
        adapter = self.matrix.adapter
        args = _load.command(adapter.distribution, adapter.device, self.adapter.load == "tensor")
        found = self.json_run("python", *args, codes=(0, 1))
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
            self._bin(TOOL),
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

    def step(self, what: str, run: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
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

    # -- the record -------------------------------------------------------------------

    def record(self, outcome: str, message: Optional[str] = None) -> ResultRecord:
        """Write the result record and, unless posargs narrowed the run, the evidence record."""
        for running in self._beside:  # a cell that ends early leaves nothing running
            running.stop()
        record = ResultRecord.planned(self.row).seen(self.check)
        record = record.built(self.build).compiled(self.builds).tested(self.suites).on_sources(self.tree)
        record = dataclasses.replace(
            record,
            ops=self.ops,
            companion_refusals=list(self.refusals),
            companions_unavailable=dict(self.companions_unavailable),
        )
        written = write_record(self.results, record.finished(outcome, message, self.phases, phase_cpu=self.phase_cpu))
        self.session.log(f"result record: {written.path}")
        if self.session.posargs:  # a narrowed suite is not evidence for the cell
            self.session.log("posargs narrow the suite: no evidence record written")
        else:  # into the folder of the record's release; refused (with why) when it is not evidence of it
            try:
                own = self.adapter.evidence
                folder = os.path.join(self.root, own) if own else _evidence.evidence_folder(self.matrix)
                self.session.log(f"evidence record: {_evidence.write_evidence(folder, written, self.matrix)}")
            except _evidence.EvidenceError as exc:
                self.session.warn(f"no evidence record written: {exc}")
        return written

    def fail(self, message: str) -> None:
        self.record("failed", message)
        self.session.error(message)

    # -- a compiled adapter ------------------------------------------------------------

    def adapter_wheels(self, pure: Sequence[str]) -> List[str]:
        """The adapter's wheels in ``projects`` order: the pure-Python ones built for the run
        (``pure``), each compiled one built here, against this cell's torch and Python."""
        out: List[str] = []
        pure_left = list(pure)
        paths = [os.path.join(self.root, p) for p in self.adapter.projects]
        compiled = [self.cells.compiled(p) for p in paths]
        for i, (project, path) in enumerate(zip(self.adapter.projects, paths)):
            if not compiled[i]:
                if pure_left:
                    out.append(pure_left.pop(0))
                continue
            with self.phase("build"):
                out.append(self._build_compiled(project, path, [_adapterbuild.project_name(p) for p in paths[:i]]))
            if any(compiled[i + 1 :]):  # a later project builds against this one: it must be installed first
                self.step(f"installing {os.path.basename(out[-1])}", self.install, *out, *self.cells.tool(self.session))
        return out

    def _bin(self, name: str) -> str:
        return os.path.join(str(self.session.virtualenv.location), "bin", name)

    def _build_compiled(self, project: str, path: str, earlier: Sequence[str] = ()) -> str:
        from packaging.requirements import Requirement

        from .names import canonical_name

        # torch is the cell's; a project built before this one (the adapter a plugin builds
        # against) is installed already, from its own folder
        given = {"torch", *earlier}
        requires = [r for r in _adapterbuild.build_requires(path) if canonical_name(Requirement(r).name) not in given]
        if requires:  # the backend, from the cell's own sources (offline: the wheel folders)
            self.step("installing the build requirements", self.install, *requires)
        probe = (
            "import importlib.metadata as m, sys, sysconfig; "
            "print(m.version('torch'), sys.implementation.cache_tag, sysconfig.get_platform())"
        )
        torch, tag, platform = str(self.run("python", "-c", probe, silent=True)).split()[-3:]
        name = _adapterbuild.project_name(path) or project
        self.session.log(f"building {name} against torch {torch} ({tag}, {platform})")
        started = time.perf_counter()
        try:
            built = _adapterbuild.build_in_cell(
                path,
                self._bin("python"),
                torch,
                tag,
                platform,
                os.path.join(self.root, ".nox", "_wheels", "compiled"),
                sdist=self.adapter.sdist,
                offline=bool(self.offline),
                timeout=self.adapter.build_timeout,
                command=self.adapter.build_command,
            )
        except _adapterbuild.BuildFailed as exc:
            log = os.path.join(self.results, f"{self.row.id}.build.log")
            os.makedirs(self.results, exist_ok=True)
            from .files import atomic_write

            atomic_write(log, exc.log or str(exc), follow=False)
            self.fail(f"building {name} against torch {torch} failed: {exc} (the whole log: {log})")
            raise  # not reached: fail() ends the session
        self.session.log(("compiled " if built.compiled else "cached build ") + f"{built.wheel.name} ({built.key})")
        facts = {
            "source_hash": built.key.rsplit("-src", 1)[-1],
            "build_seconds": round(time.perf_counter() - started, 2),
            "compiled": built.compiled,
        }
        if self.build is None:  # the record says what the cell's adapter was built from
            self.build = dict(facts)
        version = built.wheel.name.split("-")[1] if built.wheel.name.count("-") >= 2 else None
        self.builds.append({"project": name, "version": version, **facts})
        return str(built.wheel)


def _keep_junit(junit: str, cell: CellRun) -> None:
    """The test run's report as ``results/junit/<cell>.xml``: each test's time (and, from the
    conformance suite, its CPU time) outlives the cell's environment (benchmarks/cell_split.py)."""
    if os.path.exists(junit):
        with open(junit, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        folder = os.path.join(cell.results, "junit")
        os.makedirs(folder, exist_ok=True)
        atomic_write(os.path.join(folder, f"{cell.row.id}.xml"), text, follow=False)


def _note_missing_companions(cell: CellRun, attempts: Sequence[InstallAttempt]) -> None:
    """After torch went in without the cell's companions: ask the index once more for them
    beside it. If it says no again, the record names each one as unavailable (no build for
    this Python and torch on that index), which the evidence gate accepts in place of it;
    a folder of wheels (``find-links``) is no such answer, so nothing is recorded for it."""
    installed = cell.attempt
    assert installed is not None
    missing = [p for p in cell_companions(cell.row) if p not in installed.picks]
    if not missing:
        return
    retry = next(
        (a for a in attempts if a.picks and a.source == installed.source and a.requirement == installed.requirement),
        None,
    )
    if retry is not None and not retry.local:
        try:
            cell.session.install(*retry.options, retry.requirement, *retry.companions, env=cell.env)
            cell.attempt = retry
            return
        except nox.command.CommandFailed:
            cell.companions_unavailable = {
                p.name: f"{p.requirement(retry.variant)} could not be installed beside {retry.requirement} "
                f"for Python {cell.row.cell.python} from {retry.source}, twice; {retry.requirement} alone could"
                for p in missing
            }
    names = ", ".join(p.name for p in missing)
    cell.session.warn(f"installed without {names}: {installed.source} has no build of it for this cell")


def _offline_attempts(attempts: Sequence[InstallAttempt], folders: Sequence[str]) -> List[InstallAttempt]:
    """The attempts with every index replaced by the wheel folders (each distinct attempt once)."""
    out: List[InstallAttempt] = []
    for a in attempts:
        kept: List[str] = []
        options = list(a.options)
        while options:
            opt = options.pop(0)
            value = options.pop(0) if options else ""
            if opt == "--find-links":
                kept += [opt, value]
        kept += ["--no-index", *(o for folder in folders for o in ("--find-links", folder))]
        moved = InstallAttempt(a.source, a.requirement, tuple(kept), a.companions, a.picks, a.variant, True)
        if all(
            (m.requirement, m.companions, m.options) != (moved.requirement, moved.companions, moved.options)
            for m in out
        ):
            out.append(moved)
    return out


class Cells:
    """The cells :func:`cells` declared: the matrix, the plan rows by id, the adapter."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.root = os.path.abspath(adapter.root or os.getcwd())
        path = os.environ.get("ADAPTER_MATRIX_NOX_MATRIX") or os.path.join(self.root, adapter.matrix)
        self.matrix_file = os.path.abspath(path)  # for a command that runs outside the root (the op sweep)
        self.matrix: Matrix = load_matrix(path).matrix
        # the rows this tree can test: a release frozen with other sources is past (docs/releasing.md)
        self.rows: Dict[str, PlanRow] = {
            row.id: row for row in plan(self.matrix, "full", skip=past_releases(self.matrix))
        }
        self._wheels: List[str] = []
        self._tool: Optional[List[str]] = None

    @property
    def more_sources(self) -> List[str]:
        """``Adapter(sources=...)`` relative to the matrix's folder, as its ``evidence: sources:`` are."""
        base = os.path.dirname(os.path.abspath(self.matrix.path))
        return [os.path.relpath(os.path.join(self.root, s), base).replace(os.sep, "/") for s in self.adapter.sources]

    def compiled(self, project: str) -> bool:
        """Whether ``project`` (a folder) is built in each cell: it compiles against torch, or
        the adapter brings its own build command."""
        return _adapterbuild.builds_against_torch(project) or (
            self.adapter.build_command is not None and _adapterbuild.project_name(project) != TOOL
        )

    def wheels(self, session: nox.Session) -> List[str]:
        """The wheels of the pure-Python projects, built once per nox run into ``.nox/_wheels``
        (a compiled project is built in each cell: :meth:`CellRun.adapter_wheels`)."""
        if not self._wheels:
            projects = [os.path.join(self.root, p) for p in self.adapter.projects]
            pure = [p for p in projects if not self.compiled(p)]
            if pure:
                session.log(f"building the wheels of {', '.join(os.path.relpath(p, self.root) for p in pure)}")
                self._wheels.extend(str(w) for w in build_wheels(pure, os.path.join(self.root, ".nox", "_wheels")))
        return self._wheels

    def tool(self, session: nox.Session) -> List[str]:
        """adapter-matrix for the cell, as a wheel of the copy running nox (once per run), so that
        the cell's ``check`` and the adapter's ``require()`` run in the cell's own environment;
        none when a project is adapter-matrix itself (this repository)."""
        if self._tool is None:
            projects = [os.path.join(self.root, p) for p in self.adapter.projects]
            if any(_adapterbuild.project_name(p) == TOOL for p in projects):
                self._tool = []
            else:
                session.log(f"packing {TOOL} (the copy running nox) for the cells")
                self._tool = [str(tool_wheel(os.path.join(self.root, ".nox", "_wheels", "tool")))]
        return self._tool

    def run(self, session: nox.Session, row: PlanRow) -> None:
        cell = CellRun(session, row, self)
        try:
            cell.tree = tree_state(self.matrix, self.more_sources)  # the sources this run tests, taken before it starts
        except _evidence.EvidenceError as exc:
            session.error(str(exc))
        cell.sweep_plan()  # a wrong $ADAPTER_MATRIX_OPS fails the cell before anything installs
        with cell.phase("install"):
            self._install(cell)
        with cell.phase("check"):
            cell.check = cell.step("adapter-matrix check", cell.check_json)
            try:
                cell.verify(cell.check)
                if self.adapter.after_check:
                    self.adapter.after_check(cell)
            except CellMismatch as exc:
                cell.fail(str(exc))
        build = self.adapter.build
        if build is not None:
            with cell.phase("build"):
                cell.build = build(cell) if callable(build) else cell.step("the build", cell.json_run, *build)
        with cell.phase("load"):
            cell.step("loading the adapter", cell.load)
            # Checked again now that every library exists: a core compiled by the build step or
            # at the first import is one the loader reads too, and the record's binary check
            # must have read it (the check before the build saw only the wheel's files).
            cell.check = cell.step("adapter-matrix check after the load", cell.check_json)
            try:
                cell.verify(cell.check)
            except CellMismatch as exc:
                cell.fail(str(exc))
        cell.start_op_sweep()  # beside the tests: the adapter is installed, built and loads
        with cell.phase("tests"):
            junit = self._test(cell)
        cell.finish_op_sweep()
        if self.adapter.after_tests:
            self.adapter.after_tests(cell)
        self._judge(cell, junit)
        cell.record("passed")

    def _install(self, cell: CellRun) -> None:
        row, session = cell.row, cell.session
        try:
            attempts = install_attempts(row)
        except ValueError as exc:
            cell.fail(str(exc))
        if cell.offline:
            attempts = _offline_attempts(attempts, cell.offline)
        for attempt in attempts:
            try:
                session.install(*attempt.options, attempt.requirement, *attempt.companions, env=cell.env)
                cell.attempt = attempt
                break
            except nox.command.CommandFailed:
                session.warn(f"could not install {attempt.describe()}; trying the next")
        else:
            cell.fail(f"no source could install torch {row.cell.torch} for Python {row.cell.python}")
        _note_missing_companions(cell, attempts)
        wanted = self.adapter.requirements
        more = list(wanted(row) if callable(wanted) else wanted)
        tester = ["pytest"] if isinstance(self.adapter.tests, Pytest) else []
        if cell.sweep_plan()[0] != "none":  # PyTorch's test machinery imports expecttest and numpy
            more += [r for r in op_sweep_requirements(str(row.cell.torch)) if r not in more]
        # as a user installs them: wheels, with their dependencies (torch is already the cell's)
        try:
            tool = self.tool(session)
        except WheelBuildError as exc:
            cell.fail(f"cannot install {TOOL} into the cell: {exc}")
        cell.step(
            "installing the adapter", cell.install, *cell.adapter_wheels(self.wheels(session)), *tool, *tester, *more
        )
        extras = os.environ.get(EXTRAS_ENV, "").split()
        if extras:
            cell.step(f"installing {' '.join(extras)}", cell.install, *extras)

    def _test(self, cell: CellRun) -> Optional[str]:
        tests, session = self.adapter.tests, cell.session
        summaries = cell.summaries_env
        if isinstance(tests, Pytest):
            junit = os.path.join(session.create_tmp(), "junit.xml")
            if os.path.exists(junit):
                os.unlink(junit)
            ignores = [o for path in tests.ignore for o in ("--ignore", path)]
            # `pytest`, not `python -m pytest`: the working directory stays off sys.path, so the
            # adapter imported is the installed wheel, never this source tree
            cell.step(
                "the test run",
                cell.run,
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
            _keep_junit(junit, cell)
            return junit
        args = list(tests.args)
        if "{posargs}" in args:
            i = args.index("{posargs}")
            args[i : i + 1] = list(session.posargs)
        else:
            args += list(session.posargs)
        try:
            cell.run(*args, env=summaries)
            outcome = TestCounts(passed=1)
        except nox.command.CommandFailed:
            outcome = TestCounts(failed=1)
        if not read_summaries(cell.summaries):
            write_summary(tests.suite, outcome, cell.summaries)
        return None

    def _judge(self, cell: CellRun, junit: Optional[str]) -> None:
        root = self.adapter.tests.path if isinstance(self.adapter.tests, Pytest) else SUITE_ROOT
        ran = read_junit(junit, root) if junit and os.path.exists(junit) else {}
        suites = merge_suites(ran, read_summaries(cell.summaries))
        wanted = self.adapter.suites if self.adapter.suites is not None else (self.matrix.evidence.suites or None)
        cell.suites, problem = judge(suites, wanted, narrowed=bool(cell.session.posargs))
        if problem:
            cell.fail(problem)


def cells(adapter: Adapter) -> Cells:
    """Declare the ``device(...)`` sessions of ``adapter``'s matrix (one per row of ``plan
    --strategy full``) and make the cells' Pythons findable (pyenv's, uv's, ``PATH``'s)."""
    declared = Cells(adapter)
    rows = declared.rows
    expose(sorted({str(r.cell.python) for r in rows.values()}))

    def device(session: nox.Session, cell: str) -> None:
        try:
            declared.run(session, rows[cell])
        finally:
            if os.environ.get(DROP_ENV):  # a CUDA torch environment holds 5-7 GB; the uv cache keeps the wheels
                shutil.rmtree(session.virtualenv.location, ignore_errors=True)

    device.__doc__ = adapter.description
    params = [nox.param(str(r.cell.python), r.id, id=r.id, tags=list(r.tags)) for r in rows.values()]
    nox.session(name=SESSION)(nox.parametrize("python,cell", params)(device))
    return declared
