"""`adapter-matrix migrate torch X.Y.Z` in a copy of an example adapter, offline: the index of
tests/fixtures/pypi/torch-2.16 gains torch 2.16.0 (built by the spec)."""

from __future__ import annotations

import datetime as _dt
import shutil
import subprocess
from pathlib import Path

import pytest

from adapter_matrix.matrix.loader import load
from adapter_matrix.upstream import metadata as md

from .helpers import FIXTURES, REPO, cli

INDEX = FIXTURES / "pypi" / "torch-2.16"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """examples/toy-adapter as its own committed repository."""
    repo = tmp_path / "toy"
    shutil.copytree(REPO / "examples" / "toy-adapter", repo, symlinks=True)
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "toy")
    return repo


def _tree(repo: Path) -> dict:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts
    }


def test_migrate_writes_the_line_the_release_the_shim_and_the_notes_and_a_second_run_changes_nothing(toy):
    before = (toy / "compat.yaml").read_text()
    res = cli("migrate", "torch", "2.16.0", "--upstream", str(INDEX), cwd=toy)
    assert res.code == 0, res.err
    text = (toy / "compat.yaml").read_text()
    # the torch line with the index's facts, in the file's own block style
    assert '  "2.16":\n    released: 2026-12-07\n    patches: [2.16.0]\n' in text
    assert 'python: ["3.11", "3.12", "3.13", "3.14", "3.15", "3.14t", "3.15t"]' in text.split('"2.16":')[1]
    # the next release, experimental, keeping the newest release's dimensions; the old one untouched
    assert "  - version: 1.1.0 # added by `adapter-matrix migrate torch 2.16.0`" in text
    assert '    torch: ">=2.10,<2.17"\n    python: ">=3.10,<3.14"\n    dimensions:\n      driver: ">=2.0"\n' in text
    # every comment of the original is still there
    assert all(line in text for line in before.splitlines() if line.lstrip().startswith("#"))
    matrix = load(toy / "compat.yaml").matrix
    new = matrix.release(__import__("packaging.version").version.Version("1.1.0"))
    assert new is not None and new.status.value == "experimental"
    assert matrix.shims[-1].module == "toy_adapter.eras.torch_2_16"
    skeleton = (toy / "toy_adapter" / "eras" / "torch_2_16.py").read_text()
    assert "from .torch_2_10 import *" in skeleton
    notes = (toy / "MIGRATION.md").read_text()
    assert "<!-- adapter-matrix:migrate torch=2.16.0 -->" in notes and "<!-- /adapter-matrix:migrate -->" in notes
    # no torch 2.16 here and no recorded probe: said, with the way to get it, never pretended
    assert "Not compared" in notes and "adapter-matrix probe --json > docs/probes/torch-2.16.json" in notes
    assert "probe: skipped" in res.out

    assert cli("validate", cwd=toy).code == 0
    plan = cli("plan", "--strategy", "full", cwd=toy)
    assert plan.code == 0
    assert "device(py3.11-torch2.16-v1.1.0)" in plan.out and "device(py3.15-torch2.16-v1.1.0)" not in plan.out

    _git(toy, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(toy, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "migrate")
    tree = _tree(toy)
    again = cli("migrate", "torch", "2.16.0", "--upstream", str(INDEX), cwd=toy)
    assert again.code == 0 and "nothing to change" in again.out
    assert _tree(toy) == tree and _git(toy, "status", "--porcelain") == ""


def test_the_probe_report_groups_what_moved(toy, tmp_path):
    probes = tmp_path / "probes"
    probes.mkdir()
    shutil.copy(REPO / "docs" / "probes" / "torch-2.15.json", probes)
    shutil.copy(FIXTURES / "probes" / "torch-2.16.json", probes)
    res = cli("migrate", "torch", "2.16.0", "--upstream", str(INDEX), "--probes", str(probes), cwd=toy)
    assert res.code == 0, res.err
    notes = (toy / "MIGRATION.md").read_text()
    section = notes.split("### The API of torch 2.16 against torch 2.15")[1].split("### What is left")[0]
    assert "- hooks:\n  - accelerator_api: removed set_device_idx" in section
    assert "ADAPTER_GENERATOR_REGISTRY False -> True" in section
    assert (
        "- dispatch keys:\n  - library_impl_allow_override_default: True on torch 2.15.0+cu132, False on torch 2.16.0"
        in section
    )
    assert "torch_library_api: added register_vmap" in section
    assert "Not compared" not in notes
    # the skeleton's to-do is the same list
    assert "register_vmap" in (toy / "toy_adapter" / "eras" / "torch_2_16.py").read_text()


def test_a_torch_the_index_lacks_is_refused_and_nothing_is_written(toy):
    tree = _tree(toy)
    res = cli("migrate", "torch", "2.17.0", "--upstream", str(INDEX), cwd=toy)
    assert res.code == 2
    assert "torch 2.17.0 is not on" in res.err and "its newest release: 2.16.0" in res.err
    assert _tree(toy) == tree


def test_uncommitted_changes_to_the_matrix_are_refused_unless_allowed(toy):
    matrix = toy / "toy_adapter" / "compat.yaml"
    matrix.write_text(matrix.read_text() + "# a local edit\n")
    tree = _tree(toy)
    res = cli("migrate", "torch", "2.16.0", "--upstream", str(INDEX), cwd=toy)
    assert res.code == 2 and "uncommitted changes" in res.err and "--allow-dirty" in res.err
    assert _tree(toy) == tree
    assert cli("migrate", "torch", "2.16.0", "--upstream", str(INDEX), "--allow-dirty", cwd=toy).code == 0
    assert "# a local edit" in matrix.read_text()


def test_a_network_failure_leaves_the_repository_untouched(toy, monkeypatch):
    def http_get(url, headers, timeout):  # what http_get raises once its retries are spent
        raise md.MetadataError(f"{url}: Failed to resolve 'pypi.org'")

    monkeypatch.setattr(md, "http_get", http_get)
    tree = _tree(toy)
    res = cli("migrate", "torch", "2.16.0", cwd=toy)
    assert res.code == 2 and "Failed to resolve" in res.err and "nothing was written" in res.err
    assert "Traceback" not in res.err
    assert _tree(toy) == tree


def test_pending_lists_the_lines_the_matrix_lacks(toy):
    res = cli("migrate", "pending", "--upstream", str(INDEX), cwd=toy)
    assert res.code == 0 and res.out == "2.16.0\n"
    assert cli("migrate", "pending", "--upstream", str(FIXTURES / "pypi" / "2026-12-05"), cwd=toy).out == ""


def test_release_candidates_come_from_the_test_channel_and_the_unreleased_next_release_claims_them(toy):
    channel = FIXTURES / "pytorch-test" / "torch.html"  # 2.16.0 and the candidate 2.17.0, +cpu and +cu130
    pending = cli("migrate", "pending", "--upstream", str(INDEX), "--pre", str(channel), cwd=toy)
    assert pending.code == 0 and pending.out == "2.16.0\n2.17.0 rc\n"
    # lines come in order: 2.17 waits for 2.16
    skipped = cli("migrate", "torch", "2.17.0", "--upstream", str(channel), cwd=toy)
    assert skipped.code == 2 and "migrate to 2.16 first" in skipped.err
    assert cli("migrate", "torch", "2.16.0", "--upstream", str(INDEX), cwd=toy).code == 0
    _git(toy, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(toy, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "torch 2.16")
    res = cli("migrate", "torch", "2.17.0", "--upstream", str(channel), cwd=toy)
    assert res.code == 0, res.err
    text = (toy / "compat.yaml").read_text()
    # the local labels read as the release; no upload time on a PEP 503 page: dated the day it was seen
    assert '  "2.17":\n    released: ' in text and "patches: [2.17.0]" in text
    # 1.1.0 is unreleased (experimental, no date): it claims 2.17 as well, no 1.2.0
    assert "  - version: 1.1.0 # added by `adapter-matrix migrate torch 2.16.0`" in text
    assert '    torch: ">=2.10,<2.18"\n' in text and "version: 1.2.0" not in text
    assert "<!-- adapter-matrix:migrate torch=2.16.0 -->" in (toy / "MIGRATION.md").read_text()
    assert "<!-- adapter-matrix:migrate torch=2.17.0 -->" in (toy / "MIGRATION.md").read_text()
    assert cli("validate", cwd=toy).code == 0
    assert "builds cpu, cu130" in res.out  # the test channel's variants, its files' local labels
    # a later day's run changes nothing: the candidate keeps the day it was first seen
    _git(toy, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(toy, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "torch 2.17")
    from adapter_matrix.migration.torch_release import MigrateRequest, run

    later = run(MigrateRequest("2.17.0", str(toy / "compat.yaml"), str(channel), today=_dt.date(2027, 1, 5)))
    assert later.files == () and _git(toy, "status", "--porcelain") == ""
