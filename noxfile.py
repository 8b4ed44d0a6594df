"""Test sessions, generated from compat.yaml through adapter_matrix.nox (nothing here parses YAML).

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
The cells are `adapter_matrix.nox`'s (docs/nox.md), the same library any adapter's
noxfile uses; what is this repository's own is below: the native build, the probe, the
companion refusal probe, the op sweep's settings (`ops=`), and the unit and hooks sessions.
Each device session installs the cell's torch from the source compat.yaml names (with
its fallbacks; $ADAPTER_MATRIX_TORCH_INDEX_URL overrides) together with the companions of
its torch line (`ci: companions:`; $ADAPTER_MATRIX_CELL_COMPANIONS overrides), installs the tool and the
adapter as wheels (built once per nox run from sdists, as an index would serve them), checks
with `adapter-matrix check --json` that the environment is the cell it claims, proves that
check refuses a companion built for another torch, builds the
C++ core (cached), runs the conformance suite and, beside it, sweeps PyTorch's own op tests on the device
(`adapter-matrix ops sweep`: the fixed sample; the whole op_db and module_db with
ADAPTER_MATRIX_OPS=full, none with =none; then the compiled sample, `--compile`, each op of the
sample through torch.compile with inductor, skipped with the reason where the cell's torch declares
the capability `inductor` absent, none with ADAPTER_MATRIX_OPS_COMPILE=off; the sweep record goes
to results/ops/, its counts (both parts) to the suite group `ops`) and writes a result record to results/ and its compact evidence
copy to evidence/<release>/<cell>.json (committed; a run narrowed with posargs,
`nox -s ... -- -k amp`, writes no evidence, and neither does a run of a frozen release's row
on later code, nor one weaker than the committed record: docs/releasing.md). Offline: ADAPTER_MATRIX_WHEELS=/opt/wheels:WHEELHOUSE
installs everything from those folders, never from an index.

    ADAPTER_MATRIX_OPS=full nox -s "device(py3.11-torch2.13)"   # a cell with the whole op sweep
"""

from __future__ import annotations

import glob
import json
import os
import sys

import nox

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)

from adapter_matrix import nox as cells_api

UNIT_PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
LOCAL_WHEELS = "/opt/wheels"  # the development machines keep torch 2.13.0+cpu here (compat.yaml: sources: local)
SUITE_ROOT = "tests/conformance"  # the suite every cell runs; its sub-folders are groups of their own
EXPECTED_OPS = os.path.join("tests", "ops", "expected.yaml")  # what the op sweep expects, per torch era
# PyTorch's test files (`ops tests`) in a cell when ADAPTER_MATRIX_OPS_TESTS=on (`tier --ops tests`):
# the fixture pack in PyTorch's device-generic style, offline, with the reference device's override file
TEST_PACK = os.path.join("tests", "fixtures", "testpack", "pytorch-v2.13.0.tar.gz")
with open(os.path.join(ROOT, TEST_PACK + ".sha256")) as _digest:
    TEST_PACK_SHA256 = _digest.read().split()[0]
OP_TEST_OVERRIDES = os.path.join("tests", "op-tests", "overrides.yaml")

nox.options.default_venv_backend = "uv|virtualenv"
# A bare `nox` (and `nox -l --json`) means every cell of the matrix: hours and tens of GB
# of torch downloads. Select a tier with -t.
nox.options.sessions = [cells_api.SESSION]

cells_api.expose_pythons(UNIT_PYTHONS)


@nox.session(python=UNIT_PYTHONS, tags=["unit"])
def unit(session: nox.Session) -> None:
    """The tool's own tests (no torch): the CLI must work on every Python torch supports."""
    session.install("-e", ".[test]")
    session.install("--no-deps", "-e", "./shims")  # the shims' sources, for the tests that read them (no torch)
    session.run("python", "-m", "pytest", "tests/unit", "-q", *session.posargs)


@nox.session(python="3.11", tags=["hooks"])
def hooks(session: nox.Session) -> None:
    """`pre-commit try-repo` runs .pre-commit-hooks.yaml on a sample adapter repository, and on
    the repository docs/adopting.md builds (offline, a few minutes)."""
    session.install("-e", ".[test]")
    # The adoption page's cell runs on the development machines' torch 2.13.0+cpu wheel: its
    # wheelhouse is built from this environment (no wheel there: that test skips).
    local = sorted(glob.glob(os.path.join(LOCAL_WHEELS, "torch-2.13.0*-cp311-*.whl")))
    if local:
        session.install(local[-1])
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/unit/test_precommit.py",
        "tests/unit/test_adopting.py",
        "-m",
        "precommit",
        "-q",
        *session.posargs,
    )


