"""`check --deep`: a real activation and smoke, timed; a foreign build is refused before loading."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from .helpers import REPO

pytestmark = pytest.mark.slow  # builds and activates the device in a subprocess

torch = pytest.importorskip("torch")


def _deep(env=None):
    script = os.path.join(os.path.dirname(sys.executable), "adapter-matrix")
    cmd = [script] if os.path.exists(script) else [sys.executable, "-m", "adapter_matrix"]
    proc = subprocess.run(
        cmd + ["check", "--deep", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, **(env or {})),
    )
    return proc, json.loads(proc.stdout)["checks"][0]


def test_deep_check_passes_and_times_each_step():
    proc, doc = _deep()
    # the verdict decides the exit code (the tree's adapter may be an experimental release: 3)
    assert doc["deep"]["ok"] and proc.returncode == doc["exit_code"] == (
        3 if doc["verdict"] == "experimental" else 0
    ), proc.stderr
    steps = doc["deep"]["steps"]
    assert [s["name"] for s in steps] == [
        "import torch",
        "check the build manifest",
        "activate shims",
        "create on npu",
        "compute",
        "copy back",
        "compare with CPU",
    ]
    assert all(s["ok"] and s["seconds"] >= 0 for s in steps)
    assert steps[-1]["detail"] == "64x64 matmul + relu + sum equals CPU"


@pytest.fixture(scope="module")
def build():
    """The device's build for this torch, from the cache or compiled now (a minute on 2 cores):
    the test must not depend on an earlier test or run having left one behind."""
    from adapter_matrix.device.build import Extension, ensure_built

    return ensure_built(Extension.of_package("shims", "npu"))


def test_deep_check_refuses_a_build_for_another_torch(build, tmp_path):
    from adapter_matrix.device.build import read_manifest

    foreign = tmp_path / "foreign"
    shutil.copytree(build.path, foreign)
    manifest = read_manifest(foreign)
    manifest.update(torch="2.4.1", torch_git="ee1b6804381c57161c477caa380a840a84167676")
    (foreign / "manifest.json").write_text(json.dumps(manifest))
    proc, doc = _deep({"ADAPTER_MATRIX_DEVICE_LIBRARY": str(foreign)})
    assert proc.returncode == 1
    failed = [s for s in doc["deep"]["steps"] if not s["ok"]]
    assert [s["name"] for s in failed] == ["check the build manifest"]
    assert "built against torch 2.4.1" in failed[0]["detail"]
    assert f"runs torch {torch.__version__}" in failed[0]["detail"]
    assert "adapter-matrix build" in failed[0]["detail"]
    assert "activate shims" not in [s["name"] for s in doc["deep"]["steps"]]  # stopped before loading
