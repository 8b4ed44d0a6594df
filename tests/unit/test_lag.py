"""`table --view lag`: the days from each torch release to the adapter's first releases for it."""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import subprocess
from pathlib import Path

from .helpers import FIXTURES, REPO, cli

TODAY = "2026-12-07"


def _lag(matrix: Path, cwd: Path) -> dict:
    res = cli("table", "--view", "lag", "--matrix", str(matrix), "--format", "json", "--today", TODAY, cwd=cwd)
    assert res.code == 0, res.err
    return {entry["torch_line"]: entry for entry in json.loads(res.out)["lag"]}


def test_the_imported_torch_npu_history_gives_the_days_per_torch_line(tmp_path):
    matrix = tmp_path / "compat.yaml"
    imported = cli(
        "init", "--from-index", "torch-npu", "--upstream", str(FIXTURES / "pypi" / "2026-12-05"), "-o", str(matrix)
    )
    assert imported.code == 0, imported.err
    lag = _lag(matrix, tmp_path)
    # counted by hand from the index (torch's X.Y.0 upload, torch-npu X.Y.0's first upload):
    # 2.9: 2025-10-15 -> 2026-01-19 is 16 (Oct) + 30 + 31 + 19 = 96 days
    # 2.10: 2026-01-21 -> 2026-05-06 is 10 (Jan) + 28 + 31 + 30 + 6 = 105 days
    # 2.12: 2026-05-13 -> 2026-07-27 is 18 (May) + 30 + 27 = 75 days
    for line, torch_day, release, day, days in (
        ("2.9", "2025-10-15", "2.9.0", "2026-01-19", 96),
        ("2.10", "2026-01-21", "2.10.0", "2026-05-06", 105),
        ("2.12", "2026-05-13", "2.12.0", "2026-07-27", 75),
    ):
        entry = lag[line]
        assert entry["torch_released"] == torch_day
        want = {"release": release, "date": day, "days": days, "dated_by": "date"}
        assert entry["first_release"] == want
        assert entry["first_supported"] == want  # the index's builds are all supported (docs/importing.md)
    # a line no release serves yet: the days since torch released it
    assert lag["2.15"]["first_release"]["release"] is None
    assert lag["2.15"]["days_since_torch"] == (_dt.date(2026, 12, 7) - _dt.date(2026, 10, 28)).days
    text = cli("table", "--view", "lag", "--matrix", str(matrix), "--today", TODAY, cwd=tmp_path).out
    assert "| 2.12       | 2026-05-13     | 2.12.0 (2026-07-27)       | 75   |" in text
    assert "none yet (40 days)" in text


def test_an_undated_release_is_dated_by_the_commit_that_added_it(tmp_path):
    repo = tmp_path / "toy"
    shutil.copytree(REPO / "examples" / "toy-adapter", repo, symlinks=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "toy"], cwd=repo, check=True)
    res = cli("migrate", "torch", "2.16.0", "--upstream", str(FIXTURES / "pypi" / "torch-2.16"), cwd=repo)
    assert res.code == 0, res.err
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "torch 2.16", "--date", "2026-12-09T12:00:00"], cwd=repo, check=True)
    lag = _lag(repo / "compat.yaml", repo)
    assert lag["2.16"]["first_release"] == {"release": "1.1.0", "date": "2026-12-09", "days": 2, "dated_by": "git"}
    assert lag["2.16"]["first_supported"]["release"] is None  # experimental until its cells pass
    assert lag["2.15"]["first_supported"]["release"] == "1.0.0"
