"""Two distributions: the tool changes nothing in `import torch`; the adapter brings the device.

Both wheels are built from sdists (as an index serves them) once per test run (the
``wheels`` fixture in conftest.py) and installed into fresh environments; see
freshvenv.py for how dependencies are provided.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from adapter_matrix import __version__ as TOOL_VERSION
from adapter_matrix.matrix.loader import load

from .freshvenv import UV, FreshVenv, requirements_of
from .helpers import REPO

ADAPTER = REPO / "shims"
# The adapter's version as its wheel is named (read statically: importing shims activates the
# device), and the status compat.yaml gives that release: main's adapter may be experimental.
ADAPTER_VERSION = re.search(
    r'^__version__ = "([^"]+)"', (ADAPTER / "src" / "shims" / "__init__.py").read_text(), re.M
).group(1)


def _status_here(release: Any) -> str:
    """The status ``release`` gives this interpreter's Python and the installed torch (the cell the
    fresh environments below are): a release's own status unless an exception covers the cell."""
    import datetime as _dt

    from packaging.version import Version

    from adapter_matrix.matrix.model import PythonVersion
    from adapter_matrix.matrix.queries import cell_status

    torch_version = Version(Version(importlib.metadata.version("torch")).public)
    python = PythonVersion.parse(f"{sys.version_info[0]}.{sys.version_info[1]}")
    return cell_status(release, torch_version, python, {}, _dt.date.today())[0].value


ADAPTER_STATUS = next(
    _status_here(r) for r in load(REPO / "compat.yaml").matrix.releases if str(r.version) == ADAPTER_VERSION
)
MATRIX = ADAPTER / "src" / "shims" / "compat.yaml"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(UV is None, reason="uv is not installed")]


def _read(wheel: Path, suffix: str) -> str:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(next(n for n in zf.namelist() if n.endswith(suffix))).decode()


def _requires_dist(wheel: Path) -> list:
    return [
        line.split(":", 1)[1].strip()
        for line in _read(wheel, ".dist-info/METADATA").splitlines()
        if line.startswith("Requires-Dist:")
    ]


def _names(wheel: Path) -> list:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def test_the_tool_wheel_holds_the_tool_and_nothing_that_touches_torch(wheels):
    tool = wheels["tool"]
    assert tool.name == f"adapter_matrix-{TOOL_VERSION}-py3-none-any.whl"
    names = _names(tool)
    assert {n.split("/")[0] for n in names} == {"adapter_matrix", f"adapter_matrix-{TOOL_VERSION}.dist-info"}
    sources = {
        str(p.relative_to(REPO)) for p in (REPO / "adapter_matrix").rglob("*.py") if "__pycache__" not in p.parts
    }
    assert {n for n in names if n.endswith(".py")} == sources
    assert _read(tool, "entry_points.txt").split() == [
        "[console_scripts]",
        "adapter-matrix",
        "=",
        "adapter_matrix.cli:main",
    ]
    assert "torch" not in requirements_of(tool)


