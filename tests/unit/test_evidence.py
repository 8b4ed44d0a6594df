"""Evidence: the records a nox cell commits, and the gate that asks every supported cell for a fresh one.

A small project in a temporary folder (a matrix with an ``evidence`` section, the sources
it names) gets one record per cell, written by the same functions the nox cells call;
then single records are planted stale or failed, and ``validate --results --strict``
must fail naming exactly that cell.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List

import pytest

from adapter_matrix.ci import evidence, release
from adapter_matrix.ci.evidence import tree_state
from adapter_matrix.ci.plan import plan
from adapter_matrix.ci.record import ResultRecord, evidence_keys, write_record
from adapter_matrix.ci.suites import TestCounts
from adapter_matrix.matrix.cellid import CellId
from adapter_matrix.matrix.loader import load, load_text

from .helpers import REPO, cli

MATRIX = textwrap.dedent(
    """\
    schema-version: 1
    adapter: {distribution: demo-adapter, device: npu, shims: shims}
    torch:
      "2.2": {released: 2024-01-30, patches: [2.2.0, 2.2.2], python: ["3.10", "3.11"]}
      "2.3": {released: 2024-04-24, patches: [2.3.0, 2.3.1], python: ["3.10", "3.11"]}
    shims:
      - {module: shims.torch_2_1, torch: ">=2.1,<2.3"}
      - {module: shims.torch_2_3, torch: ">=2.3,<2.4"}
    releases:
      - version: 2.0.0
        torch: ">=2.2,<2.4"
        python: ">=3.10"
        status: supported
        exceptions:
          - {torch: "==2.3.*", python: "==3.11", status: experimental, reason: not tested yet}
    evidence:
      folder: records
      max-age-days: 30
      sources: [adapter, suite]
    """
)
SUPPORTED = ["py3.10-torch2.2", "py3.11-torch2.2", "py3.10-torch2.3"]  # py3.11-torch2.3 is experimental


def _project(root: Path) -> Path:
    (root / "adapter" / "__pycache__").mkdir(parents=True)
    (root / "adapter" / "core.py").write_text("KERNEL = 1\n")
    (root / "adapter" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0compiled")
    (root / "suite").mkdir()
    (root / "suite" / "test_core.py").write_text("def test_core():\n    pass\n")
    (root / "compat.yaml").write_text(MATRIX)
    return root / "compat.yaml"


def _run_cell(matrix, cell_id: str, outcome: str = "passed", torch: str = "") -> ResultRecord:
    """What a nox cell records, without nox: the same write_record and write_evidence."""
    row = next(r for r in plan(matrix, "full") if r.id == cell_id)
    build = {"source_hash": "c0ffee" * 4, "build_seconds": 61.2, "compiled": True}
    suites = {
        "conformance": TestCounts(70, 0, 2, 0, ("a.b: absent",)),
        "ops": TestCounts(500, 0 if outcome == "passed" else 3, 10, 0),
    }
    record = ResultRecord.planned(row).built(build).tested(suites).on_sources(tree_state(matrix))
    record = dataclasses.replace(
        record,
        python=f"{row.cell.python}.9",
        torch=torch or f"{row.cell.torch}+cpu",
        torch_variant="cpu",
        adapter="2.0.0",
    )
    error = None if outcome == "passed" else "ops: 3 failed, 0 errors"
    results = os.path.join(os.path.dirname(matrix.path), "results")
    record = write_record(
        results,
        record.finished(outcome, error, {"install": 3.0, "tests": 40.0}, phase_cpu={"install": 5.0, "tests": 71.5}),
    )
    evidence.write_evidence(evidence.evidence_folder(matrix, environ={}), record)
    return record


@pytest.fixture
def project(tmp_path, monkeypatch):
    path = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    matrix = load(path).matrix
    for cell_id in SUPPORTED:
        _run_cell(matrix, cell_id)
    release.freeze(matrix, "2.0.0", evidence.evidence_folder(matrix, environ={}))  # a supported release is frozen
    return tmp_path


def _gate(project: Path, *extra: str):
    return cli(
        "validate", "--matrix", str(project / "compat.yaml"), "--results", str(project / "records"), *extra, cwd=project
    )


def _edit(project: Path, cell_id: str, **changes) -> None:
    path = project / "records" / "2.0.0" / f"{cell_id}.json"
    record = json.loads(path.read_text())
    record.update(changes)
    path.write_text(json.dumps(record))


# -- the record --------------------------------------------------------------------------


def test_the_evidence_record_is_small_ordered_and_says_what_ran(project):
    path = project / "records" / "2.0.0" / "py3.10-torch2.2.json"
    text = path.read_text()
    record = json.loads(text)
    assert list(record) == [k for k in evidence_keys() if k in record]
    assert not {"skips", "phases", "phase_cpu"} & set(record)  # those stay in results/
    assert record["cell"] == "py3.10-torch2.2" and record["release"] == "2.0.0" and record["outcome"] == "passed"
    assert (record["python"], record["torch_claimed"], record["torch"], record["torch_variant"]) == (
        "3.10.9",
        "2.2.2",
        "2.2.2+cpu",
        "cpu",
    )
    assert record["suites"] == {
        "conformance": {"passed": 70, "failed": 0, "skipped": 2, "errors": 0},
        "ops": {"passed": 500, "failed": 0, "skipped": 10, "errors": 0},
    }
    assert record["tests"] == {"passed": 570, "failed": 0, "skipped": 12, "errors": 0}
    assert record["sources"]["paths"] == ["adapter", "suite"] and len(record["sources"]["hash"]) == 16
    assert record["commit"] is None  # the temporary project is not a git checkout
    assert _dt.date.fromisoformat(record["timestamp"][:10]) == _dt.datetime.now(_dt.timezone.utc).date()
    assert len(text) < 1500 and text.endswith("}\n")


def test_the_gate_passes_when_every_supported_cell_has_a_fresh_pass(project):
    res = _gate(project, "--strict")
    assert res.code == 0, res.out + res.err
    assert "3 of 3 cells claimed supported have a fresh passing record" in res.out


@pytest.mark.parametrize(
    "plant,says",
    [
        (
            {"timestamp": "2020-01-02T03:04:05+00:00"},
            r"stale, passed on 2020-01-02 \(the record is \d+ days old; records count for 30 days",
        ),
        (
            {"outcome": "failed", "error": "ops: 3 failed, 0 errors"},
            r"failed on \d{4}-\d\d-\d\d \(ops: 3 failed, 0 errors\)",
        ),
        ({"torch": "2.3.0+cpu"}, r"stale, passed on .* \(ran torch 2.3.0; the cell claims torch 2.3.1\)"),
    ],
    ids=["too-old", "failed", "other-patch"],
)
def test_a_planted_stale_or_failed_record_fails_the_strict_gate_naming_the_cell(project, plant, says):
    _edit(project, "py3.10-torch2.3", **plant)
    res = _gate(project, "--strict")
    assert res.code == 2
    named = re.findall(r"cell (\S+) of release", res.out + res.err)
    assert named == ["py3.10-torch2.3"], res.out + res.err
    assert re.search(says, res.out + res.err), res.out + res.err
    assert 'run `nox -s "device(py3.10-torch2.3)"`' in res.out + res.err
    warned = _gate(project)  # without --strict: the same finding, as a warning
    assert warned.code == 0 and "warning: cell py3.10-torch2.3" in warned.out + warned.err


def test_a_missing_record_names_the_cell_and_an_experimental_cell_needs_none(project):
    (project / "records" / "2.0.0" / "py3.11-torch2.2.json").unlink()
    res = _gate(project, "--strict")
    assert res.code == 2
    assert (
        "cell py3.11-torch2.2 of release 2.0.0 is claimed supported without a fresh passing record: no record"
        in res.out + res.err
    )
    assert "py3.11-torch2.3" not in res.out + res.err


def test_records_age_by_date(project):
    today = _dt.datetime.now(_dt.timezone.utc).date()
    assert _gate(project, "--strict", "--today", str(today + _dt.timedelta(days=30))).code == 0
    res = _gate(project, "--strict", "--today", str(today + _dt.timedelta(days=31)))
    assert res.code == 2 and (res.out + res.err).count("records count for 30 days") == 3


def test_caches_never_change_the_sources_and_a_change_after_the_freeze_needs_a_new_release(project):
    (project / "adapter" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0recompiled")
    (project / "adapter" / ".core.py.swp").write_text("editor state")
    assert _gate(project, "--strict").code == 0
    (project / "suite" / "test_core.py").write_text("def test_core():\n    assert True\n")
    res = _gate(project, "--strict")
    said = res.out + res.err
    # the frozen release's records still count: the finding is the release's, not its cells'
    assert res.code == 2 and "3 of 3 cells claimed supported have a fresh passing record" in said
    assert (
        "the evidence sources changed since release 2.0.0 was frozen" in said and "no later release holds them" in said
    )
    assert "add release 2.1.0 with status: experimental, and bump the adapter's version to 2.1.0" in said


def test_records_of_an_unfrozen_release_are_judged_against_the_tree(project):
    (project / "records" / "2.0.0" / "release.json").unlink()
    (project / "suite" / "test_core.py").write_text("def test_core():\n    assert True\n")
    res = _gate(project, "--strict")
    assert res.code == 2 and (res.out + res.err).count("the evidence sources changed since its run") == 3
    assert "release 2.0.0 is claimed supported but is not frozen" in res.out + res.err


def test_the_matrix_inside_a_source_folder_never_counts(tmp_path, monkeypatch):
    """Like this repository: compat.yaml links to the copy the adapter ships in its package."""
    _project(tmp_path)
    (tmp_path / "compat.yaml").rename(tmp_path / "adapter" / "compat.yaml")
    (tmp_path / "compat.yaml").symlink_to("adapter/compat.yaml")
    monkeypatch.chdir(tmp_path)
    matrix = load(tmp_path / "compat.yaml").matrix
    assert evidence.evidence_folder(matrix, environ={}) == str(tmp_path / "records")  # next to the link, not the target
    before = evidence.sources_hash(matrix)
    (tmp_path / "adapter" / "compat.yaml").write_text(MATRIX + "# a new claim\n")
    assert evidence.sources_hash(matrix) == before
    (tmp_path / "adapter" / "core.py").write_text("KERNEL = 2\n")
    assert evidence.sources_hash(matrix) != before


def test_a_missing_source_is_a_clear_error(project):
    (project / "compat.yaml").write_text(MATRIX.replace("[adapter, suite]", "[adapter, suites]"))
    res = _gate(project)
    assert res.code == 2 and "evidence source 'suites' does not exist" in res.err


def test_in_git_the_hash_covers_the_tree_as_git_sees_it(project):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("__pycache__/\n*.log\n")
    subprocess.run(git + ["add", "-A"], cwd=project, check=True)
    subprocess.run(git + ["commit", "-qm", "init"], cwd=project, check=True)
    matrix = load(project / "compat.yaml").matrix
    before = evidence.sources_hash(matrix)
    (project / "suite" / "run.log").write_text("ignored by git")
    (project / "compat.yaml").write_text(MATRIX + "# a comment\n")
    (project / "adapter" / "compat.yaml").symlink_to("../compat.yaml")  # an adapter shipping the matrix
    subprocess.run(git + ["add", "-A"], cwd=project, check=True)
    subprocess.run(git + ["commit", "-qm", "link"], cwd=project, check=True)
    linked = evidence.sources_hash(matrix)
    (project / "compat.yaml").write_text(MATRIX + "# another comment\n")
    assert evidence.sources_hash(matrix) == linked != before  # the link counts by its target, not the matrix's text
    record = _run_cell(load(project / "compat.yaml").matrix, "py3.10-torch2.2")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True).stdout.strip()
    assert record.commit == head and record.dirty is False
    (project / "adapter" / "new.py").write_text("untracked, but it would run\n")
    assert evidence.git_state(matrix) == (head, True)
    assert evidence.sources_hash(matrix) != linked


# -- the views and the results command ---------------------------------------------------


def test_the_verified_view_shows_date_torch_and_commit_and_why_a_cell_is_stale(project):
    _edit(project, "py3.10-torch2.2", commit="0123456789abcdef")
    _edit(project, "py3.11-torch2.2", torch="2.2.0+cpu", timestamp="2026-11-01T10:00:00+00:00")
    _edit(project, "py3.10-torch2.3", outcome="failed", timestamp="2026-11-02T10:00:00+00:00")
    res = cli(
        "table", "--matrix", "compat.yaml", "--view", "verified", "--results", "records", "-f", "json", cwd=project
    )
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    facts = {c["id"]: c["verification"] for c in doc["cells"]}
    today = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    assert facts["py3.10-torch2.2"] == {
        "state": "verified",
        "date": today,
        "session": "device(py3.10-torch2.2)",
        "torch": "2.2.2",
        "commit": "0123456789abcdef",
        "reason": None,
        "release": "2.0.0",
    }
    assert facts["py3.11-torch2.2"]["state"] == "stale"
    assert facts["py3.11-torch2.2"]["reason"] == "ran torch 2.2.0; the cell claims torch 2.2.2"
    assert facts["py3.10-torch2.3"]["state"] == "failed" and facts["py3.11-torch2.3"]["state"] == "unverified"
    md = cli("table", "--matrix", "compat.yaml", "--view", "verified", "--results", "records", cwd=project).out
    assert f"verified {today}, torch 2.2.2 at `0123456`, proves 2.0.0" in md  # the frozen release each record proves
    assert "stale: passed 2026-11-01, torch 2.2.0" in md and "failed 2026-11-02, torch 2.3.1" in md
    zh = cli(
        "table", "--matrix", "compat.yaml", "--view", "verified", "--results", "records", "--lang", "zh", cwd=project
    ).out
    assert f"已验证 {today}，torch 2.2.2，提交 `0123456`，证明 2.0.0" in zh


def test_results_merges_folders_into_the_evidence_folder_newest_first(project, tmp_path):
    downloaded = project / "artifacts" / "result-py3.11-torch2.2"
    downloaded.mkdir(parents=True)
    full = json.loads((project / "results" / "py3.11-torch2.2.json").read_text())
    later = (_dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(hours=1)).isoformat(
        timespec="seconds"
    )  # within the clock skew
    full.update(timestamp=later, commit="feedfacefeedface")
    (downloaded / "py3.11-torch2.2.json").write_text(json.dumps(full))
    older = dict(full, timestamp="2001-01-01T00:00:00+00:00", outcome="failed")
    (downloaded.parent / "old.json").write_text(json.dumps(dict(older, cell="py3.10-torch2.2")))
    res = cli("results", "artifacts", "--into", "records", "-f", "markdown", cwd=project)
    assert res.code == 0, res.err
    assert "records: 1 evidence record(s) written" in res.err  # the old failure lost to the newer record
    merged = json.loads((project / "records" / "2.0.0" / "py3.11-torch2.2.json").read_text())
    assert merged["commit"] == "feedfacefeedface" and "skips" not in merged
    assert json.loads((project / "records" / "2.0.0" / "py3.10-torch2.2.json").read_text())["outcome"] == "passed"
    assert "| py3.11-torch2.2 | 3.11.9 | 2.2.2+cpu | passed  | 570/0/12/0" in res.out and "| feedfac |" in res.out


def test_merging_a_copy_of_the_evidence_folder_says_what_it_changed(project):
    """A lane's worktree holds every committed record plus the ones it ran: merging it back
    names the new records apart from the copies that change nothing."""
    import shutil

    shutil.copytree(project / "records", project / "lane" / "records")
    _run_cell(load(project / "compat.yaml").matrix, "py3.11-torch2.3")  # a cell only main's folder lacks ...
    moved = project / "lane" / "records" / "2.0.0" / "py3.11-torch2.3.json"
    (project / "records" / "2.0.0" / "py3.11-torch2.3.json").rename(moved)  # ... because the lane ran it
    res = cli("results", "lane", "--into", "records", cwd=project)
    assert "records: 1 evidence record(s) written, 3 unchanged" in res.err, res.err
    assert json.loads((project / "records" / "2.0.0" / "py3.11-torch2.3.json").read_text())["cell"] == "py3.11-torch2.3"


# -- the repository ----------------------------------------------------------------------


def test_the_repository_names_its_evidence_sources_and_they_exist():
    matrix = load(REPO / "compat.yaml").matrix
    assert matrix.evidence.folder == "evidence" and matrix.evidence.sources
    assert len(evidence.sources_hash(matrix)) == 16


def test_the_repository_evidence_folder_holds_only_evidence_records():
    folder = REPO / "evidence"
    for path in folder.rglob("*.json"):
        record = json.loads(path.read_text())
        if path.name == release.RELEASE_FILE:
            assert record["kind"] == "release" and record["release"] == path.parent.name, path
            continue
        assert list(record) == [k for k in evidence_keys() if k in record], path
        assert path.parent.name == record["release"] and path.stem == record["cell"], path


def _tier(project: Path, *args: str):
    return cli("tier", "full", "--matrix", str(project / "compat.yaml"), *args, cwd=project)


def test_tier_runs_a_part_by_tags_and_skips_fresh_cells(project):
    def dry(*args):
        res = _tier(project, "--dry-run", *args)
        assert res.code == 0, res.err
        return res.out

    out = dry("-t", "torch2.3")
    assert "skip device(py3.10-torch2.3): verified" in out
    assert "run  device(py3.11-torch2.3)" in out and "torch2.2" not in out
    out = dry("-t", "torch2.3", "--force")
    assert "run  device(py3.10-torch2.3)" in out and "skip" not in out
    assert dry("-t", "torch2.3", "-p", "3.11").splitlines() == [
        "run  device(py3.11-torch2.3): unverified; expected 43 s (the torch 2.3 median)",
        "1 cell to run: expected 43 s (1 timed by a median)",
    ]
    _edit(project, "py3.10-torch2.2", timestamp="2020-01-01T00:00:00+00:00")
    out = dry()
    assert "run  device(py3.10-torch2.2): stale" in out and "skip device(py3.11-torch2.2)" in out


def test_a_tier_part_that_selects_nothing_is_a_usage_error_naming_the_tags(project):
    res = _tier(project, "--dry-run", "-t", "torch2.30")  # a typo must not pass as a part with nothing to do
    assert res.code == 2
    assert (
        "no cell of the full tier matches -t torch2.30" in res.err
        and "(its tags: edges, full, latest, pairwise, py3.10, py3.11, smoke, torch2.2, torch2.3)" in res.err
    )
    assert _tier(project, "--dry-run", "-p", "3.12").code == 2
    assert cli("tier", "every", "--matrix", str(project / "compat.yaml"), cwd=project).code == 2


# A stand-in for nox: it writes, for every session it is given, the record a passing cell
# writes, from the matrix the tier hands the cells; and it logs how it was called.
FAKE_NOX = """\
import json, os, sys
sys.path.insert(0, {repo!r})
from adapter_matrix.matrix.loader import load
from tests.unit.test_evidence import _run_cell
matrix = load(os.environ["ADAPTER_MATRIX_NOX_MATRIX"]).matrix
sessions = sys.argv[sys.argv.index("-s") + 1:]
with open("nox-calls.jsonl", "a") as fh:
    fh.write(json.dumps({{"sessions": sessions, "drop": os.environ.get("ADAPTER_MATRIX_DROP_ENVS")}}) + "\\n")
