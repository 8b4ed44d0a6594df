"""Every published command resolves (`table --resolve`): pip's resolver in --dry-run against
a recorded index, offline. A recorded index is generated here from recorded answers (the
PEP 691 JSON of tests/fixtures/pypi/), with one answer changed per test: a yanked pin, a
companion that pulls another torch."""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest

from adapter_matrix.matrix.loader import load_text
from adapter_matrix.tables.resolve import build_index, check_commands, published
from adapter_matrix.tables.views.selector import selector

from .helpers import FIXTURES, REPO, cli

pytestmark = pytest.mark.slow  # starts pip a few times
TODAY = _dt.date(2026, 12, 1)
RECORDED = FIXTURES / "pypi" / "2026-12-01"

# A small matrix: two torch lines, one release, two Pythons each (few pip runs).
MATRIX = """\
schema-version: 2
adapter: {distribution: tiny-adapter, device: npu}
torch:
  "2.5": {released: 2024-10-17, patches: [2.5.0, 2.5.1], python: ["3.11", "3.12"]}
  "2.6": {released: 2025-01-29, patches: [2.6.0], python: ["3.11", "3.12"]}
releases:
  - version: 1.0.0
    date: 2026-11-01
    torch: ">=2.5,<2.7"
    python: ">=3.11,<3.13"
    status: supported
"""


def _answer(name: str, versions: Dict[str, List[str]], yanked: str = "") -> Dict[str, Any]:
    """A recorded answer for a pure-Python project: version -> its Requires-Dist."""
    files = []
    for version, requires in versions.items():
        metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
        files.append(
            {
                "filename": f"{name.replace('-', '_')}-{version}-py3-none-any.whl",
                "requires-python": ">=3.8",
                "yanked": "a broken build" if version == yanked else False,
                "metadata": metadata,
            }
        )
    return {"meta": {"api-version": "1.1"}, "name": name, "versions": list(versions), "files": files}


def _record(tmp: Path, adapter: Dict[str, Any], torch_yanked: str = "") -> List[str]:
    """Folders of recorded answers: torch's (PyPI's, recorded) and the adapter's."""
    folder = tmp / "recorded"
    folder.mkdir()
    torch = json.loads((RECORDED / "torch.json").read_text())
    for entry in torch["files"]:
        if torch_yanked and entry["filename"].startswith(f"torch-{torch_yanked}-"):
            entry["yanked"] = "withdrawn"
    (folder / "torch.json").write_text(json.dumps(torch))
    shutil.copy(RECORDED / "torchvision.json", folder / "torchvision.json")
    (folder / "tiny-adapter.json").write_text(json.dumps(adapter))
    return [str(folder)]


def _combinations(text: str = MATRIX) -> List[Dict[str, Any]]:
    matrix = load_text(text, "compat.yaml", check_modules=False).matrix
    return selector(matrix, today=TODAY).data["combinations"]


def _check(tmp: Path, adapter: Dict[str, Any], torch_yanked: str = ""):
    url = build_index(_record(tmp, adapter, torch_yanked), str(tmp / "index"))
    return check_commands(_combinations(), url)


def test_every_command_resolves_against_a_sound_index(tmp_path):
    runs, problems = _check(tmp_path, _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)"]}))
    assert runs == 4  # two commands, each for its oldest and newest Python
    assert problems == []


def test_a_yanked_adapter_pin_fails_and_is_named(tmp_path):
    runs, problems = _check(tmp_path, _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)"]}, yanked="1.0.0"))
    assert runs == 4 and len(problems) == 4
    assert {p.reason for p in problems} == {"pins a yanked release: tiny-adapter==1.0.0"}
    assert {p.command for p in problems} == {
        "pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6'",
        "pip install 'tiny-adapter==1.0.0' 'torch>=2.6,<2.7'",
    }


def test_a_yanked_torch_fails_the_commands_of_its_line(tmp_path):
    """torch 2.6.0 withdrawn: a range skips a yanked file, and no other 2.6 patch exists."""
    _runs, problems = _check(tmp_path, _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)"]}), torch_yanked="2.6.0")
    assert {p.command for p in problems} == {"pip install 'tiny-adapter==1.0.0' 'torch>=2.6,<2.7'"}
    assert all(p.reason.startswith("does not resolve: Could not find a version that satisfies") for p in problems)


def test_a_companion_that_pulls_another_torch_is_named(tmp_path):
    """The adapter needs torchvision 0.20.0, built for torch 2.5.0: its torch 2.5 command
    installs 2.5.0, not the 2.5.1 the combination claims; its 2.6 command cannot resolve."""
    adapter = _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)", "torchvision (==0.20.0)"]})
    _runs, problems = _check(tmp_path, adapter)
    reasons = {(p.command, p.reason) for p in problems}
    assert (
        "pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6'",
        "installs torch 2.5.0, not the torch 2.5.1 it claims",
    ) in reasons
    assert any(c.endswith("'torch>=2.6,<2.7'") and r.startswith("does not resolve") for c, r in reasons)


def test_published_resolves_each_command_for_its_oldest_and_newest_python():
    runs = published(_combinations())
    assert sorted((c[-1], p) for c, p, _e in runs) == [
        ("pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6'", "3.11"),
        ("pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6'", "3.12"),
        ("pip install 'tiny-adapter==1.0.0' 'torch>=2.6,<2.7'", "3.11"),
        ("pip install 'tiny-adapter==1.0.0' 'torch>=2.6,<2.7'", "3.12"),
    ]


def test_the_cli_fails_on_a_yanked_pin_and_names_it(tmp_path):
    folders = _record(tmp_path, _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)"]}, yanked="1.0.0"))
    matrix = tmp_path / "compat.yaml"
    matrix.write_text(MATRIX)
    res = cli("table", "--matrix", str(matrix), "--resolve", "--recorded", folders[0], "--today", "2026-12-01")
    assert res.code == 1
    assert (
        "not installable: pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6' (Python 3.11): pins a yanked release: tiny-adapter==1.0.0"
        in res.err
    )
    assert "4 resolutions of 2 published commands" in res.out and "4 problem(s)" in res.out


def test_this_repositorys_newest_commands_resolve_against_the_recorded_index():
    """What .ci/run checks for every release, here for the newest."""
    res = cli(
        "table", "--resolve", "--release", "0.2.1", "--today", "2026-12-05",
        "--recorded", str(RECORDED), "--recorded", str(REPO / "tests" / "fixtures" / "index"),
    )  # fmt: skip
    assert res.code == 0, res.err
    assert "30 resolutions of 15 published commands" in res.out and ": 0 problem(s)" in res.out
