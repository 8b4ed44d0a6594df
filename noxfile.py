"""Test sessions, generated from compat.yaml through adapter_matrix (nothing here parses YAML).

    nox -l                               # every cell (a bare `nox` runs them all: select a tier!)
    nox -t smoke                         # the CI tier: the oldest cell and the local torch
    nox -t edges                         # per torch line, its oldest and newest Python
    nox -t torch2.4 -p 3.8               # one torch line on one Python
    nox -s "device(py3.11-torch2.13)"    # one cell, by the id `adapter-matrix plan` prints
    nox -t unit                          # the tool's own tests on every local Python
    nox -s hooks                         # the pre-commit hooks, through `pre-commit try-repo`
    nox -s lint                          # ruff check, ruff format --check, mypy
    nox -s docs                          # mkdocs build --strict (every link and anchor of docs/)

Select with tags and -p; -k matches substrings (`torch2.1` also matches `torch2.10`).
Each device session installs the cell's torch from the source compat.yaml names (with
its fallbacks; $ADAPTER_MATRIX_TORCH_INDEX_URL overrides) together with the companions of
its torch line (`ci: companions:`; $ADAPTER_MATRIX_CELL_COMPANIONS overrides), installs the tool and the
adapter as wheels (built once per nox run from sdists, as an index would serve them), checks
with `adapter-matrix check --json` that the environment is the cell it claims, proves that
check refuses a companion built for another torch, builds the
C++ core (cached), runs the conformance suite, sweeps PyTorch's own op tests on the device
(`adapter-matrix ops sweep`: the fixed sample; the whole op_db and module_db with
ADAPTER_MATRIX_OPS=full, none with =none; the sweep record goes to results/ops/, its counts
to the suite group `ops`) and writes a result record to results/ and its compact evidence
copy to evidence/<release>/<cell>.json (committed; a run narrowed with posargs,
`nox -s ... -- -k amp`, writes no evidence, and neither does a run of a frozen release's row
on later code, nor one weaker than the committed record: docs/releasing.md).

    ADAPTER_MATRIX_OPS=full nox -s "device(py3.11-torch2.13)"   # a cell with the whole op sweep
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from typing import Optional

import nox

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)

from adapter_matrix.ci import cells as _cells  # noqa: E402
from adapter_matrix.ci import evidence as _evidence  # noqa: E402
from adapter_matrix.ci.interpreters import expose  # noqa: E402
from adapter_matrix.ci.plan import SESSION, plan  # noqa: E402
from adapter_matrix.ci.wheels import build_wheels  # noqa: E402
from adapter_matrix.device import opsweep as _opsweep  # noqa: E402
from adapter_matrix.device.build import build_requirements  # noqa: E402
from adapter_matrix.device.opsweep.record import read_record, summary  # noqa: E402
from adapter_matrix.matrix.cache import load_matrix  # noqa: E402

MATRIX = load_matrix(os.environ.get("ADAPTER_MATRIX_NOX_MATRIX", os.path.join(ROOT, "compat.yaml"))).matrix
ROWS = {row.id: row for row in plan(MATRIX, "full")}
UNIT_PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
PROJECTS = [ROOT, os.path.join(ROOT, "npu")]  # the tool, then the reference adapter (it depends on the tool)
EXTRAS_ENV = "ADAPTER_MATRIX_CELL_EXTRAS"  # more requirements after torch (e.g. torchvision)
DROP_ENV = "ADAPTER_MATRIX_DROP_ENVS"  # remove each cell's environment when it is done (disk)
EXPECTED_OPS = os.path.join("tests", "ops", "expected.yaml")  # what the op sweep expects, per torch era

nox.options.default_venv_backend = "uv|virtualenv"
# A bare `nox` (and `nox -l --json`) means every cell of the matrix: hours and tens of GB
# of torch downloads. Select a tier with -t.
nox.options.sessions = [SESSION]

expose(sorted({str(r.cell.python) for r in ROWS.values()} | set(UNIT_PYTHONS)))


@nox.session(python=UNIT_PYTHONS, tags=["unit"])
def unit(session: nox.Session) -> None:
    """The tool's own tests (no torch): the CLI must work on every Python torch supports."""
    session.install("-e", ".[test]")
    session.install("--no-deps", "-e", "./npu")  # the shims' sources, for the tests that read them (no torch)
    session.run("python", "-m", "pytest", "tests/unit", "-q", *session.posargs)


