"""A release is frozen once; its proof outlives the code on main; changed code is a new release.

A temporary copy of an adapter repository (like this one: compat.yaml at the root links
to the copy the adapter package ships, beside its ``__version__``) gets one record per
supported cell from the functions the nox cells call, is frozen with ``adapter-matrix
release``, and then has one byte of its adapter changed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from adapter_matrix.ci import evidence, release
from adapter_matrix.ci.evidence import tree_state
from adapter_matrix.ci.plan import plan
from adapter_matrix.ci.record import ResultRecord, write_record
from adapter_matrix.ci.release import past_releases
from adapter_matrix.ci.suites import TestCounts
from adapter_matrix.matrix.loader import load

from .helpers import REPO, cli

MATRIX = textwrap.dedent(
    """\
    schema-version: 2
    adapter: {distribution: demo-adapter, device: npu}
    torch:
      "2.2": {released: 2024-01-30, patches: [2.2.0, 2.2.2], python: ["3.10", "3.11"]}
      "2.3": {released: 2024-04-24, patches: [2.3.0, 2.3.1], python: ["3.10", "3.11"]}
    releases:
      - version: 2.0.0
        torch: ">=2.2,<2.4"
        python: ">=3.10,<3.11"
        status: supported
    companions:
      torchvision:
        torch:
          "2.2": {0.17.2: 2.2.2}
          "2.3": {0.18.1: 2.3.1}
    ci:
      companions: [torchvision]
    evidence:
      folder: evidence
      max-age-days: 30
      sources: [demo, suite]
      suites: [conformance, ops]
    """
)
SUPPORTED = ["py3.10-torch2.2", "py3.10-torch2.3"]
NEXT = """\
  - version: 2.1.0
    torch: ">=2.2,<2.4"
    python: ">=3.10,<3.11"
    status: experimental
