"""Issue 60's acceptance: the op sweep on a compiled adapter that is not this repository's shims.

A copy of examples/cpp-adapter (tiny-accel, device ``tiny``) with one more source,
tests/fixtures/opsweep/fallback.cpp: the kernels a device needs so that every other op runs
through PyTorch's CPU fallback. It is compiled against the installed torch and installed into
a folder of its own; then ``ops sweep --sample`` runs on it (activated as its users do:
``import tiny_accel``), writes a record, and exits 0 against the expectations it wrote with
``--write-expected``; built again without its ``as_strided`` kernel, the next sweep exits 1
and names it. torch's autoload is off so that this environment's own adapter (the shims) does
not take PrivateUse1 first; in an adapter's own cell it is not installed.

Then the same adapter's nox cell (its noxfile with ``ops=OpSweep()``), offline on torch 2.13,
builds it against the cell's torch, sweeps the sample and keeps the counts in its record.

Minutes (three C++ builds, four sweeps, a nox cell): opt in with ``pytest -m compiled``.
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


def test_the_same_adapters_nox_cell_sweeps_its_sample_and_its_record_keeps_the_counts(adapter, tmp_path):
    """Issue 60, items 3 and 4: the adapter's noxfile with one more line, ``ops=OpSweep()``; its
    cell (offline, torch 2.13 from /opt/wheels) builds it against the cell's torch, loads it,
    sweeps the sample from the installed wheels against the expectations written above, and
    the result record keeps the counts per family."""
    import glob

    from .offline import LOCAL_TORCH, op_cell_env
    from .test_nox import NOX

    if NOX is None or not glob.glob(os.path.join(LOCAL_TORCH, "torch-2.13.0*-cp311-*.whl")):
        pytest.skip("needs nox and the local torch 2.13 wheel")
    if not torch.__version__.startswith("2.13"):
        pytest.skip("the expectations are written with this environment's torch, the cell's is 2.13")
    source, root = adapter
    cell = root / "cell"
    shutil.copytree(source, cell, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    if not (cell / "op-sweep" / "torch-2.13.yaml").exists():  # the first test writes it
        written = sweep(cell, root / "site", "--write-expected")
        assert written.returncode == 0, written.stdout + written.stderr
    noxfile = cell / "noxfile.py"
    text = noxfile.read_text()
    noxfile.write_text(
        text.replace("import Adapter, Pytest, cells", "import Adapter, OpSweep, Pytest, cells").replace(
            'tests=Pytest("tests"),', 'tests=Pytest("tests"), ops=OpSweep(),'
        )
    )
    assert "ops=OpSweep()" in noxfile.read_text()
    env = op_cell_env(cell, tmp_path)
    proc = subprocess.run(
        [NOX, "--envdir", str(tmp_path / "nox"), "-s", "device(py3.11-torch2.13)"],
        cwd=cell,
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    record = json.loads((tmp_path / "results" / "py3.11-torch2.13.json").read_text())
    ops = record["ops"]
    assert record["outcome"] == "passed" and ops["mode"] == "sample" and ops["ok"]
    # every op of the sample counted once, in its family; the CPU fallback runs most tasks
    assert sum(sum(states.values()) for states in ops["families"].values()) == ops["ops"] >= 50
    assert ops["tasks"]["passed"] > 200
    assert record["suites"]["ops"]["passed"] == ops["tasks"]["passed"] and record["suites"]["ops"]["failed"] == 0
    swept = json.loads((tmp_path / "results" / ops["record"]).read_text())
    assert swept["device"] == "tiny" and swept["families"] == ops["families"]
    evidence = json.loads((tmp_path / "evidence" / "0.1.0" / "py3.11-torch2.13.json").read_text())
    assert evidence["ops"]["families"] == ops["families"]
