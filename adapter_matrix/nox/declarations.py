"""What an adapter's noxfile declares: the :class:`Adapter`, its tests (:class:`Pytest` or
:class:`Command`), its :class:`OpSweep`, and the environment variables a run reads.

The hooks (``build``, ``after_check``, ``after_tests``) are functions of the cell's run
(:class:`adapter_matrix.nox.cellrun.CellRun`); they are declared ``Callable[..., ...]`` here
because the run reads these declarations, and a module never imports one that imports it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from ..ci import adapterbuild as _adapterbuild
from ..ci import load as _load
from ..ci.plan import PlanRow
from ..ci.record import OpsSummary
from ..device import opsweep as _opsweep
from ..device import optests as _optests
from ..device.build import build_requirements as _build_requirements
from ..device.opsweep.record import read_record as _read_sweep
from ..device.opsweep.record import summary as _sweep_summary
from ..device.optests import packrecord as _packrecord

WHEELS_ENV = "ADAPTER_MATRIX_WHEELS"  # offline: install only from these folders (os.pathsep separated)
DROP_ENV = "ADAPTER_MATRIX_DROP_ENVS"  # remove each cell's environment when it is done (disk)
EXTRAS_ENV = "ADAPTER_MATRIX_CELL_EXTRAS"  # more requirements after the adapter (space separated)
OPS_ENV = _opsweep.OPS_ENV  # sample (default), full or none: how much of PyTorch's OpInfo tests an op sweep runs
SWEEP_MODES = _opsweep.SWEEP_MODES
OPS_COMPILE_ENV = _opsweep.OPS_COMPILE_ENV  # on (default) or off: whether an op sweep adds the compiled sample
COMPILE_MODES = _opsweep.COMPILE_MODES
OPS_TESTS_ENV = _optests.TESTS_ENV  # on or off: whether the cells run their OpTests (PyTorch's test files)


def native_build_requirements(torch: str) -> List[str]:
    """What ``adapter-matrix build`` (the native part, from the shims' ``csrc``) needs beside ``torch`` (a version)."""
    return _build_requirements(torch)


def op_sweep_requirements(torch: str) -> List[str]:
    """What ``adapter-matrix ops sweep`` needs beside ``torch`` (a version)."""
    return _opsweep.requirements(torch)


def op_sweep_summary(path: str, results: str) -> OpsSummary:
    """The counts a result record keeps of the sweep record at ``path`` (named relative to ``results``)."""
    return OpsSummary.of(_sweep_summary(_read_sweep(path), os.path.relpath(path, results)))


def op_tests_summary(path: str) -> Dict[str, Any]:
    """What a result record keeps (``ops.tests``) of the ``ops tests`` record at ``path``."""
    import json

    from ..files import read_regular

    return _packrecord.summary(_packrecord.check(json.loads(read_regular(path)), path))


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
class OpTests:
    """PyTorch's own test files of a test pack on the adapter's device in each cell: ``adapter-matrix
    ops tests`` after the tests and the op sweep, through PyTorch's device hooks, with the
    adapter's override file (docs/op-coverage.md "PyTorch's test files").

    Run only when asked: ``$ADAPTER_MATRIX_OPS_TESTS=on`` (``adapter-matrix tier --ops tests``)
    or ``default=True``; ``=off`` skips them. ``files``: test files of the pack (default: all of
    it). ``pack``: an archive or a folder (relative to ``root``), with ``sha256`` for an archive
    the tool's table does not pin; default: the cell's torch release's pack in the user cache
    (``adapter-matrix ops pack X.Y.Z``). ``overrides``, ``expected``: as ``ops tests``' options
    (default: the files next to the matrix). ``control``: ``"cpu"`` runs the failures again on
    CPU. The record goes to ``results/op-tests/<cell>.json``, each file's counts to the suite
    group ``op-tests-<file>``, and a summary to the result record's ``ops.tests``.
    """

    files: Sequence[str] = ()
    pack: Optional[str] = None
    sha256: Optional[str] = None
    overrides: Sequence[str] = ()
    expected: Optional[str] = None
    control: Optional[str] = None
    activate: Optional[str] = None
    jobs: int = 1
    timeout: float = 1800.0  # seconds one file (or shard) may run
    default: bool = False

    def __post_init__(self) -> None:
        if self.control not in (None, "cpu"):
            raise ValueError(f"OpTests(control={self.control!r}): only 'cpu'")
        if self.jobs < 1:
            raise ValueError(f"OpTests(jobs={self.jobs}): at least 1")

    def wanted(self, environ: Mapping[str, str]) -> bool:
        """Whether this run runs them: ``$ADAPTER_MATRIX_OPS_TESTS`` if set, else :attr:`default`."""
        mode = environ.get(OPS_TESTS_ENV) or ("on" if self.default else "off")
        if mode not in _optests.TESTS_MODES:
            raise ValueError(f"${OPS_TESTS_ENV}={mode!r}: choose from {', '.join(_optests.TESTS_MODES)}")
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
    ``op_tests``: an :class:`OpTests`, PyTorch's own test files of a test pack, when a run asks.
    """

    matrix: str = "compat.yaml"
    projects: Sequence[str] = (".",)
    tests: Union[Pytest, Command] = Pytest()
    suites: Optional[Sequence[str]] = None
    build: Union[Sequence[str], Callable[..., Optional[Dict[str, Any]]], None] = None  # a function of the CellRun
    requirements: Union[Sequence[str], Callable[[PlanRow], Sequence[str]]] = ()
    layers: Sequence[str] = ()
    evidence: Optional[str] = None
    sources: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    after_check: Optional[Callable[..., None]] = None  # a function of the CellRun, as after_tests
    after_tests: Optional[Callable[..., None]] = None
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
    op_tests: Optional[OpTests] = None

    def __post_init__(self) -> None:
        if self.load not in _load.LOAD_MODES:
            raise ValueError(f"Adapter(load={self.load!r}): choose from {', '.join(_load.LOAD_MODES)}")
