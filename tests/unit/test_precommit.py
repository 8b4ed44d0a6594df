"""The hooks of .pre-commit-hooks.yaml, run by `pre-commit try-repo` against a small adapter repository.

try-repo clones this repository (with uncommitted changes to tracked files) and builds
a virtual environment with adapter-matrix and its requirements. The requirements come
from a folder of wheels packed from this environment, with pip's index off: no network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import FIXTURES, REPO, cli
from .wheelhouse import wheelhouse

pre_commit = pytest.importorskip("pre_commit")

HOOKS = REPO / ".pre-commit-hooks.yaml"

README = "# demo adapter\n\nWhich torch and Python each release supports:\n\n<!-- adapter-matrix:table view=grid -->\n<!-- /adapter-matrix:table -->\n"
USAGE = "# Keeping the table current\n\n```markdown\n<!-- adapter-matrix:table view=grid -->\n<!-- /adapter-matrix:table -->\n```\n"


def _git(*args: str, cwd: Path) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def offline_pip(tmp_path_factory) -> dict:
    """Environment variables that make pip install adapter-matrix's requirements from local wheels only."""
    import virtualenv.seed.wheels.embed as embedded

    folder = tmp_path_factory.mktemp("wheels")
    bundled = embedded.BUNDLE_SUPPORT[f"{sys.version_info[0]}.{sys.version_info[1]}"]
    # The build backend (pyproject's build-system) comes from virtualenv's own bundled wheel.
    wheelhouse("adapter-matrix", folder, [Path(embedded.BUNDLE_FOLDER) / bundled["setuptools"]])
    return {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(folder)}


@pytest.fixture
def adapter_repo(tmp_path) -> Path:
    """A small adapter repository: compat.yaml, a README with a current table, a page with a fenced example."""
    repo = tmp_path / "my-adapter"
    (repo / "docs").mkdir(parents=True)
    shutil.copy(FIXTURES / "minimal.yaml", repo / "compat.yaml")
    (repo / "README.md").write_text(README, encoding="utf-8")
    (repo / "docs" / "usage.md").write_text(USAGE, encoding="utf-8")
    assert cli("table", "--update", "README.md", cwd=repo).code == 0
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "init", cwd=repo)
    return repo


def _try_repo(repo: Path, env: dict) -> subprocess.CompletedProcess:
    if not (REPO / ".git").exists():
        pytest.skip("try-repo needs this repository as a git checkout")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "--all-files", "--color", "never"],
        cwd=repo,
        env=dict(os.environ, PRE_COMMIT_HOME=str(repo.parent / "pre-commit-home"), **env),
        capture_output=True,
        text=True,
        timeout=600,
    )


def _status(out: str, hook: str) -> str:
    line = next(ln for ln in out.splitlines() if ln.startswith(hook))
    return line.rsplit(".", 1)[-1].strip()


def test_the_hooks_file_is_a_valid_manifest_whose_filters_pick_the_matrix_and_the_docs():
    from pre_commit.clientlib import load_manifest

    hooks = {hook["id"]: hook for hook in load_manifest(str(HOOKS))}
    assert set(hooks) == {"adapter-matrix-validate", "adapter-matrix-tables"}
    picks = lambda hook, path: re.search(hooks[hook]["files"], path) is not None
    assert picks("adapter-matrix-validate", "compat.yaml") and picks(
        "adapter-matrix-validate", "src/my_adapter/compat.yaml"
    )
    assert not picks("adapter-matrix-validate", "README.md")
    for path in ("compat.yaml", "README.md", "docs/index.rst", "docs/a.markdown"):
        assert picks("adapter-matrix-tables", path), path
    assert not picks("adapter-matrix-tables", "setup.py")
    # the tables hook checks the documents it names, not the changed files: a changed
    # compat.yaml makes tables stale in documents nobody touched
    assert hooks["adapter-matrix-tables"]["pass_filenames"] is False and hooks["adapter-matrix-tables"]["args"] == [
        "README.md"
    ]
    assert hooks["adapter-matrix-validate"]["pass_filenames"] is True


