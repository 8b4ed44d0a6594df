"""A cell judges the adapter it installed: adapter-matrix itself goes into the cell (the copy
running nox), and before the tests the cell imports the installed adapter and creates a tensor on
compat.yaml's device; an adapter that installs but does not load fails with its own error."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from adapter_matrix.ci import load, wheels


def _installed(site: Path, name: str, init: str) -> None:
    """A distribution ``name`` installed into ``site``: its package and its .dist-info."""
    package = name.replace("-", "_")
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text(init)
    info = site / f"{package}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "RECORD").write_text(f"{package}/__init__.py,,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")


def _load(site: Path, *args: str, cwd: Path) -> dict:
    pytest.importorskip("torch")
    proc = subprocess.run(
        [sys.executable, *load.command(*args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site), "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "PATH": "/usr/bin:/bin"},
    )
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == (0 if found["loaded"] else 1), proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    return found


def test_an_adapter_that_loads_imports_and_holds_a_tensor_on_its_device(tmp_path):
    _installed(tmp_path / "site", "good-accel", "import torch\n")
    found = _load(tmp_path / "site", "good-accel", "cpu", cwd=tmp_path)
    assert found["loaded"] and found["modules"] == ["good_accel"] and found["tensor"] == "cpu"


def test_an_adapter_that_installs_but_does_not_load_names_its_import_error(tmp_path):
    # as a _C built against another torch fails: the loader's own message, not a traceback
    init = "raise ImportError('_C.so: undefined symbol: _ZN3c104impl3fooEv')\n"
    _installed(tmp_path / "site", "tiny-accel", init)
    found = _load(tmp_path / "site", "tiny-accel", "tiny", cwd=tmp_path)
    assert not found["loaded"]
    assert found["error"] == "import tiny_accel: ImportError: _C.so: undefined symbol: _ZN3c104impl3fooEv"


def test_a_registered_device_that_holds_no_tensor_fails_unless_the_cell_only_imports_it(tmp_path):
    # the backend is named, but no allocator or kernel serves it
    init = "import torch\ntorch.utils.rename_privateuse1_backend('skel')\n"
    _installed(tmp_path / "site", "skeleton-accel", init)
    found = _load(tmp_path / "site", "skeleton-accel", "skel", cwd=tmp_path)
    assert not found["loaded"] and found["error"].startswith("torch.empty(2, device='skel'): ")
    found = _load(tmp_path / "site", "skeleton-accel", "skel", False, cwd=tmp_path)
    assert found["loaded"] and "tensor" not in found


def test_a_device_without_its_kernels_keeps_torchs_own_first_line(tmp_path):
    """A build for another torch minor registers its kernels on another dispatch key: torch
    names the op and the backend first, then lists every kernel registered for the op, one per
    line. The record keeps the cause ("Could not run ... from the 'tiny' backend."), not the
    list's last line ("PythonDispatcher: registered at ...")."""
    init = (
        "import types, torch\n"
        "torch.utils.rename_privateuse1_backend('tiny')\n"
        "torch._register_device_module('tiny', types.ModuleType('torch.tiny'))\n"
    )
    _installed(tmp_path / "site", "tiny-accel", init)
    found = _load(tmp_path / "site", "tiny-accel", "tiny", cwd=tmp_path)
    assert not found["loaded"]
    assert found["error"] == (
        "torch.empty(2, device='tiny'): NotImplementedError: Could not run 'aten::empty.memory_format' "
        "with arguments from the 'tiny' backend."
    )


def test_an_error_is_its_type_and_its_first_line():
    class Custom(RuntimeError):
        pass

    assert load._error(ImportError("_C.so: undefined symbol: x\n\nmore")) == "ImportError: _C.so: undefined symbol: x"
    assert load._error(Custom("\n  first\nsecond")) == f"{__name__}.{Custom.__qualname__}: first"
    assert load._error(KeyError()) == "KeyError"
    long = "A cause. " + "x" * 300
    assert load._error(OSError(long)) == "OSError: A cause."
    assert load._error(OSError("no sentence " + "y" * 300)) == "OSError: no sentence " + "y" * 300