for session in sessions:
    cell = session[len("device("):-1]
    _run_cell(matrix, cell, outcome="failed" if cell == os.environ.get("FAIL_CELL") else "passed")
"""


def test_a_tier_runs_each_torch_line_once_and_commits_its_records(project, monkeypatch):
    from adapter_matrix.ci import tier

    (project / ".gitignore").write_text("__pycache__/\nresults/\nnox-calls.jsonl\n")  # the sources hash as frozen
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "."], cwd=project, check=True)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=project, check=True, env=dict(os.environ, **env))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (project / "notes.txt").write_text("work in progress\n")  # staged, and none of the tier's business
    subprocess.run(["git", "add", "notes.txt"], cwd=project, check=True)
    monkeypatch.setenv("FAIL_CELL", "py3.11-torch2.3")
    _edit(project, "py3.10-torch2.2", timestamp="2020-01-01T00:00:00+00:00")  # stale: runs again
    matrix = load(project / "compat.yaml").matrix
    steps = tier.select(matrix, "full")
    assert [s.row.id for s in steps if s.runs] == ["py3.10-torch2.2", "py3.11-torch2.3"]
    lines_seen = []
    done = tier.run(
        matrix,
        steps,
        [sys.executable, "-c", FAKE_NOX.format(repo=str(REPO))],
        str(project),
        lines_seen.append,
        commit=True,
        min_free_gb=0,
    )
    calls = [json.loads(line) for line in (project / "nox-calls.jsonl").read_text().splitlines()]
    # one nox run per torch line, only the cells that need it, environments dropped
    assert calls == [
        {"sessions": ["device(py3.10-torch2.2)"], "drop": "1"},
        {"sessions": ["device(py3.11-torch2.3)"], "drop": "1"},
    ]
    assert [line.split(":")[0] for line in lines_seen if line.startswith("== torch")] == [
        "== torch 2.2",
        "== torch 2.3",
    ]
    # where the run is, cell by cell, across its lines
    assert [
        re.match(r"== cell \d/\d [^,\s]+( ended)?", line)[0] for line in lines_seen if line.startswith("== cell")
    ] == [
        "== cell 1/2 device(py3.10-torch2.2)",
        "== cell 1/2 device(py3.10-torch2.2) ended",
        "== cell 2/2 device(py3.11-torch2.3)",
        "== cell 2/2 device(py3.11-torch2.3) ended",
    ]
    # the failing cell keeps the tier from passing; the others end verified
    assert (done.final, done.selected, done.ran, done.ok) == ({"verified": 3, "failed": 1}, 4, 2, False)
    log = subprocess.run(["git", "log", "--format=%B"], cwd=project, capture_output=True, text=True).stdout
    assert "evidence: torch 2.3, 0 of 1 cells passed, 1 failed" in log
    assert "evidence: torch 2.2, 1 of 1 cells passed\n\npy3.10-torch2.2: verified" in log
    shown = subprocess.run(
        ["git", "show", "--stat", "--format=", "HEAD~1"], cwd=project, capture_output=True, text=True
    )
    assert "records/2.0.0/py3.10-torch2.2.json" in shown.stdout and "notes.txt" not in shown.stdout
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=project, capture_output=True, text=True)
    assert staged.stdout.split() == ["notes.txt"]


def test_tier_dry_run_prints_each_cells_expected_duration_and_the_total(project):
    for cell, seconds in (("py3.10-torch2.2", 600.0), ("py3.11-torch2.2", 900.0), ("py3.10-torch2.3", 300.0)):
        _edit(project, cell, duration=seconds)
    res = _tier(project, "--dry-run", "--force")
    assert res.code == 0, res.err
    assert res.out.splitlines() == [
        "run  device(py3.10-torch2.2): --force; expected 10 min",
        "run  device(py3.11-torch2.2): --force; expected 15 min",
        "run  device(py3.10-torch2.3): --force; expected 5 min 00 s",
        "run  device(py3.11-torch2.3): unverified; expected 5 min 00 s (the torch 2.3 median)",
        "4 cells to run: expected 35 min (1 timed by a median)",
    ]
    out = _tier(project, "--dry-run").out.splitlines()
    assert out[-1] == "1 cell to run, 3 skipped: expected 5 min 00 s (1 timed by a median)"


def test_a_cells_duration_comes_from_its_newest_record_of_any_release_else_a_median():
    from adapter_matrix.ci import tier
    from adapter_matrix.ci.record import RecordSet

    def record(cell: str, seconds: float, day: str, release: str = "2.0.0") -> ResultRecord:
        return ResultRecord(
            cell=CellId(cell), release=release, outcome="passed", timestamp=f"{day}T00:00:00+00:00", duration=seconds
        )

    records = RecordSet(
        (
            record("py3.10-torch2.2", 100.0, "2026-01-01", "1.0.0"),
            record("py3.10-torch2.2-v2.0.0", 200.0, "2026-02-01"),  # newer, in a plan of several releases
            record("py3.11-torch2.2", 400.0, "2026-01-01"),
            record("py3.11-torch2.3", 1000.0, "2026-01-01", "1.0.0"),
        )
    )
    matrix = load_text(MATRIX, "compat.yaml", check_modules=False).matrix
    rows = plan(matrix, "full")
    found = {row.id: e for row, e in zip(rows, tier.estimate(records, rows))}
    assert found["py3.10-torch2.2"] == tier.Expected(200.0, "its record")
    assert found["py3.11-torch2.3"] == tier.Expected(1000.0, "its record")  # an older release's cell costs as much
    assert found["py3.10-torch2.3"] == tier.Expected(1000.0, "the torch 2.3 median")
    assert tier.estimate(RecordSet((record("py3.8-torch2.9", 60.0, "2026-01-01"),)), rows)[0] == tier.Expected(
        60.0, "the median of all records"
    )
    assert tier.estimate(RecordSet(), rows)[0] == tier.Expected(None)


def test_the_eta_follows_the_runs_pace():
    from adapter_matrix.ci.tier import eta, span

    assert eta([60.0, 120.0], []) == 180.0
    assert eta([60.0, None], []) == 120.0  # a cell without a record counts as the others' mean
    assert eta([60.0, 60.0], [(30.0, 60.0)]) == 240.0  # twice as slow as the records so far
    assert eta([None], [(None, 90.0)]) == 90.0 and eta([None], []) is None and eta([], []) == 0.0
    assert [span(s) for s in (45, 95, 600, 1499, 3600 + 5 * 60 + 20)] == [
        "45 s",
        "1 min 35 s",
        "10 min",
        "25 min",
        "1 h 05 min",
    ]


# A nox whose cells take their time: each session sleeps, then writes a passing record.
SLOW_NOX = """import os, sys, time
sys.path.insert(0, {repo!r})
from adapter_matrix.matrix.loader import load
from tests.unit.test_evidence import _run_cell
matrix = load(os.environ["ADAPTER_MATRIX_NOX_MATRIX"]).matrix
for session in sys.argv[sys.argv.index("-s") + 1:]:
    time.sleep(1.5)
    _run_cell(matrix, session[len("device("):-1])
