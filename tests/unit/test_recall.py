"""A warm `adapter-matrix check` answers from its memo, and never with a stale answer.

Each test runs the console entry point in a process of its own (the memo is the console
script's), with a cache folder of the test's own, an adapter and a torch faked as dist-info
folders on PYTHONPATH, and a matrix in the test's folder.
"""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adapter_matrix.memo import entry_path

from .helpers import FIXTURES

MINIMAL = (FIXTURES / "matrices" / "minimal.yaml").read_text()


def _dist(site: Path, name: str, version: str) -> None:
    for old in site.glob(f"{name.replace('-', '_')}-*.dist-info"):
        shutil.rmtree(old)
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


@pytest.fixture
def project(tmp_path):
    site, work, cache = tmp_path / "site", tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    (work / "compat.yaml").write_text(MINIMAL)
    _dist(site, "torch", "2.13.0")
    _dist(site, "tiny-adapter", "0.1.0")
    return site, work, cache


def _check(project, *args: str, env=None, importtime: bool = False) -> subprocess.CompletedProcess:
    site, work, cache = project
    environ = {k: v for k, v in os.environ.items() if k != "ADAPTER_MATRIX_NO_MEMO"}
    environ.update(PYTHONPATH=str(site), ADAPTER_MATRIX_CACHE=str(cache), **(env or {}))
    flags = ["-X", "importtime"] if importtime else []
    # as the console script runs: its own folder first on the import path, not the working one
    launcher = cache.parent / "bin" / "adapter-matrix"
    launcher.parent.mkdir(exist_ok=True)
    launcher.write_text("import sys\nfrom adapter_matrix.cli import main\nsys.exit(main())\n")
    return subprocess.run(
        [sys.executable, *flags, str(launcher), "check", *args],
        cwd=work, capture_output=True, text=True, timeout=120, env=environ,
    )  # fmt: skip


def _imported(proc: subprocess.CompletedProcess) -> set:
    """The modules ``-X importtime`` saw imported."""
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


def _loaded_model(proc: subprocess.CompletedProcess) -> bool:
    return "adapter_matrix.matrix.model" in _imported(proc)


def test_a_second_check_answers_from_its_memo_without_the_model(project):
    first = _check(project, importtime=True)
    second = _check(project, importtime=True)
    assert first.returncode == second.returncode == 0, first.stdout + first.stderr
    assert "tiny-adapter  0.1.0" in first.stdout and "supported" in first.stdout
    assert second.stdout == first.stdout
    assert _loaded_model(first) and not _loaded_model(second)
    assert {"packaging", "rich", "typer"}.isdisjoint(m.split(".")[0] for m in _imported(second))
    assert "packaging" in {m.split(".")[0] for m in _imported(first)}  # the long way does


def test_an_upgrade_answers_anew(project):
    site = project[0]
    assert "torch         2.13.0" in _check(project).stdout.replace("torch               ", "torch         ")
    _dist(site, "torch", "2.12.0")  # pip upgrading or downgrading: a dist-info folder replaced
    proc = _check(project)
    assert "2.12.0" in proc.stdout and proc.returncode == 1, proc.stdout


def test_an_edited_matrix_answers_anew(project):
    work = project[1]
    assert _check(project).returncode == 0
    (work / "compat.yaml").write_text(MINIMAL.replace("status: supported", "status: deprecated"))
    proc = _check(project)
    assert proc.returncode == 3 and "deprecated" in proc.stdout, proc.stdout


def test_the_options_are_part_of_the_question(project):
    plain = _check(project)
    as_json = _check(project, "--json")
    what_if = _check(project, "--torch", "2.12.0")
    assert json.loads(as_json.stdout)["exit_code"] == 0 and not plain.stdout.startswith("{")
    assert what_if.returncode == 1 and "2.12.0" in what_if.stdout
    assert _check(project).stdout == plain.stdout


def test_a_dimension_a_detector_reads_is_read_every_time(project):
    work = project[1]
    matrix = MINIMAL.replace(
        "releases:",
        'dimensions:\n  kit:\n    values: ["1.0", "2.0"]\n    detect:\n      - env: KIT_VERSION\nreleases:',
    ).replace("status: supported}", "status: supported, dimensions: {kit: 2.0}}")
    (work / "compat.yaml").write_text(matrix)
    on_two = _check(project, env={"KIT_VERSION": "2.0"})
    on_one = _check(project, env={"KIT_VERSION": "1.0"})
    assert on_two.returncode == 0, on_two.stdout + on_two.stderr
    assert on_one.returncode == 1 and "kit" in on_one.stdout, on_one.stdout


