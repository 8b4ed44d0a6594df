"""`table --update/--check`: only the blocks change, atomically; drift is caught with a diff."""

from __future__ import annotations

import io
import shutil

import pytest

from adapter_matrix.markers import MarkerError, atomic_write, find_blocks

from .helpers import REPO, cli

DOC = """# Title

Intro text that must survive.

<!-- adapter-matrix:table view=grid -->
stale content
<!-- /adapter-matrix:table -->

Middle text.

<!-- adapter-matrix:table view=releases -->
<!-- /adapter-matrix:table -->
Tail text without a final newline"""


def test_readme_table_is_up_to_date():
    res = cli("table", "--check", "README.md")
    assert res.code == 0, res.out + res.err


def test_update_rewrites_only_between_markers(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    res = cli("table", "--update", str(doc))
    assert res.code == 0, res.err
    new = doc.read_text()
    assert "stale content" not in new
    outside_old = [DOC.split("<!-- adapter-matrix")[0], "Middle text.", "Tail text without a final newline"]
    for chunk in outside_old:
        assert chunk in new
    assert new.endswith("Tail text without a final newline")
    # the text between blocks is byte-identical
    old_middle = DOC.split("<!-- /adapter-matrix:table -->")[1].split("<!-- adapter-matrix:table")[0]
    new_middle = new.split("<!-- /adapter-matrix:table -->")[1].split("<!-- adapter-matrix:table")[0]
    assert old_middle == new_middle
    assert "| torch |" in new and "| adapter |" in new
    # idempotent
    assert cli("table", "--check", str(doc)).code == 0
    assert cli("table", "--update", str(doc)).out.strip().endswith("up to date (2 blocks)")


def test_hand_edit_inside_a_block_fails_check_with_a_diff_and_the_fix(tmp_path):
    readme = tmp_path / "README.md"
    shutil.copy(REPO / "README.md", readme)
    text = readme.read_text()
    edited = text.replace("| 2.13  |", "| 2.13* |", 1)
    assert edited != text
    readme.write_text(edited)
    res = cli("table", "--check", str(readme))
    assert res.code == 1
    assert "-| 2.13* |" in res.out and "+| 2.13  |" in res.out
    assert f"adapter-matrix table --update {readme}" in res.err
    assert readme.read_text() == edited  # --check never writes


def test_unclosed_block_and_bad_options_are_usage_errors(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("<!-- adapter-matrix:table view=grid -->\nno end\n")
    res = cli("table", "--check", str(doc))
    assert res.code == 2 and "is not closed" in res.err
    doc.write_text("<!-- adapter-matrix:table colour=red -->\n<!-- /adapter-matrix:table -->\n")
    res = cli("table", "--check", str(doc))
    assert res.code == 2 and "unknown marker option(s) colour" in res.err
    doc.write_text("no markers here\n")
    assert cli("table", "--check", str(doc)).code == 2


def test_a_writer_failing_midway_leaves_the_old_file(tmp_path):
    target = tmp_path / "doc.md"
    target.write_text("old content\n")

    def half_then_crash(fh: io.TextIOBase, data: str) -> None:
        fh.write(data[: len(data) // 2])
        raise KeyboardInterrupt("killed mid-write")

    with pytest.raises(KeyboardInterrupt):
        atomic_write(str(target), "new content that is long enough\n", write=half_then_crash)
    assert target.read_text() == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["doc.md"]  # no temporary left behind


def test_atomic_write_keeps_the_file_mode(tmp_path):
    target = tmp_path / "doc.md"
    target.write_text("x")
    target.chmod(0o640)
    atomic_write(str(target), "y")
    assert target.read_text() == "y" and (target.stat().st_mode & 0o777) == 0o640


def test_rst_blocks_are_found():
    text = "Title\n=====\n\n.. adapter-matrix:table view=grid lang=en\n\nold\n\n.. /adapter-matrix:table\n"
    (block,) = find_blocks(text, "rst")
    assert block.options == {"view": "grid", "lang": "en"}
    with pytest.raises(MarkerError):
        find_blocks(".. adapter-matrix:table\n", "rst")