def test_an_adapter_that_registers_no_device_loads_and_says_no_tensor_was_made(tmp_path):
    _installed(tmp_path / "site", "plain-accel", "import torch\n")
    found = _load(tmp_path / "site", "plain-accel", "mydev", cwd=tmp_path)
    assert found["loaded"] and "tensor" not in found
    assert found["note"] == "torch knows no device 'mydev' after importing plain_accel: no tensor made"


def test_the_installed_adapter_is_imported_never_the_source_tree_the_cell_runs_in(tmp_path):
    # the cell runs in the adapter's checkout, whose package lacks the compiled _C
    _installed(tmp_path / "site", "tiny-accel", "import torch\nBUILT = True\n")
    (tmp_path / "src" / "tiny_accel").mkdir(parents=True)
    (tmp_path / "src" / "tiny_accel" / "__init__.py").write_text("raise ImportError('the source tree')\n")
    found = _load(tmp_path / "site", "tiny-accel", "cpu", cwd=tmp_path / "src")
    assert found["loaded"], found


def test_an_adapter_not_installed_is_named(tmp_path):
    (tmp_path / "site").mkdir()
    found = _load(tmp_path / "site", "absent-accel", "cpu", cwd=tmp_path)
    assert found == {
        "distribution": "absent-accel",
        "device": "cpu",
        "loaded": False,
        "error": "absent-accel is not installed in this environment",
    }


def test_an_installed_tool_is_packed_back_from_its_files(tmp_path):
    """An installed (not editable) adapter-matrix goes into the cell as the very copy running nox,
    offline, whatever index it came from: its RECORD's files, without the installer's own files,
    bytecode or scripts, with a new RECORD that lists exactly what the wheel holds."""
    site = tmp_path / "site"
    info = site / "adapter_matrix-9.1.dist-info"
    files = {
        "adapter_matrix/__init__.py": "VERSION = '9.1'\n",
        "adapter_matrix/__pycache__/__init__.cpython-311.pyc": "bytecode",
        "adapter_matrix/_vendor/dep-1.0.dist-info/RECORD": "vendored,,\n",  # not the tool's own RECORD
        f"{info.name}/METADATA": "Metadata-Version: 2.1\nName: adapter-matrix\nVersion: 9.1\n",
        f"{info.name}/WHEEL": "Wheel-Version: 1.0\nTag: py3-none-any\n",
        f"{info.name}/INSTALLER": "pip\n",
        f"{info.name}/direct_url.json": '{"url": "https://example.invalid/a.whl", "archive_info": {}}',
        "../../bin/adapter-matrix": "#!/bin/sh\n",
    }
    for name, text in files.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (info / "RECORD").write_text("".join(f"{name},,\n" for name in files) + f"{info.name}/RECORD,,\n")
    whl = wheels.repack(metadata.Distribution.at(info), tmp_path)
    assert whl.name == "adapter_matrix-9.1-py3-none-any.whl"
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        assert z.read("adapter_matrix/__init__.py") == b"VERSION = '9.1'\n"
        record = z.read(f"{info.name}/RECORD").decode()
    assert names == {
        "adapter_matrix/__init__.py",
        "adapter_matrix/_vendor/dep-1.0.dist-info/RECORD",
        f"{info.name}/METADATA",
        f"{info.name}/WHEEL",
        f"{info.name}/RECORD",
    }
    assert {line.split(",")[0] for line in record.splitlines()} == names


def test_the_installed_tool_is_not_a_checkouts_egg_info(tmp_path, monkeypatch):
    """setuptools leaves adapter_matrix.egg-info in a checkout; from there it shadows the installed
    copy (no RECORD) and the cell was given a wheel of nothing."""
    (tmp_path / "adapter_matrix.egg-info").mkdir()
    (tmp_path / "adapter_matrix.egg-info" / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: adapter-matrix\nVersion: 0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert metadata.distribution(wheels.TOOL).read_text("RECORD") is None  # what shadowed it
    assert wheels.installed_tool().read_text("RECORD") is not None


def test_an_editable_tool_is_built_from_its_checkout(tmp_path):
    dist = wheels.installed_tool()
    if wheels._checkout(dist) is None:
        pytest.skip("adapter-matrix is not installed from a checkout here")
    whl = wheels.tool_wheel(tmp_path)
    with zipfile.ZipFile(whl) as z:
        assert "adapter_matrix/ci/load.py" in z.namelist()  # the checkout's code, not a link to it