@nox.session(python="3.11", tags=["hooks"])
def hooks(session: nox.Session) -> None:
    """`pre-commit try-repo` runs .pre-commit-hooks.yaml on a sample adapter repository (offline, about a minute)."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", "tests/unit/test_precommit.py", "-m", "precommit", "-q", *session.posargs)


@nox.session(python="3.11", tags=["lint"])
def lint(session: nox.Session) -> None:
    """ruff (lint and format) and mypy, configured in pyproject.toml; `nox -s lint -- --fix` fixes what ruff can."""
    session.install("-e", ".[lint]")
    fix = "--fix" in session.posargs
    session.run("ruff", "check", *(["--fix"] if fix else []), ".")
    session.run("ruff", "format", *([] if fix else ["--check"]), ".")
    session.run("mypy")  # the files and settings are [tool.mypy] in pyproject.toml


@nox.session(python="3.11", tags=["docs"])
def docs(session: nox.Session) -> None:
    """The docs/ site with MkDocs: `--strict` fails on any broken link or anchor (offline once installed)."""
    session.install("-r", os.path.join(ROOT, "docs", "requirements.txt"))
    session.run("mkdocs", "build", "--strict", "--site-dir", os.path.join(ROOT, ".nox", "_site"), *session.posargs,
                env={"NO_MKDOCS_2_WARNING": "1"})  # mkdocs-material's end-of-life banner, not a docs finding


_wheels: list = []


def _built_wheels(session: nox.Session) -> list:
    """The tool's and the adapter's wheels, built once per nox run."""
    if not _wheels:
        session.log("building the wheels of adapter-matrix and adapter-matrix-npu")
        _wheels.extend(str(w) for w in build_wheels(PROJECTS, os.path.join(ROOT, ".nox", "_wheels")))
    return _wheels


def _json_run(session: nox.Session, *args: str, codes=(0,)) -> dict:
    out = session.run(*args, silent=True, success_codes=list(codes))
    return json.loads(out[out.index("{") :])


@nox.session(name=SESSION)
@nox.parametrize(
    "python,cell",
    [nox.param(str(r.cell.python), r.id, id=r.id, tags=list(r.tags)) for r in ROWS.values()],
)
def device(session: nox.Session, cell: str) -> None:
    """Build the npu device against this cell's torch and run the conformance suite."""
    try:
        _run_cell(session, ROWS[cell])
    finally:
        if os.environ.get(DROP_ENV):  # a CUDA torch environment holds 5-7 GB; the uv cache keeps the wheels
            shutil.rmtree(session.virtualenv.location, ignore_errors=True)


def _refusal(session: nox.Session, row, attempt, pick, env) -> dict:
    """Install a release of ``pick`` built for another torch with --no-deps, prove that
    `check` refuses it (exit 1, both versions named, a fix that installs ``pick``), then
    put ``pick`` back and prove that `check` is content again."""
    lines = [line.minor for line in MATRIX.torch if row.cell.python in line.python]
    probe = pick.mismatched(row.cell.torch, lines)
    if probe is None:
        return {"companion": pick.name, "skipped": f"no release of it is built for another torch on Python {row.cell.python}"}
    probe_requirement = f"{pick.name}=={probe}" + (f"+{attempt.variant}" if attempt.variant else "")
    session.install("--no-deps", *attempt.options, probe_requirement, env=env)
    refused = _json_run(session, "adapter-matrix", "check", "--json", "--matrix", MATRIX.path, codes=(0, 1, 3))
    try:
        kept = _cells.verify_refusal(refused, pick, str(probe), refused["checks"][0]["environment"]["torch"])
    finally:
        session.install("--no-deps", *attempt.options, pick.requirement(attempt.variant), env=env)
    restored = _json_run(session, "adapter-matrix", "check", "--json", "--matrix", MATRIX.path, codes=(0, 1, 3))
    _cells.verify_environment(row, restored, attempt.picks)
    return dict(kept, companion=pick.name, restored_exit_code=restored["exit_code"])


