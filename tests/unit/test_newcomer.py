"""What a maintainer adopting the tool ran into (issue 20), each pinned down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from adapter_matrix import __version__

from .helpers import REPO

TOY = REPO / "examples" / "toy-adapter"


def _cli(*args: str, cwd: Path, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    code = "import sys; sys.argv = ['adapter-matrix', *sys.argv[1:]]; from adapter_matrix.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, **(env or {})),
    )


def test_version_is_printed(tmp_path):
    proc = _cli("--version", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == f"adapter-matrix {__version__}\n"


@pytest.mark.parametrize("args", [["--today", "someday"], ["--matrix", "missing.yaml"], ["--no-such-option"]])
def test_check_json_prints_a_json_document_on_errors_too(tmp_path, args):
    proc = _cli("check", "--json", *args, cwd=tmp_path)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["exit_code"] == 2 and doc["checks"] == [] and doc["error"]


def _broken_adapter(site: Path) -> None:
    """An installed distribution whose registered matrix is not valid."""
    (site / "brokenad").mkdir(parents=True)
    (site / "brokenad" / "__init__.py").write_text("")
    (site / "brokenad" / "compat.yaml").write_text("schema-version: 2\nadapter: {distribution: brokenad}\n")
    info = site / "brokenad-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenad\nVersion: 1.0\n\n")
    (info / "entry_points.txt").write_text("[adapter_matrix.matrices]\nbrokenad = brokenad:compat.yaml\n")


def test_a_broken_installed_matrix_is_reported_and_check_answers_for_the_others(tmp_path):
    _broken_adapter(tmp_path / "site")
    proc = _cli(
        "check",
        "--json",
        "--torch",
        "2.13.0",
        "--adapter",
        "0.1.0",
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site"), "ADAPTER_MATRIX_CACHE": str(tmp_path / "cache")},
    )
    doc = json.loads(proc.stdout)
    assert [c["origin"] for c in doc["checks"]] == ["entry point adapter-matrix-npu (adapter-matrix-npu)"]
    assert doc["exit_code"] == proc.returncode == doc["checks"][0]["exit_code"]
    (bad,) = doc["invalid"]
    assert bad["matrix"].endswith(os.path.join("brokenad", "compat.yaml")) and bad["errors"]
    # the same errors with their positions, as the diagnostics of an invalid --matrix are
    assert [d for d in bad["diagnostics"] if d["severity"] == "error"]
    assert all(d["file"].endswith("compat.yaml") and d["message"] for d in bad["diagnostics"])
    assert "is not a valid matrix: no verdict for it; fix or uninstall that adapter" in proc.stderr


def test_validate_pyproject_judges_the_file_against_its_own_matrix(tmp_path):
    proc = _cli("validate", "--pyproject", str(TOY / "pyproject.toml"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(str(TOY / "toy_adapter" / "compat.yaml") + ": valid")
    assert "npu" not in proc.stdout + proc.stderr
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    proc = _cli("validate", "--pyproject", "pyproject.toml", cwd=tmp_path)
    assert proc.returncode == 2 and "registers no matrix" in proc.stderr


def test_a_second_privateuse1_adapter_names_both_and_the_way_out(tmp_path):
    pytest.importorskip("torch")
    pkg = tmp_path / "toy2"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    text = (
        (TOY / "toy_adapter" / "compat.yaml").read_text().replace("distribution: toy-adapter", "distribution: toy-two")
    )
    (pkg / "compat.yaml").write_text(text.replace("shims: toy_adapter.eras", "shims: toy2"))
    code = (
        "import torch; torch.utils.rename_privateuse1_backend('npu')\n"  # what adapter-matrix-npu does on import
        "from adapter_matrix import require\nrequire('toy2', version='1.0.0')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(
            os.environ,
            TOY_DRIVER_VERSION="2.1",
            TORCH_DEVICE_BACKEND_AUTOLOAD="0",
            ADAPTER_MATRIX_CACHE=str(tmp_path / "cache"),
        ),
    )
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "adapter_matrix.check.guard.UnsupportedEnvironment: toy-two (device 'toy') cannot register its device: "
        "adapter-matrix-npu (device 'npu') already holds PyTorch's one PrivateUse1 backend"
    )
    assert "pip uninstall one of them" in last and "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in last
    assert "already been set" not in proc.stderr
