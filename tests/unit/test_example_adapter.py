"""examples/toy-adapter, installed from its wheel into a fresh environment with the tool and torch:
`adapter_matrix.require()` refuses a mismatched driver (an error on import, a warning under
autoload) and lets the matching one activate the device."""

from __future__ import annotations

import json
import subprocess

import pytest

from .freshvenv import FreshVenv, requirements_of

pytestmark = pytest.mark.slow  # a wheel built and installed into a fresh environment

torch = pytest.importorskip("torch")

STATE = (
    "import json, sys, torch\n"
    "print(json.dumps({'name': torch._C._get_privateuse1_backend_name(), 'loaded': 'toy_adapter' in sys.modules}))\n"
)


@pytest.fixture(scope="module")
def venv(wheels, tmp_path_factory):
    from packaging.version import Version

    if not Version(torch.__version__).release[:2] >= (2, 10):
        pytest.skip("the toy adapter supports torch >= 2.10")
    env = FreshVenv(tmp_path_factory.mktemp("toy") / "venv")
    env.install(wheels["tool"], wheels["example"])
    env.link(*requirements_of(wheels["tool"]), "torch")
    return env


def _state(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_a_plain_import_with_the_wrong_driver_raises_with_the_reason(venv, tmp_path):
    proc = venv.run(
        "import toy_adapter",
        env={"TOY_DRIVER_VERSION": "1.0", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "ADAPTER_MATRIX_CACHE": str(tmp_path)},
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()
    error = next(line for line in last if line.startswith("adapter_matrix.check.guard.UnsupportedEnvironment"))
    assert error.endswith(
        f"toy-adapter with torch {torch.__version__}: unsupported: toy-adapter 1.0.0 needs driver >=2.0, found 1.0"
    )


def test_under_autoload_the_wrong_driver_warns_and_import_torch_works(venv):
    proc = venv.run("print(__import__('torch').ones(2).sum().item())\n" + STATE, env={"TOY_DRIVER_VERSION": "1.0"})
    assert _state(proc) == {"name": "privateuseone", "loaded": True}
    assert proc.stdout.splitlines()[-2] == "2.0"
    assert "RuntimeWarning: toy_adapter was not activated: toy-adapter with torch" in proc.stderr
    assert "needs driver >=2.0, found 1.0" in proc.stderr


def test_the_right_driver_activates_the_device_on_import_torch(venv):
    code = (
        "import json, torch, toy_adapter as t\n"
        "print(json.dumps([torch._C._get_privateuse1_backend_name(), t.support.outcome, t.support.shim, str(torch.device('toy', 0))]))"
    )
    proc = venv.run(code, env={"TOY_DRIVER_VERSION": "2.1"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == ["toy", "supported", "toy_adapter.eras.torch_2_10", "toy:0"]
    assert "RuntimeWarning" not in proc.stderr and "FutureWarning" not in proc.stderr


def test_a_plain_import_with_the_right_driver_activates_too(venv):
    proc = venv.run(
        STATE.replace("import json, sys, torch\n", "import json, sys, torch, toy_adapter\n"),
        env={"TOY_DRIVER_VERSION": "2.0", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    assert _state(proc) == {"name": "toy", "loaded": True}


def test_check_finds_the_example_matrix_through_its_entry_point(venv, tmp_path):
    proc = subprocess.run(
        [venv.bin("adapter-matrix"), "check", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"TOY_DRIVER_VERSION": "2.1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (doc,) = json.loads(proc.stdout)["checks"]
    assert doc["origin"] == "entry point toy-adapter (toy-adapter)" and doc["verdict"] == "supported"
    assert doc["environment"]["dimensions"]["driver"]["value"] == "2.1"