"""


def test_a_tier_run_says_cell_n_of_m_with_the_time_elapsed_and_an_eta(project, monkeypatch):
    from adapter_matrix.ci import tier

    monkeypatch.setattr(tier, "POLL_SECONDS", 0.2)
    for cell in ("py3.10-torch2.2", "py3.11-torch2.2"):
        _edit(project, cell, duration=3.0)  # the records say 3 s each
    matrix = load(project / "compat.yaml").matrix
    steps = tier.select(matrix, "full", tags=["torch2.2"], force=True)
    said: List[str] = []
    done = tier.run(
        matrix, steps, [sys.executable, "-c", SLOW_NOX.format(repo=str(REPO))], str(project), said.append, min_free_gb=0
    )
    assert done.ok, said
    cells = [line for line in said if line.startswith("== cell")]
    assert len(cells) == 4, said
    first, ended, second, last = cells
    assert re.fullmatch(
        r"== cell 1/2 device\(py3\.10-torch2\.2\), expected 3 s: 0 s elapsed, ETA 6 s \(at \d\d:\d\d\)", first
    )
    took = int(re.fullmatch(r"== cell 1/2 device\(py3\.10-torch2\.2\) ended after (\d+) s", ended)[1])
    elapsed, left = re.fullmatch(
        r"== cell 2/2 device\(py3\.11-torch2\.2\), expected 3 s: (\d+) s elapsed, ETA (\d+) s \(at \d\d:\d\d\)", second
    ).groups()
    # the second cell's ETA: its record's 3 s at the pace of the first (which took `took`, not 3 s)
    assert abs(int(elapsed) - took) <= 1 and abs(int(left) - took) <= 1, cells
    assert last.startswith("== cell 2/2 device(py3.11-torch2.2) ended after")


def test_a_compiled_matrix_of_another_model_is_never_read(monkeypatch):
    """The nox cells read compat.yaml through the compiled-matrix cache: a pickle made by a
    checkout whose model lacked the evidence section would silently drop it."""
    from adapter_matrix.matrix import cache

    raw = (REPO / "compat.yaml").read_bytes()
    now = cache.compiled_matrix_path(raw, "compat.yaml")
    monkeypatch.setattr(cache, "_stamp", b"the model of another checkout")
    assert cache.compiled_matrix_path(raw, "compat.yaml") != now


def test_a_rows_record_counts_for_every_cell_the_row_tests(tmp_path, monkeypatch):
    """A dimension no runner provides does not multiply the plan: the one session of
    py3.10-torch2.2 stands for its cells of every cann value."""
    text = MATRIX.replace("evidence:", "dimensions:\n  cann: {values: ['8.0.0', '8.1.0']}\nevidence:")
    text = text.replace("    status: supported\n", "    status: supported\n    dimensions: {cann: '>=8.0'}\n")
    _project(tmp_path)
    (tmp_path / "compat.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    matrix = load(tmp_path / "compat.yaml").matrix
    rows = [r.id for r in plan(matrix, "full")]
    assert rows == ["py3.10-torch2.2", "py3.11-torch2.2", "py3.10-torch2.3", "py3.11-torch2.3"]
    for row in rows[:3]:
        _run_cell(matrix, row)
    release.freeze(matrix, "2.0.0", str(tmp_path / "records"))
    res = _gate(tmp_path, "--strict")
    assert res.code == 0, res.out + res.err
    assert "6 of 6 cells claimed supported have a fresh passing record" in res.out
    (tmp_path / "records" / "2.0.0" / "py3.11-torch2.2.json").unlink()
    res = _gate(tmp_path, "--strict")
    named = sorted(set(re.findall(r"cell (\S+) of release", res.out + res.err)))
    assert named == ["py3.11-torch2.2-cann8.0.0", "py3.11-torch2.2-cann8.1.0"]
    assert 'run `nox -s "device(py3.11-torch2.2)"`' in res.err + res.out


# A nox that finishes the first cell of its line, then hangs in the second with a child that
# ignores SIGTERM (as a stuck compile or a torch worker can): only a stop of the whole group,
# with SIGKILL after the grace, ends it.
HANGING_NOX = """\
import json, os, signal, subprocess, sys, time
sys.path.insert(0, {repo!r})
from adapter_matrix.matrix.loader import load
from tests.unit.test_evidence import _run_cell
matrix = load(os.environ["ADAPTER_MATRIX_NOX_MATRIX"]).matrix
sessions = sys.argv[sys.argv.index("-s") + 1:]
_run_cell(matrix, sessions[0][len("device("):-1])
child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
with open("pids", "w") as fh:
    fh.write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(600)
