"""Extra-dimension detectors: every kind, and every way they fail, without tracebacks."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from adapter_matrix.check.detectors import detect, run_detector
from adapter_matrix.matrix.diagnostics import Mark
from adapter_matrix.matrix.loader import load_text
from adapter_matrix.matrix.model import Detector, Dimension

from .helpers import FIXTURES, cli

M = Mark("t.yaml", 1, 1)


def det(kind, *target, regex=None, timeout=5.0):
    return Detector(kind, tuple(target), regex, timeout, M)


@pytest.fixture
def toolkit(tmp_path):
    """A fake toolkit install: version.cfg plus an `npu-smi`-like command on PATH."""
    root = tmp_path / "Ascend" / "ascend-toolkit" / "latest"
    root.mkdir(parents=True)
    (root / "version.cfg").write_text("# toolkit\nruntime_running_version=[8.1.RC1:8.1.RC1]\nversion=8.1.RC1\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()

    def command(name, body):
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    command("npu-smi", "print('+---+\\n| npu-smi 24.1.rc2   Version: 24.1.rc2 |')")
    command("broken-smi", "import sys; print('device error', file=sys.stderr); sys.exit(3)")
    command("slow-smi", "import time; time.sleep(10)")
    return root, bin_dir


def test_env_detector(monkeypatch):
    monkeypatch.setenv("DEMO_CANN_VERSION", "8.0.0")
    assert run_detector(det("env", "DEMO_CANN_VERSION")) == ("8.0.0", None)
    monkeypatch.setenv("DEMO_CANN_VERSION", "cann-8.1.0-beta")
    assert run_detector(det("env", "DEMO_CANN_VERSION", regex=r"(\d+\.\d+\.\d+)")) == ("8.1.0", None)
    monkeypatch.delenv("DEMO_CANN_VERSION")
    assert run_detector(det("env", "DEMO_CANN_VERSION")) == (None, "$DEMO_CANN_VERSION is not set")


def test_file_detector(toolkit):
    root, _ = toolkit
    cfg = str(root / "version.cfg")
    assert run_detector(det("file", cfg, regex=r"^version=(?P<version>\S+)")) == ("8.1.RC1", None)
    value, why = run_detector(det("file", cfg, regex=r"^release=(\S+)"))
    assert value is None and why == "regex '^release=(\\\\S+)' did not match"
    value, why = run_detector(det("file", str(root / "missing.cfg"), regex="x"))
    assert value is None and why.startswith("cannot read") and "No such file" in why


def test_command_detector(toolkit, monkeypatch):
    _, bin_dir = toolkit
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ["PATH"])
    assert run_detector(det("command", "npu-smi", "info", regex=r"Version:\s*(\S+)")) == ("24.1.rc2", None)
    assert run_detector(det("command", "broken-smi", regex="x")) == (None, "command 'broken-smi' exited with 3")
    assert run_detector(det("command", "slow-smi", regex="x", timeout=0.5)) == (
        None,
        "command 'slow-smi' timed out after 0.5 s",
    )
    assert run_detector(det("command", "no-such-tool", regex="x")) == (None, "command 'no-such-tool' not found")


def test_distribution_detector():
    assert run_detector(det("distribution", "packaging"))[0]
    assert run_detector(det("distribution", "surely-not-installed-dist")) == (
        None,
        "distribution 'surely-not-installed-dist' is not installed",
    )


def test_first_detector_that_answers_wins_and_failures_are_explained(toolkit, monkeypatch):
    root, _ = toolkit
    monkeypatch.delenv("DEMO_CANN_VERSION", raising=False)
    dim = Dimension(
        "cann",
        "",
        (),
        (det("env", "DEMO_CANN_VERSION"), det("file", str(root / "version.cfg"), regex=r"^version=(\S+)")),
        M,
    )
    found = detect(dim)
    assert (found.value, found.source) == ("8.1.RC1", f"file {root / 'version.cfg'}")
    nothing = detect(Dimension("cann", "", (), (det("env", "DEMO_CANN_VERSION"), det("file", "/nope", regex="x")), M))
    assert nothing.value is None and nothing.error.startswith("$DEMO_CANN_VERSION is not set; cannot read /nope")


MATRIX_WITH_CANN = (
    (FIXTURES / "minimal.yaml")
    .read_text()
    .replace(
        "shims:\n  - module",
        'dimensions:\n  cann:\n    description: the toolkit\n    values: ["8.0.0", "8.1.0rc1"]\n    detect:\n'
        "      - env: DEMO_CANN_VERSION\n      - file: $DEMO_TOOLKIT/version.cfg\n        regex: '^version=(\\S+)'\n"
        "shims:\n  - module",
        1,
    )
    .replace(
        '    python: ">=3.9"\n    status: supported',
        '    python: ">=3.9"\n    status: supported\n    dimensions:\n      cann: ">=8.1.0rc1"',
    )
)


def test_check_reports_detected_unknown_and_mismatched_dimensions(tmp_path, toolkit, monkeypatch):
    root, _ = toolkit
    path = tmp_path / "compat.yaml"
    path.write_text(MATRIX_WITH_CANN)
    load_text(MATRIX_WITH_CANN, "m.yaml")  # the fixture itself is valid
    args = ["check", "--json", "--matrix", str(path), "--torch", "2.3.1", "--python", "3.11", "--adapter", "2.0.0"]
    monkeypatch.delenv("DEMO_CANN_VERSION", raising=False)
    monkeypatch.setenv("DEMO_TOOLKIT", str(root))
    doc = json.loads(cli(*args).out)["checks"][0]
    assert doc["environment"]["dimensions"]["cann"]["value"] == "8.1.RC1"
    assert doc["verdict"] == "supported"
    monkeypatch.setenv("DEMO_TOOLKIT", str(tmp_path / "absent"))
    res = cli(*args)
    doc = json.loads(res.out)["checks"][0]
    assert res.code == 0 and doc["environment"]["dimensions"]["cann"]["value"] is None
    assert doc["assumptions"] == ["cann could not be detected; assumed it satisfies >=8.1.0rc1"]
    res = cli(*args, "--set", "cann=8.0.0")
    assert res.code == 1 and "needs cann >=8.1.0rc1, found 8.0.0" in json.loads(res.out)["checks"][0]["reasons"][0]