def test_the_adapter_wheel_holds_the_shims_their_sources_and_the_one_matrix(wheels):
    tool, adapter = wheels["tool"], wheels["adapter"]
    assert adapter.name == f"adapter_matrix_npu-{ADAPTER_VERSION}-py3-none-any.whl"
    names = set(_names(adapter))
    shipped = {
        str(p.relative_to(ADAPTER / "src"))
        for p in (ADAPTER / "src" / "shims").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert {n for n in names if not n.startswith("adapter_matrix_npu-")} == shipped
    matrix = load(MATRIX).matrix
    for shim in matrix.shims:
        assert shim.module.replace(".", "/") + ".py" in names
    assert any(n.startswith("shims/csrc/") and n.endswith(".h") for n in names)
    with zipfile.ZipFile(adapter) as zf:
        assert zf.read("shims/compat.yaml") == MATRIX.read_bytes()  # the file itself
    # one matrix in the repository: the root's compat.yaml is a link to the packaged one
    assert os.path.islink(REPO / "compat.yaml") and (REPO / "compat.yaml").resolve() == MATRIX.resolve()
    entry_points = _read(adapter, "entry_points.txt")
    assert "[adapter_matrix.matrices]\nadapter-matrix-npu = shims:compat.yaml" in entry_points
    assert "[torch.backends]\nnpu = shims:_autoload" in entry_points
    requires = {r.name: r for r in map(Requirement, _requires_dist(adapter))}
    assert requires["adapter-matrix"].specifier == SpecifierSet(">=0.1,<0.3")  # the adapter depends on the tool
    assert requires["torch"].specifier == matrix.newest_release.torch.specifier
    assert not any(Requirement(r).name.startswith("adapter-matrix") for r in _requires_dist(tool))  # never the reverse
    assert matrix.adapter.distribution == "adapter-matrix-npu"


PROBE = (
    "import json, sys, torch\n"
    "ours = sorted(m for m in sys.modules if m.split('.')[0] in ('shims', 'adapter_matrix'))\n"
    "print(json.dumps({'ours': ours, 'name': torch._C._get_privateuse1_backend_name()}))\n"
)


def test_installing_the_tool_leaves_import_torch_alone_and_check_works(wheels, tmp_path):
    torch = pytest.importorskip("torch")
    tool = wheels["tool"]
    venv = FreshVenv(tmp_path / "venv")
    venv.install(tool)
    venv.link(*requirements_of(tool), "torch")

    proc = venv.run(PROBE)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == {"ours": [], "name": "privateuseone"}

    matrix = tmp_path / "elsewhere" / "compat.yaml"
    matrix.parent.mkdir()
    shutil.copy(MATRIX, matrix)
    proc = subprocess.run(
        [venv.bin("adapter-matrix"), "check", "--json", "--matrix", str(matrix)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the adapter is not installed: unsupported
    (doc,) = json.loads(proc.stdout)["checks"]
    assert doc["environment"]["torch"] == torch.__version__ and doc["environment"]["adapter"] is None
    assert doc["reasons"][0] == "adapter-matrix-npu is not installed"
    # The fix installs the newest release that supports this cell (its status, or an exception's).
    newest_supported = max(r.version for r in load(matrix).matrix.releases if _status_here(r) == "supported")
    pin = f"adapter-matrix-npu=={newest_supported}"
    assert any(pin in " ".join(f["commands"]) for f in doc["fixes"]), doc["fixes"]


def test_installing_the_adapter_brings_autoload_and_the_registered_matrix(wheels, tmp_path):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "_import_device_backends"):
        pytest.skip("this torch has no torch.backends autoload")
    tool, adapter = wheels["tool"], wheels["adapter"]
    venv = FreshVenv(tmp_path / "venv")
    venv.install(tool, adapter)
    venv.link(*requirements_of(tool), *requirements_of(adapter))

    proc = venv.run(PROBE + "import shims; x = torch.ones(2, device='npu'); print(x.device, shims.__file__)")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    found = json.loads(lines[-2])
    assert found["name"] == "npu" and "shims" in found["ours"], proc.stderr
    device, location = lines[-1].split()
    assert device == "npu:0" and location.startswith(str(venv.purelib))

    proc = subprocess.run(
        [venv.bin("adapter-matrix"), "check", "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == (3 if ADAPTER_STATUS == "experimental" else 0), proc.stdout + proc.stderr
    (doc,) = json.loads(proc.stdout)["checks"]
    assert doc["origin"] == "entry point adapter-matrix-npu (adapter-matrix-npu)"
    assert (tmp_path / doc["matrix"]).resolve() == (venv.purelib / "shims" / "compat.yaml").resolve()
    assert doc["environment"]["adapter"] == ADAPTER_VERSION and doc["verdict"] == ADAPTER_STATUS


def test_both_distributions_ship_the_license_in_wheel_and_sdist(wheels, tmp_path):
    """BSD-3-Clause asks that the text travel with every copy: both wheels and both sdists carry it."""
    license_text = (REPO / "LICENSE").read_text()
    assert license_text.startswith("BSD 3-Clause License") and "adapter-matrix contributors" in license_text
    assert (ADAPTER / "LICENSE").read_text() == license_text  # the adapter's project folder has its own copy
    for wheel in (wheels["tool"], wheels["adapter"]):
        licenses = [n for n in _names(wheel) if ".dist-info/" in n and n.rsplit("/", 1)[-1] == "LICENSE"]
        assert licenses, wheel.name
        assert _read(wheel, licenses[0]) == license_text
        assert "License: BSD-3-Clause" in _read(wheel, ".dist-info/METADATA")
    assert "adapter_matrix/py.typed" in _names(wheels["tool"])  # PEP 561: the hints are part of the API
    # as adapter_matrix.ci.wheels builds: offline with the installed setuptools, else uv fetches it
    offline = ["--no-build-isolation", "--offline"] if importlib.util.find_spec("setuptools") else []
    for project in (REPO, ADAPTER):
        proc = subprocess.run(
            [
                UV,
                "build",
                "-q",
                "--sdist",
                "--python",
                sys.executable,
                *offline,
                "--out-dir",
                str(tmp_path),
                str(project),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
    sdists = sorted(tmp_path.glob("*.tar.gz"))
    assert [s.name for s in sdists] == [
        f"adapter_matrix-{TOOL_VERSION}.tar.gz",
        f"adapter_matrix_npu-{ADAPTER_VERSION}.tar.gz",
    ]
    for sdist in sdists:
        with tarfile.open(sdist) as tf:
            root = sdist.name[: -len(".tar.gz")]
            assert tf.extractfile(f"{root}/LICENSE").read().decode() == license_text, sdist.name


def test_the_repository_root_does_not_shadow_the_installed_shims(wheels, tmp_path):
    """The adapter's project is the top-level `shims/` folder (a src layout): Python started
    at the repository root sees that folder only as an empty namespace portion, so the
    installed package wins, never a namespace package made of the source tree."""
    tool, adapter = wheels["tool"], wheels["adapter"]
    venv = FreshVenv(tmp_path / "venv")
    venv.install(tool, adapter)
    venv.link(*requirements_of(tool), *requirements_of(adapter))
    assert (REPO / "shims").is_dir() and not (REPO / "shims" / "__init__.py").exists()
    code = "import importlib.util as u; s = u.find_spec('shims'); print(s.origin)"
    proc = venv.run(code, cwd=REPO, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve() == (venv.purelib / "shims" / "__init__.py").resolve()
