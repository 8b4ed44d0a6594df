"""A second adapter adopts the cells: examples/toy-adapter's noxfile runs one of its cells
offline, against the local torch 2.13 CPU wheel, and writes its result and evidence records."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

from adapter_matrix.ci.suites import TestCounts, read_junit

from .helpers import REPO
from .offline import LOCAL_TORCH, cell_wheelhouse
from .test_nox import NOX, needs_nox

TOY = REPO / "examples" / "toy-adapter"
CELL = f"py{sys.version_info[0]}.{sys.version_info[1]}-torch2.13"


@needs_nox
@pytest.mark.slow  # a nox cell in a fresh venv
def test_the_toy_adapter_runs_a_cell_offline_and_writes_its_evidence(tmp_path):
    if not glob.glob(os.path.join(LOCAL_TORCH, "torch-2.13.0*.whl")):
        pytest.skip("no local torch 2.13 wheel in /opt/wheels")
    env = dict(
        os.environ,
        ADAPTER_MATRIX_WHEELS=cell_wheelhouse(tmp_path / "wheelhouse"),
        ADAPTER_MATRIX_RESULTS=str(tmp_path / "results"),
        ADAPTER_MATRIX_EVIDENCE=str(tmp_path / "evidence"),
        UV_OFFLINE="1",
    )
    listed = subprocess.run([NOX, "-l", "--json"], cwd=TOY, capture_output=True, text=True, timeout=120, env=env)
    sessions = [s["session"] for s in json.loads(listed.stdout)]
    plan = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "plan", "-f", "json"], cwd=TOY, capture_output=True, text=True, env=env
    )
    assert sessions == [row["session"] for row in json.loads(plan.stdout)]
    if f"device({CELL})" not in sessions:
        pytest.skip(f"toy-adapter has no cell {CELL}")
    proc = subprocess.run(
        [NOX, "--envdir", str(tmp_path / "nox"), "-s", f"device({CELL})"],
        cwd=TOY,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    record = json.loads((tmp_path / "results" / f"{CELL}.json").read_text())
    assert record["outcome"] == "passed" and record["torch"] == "2.13.0+cpu"
    assert record["suites"] == {"tests": {"passed": 3, "failed": 0, "skipped": 0, "errors": 0}}
    assert record["adapter"] == "1.0.0"
    # what the cell cost: CPU seconds beside the wall seconds of each phase, and the pytest
    # report kept beside the record (benchmarks/cell_split.py reads both)
    assert set(record["phase_cpu"]) == set(record["phases"]) and record["phase_cpu"]["install"] > 0
    assert all(seconds >= 0 for seconds in record["phase_cpu"].values())
    junit = read_junit(str(tmp_path / "results" / "junit" / f"{CELL}.xml"), "tests")
    assert junit == {"tests": TestCounts(passed=3)}
    evidence = json.loads((tmp_path / "evidence" / "1.0.0" / f"{CELL}.json").read_text())
    assert evidence["outcome"] == "passed" and evidence["cell"] == CELL


def test_the_toy_adapters_committed_evidence_passed_on_the_local_torch():
    committed = json.loads((TOY / "evidence" / "1.0.0" / "py3.11-torch2.13.json").read_text())
    assert committed["outcome"] == "passed" and committed["torch"] == "2.13.0+cpu"
    assert committed["suites"]["tests"]["passed"] == 3


CPP = REPO / "examples" / "cpp-adapter"


@needs_nox
@pytest.mark.slow  # a nox cell in a fresh venv, with a C++ build in it
def test_a_compiled_adapter_is_built_in_its_cell_against_the_cells_torch(tmp_path):
    """examples/cpp-adapter (a setuptools CppExtension, its files as `init` wrote them) runs a
    cell offline: the cell compiles it against its own torch 2.13, and the adapter's own test
    that it was compiled against the torch it runs on passes (issue 43)."""
    if not glob.glob(os.path.join(LOCAL_TORCH, "torch-2.13.0*.whl")):
        pytest.skip("no local torch 2.13 wheel in /opt/wheels")
    env = dict(
        os.environ,
        ADAPTER_MATRIX_WHEELS=cell_wheelhouse(tmp_path / "wheelhouse"),
        ADAPTER_MATRIX_RESULTS=str(tmp_path / "results"),
        ADAPTER_MATRIX_EVIDENCE=str(tmp_path / "evidence"),
        UV_OFFLINE="1",
    )
    proc = subprocess.run(
        [NOX, "--envdir", str(tmp_path / "nox"), "-s", f"device({CELL})"],
        cwd=CPP,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "building tiny-accel against torch 2.13.0+cpu" in proc.stdout + proc.stderr
    record = json.loads((tmp_path / "results" / f"{CELL}.json").read_text())
    assert record["outcome"] == "passed" and record["torch"] == "2.13.0+cpu"
    assert record["suites"]["tests"]["passed"] == 3 and record["suites"]["tests"]["failed"] == 0
    out = proc.stdout + proc.stderr
    cached = "cached build tiny_accel-0.1.0-" in out  # a rerun installs the wheel built for this torch before
    assert cached or "compiled tiny_accel-0.1.0-" in out
    assert record["source_hash"] and record["build_cached"] is cached
    # the cell's own check read the compiled extension against the cell's torch, and says so
    assert record["binary"] == {"ok": True, "libraries": 1, "problems": []}, record["binary"]


@pytest.mark.parametrize("example", ["cpp-adapter", "cmake-adapter"])
def test_the_compiled_examples_committed_evidence_covers_two_torch_lines_and_two_pythons(example):
    """Each cell built the adapter against its own torch: the local 2.13.0+cpu for py3.11, PyPI's
    builds for the others, each run passing the test that the extension was compiled against it."""
    folder = REPO / "examples" / example / "evidence"
    records = [json.loads(p.read_text()) for p in sorted(folder.glob("*/*.json"))]
    passed = [r for r in records if r["outcome"] == "passed" and r["tests"]["failed"] == 0 and r["tests"]["passed"]]

    def line(version: str) -> str:
        return ".".join(version.split(".")[:2])

    assert len({line(r["torch"]) for r in passed}) >= 2 and len({line(r["python"]) for r in passed}) >= 2
    for record in passed:
        assert record["cell"] == f"py{line(record['python'])}-torch{line(record['torch'])}"
        assert record["source_hash"] and record["build_cached"] is False  # compiled in that cell
