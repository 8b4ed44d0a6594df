"""The reference adapter's import-time guard: a mismatched matrix stops `import shims` with the fix, but never `import torch`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adapter_matrix.check import guard

from .helpers import REPO

torch = pytest.importorskip("torch")


@pytest.fixture
def mismatched(tmp_path):
    """A copy of the adapter whose matrix does not claim the installed torch line."""
    pkg = tmp_path / "pkg"
    shutil.copytree(
        REPO / "shims" / "src" / "shims", pkg / "shims", ignore=shutil.ignore_patterns("__pycache__", "compat.yaml")
    )
    minor = torch.__version__.split(".")[1]
    text = (
        (REPO / "compat.yaml").read_text().replace('torch: ">=2.1,<2.16"', f'torch: ">=2.1,<2.{minor}"')
    )  # every release
    assert text != (REPO / "compat.yaml").read_text()
    (pkg / "shims" / "compat.yaml").write_text(text)
    return pkg


def _python(code: str, pkg: Path, autoload: bool) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(pkg) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["ADAPTER_MATRIX_CACHE"] = str(pkg.parent / "cache")  # the verdict memo of this copy, not of earlier runs
    env.pop(guard.ALLOW_ENV, None)
    if autoload:
        env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    else:
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    return subprocess.run([sys.executable, "-c", code], cwd=pkg, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # a fresh Python imports torch and activates the device
def test_plain_import_raises_one_clear_error_with_the_fix(mismatched):
    proc = _python("import shims", mismatched, autoload=False)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()
    error_line = next(line for line in last if line.startswith("shims._activation.AdapterError"))
    assert f"adapter-matrix-npu with torch {torch.__version__}: unsupported" in error_line
    assert f"supports torch >=2.1,<2.{torch.__version__.split('.')[1]}" in error_line
    assert re.search(r"fix: (up|down)grade torch from ", proc.stderr), proc.stderr  # uv's words (issue 67)
    # the installed build's variant is kept, from an index any machine reaches
    label = torch.__version__.partition("+")[2]
    if label:
        assert f"+{label}' --index-url https://download.pytorch.org/whl/{label}" in proc.stderr
    else:
        assert "pip install 'torch>=2." in proc.stderr


@pytest.mark.slow  # a fresh Python imports torch and activates the device
def test_under_autoload_it_warns_and_import_torch_works(mismatched):
    if not hasattr(torch, "_import_device_backends"):
        pytest.skip("this torch has no torch.backends autoload")
    proc = _python("import torch; print('ok', torch.ones(1).sum().item())", mismatched, autoload=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok 1.0"
    assert "RuntimeWarning: shims was not activated: adapter-matrix-npu with torch" in proc.stderr
    assert re.search(r"fix: (up|down)grade torch from ", proc.stderr), proc.stderr  # uv's words (issue 67)
    assert proc.stderr.count("was not activated") == 1  # said once, by adapter_matrix.require


def test_escape_hatch_turns_the_error_into_a_warning(mismatched, monkeypatch):
    monkeypatch.setenv(guard.ALLOW_ENV, "1")
    with pytest.warns(RuntimeWarning, match="unsupported"):
        support = guard.require(
            "shims", matrix=mismatched / "shims" / "compat.yaml", version="0.1.0", torch_version=torch.__version__
        )
    assert support.usable and support.shim and support.shim.startswith("shims.torch_")


def test_verdict_is_memoized_and_follows_the_file(tmp_path):
    path = tmp_path / "compat.yaml"
    path.write_text((REPO / "compat.yaml").read_text())
    first = guard.select(str(path), "2.13.0+cpu", "0.1.0")
    assert first.outcome == "supported" and first.shim == "shims.torch_2_12"
    assert guard.select(str(path), "2.13.0+cpu", "0.1.0") == first
    path.write_text(path.read_text().replace('torch: ">=2.1,<2.16"', 'torch: ">=2.1,<2.13"'))  # every release
    assert guard.select(str(path), "2.13.0+cpu", "0.1.0").outcome == "unsupported"
