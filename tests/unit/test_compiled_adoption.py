"""Issue 43's acceptance, end to end: a compiled adapter adopts the tool with no edit of any file
`init` writes. In an empty repository holding a setuptools CppExtension adapter, and again one
whose setup.py drives CMake and ships lib/*.so as package data (OpenReg's shape): `init`, then
`nox -s "device(py3.11-torch2.13)"` offline, from a nox whose environment has no torch. The cell
compiles the adapter against its own torch, the adapter's own test that it was compiled against
the torch it runs on passes, and what `init` wrote is what examples/ commits. Then a `.cpp`
edit makes the cell's record stale, and a compile error fails the cell with a record naming the
first error, the whole log kept, no traceback.

Minutes each (two nox cells and two C++ builds per adapter): opt in with `pytest -m compiled`;
the default run builds and runs examples/cpp-adapter's cell once (test_toy_cell.py)."""

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

from .freshvenv import UV, FreshVenv, requirements_of
from .helpers import FIXTURES, REPO
from .offline import LOCAL_TORCH, cell_wheelhouse

pytestmark = [pytest.mark.slow, pytest.mark.compiled]

CELL = "py3.11-torch2.13"
UPSTREAM = FIXTURES / "pypi" / "2026-12-01" / "torch.json"
# what init writes (compared with examples/), and the project files it edits in place
WRITTEN = ("compat.yaml", "noxfile.py", ".github/workflows/matrix.yml", ".pre-commit-config.yaml", "README.md")
# Each adapter as its author had it before init: the example's own files, and these two as they were
BEFORE = {
    "cpp-adapter": {
        "pyproject.toml": """# A compiled adapter in its smallest form: a setuptools CppExtension (setup.py) built against
# one torch, like torch_npu or PyTorch's OpenReg. Each nox cell builds it against the cell's torch.
[build-system]
requires = ["setuptools>=64", "torch"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-accel"
version = "0.1.0"
description = "An example compiled adapter: a C++ extension that reports the torch it was compiled against."
requires-python = ">=3.10,<3.14"
dependencies = ["torch>=2.13,<2.15"]
""",
    },
    "cmake-adapter": {
        "pyproject.toml": """# A compiled adapter shaped like PyTorch's OpenReg: setup.py runs CMake for the device library,
# installs it into the package as lib/*.so, and links the _C stub to it. CMake comes from the system.
[build-system]
requires = ["setuptools>=64", "torch"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-openreg"
version = "0.0.1"
description = "An example compiled adapter built with CMake: a device library as package data and a _C stub."
requires-python = ">=3.10,<3.14"
dependencies = ["torch>=2.13,<2.15"]
""",
        "MANIFEST.in": "include CMakeLists.txt\nrecursive-include csrc *.cpp *.h\nrecursive-include tiny_openreg/csrc *.c\n",
    },
}
ADAPTERS = {  # example -> (distribution, package, device, the C++ file a compile error goes into, tests)
    "cpp-adapter": ("tiny-accel", "tiny_accel", "tiny", "csrc/tiny.cpp", 3),
    "cmake-adapter": ("tiny-openreg", "tiny_openreg", "tinyreg", "csrc/device.cpp", 6),
}


