"""`adapter_matrix.require()`, the call an adapter makes at the top of its `__init__`.

The adapter here is a copy of examples/toy-adapter on sys.path, never imported (its
`__init__` would call require itself): require locates a package without importing it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import adapter_matrix
from adapter_matrix import UnsupportedEnvironment, require
from adapter_matrix.matrix import discovery

from .helpers import REPO

EXAMPLE = REPO / "examples" / "toy-adapter" / "toy_adapter"


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A copy of the example adapter's package, importable as toy_adapter; a private cache."""
    root = tmp_path / "site"
    shutil.copytree(EXAMPLE, root / "toy_adapter", ignore=shutil.ignore_patterns("__pycache__"))
    # the tests run on Python 3.8+ (nox -t unit): let every torch line have a wheel for it
    path = root / "toy_adapter" / "compat.yaml"
    text = path.read_text().replace('python: ["3.10",', 'python: ["3.8", "3.9", "3.10",')
    path.write_text(text.replace('python: ">=3.10,<3.14"', 'python: ">=3.8,<3.14"'))
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TOY_DRIVER_VERSION", "2.1")
    monkeypatch.delenv("ADAPTER_MATRIX_ALLOW_UNSUPPORTED", raising=False)
    return root / "toy_adapter"


def _import_device_backends(call):
    """Stands in for torch's function of that name: require() sees it on the stack."""
    return call()


def test_the_public_names_load_lazily():
    code = "import sys, adapter_matrix; print('adapter_matrix.check.guard' in sys.modules, adapter_matrix.require.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "adapter_matrix.check.guard"]
    with pytest.raises(AttributeError):
        adapter_matrix.no_such_name  # noqa: B018


def test_it_finds_compat_yaml_in_the_package_and_names_the_shim(toy):
    support = require("toy_adapter", version="1.0.0", torch_version="2.13.0")
    assert (support.outcome, support.shim, support.usable) == ("supported", "toy_adapter.eras.torch_2_10", True)
    assert support.matrix == str(toy / "compat.yaml")
    assert "toy_adapter" not in sys.modules  # located, never imported


def _narrow(toy: Path) -> None:
    """Release 1.0.0 claims torch 2.10-2.12 only; the shim still serves up to 2.15."""
    path = toy / "compat.yaml"
    path.write_text(
        path.read_text().replace('    torch: ">=2.10,<2.16"\n    python:', '    torch: ">=2.10,<2.13"\n    python:')
    )


def test_a_torch_the_release_does_not_claim_raises_with_the_fix(toy):
    _narrow(toy)
    with pytest.raises(UnsupportedEnvironment) as err:
        require("toy_adapter", version="1.0.0", torch_version="2.13.0")
    message = str(err.value)
    assert message.startswith(
        "toy-adapter with torch 2.13.0: unsupported: toy-adapter 1.0.0 supports torch >=2.10,<2.13, not 2.13.0"
    )
    assert "fix: downgrade torch from 2.13.0 to 2.12.1" in message and "pip install 'torch>=2.12,<2.13'" in message
    assert message.endswith("(set ADAPTER_MATRIX_ALLOW_UNSUPPORTED=1 to try anyway)")
    with pytest.raises(UnsupportedEnvironment, match=r"torch 2.9.1 is not a torch release this matrix describes"):
        require("toy_adapter", version="1.0.0", torch_version="2.9.1")


def test_an_adapter_version_the_matrix_does_not_describe_raises(toy):
    with pytest.raises(UnsupportedEnvironment, match=r"toy-adapter 0\.9\.0 is not a release this matrix describes"):
        require("toy_adapter", version="0.9.0", torch_version="2.13.0")


