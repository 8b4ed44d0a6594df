"""The capabilities table comes from the shims' own declarations, read without torch."""

from __future__ import annotations

import json
import subprocess
import sys

from .helpers import REPO, cli


def test_capabilities_view_carries_each_shims_declarations():
    res = cli("table", "--view", "capabilities", "--format", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    lines = {entry["torch_line"]: entry for entry in data["lines"]}
    assert set(lines) == {f"2.{m}" for m in range(1, 16)}
    assert lines["2.2"]["shim"] == "shims.torch_2_2"
    assert (
        "inductor_dynamic_shapes" in lines["2.1"]["absent"] and "inductor_dynamic_shapes" not in lines["2.2"]["absent"]
    )
    assert "sdpa_cpu_kernels" in lines["2.3"]["absent"] and "sdpa_cpu_kernels" not in lines["2.4"]["absent"]
    assert lines["2.2"]["absent"]["grad_scaler"] == "torch.amp.GradScaler takes a device from torch 2.3"
    assert "grad_scaler" not in lines["2.3"]["absent"]
    assert lines["2.5"]["absent_on_python"]["serialization"]["python"] == ">=3.13"
    for line in ("2.2", "2.3"):  # their Dynamo refuses Python 3.12, whatever the device
        assert {k: v["python"] for k, v in lines[line]["absent_on_python"].items()} == dict.fromkeys(
            ("dynamo", "inductor", "inductor_dynamic_shapes"), ">=3.12"
        )
    assert "dynamo" not in lines["2.4"]["absent_on_python"] and "dynamo" not in lines["2.4"]["absent"]
    assert {k: v["python"] for k, v in lines["2.5"]["absent_on_python"].items()} == dict.fromkeys(
        ("serialization", "dynamo", "inductor", "inductor_cpp_wrapper", "inductor_dynamic_shapes"), ">=3.13"
    )  # 2.5's Dynamo refuses Python 3.13
    assert lines["2.6"]["absent_on_python"] == {}
    assert lines["2.15"]["absent"] == {}  # every feature, the Kineto plugin included (torch_2_12.py)
    assert "profiler_activity" in lines["2.11"]["absent"] and "profiler_activity" not in lines["2.12"]["absent"]
    assert "host_allocator" in lines["2.7"]["absent"] and "host_allocator" not in lines["2.8"]["absent"]
    assert "serialization" in data["features"] and "autocast" in data["features"]


def test_reading_declarations_neither_imports_torch_nor_activates():
    code = (
        "import sys; sys.argv = ['adapter-matrix', 'table', '--view', 'capabilities']\n"
        "from adapter_matrix.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "assert 'torch' not in sys.modules and 'shims' not in sys.modules, sorted(m for m in sys.modules if 'torch' in m or m.startswith('shims'))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "| 2.1   | `torch_2_1`" in proc.stdout


def test_committed_capabilities_page_is_current():
    assert cli("table", "--check", "docs/capabilities.md").code == 0


def test_a_feature_absent_on_some_pythons_is_absent_only_there(monkeypatch):
    """Shim.capability reads the running Python: torch 2.2-2.3 compile on 3.11, not on 3.12;
    torch 2.5 on 3.12, not on 3.13."""
    import platform

    from shims import torch_2_2, torch_2_3, torch_2_4, torch_2_5, torch_2_6

    monkeypatch.setattr(platform, "python_version", lambda: "3.12.1")
    assert "Dynamo is not supported on Python 3.12+" in torch_2_3.Shim().capability("dynamo")
    assert torch_2_2.Shim().capability("inductor") == torch_2_3.Shim().capability("inductor_dynamic_shapes")
    assert torch_2_4.Shim().capability("dynamo") is None and torch_2_4.Shim().capability("inductor") is None
    assert torch_2_5.Shim().capability("dynamo") is None  # 2.5 compiles on 3.12 ...
    monkeypatch.setattr(platform, "python_version", lambda: "3.13.0")
    assert "Dynamo is not supported on Python 3.13+" in torch_2_5.Shim().capability("inductor")  # ... not on 3.13
    assert torch_2_6.Shim().capability("inductor") is None
    monkeypatch.setattr(platform, "python_version", lambda: "3.11.7")
    assert torch_2_2.Shim().capability("dynamo") is None and torch_2_3.Shim().capability("inductor") is None
