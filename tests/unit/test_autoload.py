"""The torch.backends entry points of an environment, linted without loading them (issue 48
item 6): since torch 2.5 `import torch` runs each of them, and one that fails breaks torch itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

from adapter_matrix.binary.autoload import lint
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
