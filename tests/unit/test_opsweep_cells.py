"""Issue 60, items 3 and 4: any adapter's nox cells add the op sweep through the public API
(``Adapter(ops=OpSweep())``), the cell's record keeps its counts per family, and the tables'
``ops`` view reads them from the cells' records as it reads the sweep records.

The cell here is driven by a fake nox session whose environment's ``adapter-matrix`` stands
in for the sweep: it writes a real sweep record (docs/op-sweeps, torch 2.13) where it is told
and notes how it was called. The real sweep in a real cell: test_opsweep_compiled_adapter.py (`-m compiled`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from adapter_matrix import nox as cells_api
from adapter_matrix.ci.record import OpsSummary, ResultRecord, read_records, write_record
from adapter_matrix.ci.suites import read_summaries
from adapter_matrix.device.opsweep.record import read_record, summary

from .helpers import REPO, cli
from .test_adapterbuild import _FakeSession

EXAMPLE = REPO / "examples" / "cpp-adapter"
SWEPT = REPO / "docs" / "op-sweeps" / "torch-2.13.json"  # a full sweep of npu on torch 2.13

# The cell's `adapter-matrix`: notes its arguments and working folder, writes the sweep record.
FAKE_TOOL = """#!{python}
import json, os, shutil, sys
args = sys.argv[1:]
with open({calls!r}, "a") as fh:
    fh.write(json.dumps({{"args": args, "cwd": os.getcwd(), "summaries": os.environ.get("ADAPTER_MATRIX_SUITE_SUMMARIES")}}) + "\\n")
