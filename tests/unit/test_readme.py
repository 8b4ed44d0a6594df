"""The README a newcomer reads: one screen, its links resolve, and CI runs its test command."""

from __future__ import annotations

import importlib.util
import logging
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from .helpers import REPO

README = REPO / "README.md"
TEST_COMMAND = "python3.11 -m venv .venv && .venv/bin/pip install -e '.[test]' -e ./shims 'torch==2.13.*' && .venv/bin/python -m pytest"


def _load(name: str, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


readme_command = _load("readme_command", REPO / ".ci" / "readme_command.py")


def _extract(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / ".ci" / "readme_command.py"), str(path)], capture_output=True, text=True, timeout=30
    )


def test_ci_runs_the_readme_test_command_found_by_its_marker():
    proc = _extract(README)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == TEST_COMMAND
    ci = (REPO / ".ci" / "run").read_text()
    assert "test_command=$(python3 .ci/readme_command.py README.md)" in ci and 'bash -c "$test_command"' in ci


def test_the_marker_not_the_position_decides(tmp_path):
    text = README.read_text(encoding="utf-8")
    moved = tmp_path / "README.md"
    moved.write_text("# x\n\n```sh\necho an earlier block\n```\n\n" + text, encoding="utf-8")
    assert _extract(moved).stdout.strip() == TEST_COMMAND
    unmarked = tmp_path / "unmarked.md"
    unmarked.write_text(re.sub(r"<!-- test-command[^\n]*\n", "", text), encoding="utf-8")
    proc = _extract(unmarked)
    assert proc.returncode == 2 and "expected one `<!-- test-command ... -->` line, found 0" in proc.stderr


@pytest.mark.parametrize(
    "text, message",
    [
        ("<!-- test-command -->\n<!-- test-command -->\n```sh\nx\n```\n", "found 2"),
        ("<!-- test-command -->\n\ntext\n```sh\nx\n```\n", "must be followed by a ```sh block, not 'text'"),
        ("<!-- test-command -->\n```sh\nx\n", "is not closed"),
        ("<!-- test-command -->\n```sh\n\n```\n", "is empty"),
    ],
)
def test_a_broken_marker_is_one_message(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        readme_command.test_command(text)


def test_the_readme_fits_one_screen_and_its_links_resolve():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert text.startswith("# adapter-matrix\n")
    # The two commands come first: the main job, then the tests.
    blocks = re.findall(r"^```sh\n(.*?)\n```$", text, flags=re.M | re.S)
    assert blocks[0].endswith(".venv/bin/adapter-matrix check") and blocks[1] == TEST_COMMAND
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert "docs/index.md" in links
    for link in links:
        if "://" not in link:
            assert (REPO / link).exists(), link


def test_every_docs_page_is_in_the_site_index():
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    pages = {p.name for p in (REPO / "docs").glob("*.md")} - {"index.md"}
    assert pages == {p for p in pages if f"]({p}" in index}, "docs/index.md misses a page"


def test_the_site_hook_checks_links_to_repository_files(caplog):
    hook = _load("mkdocs_repo_links", REPO / ".ci" / "mkdocs_repo_links.py")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="evidence.md"))
    config = {"docs_dir": str(REPO / "docs"), "repo_url": None}
    text = "see [the matrix](../compat.yaml) and [gone](../no-such-file.txt), [local](tables.md)"
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.repo_links"):
        out = hook.on_page_markdown(text, page, config, None)
    assert out == "see the matrix (`compat.yaml`) and [gone](../no-such-file.txt), [local](tables.md)"
    assert "evidence.md links to '../no-such-file.txt', which is not a file of the repository" in caplog.text
    config["repo_url"] = "https://github.com/OWNER/adapter-matrix/"
    assert (
        hook.on_page_markdown("[e](../evidence)", page, config, None)
        == "[e](https://github.com/OWNER/adapter-matrix/tree/main/evidence)"
    )


def test_the_readme_grid_shows_each_cells_best_status_and_its_release():
    """Issue 61: the grid said "experimental" in all 66 cells (the newest release, 0.3.0, is
    experimental) though 0.2.1 is supported on 65 of them. A cell shows the best status any
    release gives it, from the newest release that gives it; the note names the usual one."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("<!-- adapter-matrix:table view=grid -->") : text.index("<!-- /adapter-matrix:table -->")]
    cells = [c.strip() for line in block.splitlines() if re.match(r"\| 2\.\d+ ", line) for c in line.split("|")[2:-1]]
    served = [c for c in cells if c not in ("no wheel", "not supported")]
    assert len(served) == 66
    # 0.2.1 supports 65; 0.3.0 is supported on its four era cells (they name it) and is the only
    # release of torch 2.5 on Python 3.13, experimental there
    assert served.count("supported") == 61 and served.count("supported (0.3.0)") == 4, served
    assert served.count("experimental (0.3.0)") == 1, served
    assert "best status any release gives it, from the newest release that gives it: 0.2.1 unless" in block
    assert "(0.3.0, 0.2.0, 0.1.0 too)" in block


def test_the_first_command_installs_what_check_needs_and_no_test_tool():
    """Issue 67: the main job installed the [test] extra (about 60 distributions) to run `check`;
    the test command keeps it."""
    blocks = re.findall(r"```sh\n(.*?)\n```", README.read_text(encoding="utf-8"), re.S)
    first, test = blocks[0], blocks[1]
    assert "adapter-matrix check" in first and "-e . -e ./shims 'torch==" in first and "[test]" not in first
    assert "'.[test]'" in test and "pytest" in test
