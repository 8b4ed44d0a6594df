"""The wheel: compat.yaml ships inside it, and `check` finds the adapter through its entry point."""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .helpers import REPO

UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
DEPENDENCIES = ("typer", "click", "rich", "yaml", "_yaml", "packaging", "markdown_it", "mdurl", "pygments",
                "shellingham", "typing_extensions", "annotated_doc", "tomli")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {proc.stderr[-300:]}")
    (path,) = out.glob("adapter_matrix-*.whl")
    return path


def test_wheel_holds_the_matrix_and_registers_it(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert "shims/compat.yaml" in names
        assert zf.read("shims/compat.yaml") == (REPO / "compat.yaml").read_bytes()  # the file, not a symlink
        assert any(n.startswith("shims/csrc/") and n.endswith(".cpp") for n in names)
        entry_points = zf.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "[adapter_matrix.matrices]\nadapter-matrix = shims:compat.yaml" in entry_points
    assert "[torch.backends]\nnpu = shims:_autoload" in entry_points


@pytest.mark.skipif(UV is None, reason="uv is not installed")
def test_fresh_venv_finds_the_adapter_through_its_entry_point(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([UV, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    subprocess.run([UV, "pip", "install", "-q", "--offline", "--no-deps", "--python", str(python), str(wheel)], check=True, timeout=120)
    # the dependencies come from this interpreter's site-packages, torch excluded
    deps = tmp_path / "deps"
    deps.mkdir()
    source = Path(next(p for p in site.getsitepackages() if Path(p, "typer").exists()))
    for entry in source.iterdir():
        if entry.name.split("-")[0].split(".")[0] in DEPENDENCIES:
            (deps / entry.name).symlink_to(entry)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "deps.pth").write_text(str(deps) + "\n")
    empty = tmp_path / "empty-cwd"
    empty.mkdir()
    proc = subprocess.run([str(venv / "bin" / "adapter-matrix"), "check", "--json", "--torch", "2.13.0", "--python", "3.11"],
                          cwd=empty, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (doc,) = json.loads(proc.stdout)["checks"]
    assert doc["origin"] == "entry point adapter-matrix (adapter-matrix)"
    assert doc["matrix"].startswith(purelib) and doc["matrix"].endswith("shims/compat.yaml")
    assert doc["environment"]["adapter"] == "0.1.0" and doc["verdict"] == "supported"
