"""`check --constraints pip|uv` writes the pins that keep a working environment as it is
(issue 48 item 5): torch at its exact build and index, its companions, the adapter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")


def _venv(root: Path, **installed: str) -> Path:
    """A virtual environment's files holding ``installed`` (distribution -> version), nothing else."""
    (root / "pyvenv.cfg").parent.mkdir(parents=True, exist_ok=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    site = root / "lib" / "python3.11" / "site-packages"
    for name, version in installed.items():
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "RECORD").write_text(f"{info.name}/METADATA,,\n")
    return root


def _check(venv: Path, fmt: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--matrix", str(REPO / "compat.yaml"), "--no-binary"]
        + ["--env", str(venv), "--constraints", fmt],
        capture_output=True,
        text=True,
    )


def test_uv_pins_torch_its_companion_and_the_adapter_to_their_builds_and_index(tmp_path):
    venv = _venv(tmp_path / "v", **{"torch": "2.13.0+cpu", "torchvision": "0.28.0+cpu", "adapter-matrix-npu": "0.2.1"})
    proc = _check(venv, "uv")
    assert proc.returncode == 0, proc.stderr
    uv = tomllib.loads(proc.stdout)["tool"]["uv"]
    assert uv["override-dependencies"] == ["torch==2.13.0+cpu", "torchvision==0.28.0+cpu", "adapter-matrix-npu==0.2.1"]
    assert uv["index"] == [{"name": "torch", "url": "https://download.pytorch.org/whl/cpu", "explicit": True}]
    assert uv["sources"] == {"torch": {"index": "torch"}, "torchvision": {"index": "torch"}}


def test_pip_constraints_are_a_file_pip_reads(tmp_path):
    venv = _venv(tmp_path / "v", **{"torch": "2.13.0+cpu", "adapter-matrix-npu": "0.2.1"})
    proc = _check(venv, "pip")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("#")]
    assert lines == [
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch==2.13.0+cpu",
        "adapter-matrix-npu==0.2.1",
    ]
    constraints = tmp_path / "constraints.txt"
    constraints.write_text(proc.stdout)
    # pip parses it as a constraints file, and refuses a torch it does not allow (offline: no index asked)
    moved = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "-c", str(constraints), "torch==2.14.0"],
        capture_output=True,
        text=True,
    )
    said = moved.stdout + moved.stderr
    assert moved.returncode != 0 and "(constraint)" in said and "==2.13.0+cpu" in said, said


def test_an_environment_that_does_not_work_is_not_pinned(tmp_path):
    venv = _venv(tmp_path / "v", **{"torch": "2.0.1", "adapter-matrix-npu": "0.2.1"})
    proc = _check(venv, "pip")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "there is nothing to keep" in proc.stderr and "Traceback" not in proc.stderr


def test_uv_sends_each_package_to_the_index_its_own_matrix_names_and_says_where_they_disagree():
    """Two adapters' matrices in one environment: a package goes to the index of the first that
    pins it there (uv takes one per package), the disagreement is named, and a package from a
    folder (find-links) gets no index source."""
    from adapter_matrix.check.constraints import KeptPins, render_pins

    cpu, xpu = "https://download.pytorch.org/whl/cpu", "https://example.org/whl/xpu"
    pins = [
        KeptPins(("torch==2.13.0+cpu", "tiny==1.0"), ("--index-url", cpu), ("torch",), "tiny (a.yaml)"),
        KeptPins(
            ("torch==2.13.0+cpu", "xvision==0.1+xpu", "x==2.0"),
            ("--index-url", xpu),
            ("torch", "xvision"),
            "x (b.yaml)",
        ),
        KeptPins(("torch==2.13.0+cpu", "local==3.0"), ("--find-links", "/opt/wheels"), ("torch",), "local (c.yaml)"),
    ]
    out = render_pins(pins, "uv")
    uv = tomllib.loads(out)["tool"]["uv"]
    assert [(i["name"], i["url"]) for i in uv["index"]] == [("torch-0", cpu), ("torch-1", xpu)]
    assert uv["sources"] == {"torch": {"index": "torch-0"}, "xvision": {"index": "torch-1"}}
    assert uv["find-links"] == ["/opt/wheels"]
    assert f"# torch: x (b.yaml) takes it from {xpu}, not torch-0" in out.splitlines()