def test_a_memo_writable_by_others_is_not_believed(project):
    _check(project)
    cache = project[2]
    memos = list((cache / "check-answers").glob("*.marshal"))
    assert len(memos) == 1
    fmt, deps, code, _stdout = marshal.loads(memos[0].read_bytes())
    memos[0].write_bytes(marshal.dumps((fmt, deps, code, "planted answer\n")))
    assert _check(project).stdout == "planted answer\n"  # this user's own entry is believed ...
    memos[0].chmod(0o666)
    proc = _check(project)
    assert "planted answer" not in proc.stdout and "tiny-adapter" in proc.stdout  # ... one others can write is not


def test_a_damaged_memo_is_a_miss(project):
    first = _check(project)
    (memo,) = (project[2] / "check-answers").glob("*.marshal")
    for damaged in (b"", b"\x00garbage", marshal.dumps(("not", "an", "answer")), memo.read_bytes()[:-7]):
        memo.write_bytes(damaged)
        assert _check(project).stdout == first.stdout


def test_a_warm_check_imports_only_its_own_few_modules(project):
    """The start-up promise (docs/performance.md): beyond what the interpreter imports anyway,
    a warm check loads the answer's few modules, never typing, json, re or the model."""
    _check(project)
    warm = _imported(_check(project, importtime=True))
    site, work, _cache = project
    bare = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "pass"],
        cwd=work, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(site)),
    )  # fmt: skip
    ours = {m for m in warm - _imported(bare) if m.startswith("adapter_matrix")}
    assert ours == {
        "adapter_matrix", "adapter_matrix._version", "adapter_matrix.cli", "adapter_matrix.check",
        "adapter_matrix.check.recall", "adapter_matrix.memo", "adapter_matrix.files", "adapter_matrix.errors",
        "adapter_matrix.limits",  # constants only: the bound of a remembered answer's read
    }  # fmt: skip
    assert warm - _imported(bare) - ours <= {"runpy", "marshal", "_blake2", "__future__"}


def test_a_matrix_that_appears_in_the_working_folder_answers_anew(project):
    """Asked outside a project, check answers from the installed adapter's matrix; a
    ./compat.yaml written afterwards is found first, and the remembered answer is not given."""
    site, work, _cache = project
    (work / "compat.yaml").unlink()
    package = site / "tiny_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "compat.yaml").write_text(MINIMAL)
    (info,) = site.glob("tiny_adapter-*.dist-info")
    (info / "entry_points.txt").write_text("[adapter_matrix.matrices]\ntiny = tiny_pkg:compat.yaml\n")
    installed = _check(project)  # (beside any adapter the running environment registers)
    assert "entry point tiny" in installed.stdout and "deprecated" not in installed.stdout, installed.stdout
    assert _check(project).stdout == installed.stdout
    (work / "compat.yaml").write_text(MINIMAL.replace("status: supported", "status: deprecated"))
    here = _check(project)
    assert "working directory" in here.stdout and "entry point" not in here.stdout, here.stdout
    assert here.returncode == 3 and "deprecated" in here.stdout


def test_no_memo_answers_the_long_way_when_asked(project):
    _check(project)
    proc = _check(project, env={"ADAPTER_MATRIX_NO_MEMO": "1"}, importtime=True)
    assert _loaded_model(proc) and proc.returncode == 0


def test_the_memo_lives_in_the_cache_folder(project, monkeypatch):
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(project[2]))
    assert entry_path("check-answers", "k").startswith(str(project[2]))


@pytest.mark.parametrize("command", [("check",), ("validate",), ("table", "--check", "README.md")])
def test_a_working_directory_that_was_removed_is_one_message_not_a_traceback(project, command):
    _site, work, cache = project
    gone = work / "removed"
    gone.mkdir()
    launcher = cache.parent / "bin" / "adapter-matrix"
    launcher.parent.mkdir(exist_ok=True)
    launcher.write_text("import os, sys\nos.chdir(sys.argv.pop(1))\nos.rmdir(os.getcwd())\n"
                        "from adapter_matrix.cli import main\nsys.exit(main())\n")  # fmt: skip
    proc = subprocess.run([sys.executable, str(launcher), str(gone), *command], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == "error: the working directory no longer exists: cd into one that does\n"