out = args[args.index("--output") + 1]
os.makedirs(os.path.dirname(out), exist_ok=True)
shutil.copy({record!r}, out)
from adapter_matrix.ci.suites import TestCounts, write_summary
write_summary("ops", TestCounts(passed=3))  # as `ops sweep` leaves its counts, from its own folder
"""


def _cell(tmp_path, monkeypatch, ops):
    monkeypatch.setenv("ADAPTER_MATRIX_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("ADAPTER_MATRIX_EVIDENCE", str(tmp_path / "evidence"))
    for name in (cells_api.OPS_ENV, cells_api.OPS_COMPILE_ENV):
        monkeypatch.delenv(name, raising=False)
    declared = cells_api.Cells(cells_api.Adapter(root=str(EXAMPLE), ops=ops))
    session = _FakeSession(tmp_path / "session", "unused")
    monkeypatch.chdir(tmp_path)
    session.tmp = Path("session")  # as nox's: relative to where nox started (the venv's is absolute)
    calls = tmp_path / "calls.jsonl"
    tool = Path(session.virtualenv.location) / "bin" / "adapter-matrix"
    tool.write_text(FAKE_TOOL.format(python=sys.executable, calls=str(calls), record=str(SWEPT)))
    tool.chmod(0o755)
    row = next(r for r in declared.rows.values() if r.id == "py3.11-torch2.13")
    return cells_api.CellRun(session, row, declared), calls  # type: ignore[arg-type]


def test_a_cell_with_an_op_sweep_runs_the_sample_from_its_wheels_and_keeps_the_counts_per_family(tmp_path, monkeypatch):
    cell, calls = _cell(tmp_path, monkeypatch, cells_api.OpSweep())
    cell.start_op_sweep()
    cell.finish_op_sweep()
    written = cell.record("passed")

    # nox's tmp folder is relative to where nox started; the sweep runs from another folder and
    # still leaves its counts where the cell reads them
    assert os.path.isabs(cell.summaries)
    assert read_summaries(cell.summaries)["ops"].passed == 3
    (call,) = [json.loads(line) for line in calls.read_text().splitlines()]
    args = call["args"]
    assert args[:2] == ["ops", "sweep"] and "--sample" in args and "--compile" not in args
    assert args[args.index("--matrix") + 1] == str(EXAMPLE / "compat.yaml")
    assert "--expected" not in args  # the adapter's per-line files next to its matrix
    assert args[args.index("--jobs") + 1] == "1"
    # the cell's own adapter-matrix (its wheel), from a folder outside the adapter's sources
    assert not Path(call["cwd"]).resolve().is_relative_to(EXAMPLE.resolve())
    assert call["summaries"] == cell.summaries  # its counts land in the suite group `ops`

    record = json.loads(Path(written.path).read_text())
    swept = read_record(str(SWEPT))
    assert record["ops"]["families"] == swept["families"]
    assert record["ops"]["record"] == os.path.join("ops", "py3.11-torch2.13.json")
    assert record["ops"]["float32"] == swept["float32"] and record["ops"]["ops"] == swept["ops"]
    assert "ops" in record["phases"]
    evidence = ResultRecord.from_json(record, "r.json").evidence_json()
    assert evidence["ops"]["families"] == swept["families"] and "record" not in evidence["ops"]


def test_the_run_overrides_the_declared_mode_and_a_wrong_one_fails_the_cell(tmp_path, monkeypatch):
    cell, calls = _cell(tmp_path, monkeypatch, cells_api.OpSweep(compile=True, expected="tests/expected.yaml"))
    monkeypatch.setenv(cells_api.OPS_ENV, "full")
    cell.start_op_sweep()
    cell.finish_op_sweep()
    args = json.loads(calls.read_text())["args"]
    assert "--sample" not in args and "--compile" in args
    assert args[args.index("--expected") + 1] == str(EXAMPLE / "tests" / "expected.yaml")

    monkeypatch.setenv(cells_api.OPS_ENV, "none")
    assert cell.sweep_plan() == ("none", True)
    monkeypatch.setenv(cells_api.OPS_ENV, "most")
    with pytest.raises(AssertionError, match=r"\$ADAPTER_MATRIX_OPS='most': choose from sample, full, none"):
        cell.sweep_plan()
    record = json.loads((tmp_path / "results" / "py3.11-torch2.13.json").read_text())
    assert record["outcome"] == "failed" and "ADAPTER_MATRIX_OPS" in record["error"]


def test_an_adapter_without_an_op_sweep_runs_none(tmp_path, monkeypatch):
    cell, calls = _cell(tmp_path, monkeypatch, None)
    monkeypatch.setenv(cells_api.OPS_ENV, "full")  # a tier's setting does not add a sweep nobody declared
    cell.start_op_sweep()
    cell.finish_op_sweep()
    assert not calls.exists() and cell.ops is None


def test_an_op_sweep_is_declared_with_a_mode_it_has():
    with pytest.raises(ValueError, match="choose sample or full"):
        cells_api.OpSweep(mode="none")


def test_a_record_written_before_the_counts_per_family_reads_and_writes_back_unchanged():
    old = {"mode": "full", "tasks": {"passed": 10}, "record": "results/ops.json"}
    summary_ = OpsSummary.of(old)
    assert summary_.families is None
    from adapter_matrix.documents import to_json

    assert to_json(summary_) == old
    with pytest.raises(ValueError, match="families"):
        OpsSummary.of(dict(old, families=["unary"]))


# -- the ops view from the cells' records --------------------------------------------------


def _cell_records(folder: Path, sweeps):
    for cell, sweep in sweeps.items():
        data = read_record(str(sweep))
        record = ResultRecord(
            cell=cell,  # type: ignore[arg-type]
            release="0.1.0",
            outcome="passed",
            timestamp=data["timestamp"],
            python=data["python"],
            torch_claimed=data["torch"].split("+")[0],
            torch=data["torch"],
            ops=OpsSummary.of(summary(data, f"ops/{cell}.json")),
        )
        write_record(str(folder), record)


def _ops_rows(markdown: str):
    return [line for line in markdown.splitlines() if line.startswith("| 2.")]


def test_the_ops_view_reads_the_cells_records_as_it_reads_the_sweep_records(tmp_path):
    sweeps = {f"py3.11-torch{line}": REPO / "docs" / "op-sweeps" / f"torch-{line}.json" for line in ("2.13", "2.6")}
    _cell_records(tmp_path / "evidence", sweeps)
    for sweep in sweeps.values():
        (tmp_path / "sweeps").mkdir(exist_ok=True)
        (tmp_path / "sweeps" / sweep.name).write_text(sweep.read_text())
    matrix = str(REPO / "compat.yaml")
    from_cells = cli("table", "--matrix", matrix, "--view", "ops", "--results", str(tmp_path / "evidence"))
    from_sweeps = cli("table", "--matrix", matrix, "--view", "ops", "--results", str(tmp_path / "sweeps"))
    assert from_cells.code == 0, from_cells.out
    rows = _ops_rows(from_cells.out)
    assert [r.split("|")[1].strip() for r in rows] == ["2.13", "2.6"]  # newest line first
    assert rows == _ops_rows(from_sweeps.out)  # the same counts per family, the same float32 match

    as_json = json.loads(
        cli("table", "--matrix", matrix, "--view", "ops", "--results", str(tmp_path / "evidence"), "-f", "json").out
    )
    assert [s["cell"] for s in as_json["sweeps"]] == list(sweeps)

    dtypes = cli("table", "--matrix", matrix, "--view", "op-dtypes", "--results", str(tmp_path / "evidence"))
    assert dtypes.code != 0 and "needs op-sweep records" in dtypes.out + dtypes.err


def test_records_without_a_sweep_are_no_op_coverage(tmp_path):
    write_record(
        str(tmp_path),
        ResultRecord(cell="py3.11-torch2.13", outcome="passed", timestamp="2026-12-01T10:00:00+00:00"),  # type: ignore[arg-type]
    )
    assert len(read_records(str(tmp_path))) == 1
    res = cli("table", "--matrix", str(EXAMPLE / "compat.yaml"), "--view", "ops", "--results", str(tmp_path))
    assert res.code != 0 and "no op-sweep records" in res.out + res.err


def test_a_sweep_that_ends_without_its_record_fails_the_cell_with_one_message(tmp_path, monkeypatch):
    cell, _ = _cell(tmp_path, monkeypatch, cells_api.OpSweep())
    tool = Path(cell.session.virtualenv.location) / "bin" / "adapter-matrix"
    tool.write_text("#!/bin/sh\nexit 1\n")  # disagreed, and wrote nothing
    cell.start_op_sweep()
    with pytest.raises(AssertionError, match="the op sweep left no readable record"):
        cell.finish_op_sweep()
    record = json.loads((tmp_path / "results" / "py3.11-torch2.13.json").read_text())
    assert record["outcome"] == "failed" and "no readable record" in record["error"]