def _run_cell(session: nox.Session, row) -> None:
    results = _cells.results_dir(ROOT)
    summaries = os.path.join(session.create_tmp(), "suites")  # where non-pytest suites leave their counts
    shutil.rmtree(summaries, ignore_errors=True)
    phases: dict = {}
    check = build = suites = ops = None
    refusals: list = []
    mode = os.environ.get(_opsweep.OPS_ENV, "sample")
    if mode not in _opsweep.SWEEP_MODES:
        session.error(f"${_opsweep.OPS_ENV}={mode!r}: choose from {', '.join(_opsweep.SWEEP_MODES)}")
    try:
        tree = _cells.tree_state(MATRIX)  # the sources this run tests, taken before it starts
    except _evidence.EvidenceError as exc:
        session.error(str(exc))

    def record(outcome: str, message: Optional[str] = None) -> None:
        written = _cells.write_record(results, row, check, suites, build, phases, outcome, message, tree, ops, refusals)
        session.log(f"result record: {written['_path']}")
        if session.posargs:  # a narrowed suite is not evidence for the cell
            session.log("posargs narrow the suite: no evidence record written")
        else:  # into the folder of the record's release; refused (with why) when it is not evidence of it
            try:
                session.log(f"evidence record: {_evidence.write_evidence(_evidence.evidence_folder(MATRIX), written, MATRIX)}")
            except _evidence.EvidenceError as exc:
                session.warn(f"no evidence record written: {exc}")

    def fail(message: str) -> None:
        record("failed", message)
        session.error(message)

    def step(what: str, run, *args, **kwargs):
        """Run one step; a step that fails (a compile error, a crashed suite) fails the cell with a record."""
        try:
            return run(*args, **kwargs)
        except nox.command.CommandFailed as exc:
            fail(f"{what} failed: {exc.reason or exc}")

    start = time.perf_counter()
    env = {"PIP_CONSTRAINT": ""}  # pip on this kind of machine caps torch; the cell decides
    try:
        attempts = _cells.install_attempts(row)
    except ValueError as exc:
        fail(str(exc))
    for attempt in attempts:
        try:
            session.install(*attempt.options, attempt.requirement, *attempt.companions, env=env)
            break
        except nox.command.CommandFailed:
            session.warn(f"could not install {attempt.describe()}; trying the next")
    else:
        fail(f"no source could install torch {row.cell.torch} for Python {row.cell.python}")
    missing = [p.name for p in _cells.cell_companions(row) if p not in attempt.picks]
    if missing:
        session.warn(f"installed without {', '.join(missing)}: no source has a build for this cell")
    # as a user installs them: wheels, with their dependencies (torch is already the cell's)
    step("installing the adapter", session.install, *_built_wheels(session), "pytest", *build_requirements(str(row.cell.torch)),
         *_opsweep.requirements(str(row.cell.torch)), env=env)
    extras = os.environ.get(EXTRAS_ENV, "").split()
    if extras:
        step(f"installing {' '.join(extras)}", session.install, *extras, env=env)
    phases["install"] = time.perf_counter() - start

    start = time.perf_counter()
    check = step("adapter-matrix check", _json_run, session, "adapter-matrix", "check", "--json", "--matrix", MATRIX.path, codes=(0, 1, 3))
    try:
        _cells.verify_environment(row, check, attempt.picks)
        refusals = [_refusal(session, row, attempt, pick, env) for pick in attempt.picks]
    except _cells.CellMismatch as exc:
        fail(str(exc))
    phases["check"] = time.perf_counter() - start

    start = time.perf_counter()
    build = step("the build", _json_run, session, "adapter-matrix", "build", "--json", "--matrix", MATRIX.path)
    phases["build"] = time.perf_counter() - start

    start = time.perf_counter()
    probe = step("the probe", _json_run, session, "adapter-matrix", "probe", "--json", "--matrix", MATRIX.path)
    os.makedirs(os.path.join(results, "probes"), exist_ok=True)
    with open(os.path.join(results, "probes", f"torch-{row.cell.line.minor}.json"), "w") as fh:
        json.dump(probe, fh, indent=2)
    phases["probe"] = time.perf_counter() - start

    start = time.perf_counter()
    junit = os.path.join(session.create_tmp(), "junit.xml")
    # `pytest`, not `python -m pytest`: the working directory stays off sys.path, so
    # adapter_matrix and shims are the installed wheels, never this source tree
    step("the test run", session.run, "pytest", _cells.SUITE_ROOT, "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
         "-o", "junit_family=xunit1", *session.posargs,  # xunit1 names each test's file: its suite group
         "--ignore", os.path.join(_cells.SUITE_ROOT, "test_opinfo.py"),  # its sample is the ops step below
         env={_cells.SUMMARIES_ENV: summaries}, success_codes=[0, 1])
    phases["tests"] = time.perf_counter() - start

    if mode != "none":  # the op sweep: its counts are the suite group `ops` (a summary), its record results/ops/
        start = time.perf_counter()
        ops_path = os.path.join(results, "ops", f"{row.id}.json")
        step("the op sweep", session.run, "adapter-matrix", "ops", "sweep", "--matrix", MATRIX.path, "--expected", EXPECTED_OPS,
             "--output", ops_path, *(["--sample"] if mode == "sample" else []),
             env={_cells.SUMMARIES_ENV: summaries}, success_codes=[0, 1])
        phases["ops"] = time.perf_counter() - start
        ops = summary(read_record(ops_path), os.path.relpath(ops_path, results))
    suites = _cells.merge_suites(_cells.read_junit(junit), _cells.read_summaries(summaries))
    broken = [f"{group}: {c.failed} failed, {c.errors} errors" for group, c in suites.items() if not c.ok]
    if broken or _cells.total(suites).passed == 0:
        fail("; ".join(broken) or "no test passed")
    record("passed")
