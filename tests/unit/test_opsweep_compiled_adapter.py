"""Issue 60's acceptance: the op sweep on a compiled adapter that is not this repository's shims.

A copy of examples/cpp-adapter (tiny-accel, device ``tiny``) with one more source,
tests/fixtures/opsweep/fallback.cpp: the kernels a device needs so that every other op runs
through PyTorch's CPU fallback. It is compiled against the installed torch and installed into
a folder of its own; then ``ops sweep --sample`` runs on it (activated as its users do:
``import tiny_accel``), writes a record, and exits 0 against the expectations it wrote with
``--write-expected``; built again without its ``as_strided`` kernel, the next sweep exits 1
and names it. torch's autoload is off so that this environment's own adapter (the shims) does
not take PrivateUse1 first; in an adapter's own cell it is not installed.

Minutes (two C++ builds and three sweeps): opt in with ``pytest -m compiled``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from .helpers import FIXTURES, REPO

pytestmark = [pytest.mark.slow, pytest.mark.compiled]

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")


def build(source, site, defines=""):
    env = dict(os.environ, TINY_DEFINES=defines)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(site), "."],
        cwd=source,
        env=env,
        check=True,
    )
    shutil.rmtree(source / "build", ignore_errors=True)


def sweep(adapter, site, *args):
    env = dict(os.environ, PYTHONPATH=str(site), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "ops", "sweep", "--sample", *args],
        cwd=adapter,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def adapter(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    source = root / "tiny-accel"
    shutil.copytree(REPO / "examples" / "cpp-adapter", source, ignore=shutil.ignore_patterns("evidence", "build"))
    shutil.copy(FIXTURES / "opsweep" / "fallback.cpp", source / "csrc" / "fallback.cpp")
    setup = source / "setup.py"
    text = setup.read_text()
    assert '["csrc/tiny.cpp"]' in text
    setup.write_text(
        text.replace(
            '["csrc/tiny.cpp"]',
            '["csrc/tiny.cpp", "csrc/fallback.cpp"], '
            'extra_compile_args=[f"-D{d}" for d in __import__("os").environ.get("TINY_DEFINES", "").split()]',
        )
    )
    build(source, root / "site")
    return source, root


def test_the_sample_sweep_of_a_compiled_adapter_holds_to_what_it_wrote_and_names_a_removed_kernel(adapter):
    source, root = adapter
    first = sweep(source, root / "site", "--write-expected", "--output", str(root / "first.json"))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "activates the device with import tiny_accel" in first.stdout
    assert (
        source / "op-sweep" / f"torch-{torch.__version__.split('.')[0]}.{torch.__version__.split('.')[1]}.yaml"
    ).exists()
    record = json.loads((root / "first.json").read_text())
    assert record["device"] == "tiny" and record["ok"] and record["families"]
    assert record["by_dtype"]["float32"]["forward"]["passed"] > 30  # the CPU fallback runs most of the sample

    second = sweep(source, root / "site", "--output", str(root / "second.json"))
    assert second.returncode == 0, second.stdout + second.stderr
    assert json.loads((root / "second.json").read_text())["ok"]

    build(source, root / "site-without", "TINY_WITHOUT_AS_STRIDED")
    third = sweep(source, root / "site-without", "--json")
    assert third.returncode == 1, third.stderr
    problems = json.loads(third.stdout)["problems"]
    assert any(p["task"].startswith("as_strided/") for p in problems)
    assert all("aten::as_strided" in (p["error"] or "") for p in problems if p["problem"] == "new failure")
