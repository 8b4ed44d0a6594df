"""pytorch.org's Additional Platforms entry (`table --view platform`): the two files pass
the limits pytorch.org's generator enforces (scripts/gen_additional_platforms.py of
pytorch/pytorch.github.io: the JSON keys, the OS keys, a page of at most 200 lines),
and every command is pinned and is the selector's (check's) command."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pytest
from packaging.version import Version

from adapter_matrix.matrix.loader import load, load_text
from adapter_matrix.tables.platform import MAX_LINES, PlatformEntry, pinned_problems, platform_entry, validate
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
    final = [
        e
        for e in combos
        if e["status"] == "supported"
        and e["commands"]
        and not (Version(e["torch"]).is_prerelease or Version(e["release"]).is_prerelease)
        and e["dimensions"].get("os", "linux") == "linux"
    ]
    # the newest supported combination of final releases (a nightly is preview), on x86_64 where there is an arch
    top = [
        e
        for e in final
        if (e["torch_line"], e["release"], e["python"])
        == tuple(final[0][k] for k in ("torch_line", "release", "python"))
    ]
    newest = next((e for e in top if e["dimensions"].get("arch") == "x86_64"), top[0])
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
    # 2.10.10 has no Windows build, and 2.9.10's Windows pin is a nightly torch: preview, not stable
    assert "2.7.10+xpu" in entry.data["stable"]["windows"]
    assert "2.9.10+xpu" in entry.data["preview"]["windows"] and ".dev" in entry.data["preview"]["windows"]


def _npu_entry(platform_id=None):
    path, today = MATRICES["torch_npu"]
    matrix = load(path).matrix
    return matrix, platform_entry(matrix, "https://github.com/Ascend/pytorch/issues", "Ascend NPU", today, platform_id)


def test_torch_npu_names_its_prerequisites_with_the_matrixs_links():
    matrix, entry = _npu_entry("ascend_npu")
    assert entry.platform_id == "ascend_npu" and entry.data["name"] == "Ascend NPU"
    assert _npu_entry()[1].platform_id == "torch_npu"  # without --id: the distribution's name
    # pytorch.org's Linux commands are for x86_64: torch's +cpu build from its CPU index, as the fixture says
    assert entry.data["stable"]["linux"] == (
        "pip install 'torch==2.12.0+cpu' --index-url https://download.pytorch.org/whl/cpu"
        " && pip install 'torch-npu==2.12.0'"
    )
    link = matrix.dimension("cann").link
    assert (
        link
        and f"* cann 9.1.0 (Ascend CANN toolkit), installed first: it is not a pip package ([get it]({link}))"
        in (entry.markdown)
    )
    # the driver (Ascend HDK) is no prerequisite of torch_npu's: the layer that names it owns it
    assert "ascend_driver" not in entry.markdown


def _rows(markdown: str):
    """The page's table: (torch line, build, CANN, arch) per row."""
    rows = [line.split(" | ") for line in markdown.splitlines() if line.startswith("| ") and "`" in line]
    return [(r[0][2:], r[1], r[2], r[3]) for r in rows]


def test_the_page_has_the_newest_build_per_torch_line_and_per_cann_on_each_arch():
    matrix, entry = _npu_entry("ascend_npu")
    rows = _rows(entry.markdown)
    assert len(rows) == len({(line, cann, arch) for line, _b, cann, arch in rows})  # one row each
    # from the model: the newest supported build of each torch line, CANN and arch
    newest = {}
    for rel in matrix.releases:
        if rel.status.value != "supported":
            continue
        key = (f"{rel.pins[0].major}.{rel.pins[0].minor}", str(rel.constraint("cann")), str(rel.constraint("arch")))
        newest[key] = max(newest.get(key, rel.version), rel.version)
    assert {(line, cann, arch): build for line, build, cann, arch in rows} == {k: str(v) for k, v in newest.items()}
    # issue 61: "newest per line" took the oldest CANN's build of torch 2.1
    assert ("2.1", "2.1.0.post17", "8.3.RC1", "x86_64") in rows and (
        "2.1",
        "2.1.0.post17",
        "8.3.RC1",
        "aarch64",
    ) in rows
    assert len([r for r in rows if r[0] == "2.1"]) == 2 * 6  # 6 CANNs of maintained lines serve torch 2.1


def test_the_verification_snippet_imports_the_adapter_where_torch_cannot_autoload_it():
    _matrix, entry = _npu_entry()
    snippet = entry.markdown.split("```python\n", 1)[1].split("```", 1)[0]
    assert "import torch\nimport torch_npu" in snippet  # torch_npu's table goes back to torch 1.11
    # a matrix whose builds are all for torch 2.5 and later: torch's device autoload imports the adapter
    recent = (
        "schema-version: 2\nadapter: {distribution: demo-npu, device: npu}\ntorch:\n"
        '  "2.12": {released: 2026-05-13, patches: [2.12.0], python: ["3.11"]}\n'
        'releases:\n  - {version: 1.0.0, torch: 2.12.0, python: "3.11", status: supported}\n'
    )
    entry = platform_entry(load_text(recent, "demo.yaml").matrix, SUPPORT, today=_dt.date(2026, 12, 1))
    assert "import demo_npu" not in entry.markdown and "import torch\n" in entry.markdown


def test_a_nightly_is_published_under_preview_never_stable():
    path, today = MATRICES["ipex"]
    entry = platform_entry(load(path).matrix, SUPPORT, today=today)
    assert not any(".dev" in command for command in entry.data["stable"].values())
    # IPEX 2.10.10+xpu pins a nightly torch: pytorch.org's preview channel
    assert "torch==2.10.0.dev20251205+xpu" in entry.data["preview"]["linux"]
    assert "intel-extension-for-pytorch==2.9.10+xpu" in entry.data["stable"]["linux"]


