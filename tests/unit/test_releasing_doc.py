"""docs/releasing.md's loop, executed: each `releasing:run` block runs, in order, in a copy of this
repository (its matrix, its shims, its recorded probes, the index that gains torch 2.16.0) and
prints exactly the text the page shows after it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from .helpers import REPO

PAGE = REPO / "docs" / "releasing.md"
RUN = re.compile(r"<!-- releasing:run -->\n```sh\n(?P<cmd>.*?)\n```\n\n```text\n(?P<out>.*?)```", re.S)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "shims" / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    shutil.copytree(REPO / "shims" / "src" / "shims", root / "shims" / "src" / "shims", symlinks=True)
    shutil.copytree(REPO / "docs" / "probes", root / "docs" / "probes")
    shutil.copytree(
        REPO / "tests" / "fixtures" / "pypi" / "torch-2.16", root / "tests" / "fixtures" / "pypi" / "torch-2.16"
    )
    os.symlink(os.readlink(REPO / "compat.yaml"), root / "compat.yaml")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the reference adapter"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=_env())
    return root


def _env() -> dict:
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
    )
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])  # this adapter-matrix
    env["ADAPTER_MATRIX_NO_MEMO"] = "1"
    return env


def test_the_loop_of_the_page_runs_and_prints_what_it_shows(tmp_path):
    if metadata.version("torch") != "2.13.0+cpu":  # the page's probe step names the installed torch
        pytest.skip("the page's transcript is of a machine with torch 2.13.0+cpu")
    found = list(RUN.finditer(PAGE.read_text(encoding="utf-8")))
    assert len(found) == 4
    root = _copy(tmp_path)
    for match in found:
        proc = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", match["cmd"]], cwd=root, env=_env(), capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == match["out"], match["cmd"]
    # what the page says the loop wrote
    assert (root / "shims" / "src" / "shims" / "torch_2_16.py").is_file()
    assert "<!-- adapter-matrix:migrate torch=2.16.0 -->" in (root / "MIGRATION.md").read_text()