@nox.session(python="3.11", tags=["lint"])
def lint(session: nox.Session) -> None:
    """This repository's pre-commit hooks on every file (.pre-commit-config.yaml): ruff (lint and
    format) and mypy as pyproject.toml configures them, and the matrix and table hooks it
    publishes for adapters. A hook that changes a file fails the run; run it again to see it pass."""
    session.install("-e", ".[lint]")
    session.install("--no-deps", "-e", "./shims")  # the capabilities table reads the shims' sources (no torch)
    session.run("pre-commit", "run", "--all-files", "--show-diff-on-failure", *session.posargs)


@nox.session(python="3.11", tags=["docs"])
def docs(session: nox.Session) -> None:
    """The docs/ site with MkDocs: `--strict` fails on any broken link or anchor (offline once installed)."""
    session.install("-r", os.path.join(ROOT, "docs", "requirements.txt"))
    session.run(
        "mkdocs",
        "build",
        "--strict",
        "--site-dir",
        os.path.join(ROOT, ".nox", "_site"),
        *session.posargs,
        env={"NO_MKDOCS_2_WARNING": "1"},
    )  # mkdocs-material's end-of-life banner, not a docs finding


# What the conformance suite needs beyond pytest. torch 2.7's torch.distributed.checkpoint
# imports the importlib_metadata backport on Python < 3.10 without declaring it; the marker
# keeps it out of newer Pythons' cells.
SUITE_REQUIREMENTS = ['importlib_metadata; python_version < "3.10"', "pytest-xdist"]
# The suite in two lanes (pytest-xdist), each its own fork server (tests/conformance/isolation.py):
# most tests keep one core busy (inductor's compiles are single-threaded), so one lane left the
# second core half idle; the counts, groups and JUnit report are the same as in one lane.
SUITE_LANES = ["-n", "2"]


def requirements(row) -> list:
    """Beside the wheels: what the C++ build and the suite (its lanes too) need for this torch
    (the op sweep's own requirements come with `ops=`)."""
    return [*cells_api.native_build_requirements(str(row.cell.torch)), *SUITE_REQUIREMENTS]


def refusals(cell: cells_api.CellRun) -> None:
    """For each companion installed: install a release built for another torch with
    --no-deps, prove that `check` refuses it (exit 1, both versions named, a fix that
    installs the paired release), then put it back and prove that `check` is content again."""
    row, attempt = cell.row, cell.attempt
    lines = [line.minor for line in cell.matrix.torch if row.cell.python in line.python]
    for pick in attempt.picks:
        probe = pick.mismatched(row.cell.torch, lines)
        if probe is None:
            cell.refusals.append(
                {
                    "companion": pick.name,
                    "skipped": f"no release of it is built for another torch on Python {row.cell.python}",
                }
            )
            continue
        mismatched = f"{pick.name}=={probe}" + (f"+{attempt.variant}" if attempt.variant else "")
        cell.session.install("--no-deps", *attempt.options, mismatched, env=cell.env)
        refused = cell.check_json()
        try:
            kept = cells_api.verify_refusal(refused, pick, str(probe), refused["checks"][0]["environment"]["torch"])
        finally:
            cell.session.install("--no-deps", *attempt.options, pick.requirement(attempt.variant), env=cell.env)
        restored = cell.check_json()
        cell.verify(restored)
        cell.refusals.append(dict(kept, companion=pick.name, restored_exit_code=restored["exit_code"]))


def build(cell: cells_api.CellRun) -> dict:
    """The C++ core (cached per torch build), then the probe of this torch's API (results/probes/)."""
    done = cell.step("the build", cell.json_run, "adapter-matrix", "build", "--json", "--matrix", cell.matrix.path)
    with cell.phase("probe"):
        probe = cell.step("the probe", cell.json_run, "adapter-matrix", "probe", "--json", "--matrix", cell.matrix.path)
        os.makedirs(os.path.join(cell.results, "probes"), exist_ok=True)
        with open(os.path.join(cell.results, "probes", f"torch-{cell.row.cell.line.minor}.json"), "w") as fh:
            json.dump(probe, fh, indent=2)
    return done


CELLS = cells_api.cells(
    cells_api.Adapter(
        matrix="compat.yaml",
        projects=[".", "shims"],  # the tool, then the reference adapter (it depends on the tool)
        tests=cells_api.Pytest(
            SUITE_ROOT, args=SUITE_LANES, ignore=[os.path.join(SUITE_ROOT, "test_opinfo.py")]
        ),  # its sample is the op sweep
        requirements=requirements,
        build=build,
        after_check=refusals,
        # PyTorch's own op tests on the device beside the suite (docs/op-coverage.md): the sample,
        # the whole op_db with ADAPTER_MATRIX_OPS=full; the compiled sample unless ..._COMPILE=off
        ops=cells_api.OpSweep(expected=EXPECTED_OPS, compile=True),
        op_tests=cells_api.OpTests(
            pack=TEST_PACK, sha256=TEST_PACK_SHA256, overrides=[OP_TEST_OVERRIDES], control="cpu", jobs=2
        ),
        description="Build the npu device against this cell's torch and run the conformance suite.",
        root=ROOT,
    )
)
