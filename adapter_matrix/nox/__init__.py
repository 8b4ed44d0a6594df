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
   then, with ``Adapter(op_tests=OpTests())`` and ``$ADAPTER_MATRIX_OPS_TESTS=on``,
   PyTorch's own test files of a test pack (``adapter-matrix ops tests``);
7. writes the result record to ``results/`` (the sweep's counts per family under ``ops``,
   its own record under ``results/ops/``) and the evidence record to the matrix's
   evidence folder (a run narrowed with posargs writes no evidence).

Offline: ``ADAPTER_MATRIX_WHEELS=/opt/wheels:/path/to/wheelhouse`` (folders, ``:``
separated) installs everything, torch included, from those folders and never from an
index (``--no-index --find-links ...``).

Hooks (``after_check``, ``after_tests``; ``build`` may be a function too) receive the
:class:`CellRun`, which runs commands in the cell and holds what the record will say.

This package's modules, one job each: :mod:`.declarations` (what a noxfile declares),
:mod:`.declared` (the cells of a matrix and the wheels a run shares), :mod:`.cellstate`
(what a record will say, typed), :mod:`.cellrun` (a cell while it runs), :mod:`.cellinstall`
(installing it), :mod:`.cellrecord` (the records it writes), :mod:`.sessions` (the nox
sessions). This module is the public API noxfiles import.
"""

from __future__ import annotations

from ..ci.interpreters import expose
from ..ci.plan import SESSION
from ..ci.record import OpsSummary
from ..ci.suites import TestCounts, write_summary
from ..ci.verify import CellMismatch, verify_refusal
from .cellrun import Beside, CellRun
from .declarations import (
    COMPILE_MODES,
    DROP_ENV,
    EXTRAS_ENV,
    OPS_COMPILE_ENV,
    OPS_ENV,
    OPS_TESTS_ENV,
    SWEEP_MODES,
    WHEELS_ENV,
    Adapter,
    Command,
    OpSweep,
    OpTests,
    Pytest,
    native_build_requirements,
    op_sweep_requirements,
    op_sweep_summary,
    op_tests_summary,
)
from .declared import Cells
from .sessions import cells

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
    "OpTests",  # PyTorch's own test files of a test pack in the cells, when a run asks
    "OPS_TESTS_ENV",
    "op_tests_summary",
]

expose_pythons = expose  # put interpreters of these feature releases on PATH (pyenv's, uv's), for other sessions
