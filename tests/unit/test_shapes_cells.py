"""Issue 57's first acceptance point, end to end: three adapters adopt the tool with no hand edit,
from an empty repository, with adapter-matrix installed into the runner from a local folder (as
`pip install ./adapter-matrix` does): a setuptools `CppExtension`, an OpenReg-shaped setup.py
driving CMake (requires-python ">=3.9,<3.14", no MANIFEST.in), and scikit-build-core with a `src/`
layout. For each: `init`, `validate --pyproject` (after the `--write` init asked for), and
`nox -s "device(py3.11-torch2.13)"` offline pass; the wheel installed in the cell holds compat.yaml,
and `check` in the cell's environment answers without `--matrix`.

Minutes each (a C++ build per adapter): opt in with `pytest -m compiled`, one at a time
(`MAX_JOBS=1`; the cells compile under `nice`)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from .freshvenv import UV, FreshVenv
from .helpers import FIXTURES, REPO
from .offline import LOCAL_TORCH, cell_wheelhouse
from .shapes import SHAPES

pytestmark = [pytest.mark.slow, pytest.mark.compiled]

CELL = "py3.11-torch2.13"
UPSTREAM = FIXTURES / "pypi" / "2026-12-01" / "torch.json"


def _tool_folder(into: Path) -> Path:
    """A copy of this checkout as a user has it after `git clone`: the files git sees."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for rel in filter(None, listed.split("\0")):
        source = REPO / rel
        if not source.is_file() or rel.startswith(("examples/", "evidence/", "tests/", "docs/")):
            continue
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return into


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """The environment nox runs from: adapter-matrix installed from a local folder, nox, no torch."""
    if UV is None or not glob.glob(os.path.join(LOCAL_TORCH, "torch-2.13.0*-cp311-*.whl")):
        pytest.skip("needs uv and the local torch 2.13 wheel for Python 3.11 in /opt/wheels")
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the cell is py3.11-torch2.13")
    base = tmp_path_factory.mktemp("runner")
    venv = FreshVenv(base / "venv")
    needs = [Requirement(r) for r in metadata.requires("adapter-matrix") or []]
    venv.link(*[r.name for r in needs if r.marker is None or r.marker.evaluate({"extra": ""})], "nox", "setuptools")
    folder = _tool_folder(base / "adapter-matrix")
    subprocess.run(  # a folder install: built into a wheel and installed, not editable
        [UV, "pip", "install", "-q", "--offline", "--no-deps", "--no-build-isolation", "--python", str(venv.python)]
        + [str(folder)],
        check=True,
        timeout=300,
    )
    direct = json.loads(venv.run("import importlib.metadata as m; print(m.distribution('adapter-matrix').read_text('direct_url.json'))").stdout)  # fmt: skip
    assert direct["dir_info"].get("editable") is not True and direct["url"] == folder.as_uri()
    assert venv.run("import torch").returncode != 0  # nox's environment has no torch
    tools = base / "bin"  # uv for nox and the cells: nothing else of this environment on PATH
    tools.mkdir()
    (tools / "uv").symlink_to(UV)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ADAPTER_MATRIX_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(
        PATH=os.pathsep.join([str(venv.root / "bin"), str(tools), "/usr/local/bin", "/usr/bin", "/bin"]),
        ADAPTER_MATRIX_WHEELS=cell_wheelhouse(base / "wheelhouse"),
        UV_OFFLINE="1",
        MAX_JOBS="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return venv, env


def _run(args: list, repo: Path, env: dict, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_adapter_of_each_shape_adopts_the_tool_from_a_folder_installed_runner(runner, tmp_path, shape):
    venv, env = runner
    s = SHAPES[shape]
    repo = tmp_path / shape
    s.make(repo)
    _run(["git", "init", "-q"], repo, env)
    am = [str(venv.python), "-m", "adapter_matrix"]
    init = _run(am + ["init", "--distribution", s.distribution, "--device", s.device, "--upstream", str(UPSTREAM)]
                + ["--torch", "2.13", "--torch", "2.14"], repo, env)  # fmt: skip
    assert init.returncode == 0, init.stdout + init.stderr
    validate = am + ["validate", "--pyproject", "pyproject.toml"]
    if "validate --pyproject pyproject.toml --write` applies them" in init.stdout:  # init asked
        assert shape == "openreg-cmake", init.stdout  # only OpenReg's requires-python disagrees
        wrote = _run(validate + ["--write"], repo, env)
        assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    checked = _run(validate, repo, env)
    assert checked.returncode == 0 and "error" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr

    _run(["git", "add", "-A"], repo, env)
    _run(["git", "commit", "-qm", "adopt adapter-matrix"], repo, env)
    envdir = tmp_path / "nox"
    nox = ["nice", "-n", "10", str(venv.python), "-m", "nox", "--envdir", str(envdir), "-s", f"device({CELL})"]
    green = _run(nox, repo, env)
    out = green.stdout + green.stderr
    assert green.returncode == 0, out[-4000:]
    assert f"building {s.distribution} against torch 2.13.0+cpu" in out
    assert "packing adapter-matrix (the copy running nox)" in out  # packed from the folder install, not rebuilt
    record = json.loads((repo / "results" / f"{CELL}.json").read_text())
    assert record["outcome"] == "passed", record
    assert record["suites"]["tests"] == {"passed": s.tests, "failed": 0, "skipped": 0, "errors": 0}

    (python,) = glob.glob(str(envdir / "*" / "bin" / "python"))
    files = _run([python, "-c", f"import importlib.metadata as m; print(*m.files({s.distribution!r}), sep='\\n')"],
                 tmp_path, env).stdout.split()  # fmt: skip
    assert f"{s.package}/compat.yaml" in files  # the installed wheel holds the matrix
    check = _run([python, "-m", "adapter_matrix", "check"], tmp_path, env)  # no --matrix, not in the repository
    # the installed adapter's own matrix answers: its first release is experimental (exit 3), not "no matrix" (2)
    assert check.returncode == 3 and s.distribution in check.stdout, check.stdout + check.stderr