@pytest.fixture(scope="module")
def runner(tmp_path_factory, wheels):
    """The environment nox runs from: adapter-matrix installed from its wheel, nox, no torch."""
    if UV is None or not glob.glob(os.path.join(LOCAL_TORCH, "torch-2.13.0*-cp311-*.whl")):
        pytest.skip("needs uv and the local torch 2.13 wheel for Python 3.11 in /opt/wheels")
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the cell is py3.11-torch2.13")
    base = tmp_path_factory.mktemp("runner")
    venv = FreshVenv(base / "venv")
    venv.install(wheels["tool"])
    venv.link(*requirements_of(wheels["tool"]), "nox")
    assert venv.run("import torch").returncode != 0  # nox's environment has no torch
    tools = base / "bin"  # uv for nox and the cells: nothing else of this environment on PATH
    tools.mkdir()
    (tools / "uv").symlink_to(UV)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ADAPTER_MATRIX_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(
        PATH=os.pathsep.join([str(venv.root / "bin"), str(tools), "/usr/local/bin", "/usr/bin", "/bin"]),
        ADAPTER_MATRIX_WHEELS=cell_wheelhouse(base / "wheelhouse", ("expecttest", "numpy")),
        UV_OFFLINE="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return venv, env


def _adapter_before_init(example: str, repo: Path) -> None:
    """The adapter's sources, as its author had them: the example without what init wrote."""
    source = REPO / "examples" / example

    def skip(folder: str, names: list) -> list:
        top = Path(folder) == source
        return [
            n
            for n in names
            if n in (".nox", "evidence", "results", "build", "compat.yaml", "__pycache__")
            or (top and n in (".github", "noxfile.py", ".pre-commit-config.yaml", "README.md"))
        ]

    shutil.copytree(source, repo, ignore=skip)
    for name, text in BEFORE[example].items():
        (repo / name).write_text(text)


def _run(args: list, repo: Path, env: dict, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)


def _git_init_and_adopt(python: str, repo: Path, env: dict, distribution: str, device: str) -> None:
    """The adapter's repository as a user adopts the tool: a git checkout, then `init` for two torch lines."""
    _run(["git", "init", "-q"], repo, env)
    init = _run(
        [python, "-m", "adapter_matrix", "init", "--distribution", distribution, "--device", device]
        + ["--torch", "2.13", "--torch", "2.14", "--upstream", str(UPSTREAM)],
        repo,
        env,
    )
    assert init.returncode == 0, init.stdout + init.stderr


@pytest.mark.parametrize("example", sorted(ADAPTERS))
def test_a_compiled_adapter_adopts_the_tool_and_its_cell_builds_it_against_the_cells_torch(runner, tmp_path, example):
    venv, env = runner
    distribution, package, device, cpp, tests = ADAPTERS[example]
    repo = tmp_path / example
    _adapter_before_init(example, repo)
    python = str(venv.python)
    _git_init_and_adopt(python, repo, env, distribution, device)
    committed = REPO / "examples" / example
    for name in (*WRITTEN, "pyproject.toml", "MANIFEST.in"):  # examples/ holds what init wrote, unedited
        ours, theirs = (repo / name).read_text(), (committed / name).read_text()
        if name == "compat.yaml":  # its first line dates the run
            ours, theirs = ours.split("\n", 1)[1], theirs.split("\n", 1)[1]
        assert ours == theirs, name
    assert os.readlink(repo / package / "compat.yaml") == "../compat.yaml"

    _run(["git", "add", "-A"], repo, env)
    _run(["git", "commit", "-qm", "adopt adapter-matrix"], repo, env)
    nox = [python, "-m", "nox", "--envdir", str(tmp_path / "nox"), "-s", f"device({CELL})"]
    green = _run(nox, repo, env)
    out = green.stdout + green.stderr
    assert green.returncode == 0, out[-4000:]
    assert f"building {distribution} against torch 2.13.0+cpu" in out and f"compiled {package}-" in out
    assert "packing adapter-matrix (the copy running nox)" in out  # the cell's check is the cell's own
    assert f"{distribution} loads: import {package}; a tensor on {device}:0" in out
    record = json.loads((repo / "results" / f"{CELL}.json").read_text())
    assert record["outcome"] == "passed" and record["torch"] == "2.13.0+cpu"
    assert record["suites"]["tests"] == {"passed": tests, "failed": 0, "skipped": 0, "errors": 0}
    assert record["build_cached"] is False and record["source_hash"]  # compiled against this cell's torch
    version = record["adapter"]
    assert (repo / "evidence" / version / f"{CELL}.json").is_file()

    dry = [python, "-m", "adapter_matrix", "tier", "full", "-p", "3.11", "--dry-run"]
    assert f"skip device({CELL}): verified" in _run(dry, repo, env).stdout
    # a compile error: the record is stale at once, and the cell fails naming the first error
    (repo / cpp).write_text((repo / cpp).read_text() + "\nstatic int broken = undeclared_name;\n")
    stale = _run(dry, repo, env).stdout
    assert f"run  device({CELL}): stale (the evidence sources changed" in stale, stale
    red = _run(nox, repo, env)
    out = red.stdout + red.stderr
    assert red.returncode != 0 and "Traceback" not in out, out[-4000:]
    record = json.loads((repo / "results" / f"{CELL}.json").read_text())
    assert record["outcome"] == "failed"
    assert f"building {distribution} against torch 2.13.0+cpu failed: " in record["error"]
    first = re.search(r"(\S+):\d+:\d+: error: .undeclared_name. was not declared", record["error"])
    assert first and first.group(1).endswith(cpp), record[
        "error"
    ]  # the compiler's own line (its quotes are the locale's)
    log = repo / "results" / f"{CELL}.build.log"
    assert "undeclared_name" in log.read_text() and str(log) in record["error"]  # the whole log kept
    assert not (repo / "build").exists() and not (repo / package / "lib").exists()  # never built in the source tree


def test_an_openreg_shaped_adapter_whose_tests_import_common_utils_is_green_with_no_hand_edit(runner, tmp_path):
    """Issue 67: tests written like PyTorch's import torch.testing._internal.common_utils, which
    imports expecttest; the cell installed pytest only and stopped at collection. Now `init`
    writes what the tests import into the noxfile, and one cell is green, from a runner that
    installed the tool from its wheel and has no torch."""
    venv, env = runner
    distribution, _package, device, _cpp, tests = ADAPTERS["cmake-adapter"]
    repo = tmp_path / "cmake-adapter"
    _adapter_before_init("cmake-adapter", repo)
    (repo / "tests" / "test_pytorch_style.py").write_text(
        "from torch.testing._internal.common_utils import TestCase, run_tests\n\n\n"
        "class TestLikePyTorch(TestCase):\n"
        "    def test_add(self):\n"
        "        import torch\n\n"
        "        self.assertEqual(torch.ones(2) + 1, torch.full((2,), 2.0))\n\n\n"
        'if __name__ == "__main__":\n'
        "    run_tests()\n"
    )
    python = str(venv.python)
    _git_init_and_adopt(python, repo, env, distribution, device)
    assert 'requirements=["expecttest", "numpy"]' in (repo / "noxfile.py").read_text()
    _run(["git", "add", "-A"], repo, env)
    _run(["git", "commit", "-qm", "adopt adapter-matrix"], repo, env)
    green = _run([python, "-m", "nox", "--envdir", str(tmp_path / "nox"), "-s", f"device({CELL})"], repo, env)
    out = green.stdout + green.stderr
    assert green.returncode == 0, out[-4000:]
    record = json.loads((repo / "results" / f"{CELL}.json").read_text())
    assert record["outcome"] == "passed"
    assert record["suites"]["tests"]["passed"] == tests + 1 and record["suites"]["tests"]["failed"] == 0