"""

TIER_SCRIPT = """\
import sys
sys.path.insert(0, {repo!r})
from adapter_matrix.ci import tier
tier.GRACE_SECONDS = 1.0
tier.tool = lambda name: {nox!r}
sys.argv = ["adapter-matrix", "tier", "full", "--matrix", "compat.yaml", "-t", "torch2.2", "--force"]
from adapter_matrix.cli import main
main()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead, only not yet reaped
        return fh.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc as on Linux")
def test_a_tier_sent_sigterm_mid_cell_stops_its_whole_nox_run_and_keeps_the_finished_record(project):
    import signal
    import time

    nox = project / "fake-nox"
    nox.write_text(f"#!{sys.executable}\n" + HANGING_NOX.format(repo=str(REPO)))
    nox.chmod(0o755)
    (project / "noxfile.py").write_text("# the fake nox above stands in for nox and this file\n")
    first = project / "records" / "2.0.0" / "py3.10-torch2.2.json"
    before = first.stat().st_mtime
    time.sleep(0.05)
    proc = subprocess.Popen(
        [sys.executable, "-c", TIER_SCRIPT.format(repo=str(REPO), nox=str(nox))],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    pids = project / "pids"
    deadline = time.monotonic() + 60
    while not pids.exists() or not pids.read_text():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()[0]
        time.sleep(0.1)
    nox_pid, child_pid = map(int, pids.read_text().split())
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 4, out
    assert not _alive(nox_pid) and not _alive(child_pid), out  # nothing of the nox run is left
    assert first.stat().st_mtime > before  # the finished cell's record is kept
    assert "stopped by SIGTERM: device(py3.11-torch2.2) was interrupted (no record)" in out, out


def test_a_link_planted_at_any_path_the_tool_writes_is_replaced_never_written_through(tmp_path, monkeypatch):
    """Caches, result records, evidence records, release freezes, suite summaries, guard memos
    and build locks live in shared folders: a symbolic link planted at an entry's name must
    not turn the tool's write into a write of the link's target (issue 47)."""
    from adapter_matrix import memo
    from adapter_matrix.check import guard
    from adapter_matrix.ci import suites
    from adapter_matrix.device import build
    from adapter_matrix.matrix import cache

    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))
    sentinel = tmp_path / "precious.txt"
    sentinel.write_text("the user's file\n")

    def plant(path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(sentinel)

    project = _project(tmp_path / "repo")
    raw = project.read_bytes()
    from adapter_matrix.matrix.diagnostics import display_path

    compiled = cache.compiled_matrix_path(raw, display_path(str(project)))
    plant(compiled)
    with pytest.warns(memo.CacheWarning, match="ignores its cache entry"):
        matrix = cache.load_matrix(project).matrix  # the planted entry is neither read nor written through
    assert Path(compiled).is_file() and not Path(compiled).is_symlink()
    base = project.parent
    plant(base / "results" / "py3.10-torch2.2.json")
    plant(base / "records" / "2.0.0" / "py3.10-torch2.2.json")
    with pytest.raises(evidence.EvidenceError, match="a symbolic link"):  # evidence refuses, writes nothing
        _run_cell(matrix, "py3.10-torch2.2")
    plant(base / "records" / "2.0.0" / release.RELEASE_FILE)
    with pytest.raises(evidence.EvidenceError, match=r"release\.json"):  # refused: not a freeze it can read
        release.freeze(matrix, "2.0.0", evidence.evidence_folder(matrix, environ={}))
    plant(tmp_path / "summaries" / "ops.json")
    suites.write_summary("ops", TestCounts(passed=1), str(tmp_path / "summaries"))
    memo = guard._memo_path("verdict", "k" * 32)
    plant(memo)
    guard._write_memo("verdict", "k" * 32, {"outcome": "supported"})
    plant(tmp_path / "builds" / "x.lock")
    with build._locked(tmp_path / "builds" / "x.lock"):
        pass
    assert sentinel.read_text() == "the user's file\n"
    for written in (base / "results" / "py3.10-torch2.2.json", tmp_path / "summaries" / "ops.json", Path(memo)):
        assert not written.is_symlink() and written.is_file(), written


def test_a_tier_opts_in_to_the_full_op_sweep_for_its_cells(project, monkeypatch):
    """`tier edges --ops full`: the cells' nox runs get $ADAPTER_MATRIX_OPS (an adapter's
    OpSweep reads it); a mode the sweep has not is a usage error before anything runs."""
    from adapter_matrix.ci import tier

    seen = []

    class Ran(Exception):
        pass

    def run(*args, **kwargs):
        seen.append(os.environ.get("ADAPTER_MATRIX_OPS"))
        raise Ran

    monkeypatch.setenv("ADAPTER_MATRIX_OPS", "sample")  # restored after the test: the command sets it
    monkeypatch.setattr(tier, "run", run)
    monkeypatch.setattr(tier, "tool", lambda name: sys.executable)  # no nox needed: run() stops first
    (project / "noxfile.py").write_text("# run() above stands in for the nox runs\n")
    bad = _tier(project, "--ops", "most")
    assert bad.code == 2 and "--ops 'most': choose from sample, full, none" in bad.err
    with pytest.raises(Ran):
        _tier(project, "--ops", "full", "--force")
    assert seen == ["full"]
    monkeypatch.setenv("ADAPTER_MATRIX_OPS_TESTS", "off")  # `--ops tests` opts the cells' OpTests in
    monkeypatch.setenv("ADAPTER_MATRIX_OPS", "sample")  # ... and leaves the sweep's mode as it was
    with pytest.raises(Ran):
        _tier(project, "--ops", "tests", "--force")
    assert seen == ["full", "sample"] and os.environ["ADAPTER_MATRIX_OPS_TESTS"] == "on"