def test_extra_dimensions_are_detected_from_the_environment(toy, monkeypatch):
    monkeypatch.setenv("TOY_DRIVER_VERSION", "1.0")
    with pytest.raises(UnsupportedEnvironment, match=r"needs driver >=2.0, found 1.0"):
        require("toy_adapter", version="1.0.0", torch_version="2.13.0")
    monkeypatch.delenv("TOY_DRIVER_VERSION")  # undetected: assumed to fit, as `check` does
    assert require("toy_adapter", version="1.0.0", torch_version="2.13.0").outcome == "supported"


def test_an_import_never_runs_command_detectors(toy, tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    text = (
        (toy / "compat.yaml")
        .read_text()
        .replace(
            "      - env: TOY_DRIVER_VERSION\n",
            f"      - command: [sh, -c, 'touch {marker}; echo 1.0']\n        regex: '(\\S+)'\n",
        )
    )
    (toy / "compat.yaml").write_text(text)
    monkeypatch.delenv("TOY_DRIVER_VERSION")
    assert require("toy_adapter", version="1.0.0", torch_version="2.13.0").outcome == "supported"
    assert not marker.exists()
    from adapter_matrix.check.environment import detect_environment
    from adapter_matrix.matrix.loader import load

    found = detect_environment(load(toy / "compat.yaml").matrix)  # `check` does run it
    assert marker.exists() and dict(found.environment.dimensions)["driver"] is not None


def test_a_deprecated_release_warns_with_a_future_warning(toy):
    path = toy / "compat.yaml"
    path.write_text(
        path.read_text().replace("    status: supported\n", "    status: deprecated\n    reason: use 2.0\n")
    )
    with pytest.warns(FutureWarning, match="toy-adapter with torch 2.13.0: deprecated: use 2.0"):
        support = require("toy_adapter", version="1.0.0", torch_version="2.13.0")
    assert support.usable


def test_under_autoload_it_warns_and_says_not_to_activate(toy):
    _narrow(toy)
    with pytest.warns(
        RuntimeWarning, match="toy_adapter was not activated: toy-adapter with torch 2.13.0: unsupported"
    ):
        support = _import_device_backends(lambda: require("toy_adapter", version="1.0.0", torch_version="2.13.0"))
    assert not support.usable and support.outcome == "unsupported"


def test_a_missing_matrix_raises_on_import_and_warns_under_autoload(tmp_path, monkeypatch):
    (tmp_path / "bare_adapter").mkdir()
    (tmp_path / "bare_adapter" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(discovery, "_entry_points", list)
    with pytest.raises(FileNotFoundError, match=r"bare_adapter: no compat.yaml in .*bare_adapter and no entry point"):
        require("bare_adapter")
    with pytest.warns(RuntimeWarning, match="bare_adapter was not activated: bare_adapter: no compat.yaml"):
        support = _import_device_backends(lambda: require("bare_adapter"))
    assert not support.usable


def test_a_matrix_kept_elsewhere_is_found_through_its_entry_point(toy, monkeypatch):
    (toy / "data").mkdir()
    (toy / "compat.yaml").rename(toy / "data" / "matrix.yaml")
    point = SimpleNamespace(name="toy-adapter", value="toy_adapter.data:matrix.yaml", dist=None)
    monkeypatch.setattr(discovery, "_entry_points", lambda: [point])
    support = require("toy_adapter", version="1.0.0", torch_version="2.13.0")
    assert support.matrix == str(toy / "data" / "matrix.yaml") and support.outcome == "supported"
    assert (
        require("toy_adapter", matrix="data/matrix.yaml", version="1.0.0", torch_version="2.13.0").matrix
        == support.matrix
    )


def test_the_escape_hatch_activates_an_unsupported_pairing_that_a_shim_serves(toy, monkeypatch):
    _narrow(toy)
    monkeypatch.setenv("ADAPTER_MATRIX_ALLOW_UNSUPPORTED", "1")
    with pytest.warns(RuntimeWarning, match="ADAPTER_MATRIX_ALLOW_UNSUPPORTED is set: activating anyway"):
        support = require("toy_adapter", version="1.0.0", torch_version="2.13.0")
    assert support.usable and support.outcome == "unsupported" and support.shim == "toy_adapter.eras.torch_2_10"
    with pytest.raises(UnsupportedEnvironment) as err:  # no shim serves torch 2.9: nothing to activate
        require("toy_adapter", version="1.0.0", torch_version="2.9.1")
    assert "ADAPTER_MATRIX_ALLOW_UNSUPPORTED cannot help: no shim of toy_adapter serves torch 2.9.1" in str(err.value)


def test_the_escape_hatch_lets_an_adapter_without_shims_import_with_a_warning(toy, monkeypatch):
    """Most adapters (a compiled extension built for one torch) have no shims: the variable that
    every refusal advertises must work for them too."""
    _narrow(toy)
    path = toy / "compat.yaml"
    text = path.read_text().replace("  shims: toy_adapter.eras\n", "")
    path.write_text(text.replace('shims:\n  - module: toy_adapter.eras.torch_2_10\n    torch: ">=2.10,<2.16"\n', ""))
    for off in (None, "0", "false", ""):  # writing =0 to be safe must not force the import
        if off is not None:
            monkeypatch.setenv("ADAPTER_MATRIX_ALLOW_UNSUPPORTED", off)
        with pytest.raises(UnsupportedEnvironment, match=r"set ADAPTER_MATRIX_ALLOW_UNSUPPORTED=1 to try anyway"):
            require("toy_adapter", version="1.0.0", torch_version="2.13.0")
    monkeypatch.setenv("ADAPTER_MATRIX_ALLOW_UNSUPPORTED", "1")
    with pytest.warns(RuntimeWarning, match="ADAPTER_MATRIX_ALLOW_UNSUPPORTED is set: activating anyway"):
        support = require("toy_adapter", version="1.0.0", torch_version="2.13.0")
    assert (support.outcome, support.shim, support.usable) == ("unsupported", None, True)
    # a torch the matrix does not describe at all: the same hatch, the same warning
    with pytest.warns(RuntimeWarning, match="is not a torch release this matrix describes"):
        support = require("toy_adapter", version="1.0.0", torch_version="2.9.1")
    assert support.usable


HEAVY = ("yaml", "packaging", "adapter_matrix.matrix.model", "adapter_matrix.matrix.loader", "typer", "rich")


def test_a_warm_start_parses_no_yaml_and_loads_neither_the_model_nor_packaging(toy, tmp_path):
    code = (
        "import sys\n"
        "from adapter_matrix import require\n"
        "s = require('toy_adapter', version='1.0.0', torch_version='2.13.0')\n"
        f"print(s.outcome, *[m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    env = dict(
        os.environ, PYTHONPATH=str(toy.parent), ADAPTER_MATRIX_CACHE=str(tmp_path / "fresh"), TOY_DRIVER_VERSION="2.1"
    )
    cold = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    warm = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert cold[0] == "supported" and "adapter_matrix.matrix.model" in cold  # the first start builds the memos
    assert warm == ["supported"]
    env["TOY_DRIVER_VERSION"] = "1.0"  # another detected value is another verdict, decided afresh
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "needs driver >=2.0, found 1.0" in proc.stderr


def test_an_enumeration_with_a_builtin_detector_is_checked_too(toy):
    if sys.platform != "linux":
        pytest.skip("the built-in os detector answers linux here only")
    path = toy / "compat.yaml"
    text = path.read_text().replace("schema-version: 1", "schema-version: 2")
    text = text.replace(
        "dimensions:\n  driver:", "dimensions:\n  os: {kind: enum, values: [linux, windows]}\n  driver:", 1
    )
    path.write_text(text.replace('      driver: ">=2.0"\n', '      driver: ">=2.0"\n      os: windows\n'))
    with pytest.raises(UnsupportedEnvironment, match="needs os windows, found linux"):
        require("toy_adapter", version="1.0.0", torch_version="2.13.0")
