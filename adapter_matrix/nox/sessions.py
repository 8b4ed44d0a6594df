"""The ``device(...)`` nox sessions: :func:`cells` declares one per plan row, and
:func:`run_cell` is a session's steps (install, check, build, load, tests, record)."""

from __future__ import annotations

import os
import shutil

import nox

from ..ci import evidence as _evidence
from ..ci.evidence import tree_state
from ..ci.interpreters import expose
from ..ci.plan import SESSION, PlanRow
from ..ci.verify import CellMismatch
from .cellinstall import install_cell
from .cellrun import CellRun
from .declarations import DROP_ENV, Adapter
from .declared import Cells


def run_cell(declared: Cells, session: nox.Session, row: PlanRow) -> None:
    """Run the cell of ``row`` in ``session``, to its result record (a failed step writes it too)."""
    cell = CellRun(session, row, declared)
    try:
        cell.tree = tree_state(
            declared.matrix, declared.more_sources
        )  # the sources this run tests, taken before it starts
    except _evidence.EvidenceError as exc:
        session.error(str(exc))
    cell.sweep_plan()  # a wrong $ADAPTER_MATRIX_OPS fails the cell before anything installs
    cell.op_tests_wanted()  # and a wrong $ADAPTER_MATRIX_OPS_TESTS
    with cell.phase("install"):
        install_cell(cell)
    with cell.phase("check"):
        cell.check = cell.step("adapter-matrix check", cell.check_json)
        try:
            cell.verify(cell.check)
            if declared.adapter.after_check:
                declared.adapter.after_check(cell)
        except CellMismatch as exc:
            cell.fail(str(exc))
    build = declared.adapter.build
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
        junit = cell.run_tests()
    cell.finish_op_sweep()
    cell.run_op_tests()  # PyTorch's own test files, when the run asks (OpTests)
    if declared.adapter.after_tests:
        declared.adapter.after_tests(cell)
    cell.judge_suites(junit)
    cell.record("passed")


def cells(adapter: Adapter) -> Cells:
    """Declare the ``device(...)`` sessions of ``adapter``'s matrix (one per row of ``plan
    --strategy full``) and make the cells' Pythons findable (pyenv's, uv's, ``PATH``'s)."""
    declared = Cells(adapter)
    rows = declared.rows
    expose(sorted({str(r.cell.python) for r in rows.values()}))

    def device(session: nox.Session, cell: str) -> None:
        try:
            run_cell(declared, session, rows[cell])
        finally:
            if os.environ.get(DROP_ENV):  # a CUDA torch environment holds 5-7 GB; the uv cache keeps the wheels
                shutil.rmtree(session.virtualenv.location, ignore_errors=True)

    device.__doc__ = adapter.description
    params = [nox.param(str(r.cell.python), r.id, id=r.id, tags=list(r.tags)) for r in rows.values()]
    nox.session(name=SESSION)(nox.parametrize("python,cell", params)(device))
    return declared
