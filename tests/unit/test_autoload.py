"""The torch.backends entry points of an environment, linted without loading them (issue 48
item 6): since torch 2.5 `import torch` runs each of them, and one that fails breaks torch itself;
and the chain of plugins above them, vLLM's platform plugins first (issue 56 item 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

from adapter_matrix.binary.autoload import autoload_lines, autoload_section, lint, section_of
from adapter_matrix.device.deep import described

REPO = Path(__file__).resolve().parents[2]


def _adapter(
    site: Path, dist: str, entry: str, files: Dict[str, str], version: str = "1.0", record: Optional[str] = None
) -> Path:
    """An installed distribution ``dist`` with a torch.backends entry point ``entry``."""
    for name, text in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[torch.backends]\n{dist} = {entry}\n")
    listed = record if record is not None else "".join(f"{n},,\n" for n in files)
    (info / "RECORD").write_text(listed + f"{info.name}/RECORD,,\n")
    return info


def _kinds(site: Path) -> list:
    return sorted(p["kind"] for p in lint([str(site)])["problems"])


def test_a_healthy_adapter_is_no_problem(tmp_path):
    _adapter(tmp_path, "good-accel", "good_accel:_autoload", {"good_accel/__init__.py": "def _autoload():\n    pass\n"})
    report = lint([str(tmp_path)])
    assert report["ok"] and [e["name"] for e in report["entry_points"]] == ["good-accel"]


def test_a_missing_module_or_function_is_named(tmp_path):
    _adapter(tmp_path, "gone-accel", "gone_accel:_autoload", {"other/__init__.py": ""})
    _adapter(tmp_path, "half-accel", "half_accel:_autoload", {"half_accel/__init__.py": "def load():\n    pass\n"})
    problems = {p["kind"]: p["message"] for p in lint([str(tmp_path)])["problems"]}
    assert set(problems) == {"module-missing", "function-missing"}
    assert "gone_accel is not installed" in problems["module-missing"]
    assert "half_accel defines no _autoload" in problems["function-missing"]


def test_a_function_defined_under_a_condition_or_reexported_counts(tmp_path):
    source = "try:\n    from ._C import _autoload\nexcept ImportError:\n    def _autoload():\n        raise\n"
    _adapter(tmp_path, "cond-accel", "cond_accel:_autoload", {"cond_accel/__init__.py": source})
    assert _kinds(tmp_path) == []


def test_an_uninstall_that_left_its_dist_info_is_stale(tmp_path):
    _adapter(
        tmp_path,
        "left-accel",
        "left_accel:_autoload",
        {},
        record="left_accel/__init__.py,,\nleft_accel/_C.so,,\n",
    )
    problems = lint([str(tmp_path)])["problems"]
    assert [p["kind"] for p in problems] == ["stale"]
    assert "an uninstall left it" in problems[0]["message"] and problems[0]["fix"].startswith("remove ")


def test_two_dist_infos_of_one_adapter_are_stale(tmp_path):
    files = {"twice_accel/__init__.py": "def _autoload():\n    pass\n"}
    _adapter(tmp_path, "twice-accel", "twice_accel:_autoload", files, version="1.0")
    _adapter(tmp_path, "twice-accel", "twice_accel:_autoload", files, version="1.1")
    assert "stale" in _kinds(tmp_path)


def test_two_adapters_claiming_privateuse1_conflict(tmp_path):
    claim = "import torch\ndef _autoload():\n    torch.utils.rename_privateuse1_backend('{0}')\n"
    _adapter(tmp_path, "a-accel", "a_accel:_autoload", {"a_accel/__init__.py": claim.format("a")})
    _adapter(tmp_path, "b-accel", "b_accel:_autoload", {"b_accel/__init__.py": claim.format("b")})
    problems = lint([str(tmp_path)])["problems"]
    assert [p["kind"] for p in problems] == ["privateuse1-conflict"]
    assert "a-accel" in problems[0]["message"] and "b-accel" in problems[0]["message"]


def test_check_of_an_environment_reports_its_autoload_problems(tmp_path):
    """`check --env` on a venv whose adapter's entry point names a module it does not ship:
    exit 1 (unsupported) and the autoload section names it, without importing anything."""
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    _adapter(site, "gone-accel", "gone_accel:_autoload", {"other/__init__.py": ""})
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--json", "--matrix", str(REPO / "compat.yaml")]
        + ["--env", str(tmp_path / "venv")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    doc = json.loads(proc.stdout)
    assert [p["kind"] for p in doc["autoload"]["problems"]] == ["module-missing"], doc["autoload"]
    assert proc.returncode == doc["exit_code"] != 0


def test_the_deep_check_names_the_cause_behind_an_import_error():
    try:
        try:
            raise OSError("libascendcl.so: cannot open shared object file")
        except OSError as exc:
            raise ImportError("torch_npu failed to load") from exc
    except ImportError as exc:
        text = described(exc)
    assert text == (
        "ImportError: torch_npu failed to load; caused by OSError: libascendcl.so: cannot open shared object file"
    )


def test_a_distribution_shadowed_by_an_earlier_folder_is_loaded_once(tmp_path):
    """importlib (and so torch's autoload) keeps the first folder's copy of a distribution: the
    same adapter in a venv and in the system site it includes is one adapter, no conflict."""
    claim = "import torch\ndef _autoload():\n    torch.utils.rename_privateuse1_backend('npu')\n"
    for folder in ("venv", "system"):
        _adapter(tmp_path / folder, "npu-accel", "npu_accel:_autoload", {"npu_accel/__init__.py": claim})
    report = lint([str(tmp_path / "venv"), str(tmp_path / "system")])
    assert report["ok"], report["problems"]
    assert [e["dist_info"] for e in report["entry_points"]] == [str(tmp_path / "venv" / "npu_accel-1.0.dist-info")]


# The chain above the adapter (issue 56 item 6): vllm-ascend on torch_npu, as their setup.py declare it.
_TORCH_NPU = "[torch.backends]\ntorch_npu = torch_npu:_autoload\n\n[torch_dynamo_backends]\nnpu = torch_npu.dynamo:npu\nnpugraph_ex = torch_npu.dynamo:npugraph_ex\n"
_VLLM_ASCEND = (
    "[vllm.platform_plugins]\nascend = vllm_ascend:register\n\n[vllm.general_plugins]\n"
    "ascend_kv_connector = vllm_ascend:register_connector\nascend_model_loader = vllm_ascend:register_model_loader\n"
)
_REGISTER = "def register():\n    return 'vllm_ascend.platform.NPUPlatform'\ndef register_connector():\n    pass\ndef register_model_loader():\n    pass\n"


def _dist(site: Path, dist: str, version: str, entry_points: str, files: Dict[str, str]) -> Path:
    """An installed distribution with any entry points (``entry_points.txt`` as written)."""
    info = _adapter(site, dist, "unused:unused", files, version=version)
    (info / "entry_points.txt").write_text(entry_points)
    return info


def _stack(site: Path) -> None:
    """torch-npu 2.10.0.post4 and vllm-ascend 0.23.0, with vllm, which declares no plugin."""
    _dist(site, "torch-npu", "2.10.0.post4", _TORCH_NPU, {"torch_npu/__init__.py": "def _autoload():\n    pass\n"})
    _dist(site, "vllm-ascend", "0.23.0", _VLLM_ASCEND, {"vllm_ascend/__init__.py": _REGISTER})
    _dist(
        site, "vllm", "0.23.0", "[console_scripts]\nvllm = vllm.entrypoints.cli.main:main\n", {"vllm/__init__.py": ""}
    )


def _other_platform(site: Path, name: str = "maca") -> None:
    _dist(
        site,
        "vllm-metax",
        "0.23.0",
        f"[vllm.platform_plugins]\n{name} = vllm_metax:register\n\n[vllm.general_plugins]\nmetax_patch = vllm_metax:patch\n",
        {"vllm_metax/__init__.py": "def register():\n    return None\ndef patch():\n    pass\n"},
    )


def test_the_chain_lists_each_group_with_its_distribution(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    _stack(tmp_path)
    report = lint([str(tmp_path)])
    assert report["ok"], report["problems"]
    chain = [(e["group"], e["name"], e["value"], e["distribution"], e["version"]) for e in report["chain"]]
    assert chain == [
        ("torch.backends", "torch_npu", "torch_npu:_autoload", "torch_npu", "2.10.0.post4"),
        ("vllm.platform_plugins", "ascend", "vllm_ascend:register", "vllm_ascend", "0.23.0"),
        ("vllm.general_plugins", "ascend_kv_connector", "vllm_ascend:register_connector", "vllm_ascend", "0.23.0"),
        ("vllm.general_plugins", "ascend_model_loader", "vllm_ascend:register_model_loader", "vllm_ascend", "0.23.0"),
        ("torch_dynamo_backends", "npu", "torch_npu.dynamo:npu", "torch_npu", "2.10.0.post4"),
        ("torch_dynamo_backends", "npugraph_ex", "torch_npu.dynamo:npugraph_ex", "torch_npu", "2.10.0.post4"),
    ]
    # the torch.backends lint is what it was: its entry points alone
    assert [e["name"] for e in report["entry_points"]] == ["torch_npu"]
    assert [[text for text, _ in line] for line in autoload_lines(section_of(report))] == [
        ["plugins: ", "import torch loads torch_npu (torch-npu 2.10.0.post4)"],
        ["    ", "vLLM's platform: ascend (vllm-ascend 0.23.0)"],
        [
            "    ",
            "vLLM's general plugins, in every process it starts: ascend_kv_connector, ascend_model_loader (vllm-ascend 0.23.0)",
        ],
        ["    ", "torch.compile(backend=...) can load npu, npugraph_ex (torch-npu 2.10.0.post4)"],
    ]


def test_torch_backends_alone_adds_no_chain_to_the_section(tmp_path):
    """An environment of adapters alone (this repository's: shims' `npu`) gets the section it
    had before the chain, and the report says nothing of it."""
    _adapter(tmp_path, "good-accel", "good_accel:_autoload", {"good_accel/__init__.py": "def _autoload():\n    pass\n"})
    report = lint([str(tmp_path)])
    assert set(report) == {"ok", "entry_points", "problems"} and autoload_lines(section_of(report)) == []


def test_one_platform_plugin_is_fine(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    _stack(tmp_path)
    assert [p["kind"] for p in lint([str(tmp_path)])["problems"]] == []


def test_two_platform_plugins_of_two_distributions_conflict(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    _stack(tmp_path)
    _other_platform(tmp_path)
    report = lint([str(tmp_path)])
    assert not report["ok"]
    (problem,) = report["problems"]
    assert problem["kind"] == "platform-conflict"
    assert "vllm-ascend 0.23.0 (ascend = vllm_ascend:register)" in problem["message"]
    assert "vllm-metax 0.23.0 (maca = vllm_metax:register)" in problem["message"]
    assert "Only one platform plugin can be activated" in problem["message"]
    # uninstall one, or load one: VLLM_PLUGINS filters the general plugins too, so it names ascend's
    assert problem["fix"] == (
        "uninstall all but one of vllm-ascend and vllm-metax, or have vLLM load one with"
        " VLLM_PLUGINS=ascend,ascend_kv_connector,ascend_model_loader"
        " (it filters vllm.general_plugins too: it names the general plugins to keep)"
    )
    lines = ["".join(text for text, _ in line) for line in autoload_lines(section_of(report))]
    assert "    vLLM's platforms: ascend (vllm-ascend 0.23.0); maca (vllm-metax 0.23.0)" in lines
    assert lines[-2].startswith("autoload: vllm-ascend 0.23.0") and lines[-1].startswith("fix: uninstall all but one")


def test_vllm_plugins_selects_the_platform_plugins_vllm_loads(tmp_path, monkeypatch):
    """vLLM's envs.VLLM_PLUGINS is the variable split on ',', names matched exactly: one
    platform named is no conflict; both named (or the variable unset) is; set but empty loads
    none; a space after the comma is part of the name."""
    _stack(tmp_path)
    _other_platform(tmp_path)
    for value, conflict in [
        ("ascend,ascend_kv_connector", False),
        ("maca", False),
        ("", False),
        ("ascend, maca", False),  # " maca" names no plugin
        ("ascend,maca", True),
        ("ascend,maca,metax_patch", True),
    ]:
        monkeypatch.setenv("VLLM_PLUGINS", value)
        problems = lint([str(tmp_path)])["problems"]
        assert [p["kind"] for p in problems] == (["platform-conflict"] if conflict else []), value
    monkeypatch.setenv("VLLM_PLUGINS", "ascend,maca,metax_patch")
    (problem,) = lint([str(tmp_path)])["problems"]
    assert "under VLLM_PLUGINS=ascend,maca,metax_patch" in problem["message"]
    assert "VLLM_PLUGINS=ascend (" in problem["fix"]  # metax_patch goes with its platform


def test_a_platform_plugin_vllm_cannot_load_does_not_count(tmp_path, monkeypatch):
    """vLLM logs an entry point whose load() fails and skips it: a module not installed, or one
    that does not define the function, activates no platform."""
    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    _stack(tmp_path)
    _dist(tmp_path, "vllm-gone", "1.0", "[vllm.platform_plugins]\ngone = vllm_gone:register\n", {})
    _dist(
        tmp_path,
        "vllm-half",
        "1.0",
        "[vllm.platform_plugins]\nhalf = vllm_half:register\n",
        {"vllm_half/__init__.py": "def other():\n    pass\n"},
    )
    assert lint([str(tmp_path)])["problems"] == []


def test_one_platform_name_from_two_distributions_is_a_conflict_vllm_does_not_report(tmp_path, monkeypatch):
    """vLLM keys the loaded plugins by name: the second `ascend` replaces the first in silence."""
    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    _stack(tmp_path)
    _other_platform(tmp_path, name="ascend")
    (problem,) = lint([str(tmp_path)])["problems"]
    assert problem["kind"] == "platform-conflict" and "one vLLM platform name, ascend" in problem["message"]
    assert problem["fix"] == "uninstall all but one of vllm-ascend and vllm-metax"


def test_the_stored_section_is_decided_again_when_an_entry_point_or_vllm_plugins_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    site = tmp_path / "site"
    site.mkdir()
    _stack(site)
    _other_platform(site)
    assert [p.kind for p in autoload_section([str(site)]).problems] == ["platform-conflict"]
    monkeypatch.setenv("VLLM_PLUGINS", "ascend")
    assert autoload_section([str(site)]).problems == ()
    monkeypatch.delenv("VLLM_PLUGINS")
    info = site / "vllm_metax-0.23.0.dist-info" / "entry_points.txt"
    info.write_text(info.read_text().replace("[vllm.platform_plugins]", "[vllm.unused]") + "\n")  # edited in place
    assert autoload_section([str(site)]).problems == ()


def test_check_of_an_environment_shows_its_plugin_chain(tmp_path):
    """`check --env` reads the chain of another environment (one this repository's matrix
    supports: torch 2.13.0+cpu and adapter-matrix-npu 0.2.1), and its platform conflict is exit 1."""
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    for dist, version in [("torch", "2.13.0+cpu"), ("adapter_matrix_npu", "0.2.1")]:
        (site / f"{dist}-{version}.dist-info").mkdir()
        (site / f"{dist}-{version}.dist-info" / "METADATA").write_text(f"Name: {dist}\nVersion: {version}\n")
    _stack(site)
    command = [sys.executable, "-m", "adapter_matrix", "check", "--matrix", str(REPO / "compat.yaml")]
    command += ["--env", str(tmp_path / "venv"), "--no-binary"]
    env = {k: v for k, v in os.environ.items() if k != "VLLM_PLUGINS"}
    proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "\nsupported\n" in proc.stdout
    assert "plugins: import torch loads torch_npu (torch-npu 2.10.0.post4)\n" in proc.stdout
    assert "    vLLM's platform: ascend (vllm-ascend 0.23.0)\n" in proc.stdout
    _other_platform(site)
    proc = subprocess.run([*command, "--json"], capture_output=True, text=True, cwd=tmp_path, env=env)
    doc = json.loads(proc.stdout)
    assert [p["kind"] for p in doc["autoload"]["problems"]] == ["platform-conflict"]
    assert {e["distribution"] for e in doc["autoload"]["chain"]} == {"torch_npu", "vllm_ascend", "vllm_metax"}
    assert proc.returncode == doc["exit_code"] == 1