@pytest.mark.precommit
@pytest.mark.slow
def test_both_hooks_pass_on_a_clean_repository_and_the_tables_hook_fails_after_a_hand_edit(adapter_repo, offline_pip):
    clean = _try_repo(adapter_repo, offline_pip)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert _status(clean.stdout, "adapter-matrix validate") == "Passed"
    assert _status(clean.stdout, "adapter-matrix tables are current") == "Passed"

    readme = adapter_repo / "README.md"
    text = readme.read_text(encoding="utf-8")
    edited = text.replace("| 2.3   |", "| 2.3*  |", 1)
    assert edited != text
    readme.write_text(edited, encoding="utf-8")
    red = _try_repo(adapter_repo, offline_pip)
    assert red.returncode == 1, red.stdout + red.stderr
    assert _status(red.stdout, "adapter-matrix tables are current") == "Failed"
    assert _status(red.stdout, "adapter-matrix validate") == "Passed"
    assert "-| 2.3*  |" in red.stdout and "adapter-matrix table --update README.md" in red.stdout
    assert "docs/usage.md" not in red.stdout  # the fenced example is neither checked nor rewritten


@pytest.mark.precommit
@pytest.mark.slow
def test_the_validate_hook_fails_on_a_broken_matrix_with_its_position(adapter_repo, offline_pip):
    matrix = adapter_repo / "compat.yaml"
    matrix.write_text(
        matrix.read_text(encoding="utf-8").replace("status: supported", "status: suported"), encoding="utf-8"
    )
    red = _try_repo(adapter_repo, offline_pip)
    assert red.returncode == 1, red.stdout + red.stderr
    assert _status(red.stdout, "adapter-matrix validate") == "Failed"
    assert "compat.yaml:" in red.stdout and "suported" in red.stdout


def _this_checkout(into: Path) -> tuple:
    """This checkout as a repository pre-commit can clone: HEAD with the working tree's changes
    to tracked files committed on top (what `try-repo` does). (path, rev)."""
    shadow = into / "adapter-matrix"
    _git("clone", "-q", "--shared", str(REPO), str(shadow), cwd=into)
    _git("checkout", "-q", _git("rev-parse", "HEAD", cwd=REPO).strip(), cwd=shadow)
    diff = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=REPO, check=True, capture_output=True).stdout
    if diff.strip():
        subprocess.run(["git", "apply", "--index"], input=diff, cwd=shadow, check=True, capture_output=True)
        _git("commit", "-qm", "the working tree", cwd=shadow)
    return shadow, _git("rev-parse", "HEAD", cwd=shadow).strip()


@pytest.mark.precommit
@pytest.mark.slow
def test_a_setup_py_project_passes_its_hooks_and_pyproject_check_right_after_init(tmp_path, offline_pip):
    """Issue 43: after `init`, the adopted repository passes the hooks init installed (from this
    checkout, offline) and `validate --pyproject`, with no edit: its README gained the table, its
    setup.py package data and version are kept."""
    if not (REPO / ".git").exists():
        pytest.skip("the hooks are cloned from this repository as a git checkout")
    repo = tmp_path / "tiny-accel"
    (repo / "tiny_accel" / "lib").mkdir(parents=True)
    (repo / "tiny_accel" / "__init__.py").write_text("")
    (repo / "tiny_accel" / "lib" / "libtiny.so").write_bytes(b"\x7fELF")
    (repo / "csrc").mkdir()
    (repo / "csrc" / "tiny.cpp").write_text("int tiny() { return 1; }\n")
    (repo / "setup.py").write_text(
        'from setuptools import setup\n\nsetup(packages=["tiny_accel"], package_data={"tiny_accel": ["lib/*.so"]})\n'
    )
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64", "torch"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "tiny-accel"\nversion = "0.0.1"\nrequires-python = ">=3.10,<3.14"\ndependencies = ["numpy"]\n'
    )
    (repo / "README.md").write_text("# tiny-accel\n\nA compiled adapter.\n")
    upstream = str(FIXTURES / "pypi" / "2026-12-01" / "torch.json")
    res = cli(
        "init", "--distribution", "tiny-accel", "--device", "tiny", "--torch", "2.13", "--upstream", upstream, cwd=repo
    )
    assert res.code == 0, res.err
    checked = cli("validate", "--pyproject", "pyproject.toml", cwd=repo)
    assert checked.code == 0 and "error" not in checked.out + checked.err, checked.out + checked.err

    tool, rev = _this_checkout(tmp_path)
    config = repo / ".pre-commit-config.yaml"
    text = config.read_text()
    pinned = re.search(r"^  - repo: (\S+)\n    rev: (\S+)", text, re.M)
    assert pinned is not None and pinned.group(1).startswith("https://github.com/")
    config.write_text(text.replace(pinned.group(0), f"  - repo: {tool}\n    rev: {rev}"))  # this checkout's hooks
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "adopt adapter-matrix", cwd=repo)
    ran = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=repo,
        env=dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), **offline_pip),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _status(ran.stdout, "adapter-matrix validate") == "Passed"
    assert _status(ran.stdout, "adapter-matrix tables are current") == "Passed"