RECORDED = FIXTURES / "pytorch-org"  # pytorch.org's own entries (README.md there: where and when read)


def _shape(value):
    """Keys and nesting, with each leaf's type."""
    if isinstance(value, dict):
        return {key: _shape(v) for key, v in value.items()}
    return type(value).__name__


@pytest.mark.parametrize("name,recorded", [("torch_npu", "ascend_npu"), ("ipex", "xpu")])
def test_the_export_has_the_shape_of_pytorch_orgs_own_entries(name, recorded):
    text = (RECORDED / f"{recorded}.json").read_text()
    theirs = json.loads(text)
    path, today = MATRICES[name]
    entry = platform_entry(load(path).matrix, SUPPORT, today=today, platform_id=recorded)
    # the same keys, nested alike, each value of the same type: Ascend's has stable.linux only,
    # XPU's stable and preview for linux and windows, as IPEX's export has
    assert _shape(entry.data) == _shape(theirs)
    # written as pytorch.org's files are written (2-space indents, a final newline)
    assert PlatformEntry(recorded, theirs, "").json_text == text


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


def test_the_cli_names_the_files_after_the_id(tmp_path: Path):
    args = ["table", "-m", str(MATRICES["torch_npu"][0]), "--view", "platform", "--today", "2026-12-01"]
    res = cli(*args, "--support-channel", SUPPORT, "--id", "ascend_npu", "--output", str(tmp_path))
    assert res.code == 0, res.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ascend_npu.json", "ascend_npu.md"]
    assert cli(*args, "--support-channel", SUPPORT, "--id", "ascend_npu", "-o", str(tmp_path), "--check").code == 0
    res = cli(*args, "--support-channel", SUPPORT, "--id", "Ascend NPU", "--output", str(tmp_path))
    assert res.code == 2 and "is not an id pytorch.org takes" in res.err
    assert cli("table", "--id", "ascend_npu").code == 2  # an option of --view platform only


def test_the_cli_asks_for_a_support_channel(tmp_path: Path):
    res = cli("table", "--view", "platform", "--output", str(tmp_path))
    assert res.code == 2 and "--support-channel URL" in res.err
    assert cli("table", "--view", "platform", "--support-channel", SUPPORT).code == 2  # no --output
    assert cli("table", "--support-channel", SUPPORT).code == 2  # not an option of other views


def test_the_imported_history_keeps_a_row_per_arch_for_every_torch_line(tmp_path: Path):
    """Issue 61: the export of torch-npu's imported history kept only the aarch64 row for torch
    2.11 and older (the x86_64 builds need torch's +cpu build, another command)."""
    path = tmp_path / "compat.yaml"
    res = cli("init", "--from-index", "torch-npu", "--upstream", str(FIXTURES / "pypi" / "2026-12-05"), "-o", str(path))
    assert res.code == 0, res.err
    entry = platform_entry(load(path).matrix, SUPPORT, today=_dt.date(2026, 12, 6), platform_id="ascend_npu")
    rows = [line.split(" | ") for line in entry.markdown.splitlines() if line.startswith("| ") and "`" in line]
    by_line = {}
    for cells in rows:
        by_line.setdefault(cells[0][2:], {})[cells[2]] = cells[-1]
    for line in ("2.11", "2.9", "2.1"):
        assert set(by_line[line]) == {"aarch64", "x86_64"}, line
        assert "+cpu' --index-url https://download.pytorch.org/whl/cpu" in by_line[line]["x86_64"]
        assert "+cpu" not in by_line[line]["aarch64"]


@pytest.mark.parametrize("name", ["this repository", "torch_npu", "ipex", "gaudi"])
def test_the_stable_command_is_checks_first_fix_on_a_fresh_environment_of_its_platform(name):
    """One answer on every surface (issue 67): what pytorch.org publishes as ``stable`` is what
    `check` answers first for a newcomer with that combination's Python and held values (its
    CANN, arch, OS; nothing installed), among final releases (pytorch.org's stable channel has
    no nightly), so the export cannot drift from check."""
    from adapter_matrix.check.fixes import install_fix, ranked
    from adapter_matrix.check.verdict import verdict
    from adapter_matrix.matrix.model import Status

    from .test_table_selector import MATRICES as SELECTOR_MATRICES
    from .test_table_selector import _env

    path, today = SELECTOR_MATRICES[name]
    matrix = load(path).matrix
    try:
        entry = platform_entry(matrix, "https://example.org/help", today=today)
    except ValueError:  # no supported Linux combination at that date: nothing is exported
        pytest.skip(f"{name}: nothing to publish")
    combos = selector(matrix, today=today, picks=False).data["combinations"]
    compared = 0
    for os, command in entry.data["stable"].items():
        chosen = [c for c in combos if " && ".join(c["commands"]) == command and c["status"] == "supported"]
        assert chosen, (name, os, command)
        env = _env(matrix, chosen[0])
        answer = verdict(matrix, env, today)
        assert answer.outcome is Status.UNSUPPORTED
        # pytorch.org's stable channel takes final releases only (a nightly torch, a pre-release
        # adapter go to preview): check's order (the one its first fix is taken from), final first
        order = ranked(matrix, env, today, answer.outcome)
        final = [r for r in order if not r.cell.torch.is_prerelease and not r.cell.release.version.is_prerelease]
        assert final, (name, os)
        if final[0] is order[0]:
            assert " && ".join(answer.fixes[0].commands) == command, (name, os, answer.fixes[0].summary)
        fix = install_fix(matrix, final[0].cell, today)  # check's commands for that cell
        assert fix is not None and " && ".join(fix.commands) == command, (name, os, fix and fix.summary)
        compared += 1
    assert compared >= 1
