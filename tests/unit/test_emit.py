"""``check --emit uv|requirements``: the fix as resolver input, resolved by real pip and real uv.

Two local PEP 503 indexes stand for PyPI and PyTorch's CPU index, made of small wheels this test
builds: "PyPI" holds plain torch builds (and the stack above it), the "CPU index" torch's +cpu
builds only. torch_npu's matrix (its CPU source pointed at the second index) on x86_64 fixes a
vllm-ascend stack whose torch-npu is the wrong build; what ``--emit`` writes must resolve, in
pip and in uv, to exactly the stack the fix names, torch ``+cpu`` from the second index.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pytest

from .helpers import FIXTURES

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

UV = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(UV is None, reason="uv is not installed (the [test] extra has it)")]

ADAPTER = FIXTURES / "matrices" / "torch_npu.yaml"
VLLM_ASCEND = FIXTURES / "stacks" / "vllm-ascend.yaml"
CPU_URL = "https://download.pytorch.org/whl/cpu"
# the stack the fix leaves: torch kept (+cpu, x86_64), torch-npu's right build, the layer and its pins
STACK = {
    "torch": "2.10.0+cpu",
    "torch-npu": "2.10.0.post4",
    "vllm-ascend": "0.23.0",
    "vllm": "0.23.0",
    "triton-ascend": "3.2.2",
}
PYPI = [  # name, version, Requires-Dist
    ("torch", "2.10.0", []),
    ("torch", "2.11.0", []),
    ("torch-npu", "2.10.0.post2", ["torch==2.10.0"]),
    ("torch-npu", "2.10.0.post4", ["torch==2.10.0"]),
    ("torch-npu", "2.11.0", ["torch==2.11.0"]),
    ("vllm", "0.23.0", ["torch"]),
    ("vllm", "0.24.0", ["torch"]),
    ("triton-ascend", "3.2.2", []),
    ("triton-ascend", "3.3.0", []),
    ("vllm-ascend", "0.23.0", ["vllm==0.23.0", "torch-npu==2.10.0.post4", "triton-ascend"]),
]
CPU = [("torch", "2.10.0+cpu", []), ("torch", "2.11.0+cpu", [])]


def _wheel(folder: Path, name: str, version: str, requires: Sequence[str]) -> str:
    """A minimal valid wheel (METADATA, WHEEL, RECORD); its file name."""
    stem = f"{name.replace('-', '_')}-{version}"
    files = {
        f"{stem}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{stem}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for member, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{member},sha256={digest},{len(text.encode())}")
    files[f"{stem}.dist-info/RECORD"] = "\n".join(record + [f"{stem}.dist-info/RECORD,,"]) + "\n"
    filename = f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(folder / filename, "w") as archive:
        for member, text in files.items():
            archive.writestr(zipfile.ZipInfo(member, (2020, 1, 1, 0, 0, 0)), text)
    return filename


def _index(root: Path, packages: Sequence[Tuple[str, str, List[str]]], hashes: bool) -> str:
    """A PEP 503 index of ``packages`` under ``root`` (links with #sha256= when ``hashes``); its URL."""
    pages: Dict[str, List[str]] = {}
    for name, version, requires in packages:
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        filename = _wheel(folder, name, version, requires)
        fragment = f"#sha256={hashlib.sha256((folder / filename).read_bytes()).hexdigest()}" if hashes else ""
        pages.setdefault(name, []).append(
            f'<a href="{html.escape(filename)}{fragment}">{html.escape(filename)}</a><br>'
        )
    for name, links in pages.items():
        (root / name / "index.html").write_text(
            "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        )
    (root / "index.html").write_text("".join(f'<a href="{n}/">{n}</a><br>\n' for n in pages))
    return root.resolve().as_uri()


def _setup(tmp_path: Path, hashes: bool = True) -> Tuple[str, str, Path]:
    pypi = _index(tmp_path / "pypi", PYPI, hashes)
    cpu = _index(tmp_path / "cpu", CPU, hashes)
    adapter = tmp_path / "torch_npu.yaml"
    adapter.write_text(ADAPTER.read_text(encoding="utf-8").replace(CPU_URL, cpu), encoding="utf-8")
    return pypi, cpu, adapter


def _env(tmp_path: Path, pypi: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(
        ADAPTER_MATRIX_INDEX_URL=pypi,
        PIP_CONFIG_FILE=os.devnull,
        UV_NO_CONFIG="1",
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        UV_PYTHON_DOWNLOADS="never",
    )
    return env


def _emit(tmp_path: Path, adapter: Path, fmt: str, env: Dict[str, str]) -> str:
    out = tmp_path / f"emitted-{fmt}"
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--matrix", str(adapter), "--matrix", str(VLLM_ASCEND)]
        + ["--python", "3.11", "--set", "arch=x86_64", "--set", "soc=Ascend910B", "--set", "cann=9.1.0"]
        + ["--companion", "vllm-ascend=0.23.0", "--companion", "vllm=0.23.0"]
        + ["--companion", "triton-ascend=3.2.2", "--torch", "2.10.0+cpu", "--adapter", "2.10.0.post2"]
        + ["--today", "2026-12-06", "--emit", fmt, "--output", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return out.read_text(encoding="utf-8")


def _uv_venv(tmp_path: Path, env: Dict[str, str]) -> Path:
    venv = tmp_path / "fresh"
    subprocess.run([UV, "venv", str(venv), "--python", sys.executable], env=env, check=True, capture_output=True)
    return venv / "bin" / "python"


def _pip_report(args: Sequence[str], env: Dict[str, str]) -> Dict[str, Tuple[str, str]]:
    """What pip would install: name -> (version, the URL it comes from)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", "-"]
        + ["--disable-pip-version-check", "--no-cache-dir", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    return {i["metadata"]["name"]: (i["metadata"]["version"], i["download_info"]["url"]) for i in report["install"]}


def test_the_emitted_requirements_resolve_in_uv_and_pip_to_exactly_the_stack(tmp_path):
    pypi, cpu, adapter = _setup(tmp_path)
    env = _env(tmp_path, pypi)
    text = _emit(tmp_path, adapter, "requirements", env)
    assert f"--extra-index-url {cpu}" in text
    assert text.count("--hash=sha256:") == len(STACK)  # each pin's wheel, read from its own index's page
    # uv: the file as requirements, against "PyPI" as the default index
    python = _uv_venv(tmp_path, env)
    proc = subprocess.run(
        [UV, "pip", "install", "--dry-run", "-r", str(tmp_path / "emitted-requirements")]
        + ["--index-url", pypi, "--python", str(python)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    would = dict(line.strip()[2:].split("==", 1) for line in proc.stderr.splitlines() if line.startswith(" + "))
    assert would == STACK
    # pip: the same file, hashes checked
    got = _pip_report(["-r", str(tmp_path / "emitted-requirements"), "--index-url", pypi], env)
    assert {name: version for name, (version, _url) in got.items()} == STACK
    assert got["torch"][1].startswith(cpu) and got["torch-npu"][1].startswith(pypi)


def test_the_emitted_constraints_file_holds_pip_to_the_stack(tmp_path):
    pypi, cpu, adapter = _setup(tmp_path, hashes=False)  # an index that gives no hashes: none written
    env = _env(tmp_path, pypi)
    text = _emit(tmp_path, adapter, "requirements", env)
    assert "--hash" not in text
    # unconstrained, pip takes the newest triton-ascend, and PyPI's plain torch
    free = _pip_report(["vllm-ascend", "--index-url", pypi], env)
    assert (free["triton-ascend"][0], free["torch"][0]) == ("3.3.0", "2.10.0")
    got = _pip_report(["-c", str(tmp_path / "emitted-requirements"), "vllm-ascend", "--index-url", pypi], env)
    assert {name: version for name, (version, _url) in got.items()} == STACK
    assert got["torch"][1].startswith(cpu)


def test_the_emitted_uv_block_locks_exactly_the_stack_with_torch_from_its_own_index(tmp_path):
    pypi, cpu, adapter = _setup(tmp_path)
    env = _env(tmp_path, pypi)
    block = _emit(tmp_path, adapter, "uv", env)
    data = tomllib.loads(block)["tool"]["uv"]
    # an index named after the first package it serves (PyTorch's own would be "pytorch-cpu")
    assert data["index"] == [{"name": "torch-index", "url": cpu, "explicit": True}]
    assert data["sources"] == {"torch": {"index": "torch-index"}}
    project = tmp_path / "app"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0"\nrequires-python = ">=3.11,<3.12"\n'
        'dependencies = ["vllm-ascend", "vllm"]\n\n' + block
    )
    proc = subprocess.run(
        [UV, "lock", "--default-index", pypi], cwd=project, capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    lock = tomllib.loads((project / "uv.lock").read_text())
    locked = {p["name"]: p for p in lock["package"] if p["name"] != "app"}
    assert {name: p["version"] for name, p in locked.items()} == STACK
    # uv writes a local index's path, not its file: URL
    assert locked["torch"]["source"]["registry"] == str(tmp_path / "cpu")
    assert locked["torch-npu"]["source"]["registry"] == str(tmp_path / "pypi")