"""


def _with_next(text: str) -> str:
    """The matrix with release 2.1.0 added after 2.0.0, experimental."""
    return text.replace("companions:\n  torchvision", NEXT + "companions:\n  torchvision", 1)


def _record(
    matrix, cell_id: str, release_of: str = "2.0.0", suites=("conformance", "ops"), companions=True, unavailable=None
) -> ResultRecord:
    """What a nox cell records (write_record), for the plan row ``cell_id`` of ``release_of``."""
    row = next(r for r in plan(matrix, "full") if r.id == cell_id or r.id == f"{cell_id}-v{release_of}")
    counts = {name: TestCounts(10, 0, 0, 0) for name in suites}
    record = ResultRecord.planned(row).built({"source_hash": "0" * 8}).tested(counts)
    record = dataclasses.replace(
        record.on_sources(tree_state(matrix)),
        python="3.10.9",
        torch=f"{row.cell.torch}+cpu",
        torch_variant="cpu",
        adapter=release_of,
        companions={"torchvision": "0.17.2" if "2.2" in cell_id else "0.18.1"} if companions else {},
        companions_unavailable=dict(unavailable or {}),
    )
    results = os.path.join(os.path.dirname(matrix.path), "results")
    return write_record(results, record.finished("passed", None, {"tests": 1.0}))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "__init__.py").write_text('__version__ = "2.0.0"\n')
    (tmp_path / "demo" / "core.py").write_text("KERNEL = 1\n")
    (tmp_path / "demo" / "compat.yaml").write_text(MATRIX)
    (tmp_path / "compat.yaml").symlink_to("demo/compat.yaml")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_core.py").write_text("def test_core():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    matrix = load(tmp_path / "compat.yaml").matrix
    for cell_id in SUPPORTED:
        evidence.write_evidence(str(tmp_path / "evidence"), _record(matrix, cell_id), matrix)
    return tmp_path


def _gate(repo: Path, *extra: str):
    return cli("validate", "--matrix", "compat.yaml", "--results", "evidence", "--strict", *extra, cwd=repo)


def _records(repo: Path) -> list:
    return sorted(str(p.relative_to(repo)) for p in (repo / "evidence").rglob("*.json"))


def test_the_whole_flow_freeze_change_a_byte_release_again(repo):
    first = _gate(repo)
    assert (
        first.code == 2 and "release 2.0.0 is claimed supported but is not frozen" in first.out + first.err
    )  # it asks for the freeze
    res = cli("release", "2.0.0", cwd=repo)
    assert res.code == 0, res.out + res.err
    assert "release 2.0.0 frozen on" in res.out and "2 of its 2 record(s) ran on these sources" in res.out
    frozen = json.loads((repo / "evidence" / "2.0.0" / "release.json").read_text())
    assert (
        frozen["sources"]["hash"] == evidence.sources_hash(load(repo / "compat.yaml").matrix)
        and frozen["commit"] is None
    )
    assert _gate(repo).code == 0
    before = _records(repo)

    # one byte of the adapter changes: the frozen release's records still count, and
    # validate names the release (at its line) and the step to take
    (repo / "demo" / "core.py").write_text("KERNEL = 2\n")
    res = _gate(repo)
    said = res.out + res.err
    assert res.code == 2
    assert "2 of 2 cells claimed supported have a fresh passing record" in said
    assert "compat.yaml:7:14: the evidence sources changed since release 2.0.0 was frozen" in said
    assert "the adapter's version is still 2.0.0 (demo/__init__.py)" in said
    assert "add release 2.1.0 with status: experimental, and bump the version in demo/__init__.py to 2.1.0" in said
    assert "without a fresh passing record" not in said
    plain = cli("validate", "--matrix", "compat.yaml", cwd=repo)  # the lint says it too, as a warning
    assert plain.code == 0 and "changed since release 2.0.0 was frozen" in plain.out + plain.err

    # the step: a new experimental release and the version bump; no record is needed
    (repo / "demo" / "compat.yaml").write_text(_with_next(MATRIX))
    (repo / "demo" / "__init__.py").write_text('__version__ = "2.1.0"\n')
    res = _gate(repo)
    assert res.code == 0, res.out + res.err
    assert _records(repo) == before  # no new records

    # claiming the unfrozen release supported fails the gate: it is not frozen and has no record
    claimed = (
        (repo / "demo" / "compat.yaml").read_text().replace("    status: experimental\n", "    status: supported\n")
    )
    (repo / "demo" / "compat.yaml").write_text(claimed)
    res = _gate(repo)
    said = res.out + res.err
    assert res.code == 2
    assert "release 2.1.0 is claimed supported but is not frozen" in said
    assert (
        "cell py3.10-torch2.2 of release 2.1.0 is claimed supported without a fresh passing record: no record" in said
    )


def test_a_release_is_frozen_once(repo):
    assert cli("release", "2.0.0", cwd=repo).code == 0
    again = cli("release", "2.0.0", cwd=repo)
    assert again.code == 0 and "was frozen already" in again.out
    (repo / "demo" / "core.py").write_text("KERNEL = 2\n")
    res = cli("release", "2.0.0", cwd=repo)
    assert res.code == 2 and "release 2.0.0 is frozen already" in res.err and "a release is frozen once" in res.err
    assert cli("release", "9.9.9", cwd=repo).code == 2


def test_uncommitted_sources_cannot_be_frozen(repo):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
    subprocess.run(git + ["add", "-A"], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-qm", "init"], cwd=repo, check=True)
    (repo / "demo" / "compat.yaml").write_text(MATRIX + "# an edit of the claims is not a change of the code\n")
    (repo / "demo" / "core.py").write_text("KERNEL = 2\n")
    res = cli("release", "2.0.0", cwd=repo)
    assert res.code == 2 and "uncommitted changes" in res.err
    subprocess.run(git + ["checkout", "demo/core.py"], cwd=repo, check=True)
    res = cli("release", "2.0.0", cwd=repo)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    assert res.code == 0 and json.loads((repo / "evidence" / "2.0.0" / "release.json").read_text())["commit"] == head


def test_a_run_of_later_code_is_never_filed_under_a_frozen_release(repo):
    assert cli("release", "2.0.0", cwd=repo).code == 0
    (repo / "demo" / "core.py").write_text("KERNEL = 2\n")
    matrix = load(repo / "compat.yaml").matrix
    committed = (repo / "evidence" / "2.0.0" / "py3.10-torch2.2.json").read_text()
    with pytest.raises(evidence.EvidenceError, match=r"release 2\.0\.0 is frozen with sources hash"):
        evidence.write_evidence(str(repo / "evidence"), _record(matrix, "py3.10-torch2.2"), matrix)
    assert (repo / "evidence" / "2.0.0" / "py3.10-torch2.2.json").read_text() == committed
    # the adapter under test is 2.1.0: its record is not evidence for a row of 2.0.0
    (repo / "demo" / "compat.yaml").write_text(_with_next(MATRIX))
    matrix = load(repo / "compat.yaml").matrix
    record = _record(matrix, "py3.10-torch2.2", "2.1.0")
    sources = dict(record.sources or {}, hash=json.loads(committed)["sources"]["hash"])
    record = dataclasses.replace(record, release="2.0.0", adapter="2.1.0", sources=sources)
    with pytest.raises(evidence.EvidenceError, match=r"the adapter under test is 2\.1\.0, not release 2\.0\.0"):
        evidence.write_evidence(str(repo / "evidence"), record, matrix)
    # the new release's own row is written to its own folder
    written = evidence.write_evidence(str(repo / "evidence"), _record(matrix, "py3.10-torch2.2", "2.1.0"), matrix)
    assert written == str(repo / "evidence" / "2.1.0" / "py3.10-torch2.2-v2.1.0.json")


# -- issue 20: a weaker run never replaces a committed record, and the gate refuses one -----


@pytest.mark.parametrize(
    "weaker,missing",
    [({"suites": ("conformance",)}, "suite group ops"), ({"companions": False}, "companion torchvision")],
)
def test_a_weaker_run_never_replaces_the_committed_record_and_the_gate_refuses_it(repo, weaker, missing):
    matrix = load(repo / "compat.yaml").matrix
    path = repo / "evidence" / "2.0.0" / "py3.10-torch2.2.json"
    committed = path.read_text()
    with pytest.raises(evidence.EvidenceError, match=f"weaker than the committed record: it has no {missing}"):
        evidence.write_evidence(str(repo / "evidence"), _record(matrix, "py3.10-torch2.2", **weaker), matrix)
    assert path.read_text() == committed
    # planted anyway (by hand, or an older tool): the gate does not count it
    path.write_text(json.dumps(_record(matrix, "py3.10-torch2.2", **weaker).to_json()))
    assert cli("release", "2.0.0", cwd=repo).code == 0
    res = _gate(repo)
    assert res.code == 2 and "cell py3.10-torch2.2 of release 2.0.0" in res.out + res.err
    assert f"it ran without {missing}" in res.out + res.err


def test_a_companion_the_index_has_no_build_of_counts_as_run_but_never_replaces_an_installed_one(repo):
    """torchvision 0.20 has no wheel for Python 3.13: a cell whose index said so twice is
    complete evidence; the same claim against a record that installed it is a failed download."""
    matrix = load(repo / "compat.yaml").matrix
    path = repo / "evidence" / "2.0.0" / "py3.10-torch2.2.json"
    why = {"torchvision": "torchvision==0.17.2 could not be installed beside torch==2.2.2 ..., twice"}
    with pytest.raises(
        evidence.EvidenceError, match=r"it has no companion torchvision \(the committed record installed it"
    ):
        evidence.write_evidence(
            str(repo / "evidence"), _record(matrix, "py3.10-torch2.2", companions=False, unavailable=why), matrix
        )
    path.unlink()  # a first record of the cell
    written = evidence.write_evidence(
        str(repo / "evidence"), _record(matrix, "py3.10-torch2.2", companions=False, unavailable=why), matrix
    )
    assert json.loads(Path(written).read_text())["companions_unavailable"] == why
    assert cli("release", "2.0.0", cwd=repo).code == 0
    res = _gate(repo)
    assert res.code == 0, res.out + res.err


def test_the_matrix_declares_the_suite_groups_that_count():
    assert load(REPO / "compat.yaml").matrix.evidence.suites == ("conformance", "ops", "workloads")
    from adapter_matrix.matrix.schema import json_schema

    committed = json.loads((REPO / "docs" / "compat.schema.json").read_text())
    assert committed == json_schema() and committed["$defs"]["evidence"]["properties"]["suites"]["type"] == "array"
    from adapter_matrix.matrix.loader import MatrixError, load_text

    with pytest.raises(MatrixError, match="suite group 'ops' is empty or named twice"):
        load_text(MATRIX.replace("suites: [conformance, ops]", "suites: [conformance, ops, ops]"), check_modules=False)


# -- the verified view --------------------------------------------------------------------


def test_the_verified_view_names_the_release_a_record_proves_and_unreleased_code_is_not_verified(repo):
    assert cli("release", "2.0.0", cwd=repo).code == 0
    md = cli("table", "--view", "verified", "--results", "evidence", "--release", "2.0.0", cwd=repo).out
    assert ", proves 2.0.0" in md
    (repo / "demo" / "compat.yaml").write_text(_with_next(MATRIX))
    doc = json.loads(cli("table", "--view", "verified", "--results", "evidence", "-f", "json", cwd=repo).out)
    assert doc["release"] == "2.1.0" and "release 2.1.0 is not frozen" in doc["title"]
    states = {c["state"] for row in doc["rows"] for c in row[1:] if c["state"] not in ("unclaimed", "nowheel")}
    assert states == {"unreleased"}
    frozen = json.loads(
        cli("table", "--view", "verified", "--results", "evidence", "--release", "2.0.0", "-f", "json", cwd=repo).out
    )
    assert "each record proves release 2.0.0, frozen" in frozen["title"]


# -- this repository ----------------------------------------------------------------------


def test_this_repository_froze_0_1_0_with_the_66_records_it_has():
    matrix = load(REPO / "compat.yaml").matrix
    folder = REPO / "evidence" / "0.1.0"
    frozen = release.read_frozen(str(REPO / "evidence"))["0.1.0"]
    hashes = {json.loads(p.read_text())["sources"]["hash"] for p in folder.glob("*.json") if p.name != "release.json"}
    assert len(list(folder.glob("py*.json"))) == 66 and hashes == {frozen.sources_hash}
    # the freeze keeps the paths 0.1.0 was tested at, wherever later releases moved them
    assert frozen.paths == ("npu/shims", "tests/conformance", "tests/ops")
    assert matrix.evidence.sources[0] == "shims/src/shims"  # 0.2.0's layout
    assert "0.1.0" in past_releases(matrix)  # main's code is 0.2.0's, not 0.1.0's


def test_tier_skips_the_rows_of_a_frozen_release_on_later_code(repo):
    assert cli("release", "2.0.0", cwd=repo).code == 0
    (repo / "demo" / "core.py").write_text("KERNEL = 2\n")
    (repo / "demo" / "compat.yaml").write_text(_with_next(MATRIX))
    res = cli("tier", "full", "--dry-run", cwd=repo)
    assert res.code == 0, res.err
    # the frozen release is not this tree's to test: its rows are not planned, and the next
    # release's rows keep the ids they had while it was the only one
    assert "2.0.0" not in res.out
    assert "run  device(py3.10-torch2.2): unverified" in res.out
