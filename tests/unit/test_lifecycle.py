"""The new-torch-release workflow: probe diffs, new-shim, and shims report."""

from __future__ import annotations

import json
import shutil

import pytest

from adapter_matrix.device.gates import read_gates
from adapter_matrix.device.probe import diff
from adapter_matrix.matrix.loader import load

from .helpers import REPO, cli


def _probe(torch: str, **caps):
    base = {
        "backend_autoload": True,
        "accelerator_api": ["current_accelerator", "device_count"],
        "library_impl_allow_override_default": True,
        "cpp_gates": {"ADAPTER_DEVICE_ALLOCATOR": True},
    }
    base.update(caps)
    return {
        "schema": 1,
        "torch": torch,
        "torch_minor": torch.rsplit(".", 1)[0],
        "python": "3.11.7",
        "capabilities": base,
    }


@pytest.fixture
def repo_copy(tmp_path):
    """compat.yaml and the shims package of this repository, in a scratch folder."""
    shutil.copy(REPO / "compat.yaml", tmp_path / "compat.yaml")
    shutil.copytree(
        REPO / "shims" / "src" / "shims",
        tmp_path / "shims",
        ignore=shutil.ignore_patterns("__pycache__", "compat.yaml"),
    )
    probes = tmp_path / "docs" / "probes"
    probes.mkdir(parents=True)
    (probes / "torch-2.15.json").write_text(json.dumps(_probe("2.15.0")))
    return tmp_path


def test_probe_diff_lists_what_moved(tmp_path):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(_probe("2.15.0")))
    b.write_text(
        json.dumps(
            _probe(
                "2.16.0",
                accelerator_api=["current_accelerator", "device_count", "get_memory_info"],
                library_impl_allow_override_default=False,
            )
        )
    )
    res = cli("probe", "--diff", str(a), "--diff", str(b))
    assert res.code == 0, res.err
    assert "accelerator_api: added get_memory_info" in res.out
    assert "library_impl_allow_override_default: True on torch 2.15.0, False on torch 2.16.0" in res.out
    assert len(diff(json.loads(a.read_text()), json.loads(a.read_text()))) == 0


def test_new_shim_scaffolds_module_matrix_and_todo(repo_copy):
    new_probe = repo_copy / "new.json"
    new_probe.write_text(json.dumps(_probe("2.16.0", backend_autoload=False)))
    before = (repo_copy / "compat.yaml").read_text()
    res = cli("new-shim", "2.16", "--matrix", str(repo_copy / "compat.yaml"), "--probe", str(new_probe), cwd=repo_copy)
    assert res.code == 0, res.err + res.out
    module = repo_copy / "shims" / "torch_2_16.py"
    assert module.exists() and "from .torch_2_12 import Shim as _Previous" in module.read_text()
    after = (repo_copy / "compat.yaml").read_text()
    # comments survive: every comment line of the old file is still there
    assert [ln for ln in before.splitlines() if ln.lstrip().startswith("#")] == [
        ln for ln in after.splitlines() if ln.lstrip().startswith("#")
    ]
    assert "+  - module: shims.torch_2_16 # scaffolded by new-shim from shims.torch_2_12" in res.out
    assert '-    torch: ">=2.1,<2.16"' in res.out and '+    torch: ">=2.1,<2.17"' in res.out
    assert "backend_autoload: True on torch 2.15.0, False on torch 2.16.0" in res.out  # the to-do list
    matrix = load(repo_copy / "compat.yaml").matrix
    line = matrix.torch_line(__import__("packaging.version").version.Version("2.16"))
    assert line is not None and [str(p) for p in line.patches] == ["2.16.0"]
    newest = str(max(r.version for r in matrix.releases))  # new-shim extends the newest release's range
    assert (
        cli(
            "check",
            "--matrix",
            str(repo_copy / "compat.yaml"),
            "--torch",
            "2.16.0",
            "--python",
            "3.12",
            "--adapter",
            newest,
        ).code
        == 3
    )


def test_new_shim_refuses_a_described_minor(repo_copy):
    res = cli("new-shim", "2.13", "--matrix", str(repo_copy / "compat.yaml"), cwd=repo_copy)
    assert res.code == 2 and "torch 2.13 is already described" in res.err


def test_shims_report_is_clean_here_and_finds_planted_dead_code(repo_copy):
    assert cli("shims", "report").code == 0
    path = repo_copy / "compat.yaml"
    text = path.read_text()
    (repo_copy / "shims" / "torch_1_13.py").write_text('"""planted"""\n')
    text = text.replace("shims:\n", 'shims:\n  - module: shims.torch_1_13\n    torch: ">=1.13,<2.1"\n', 1)
    path.write_text(text)
    res = cli("shims", "report", "--matrix", str(path), cwd=repo_copy)
    assert res.code == 1
    assert "dead shim shims.torch_1_13 \u2014 serves >=1.13,<2.1, which no supported release claims" in res.out
    # raising the floor to 2.6 makes every gate of 2.3-2.6 constant
    path.write_text(path.read_text().replace('torch: ">=2.1,<2.16"', 'torch: ">=2.6,<2.16"'))  # every release
    res = cli("shims", "report", "--matrix", str(path), cwd=repo_copy)
    dead = {line.split("dead gate ")[1].split(" ")[0] for line in res.out.splitlines() if "dead gate" in line}
    gates = read_gates(REPO / "shims" / "src" / "shims" / "csrc")
    expected = {g.name for g in gates if g.since <= __import__("packaging.version").version.Version("2.6")}
    assert dead == expected and "ADAPTER_GENERATOR_REGISTRY" not in dead  # still on for 2.6
