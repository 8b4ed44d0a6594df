"""docs/adopting.md, executed: every command block of the page runs, in order, in an empty
folder, offline. The adapter it makes lists one nox session per plan row, runs a cell green
against the local torch and writes its evidence record; its table is current; (precommit)
its hooks pass under `pre-commit try-repo`."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import REPO
from .offline import LOCAL_TORCH, cell_wheelhouse
from .test_nox import NOX, needs_nox

PAGE = REPO / "docs" / "adopting.md"
BLOCK = re.compile(r"^<!-- adopting:run(?P<tags>[^>]*?) -->\n```sh\n(?P<body>.*?)^```$", re.M | re.S)
CELL = f"py{sys.version_info[0]}.{sys.version_info[1]}-torch2.13"


def blocks(precommit: bool = False, compiled: bool = False):
    """The page's command blocks: the pure-Python path (those marked `precommit` only when asked),
    or the compiled adapter's path (marked `compiled`) alone."""
    found = [(m.group("tags").split(), m.group("body")) for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]
    if compiled:
        return [body for tags, body in found if "compiled" in tags]
    return [body for tags, body in found if "compiled" not in tags and (precommit or "precommit" not in tags)]


def test_the_page_has_its_command_blocks_and_every_sh_block_is_run():
    text = PAGE.read_text(encoding="utf-8")
    assert len(blocks(precommit=True)) + len(blocks(compiled=True)) == text.count("```sh") >= 8
    assert len(blocks(compiled=True)) == 3
    assert "adapter-matrix init" in "".join(blocks()) and 'nox -s "device(' in "".join(blocks())


def _bin() -> str:
    return os.path.dirname(sys.executable)


@pytest.fixture(scope="module")
def adopted(tmp_path_factory, wheels):
    if NOX is None or not glob.glob(os.path.join(LOCAL_TORCH, "torch-2.13.0*.whl")):
        pytest.skip("needs nox and the local torch 2.13 wheel in /opt/wheels")
    if CELL != "py3.11-torch2.13":
        pytest.skip("the page's cell is py3.11-torch2.13")
    base = tmp_path_factory.mktemp("adopting")
    house = base / "wheelhouse"
    value = cell_wheelhouse(house)
    shutil.copy(wheels["tool"], house)  # adapter-matrix, as an index would serve it
    env = dict(
        os.environ,
        ADAPTER_MATRIX_CHECKOUT=str(REPO),
        WHEELHOUSE=value,
        UV_OFFLINE="1",
        PATH=_bin() + os.pathsep + os.environ["PATH"],
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    for key in ("ADAPTER_MATRIX_EVIDENCE", "ADAPTER_MATRIX_RESULTS", "ADAPTER_MATRIX_WHEELS"):
        env.pop(key, None)
    return base, env


def _run(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.mark.slow  # builds the wheels through `adopted`: the conftest refuses it unmarked
@needs_nox
@pytest.mark.slow  # wheels, a nox cell in a fresh venv
def test_every_command_of_the_page_runs_and_the_cell_is_green(adopted):
    base, env = adopted
    proc = _run("\n".join(blocks()), base, env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    repo = base / "my-adapter"
    listed = json.loads(
        subprocess.run([NOX, "-l", "--json"], cwd=repo, env=env, capture_output=True, text=True, timeout=120).stdout
    )
    planned = json.loads(
        subprocess.run(
            [os.path.join(_bin(), "adapter-matrix"), "plan", "--strategy", "full", "-f", "json"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert [s["session"] for s in listed] == [row["session"] for row in planned] and len(planned) >= 4
    record = json.loads((repo / "evidence" / "0.1.0" / f"{CELL}.json").read_text())
    assert record["outcome"] == "passed" and record["torch"] == "2.13.0+cpu" and record["tests"]["passed"] == 1
    assert "from adapter_matrix import require" in proc.stdout  # init showed the require() lines
    assert f"skip device({CELL}): verified" in proc.stdout  # the tier's dry run counts the record


@pytest.mark.slow  # runs pre-commit on the adopted project built from the wheels
@pytest.mark.precommit
@pytest.mark.slow
@needs_nox
def test_the_pages_hooks_pass_under_pre_commit_try_repo(adopted):
    import virtualenv.seed.wheels.embed as embedded

    base, env = adopted
    base = base / "with-hooks"
    base.mkdir()
    house = base / "pip-wheels"
    from .wheelhouse import wheelhouse

    bundled = embedded.BUNDLE_SUPPORT[f"{sys.version_info[0]}.{sys.version_info[1]}"]
    wheelhouse("adapter-matrix", house, [Path(embedded.BUNDLE_FOLDER) / bundled["setuptools"]])
    env = dict(
        env, PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(house), PRE_COMMIT_HOME=str(base / "home")
    )
    script = "\n".join(blocks(precommit=True))
    proc = _run(script, base, env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    status = {
        line.split("...")[0].strip(): line.rsplit(".", 1)[-1].strip()
        for line in proc.stdout.splitlines()
        if line.startswith("adapter-matrix ")
    }
    assert status == {"adapter-matrix validate": "Passed", "adapter-matrix tables are current": "Passed"}, proc.stdout[
        -3000:
    ]


@pytest.mark.slow  # builds the wheels through `adopted`
@pytest.mark.compiled  # two nox cells with a C++ build: `pytest -m compiled`
@needs_nox
def test_the_compiled_path_of_the_page_builds_the_adapter_in_its_cell(adopted):
    base, env = adopted
    start = base / "compiled" / "my-adapter"  # the page's reader is in my-adapter when section 7 begins
    start.mkdir(parents=True)
    proc = _run("\n".join(blocks(compiled=True)), start, env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "building tiny-accel against torch 2.13.0+cpu" in out and "compiled tiny_accel-0.1.0-" in out
    assert "tiny-accel loads: import tiny_accel; a tensor on tiny:0" in out
    assert f"run  device({CELL}): stale (the evidence sources changed" in out  # the .cpp edit
    repo = base / "compiled" / "my-compiled"
    assert f"Session device({CELL}) was successful" in out  # the first cell; the second failed, as the page says
    failed = json.loads((repo / "results" / f"{CELL}.json").read_text())
    assert failed["outcome"] == "failed" and "csrc/tiny.cpp:" in failed["error"]
    assert "undeclared_name" in failed["error"]
    # the evidence of the edited sources is that failure: the pass was on other sources
    evidence = json.loads((repo / "evidence" / "0.1.0" / f"{CELL}.json").read_text())
    assert evidence["outcome"] == "failed" and evidence["error"] == failed["error"]
    assert "Traceback" not in out
