"""pytorch.org's Additional Platforms entry (`table --view platform`): the two files pass
the limits pytorch.org's generator enforces (scripts/gen_additional_platforms.py of
pytorch/pytorch.github.io: the JSON keys, the OS keys, a page of at most 200 lines),
and every command is pinned and is the selector's (check's) command."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pytest

from adapter_matrix.matrix.loader import load
from adapter_matrix.tables.platform import MAX_LINES, pinned_problems, platform_entry, validate
from adapter_matrix.tables.views.selector import selector

from .helpers import FIXTURES, REPO, cli

SUPPORT = "https://github.com/example/adapter/issues"
MATRICES = {
    "this repository": (REPO / "compat.yaml", _dt.date(2026, 12, 1)),
    "torch_npu": (FIXTURES / "matrices" / "torch_npu.yaml", _dt.date(2026, 12, 1)),
    "ipex": (FIXTURES / "matrices" / "ipex.yaml", _dt.date(2026, 1, 15)),
}


@pytest.mark.parametrize("name", list(MATRICES))
def test_the_entry_validates_and_its_commands_are_pinned_and_checks(name):
    path, today = MATRICES[name]
    matrix = load(path).matrix
    entry = platform_entry(matrix, SUPPORT, today=today)
    assert validate(entry.data, entry.markdown) == []
    assert set(entry.data) <= {"name", "support_channel", "stable", "preview"}
    assert len(entry.markdown.splitlines()) <= MAX_LINES
    combos = selector(matrix, today=today).data["combinations"]
    newest = next(e for e in combos if e["status"] == "supported" and e["commands"])
    for command in entry.data["stable"].values():
        assert pinned_problems(command) == []
        # the command is one of the selector's (check's), for a supported combination
        assert any(" && ".join(e["commands"]) == command and e["status"] == "supported" for e in combos), command
    assert entry.data["stable"]["linux"] == " && ".join(newest["commands"])
    assert json.loads(entry.json_text) == entry.data


def test_ipex_publishes_a_windows_command_from_its_os_pins():
    path, today = MATRICES["ipex"]
    entry = platform_entry(load(path).matrix, SUPPORT, today=today)
    assert set(entry.data["stable"]) == {"linux", "windows"}
    assert "2.9.10+xpu" in entry.data["stable"]["windows"]  # 2.10.10 has no Windows build


def test_torch_npu_names_its_cann_prerequisite():
    path, today = MATRICES["torch_npu"]
    entry = platform_entry(load(path).matrix, "https://github.com/Ascend/pytorch/issues", "Ascend NPU", today)
    assert entry.platform_id == "torch_npu" and entry.data["name"] == "Ascend NPU"
    assert entry.data["stable"]["linux"] == "pip install 'torch-npu==2.12.0' 'torch==2.12.0'"
    assert "* cann 9.1.0 (Ascend CANN toolkit), installed first: it is not a pip package" in entry.markdown


def test_validate_refuses_what_pytorch_orgs_generator_refuses():
    good = {"name": "X", "support_channel": SUPPORT, "stable": {"linux": "pip install 'a==1' 'torch==2.1.0'"}}
    assert validate(good, "# X\n") == []
    assert validate({**good, "vendor": "V"}, "") == ["unknown keys: vendor"]
    assert validate({k: v for k, v in good.items() if k != "stable"}, "") == ["missing keys: stable"]
    assert validate({**good, "stable": {"macos": "pip install 'a==1'"}}, "")[0].startswith("stable must be an object")
    assert validate({**good, "preview": {"windows": "pip install 'a==1'"}}, "") == [
        "preview has no linux command (the integration guide requires one)"
    ]
    assert validate(good, "line\n" * (MAX_LINES + 1)) == [f"the page has {MAX_LINES + 1} lines, more than {MAX_LINES}"]


def test_the_ascend_entry_on_pytorch_org_is_not_pinned():
    """The command pytorch.org lists for Ascend NPU today installs whatever is newest."""
    problems = pinned_problems("pip3 install torch torchvision && pip3 install torch-npu")
    assert problems == ["torch is not pinned", "torchvision is not pinned", "torch-npu is not pinned"]
    assert pinned_problems("pip install 'torch>=2.1' 'a==1'") == ["torch is not pinned to one line: >=2.1"]
    assert pinned_problems("pip install 'torch>=2.1,<2.2' 'a==1' --extra-index-url https://x/simple") == []


def test_the_cli_writes_both_files_and_checks_them(tmp_path: Path):
    args = ["table", "--view", "platform", "--support-channel", SUPPORT, "--today", "2026-12-01"]
    res = cli(*args, "--output", str(tmp_path))
    assert res.code == 0, res.err
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["adapter_matrix_npu.json", "adapter_matrix_npu.md"]
    assert cli(*args, "--output", str(tmp_path), "--check").code == 0
    page = tmp_path / "adapter_matrix_npu.md"
    page.write_text(page.read_text().replace("0.2.1", "0.2.0"))
    stale = cli(*args, "--output", str(tmp_path), "--check")
    assert stale.code == 1 and "adapter_matrix_npu.md stale; fix with:" in stale.err


def test_the_cli_asks_for_a_support_channel(tmp_path: Path):
    res = cli("table", "--view", "platform", "--output", str(tmp_path))
    assert res.code == 2 and "--support-channel URL" in res.err
    assert cli("table", "--view", "platform", "--support-channel", SUPPORT).code == 2  # no --output
    assert cli("table", "--support-channel", SUPPORT).code == 2  # not an option of other views
