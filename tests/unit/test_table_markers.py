"""`table --update/--check/--output`: only the blocks change, atomically; drift is caught with a diff."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import time

import pytest

from adapter_matrix.files import atomic_write
from adapter_matrix.matrix.loader import load
from adapter_matrix.tables import docs
from adapter_matrix.tables.markers import MarkerError, find_blocks

from .helpers import FIXTURES, REPO, cli

DOC = """# Title

Intro text that must survive.

<!-- adapter-matrix:table view=grid -->
stale content
<!-- /adapter-matrix:table -->

Middle text.

<!-- adapter-matrix:table view=releases lang=zh -->
<!-- /adapter-matrix:table -->
Tail text without a final newline"""

MINIMAL = str(FIXTURES / "minimal.yaml")
RESULTS = FIXTURES / "tables" / "results"
HTML_CHECK = ("table", "--view", "grid", "--format", "html", "--output", "docs/compatibility.html", "--check")


def test_this_repositorys_documents_are_up_to_date_in_one_call():
    docs_md = sorted(
        str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")
    )  # what the shell makes of docs/*.md
    res = cli("table", "--check", "README.md", *docs_md)
    assert res.code == 0, res.out + res.err
    # docs/tables.md shows the markers inside code fences: examples, not blocks
    assert "docs/tables.md: no table blocks, skipped" in res.out
    assert "docs/shims.md: no table blocks, skipped" in res.out
    assert re.search(r"^\d+ file\(s\), \d+ table block\(s\): up to date$", res.out, re.M)


def test_the_op_coverage_page_is_up_to_date_and_checked_in_ci():
    res = cli("table", "--check", "docs/op-coverage.md")
    assert res.code == 0, res.out + res.err
    assert "1 file(s), 3 table block(s): up to date" in res.out  # ops, op-dtypes, op-failures
    checked = [
        line for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines() if "table --check" in line
    ]
    assert any("docs/*.md" in line or "docs/op-coverage.md" in line for line in checked), checked


def test_this_repositorys_html_page_is_up_to_date():
    res = cli(*HTML_CHECK)
    assert res.code == 0, res.out + res.err
    assert "docs/compatibility.html: up to date" in res.out


def test_this_repositorys_docs_page_is_left_unchanged_by_mdformat():
    mdformat = pytest.importorskip("mdformat")
    pytest.importorskip("mdformat_gfm")
    text = (REPO / "docs" / "compatibility.md").read_text(encoding="utf-8")
    assert mdformat.text(text, extensions={"gfm"}) == text


def test_update_rewrites_only_between_markers(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(DOC, encoding="utf-8")
    res = cli("table", "--update", str(doc))
    assert res.code == 0, res.err
    new = doc.read_text(encoding="utf-8")
    assert "stale content" not in new
    # everything outside the blocks, markers included, is byte-identical
    outside = lambda t: [
        part.split("<!-- /adapter-matrix:table -->")[-1] for part in t.split("<!-- adapter-matrix:table")
    ]
    assert outside(new) == outside(DOC)
    assert new.startswith(DOC.split("<!-- adapter-matrix")[0])
    assert new.endswith("Tail text without a final newline")
    assert "\n| torch |" in new and "\n| 适配器版本 |" in new
    # idempotent
    assert cli("table", "--check", str(doc)).code == 0
    assert cli("table", "--update", str(doc)).out.strip().endswith("up to date (2 blocks)")


def test_updated_markdown_is_left_unchanged_by_mdformat(tmp_path):
    mdformat = pytest.importorskip("mdformat")
    pytest.importorskip("mdformat_gfm")
    doc = tmp_path / "doc.md"
    doc.write_text(DOC.replace("-->\nTail", "-->\n\nTail") + "\n", encoding="utf-8")  # formatted outside the blocks
    assert mdformat.text(doc.read_text(encoding="utf-8"), extensions={"gfm"}) != doc.read_text(encoding="utf-8")
    assert cli("table", "--matrix", MINIMAL, "--update", str(doc)).code == 0
    text = doc.read_text(encoding="utf-8")
    assert mdformat.text(text, extensions={"gfm"}) == text


FENCED = """# Keeping a table current

Put these two lines where the table goes:

```markdown
<!-- adapter-matrix:table view=grid lang=zh -->
<!-- /adapter-matrix:table -->
```

A longer fence can show a fence, and tildes work too:

````text
```
<!-- adapter-matrix:table view=releases -->
stale example
<!-- /adapter-matrix:table -->
```
````

~~~
<!-- adapter-matrix:table view=grid -->
~~~

The real one:

<!-- adapter-matrix:table view=grid -->
stale content
<!-- /adapter-matrix:table -->

```
<!-- adapter-matrix:table an unclosed fence runs to the end -->
"""


def test_a_fenced_example_of_the_markers_survives_update_unchanged(tmp_path):
    doc = tmp_path / "howto.md"
    doc.write_text(FENCED, encoding="utf-8")
    res = cli("table", "--matrix", MINIMAL, "--update", str(doc))
    assert res.code == 0, res.err
    assert "(1 block)" in res.out
    new = doc.read_text(encoding="utf-8")
    head, _real = FENCED.split("The real one:")
    assert new.startswith(head + "The real one:")  # every example, byte for byte
    assert "stale example" in new and "stale content" not in new
    assert new.endswith(FENCED[FENCED.index("<!-- /adapter-matrix:table -->\n\n```") :])
    assert cli("table", "--matrix", MINIMAL, "--check", str(doc)).code == 0


def test_a_fenced_example_alone_is_not_a_block(tmp_path):
    doc = tmp_path / "howto.md"
    doc.write_text(FENCED.split("The real one:")[0], encoding="utf-8")
    res = cli("table", "--matrix", MINIMAL, "--check", str(doc))
    assert res.code == 2 and "no adapter-matrix:table block found" in res.err
    assert "markers inside code examples do not count" in res.err


RST_LITERALS = """Tables
======

Write this::

    .. adapter-matrix:table view=grid

    .. /adapter-matrix:table

.. code-block:: rst
   :caption: a zh table

   .. adapter-matrix:table view=grid lang=zh
   .. /adapter-matrix:table

.. note::

   .. adapter-matrix:table view=releases

   .. /adapter-matrix:table

After.
"""


def test_rst_literal_blocks_are_examples_but_a_note_is_not():
    (block,) = find_blocks(RST_LITERALS, "rst")
    assert block.options == {"view": "releases"}
    assert block.line == RST_LITERALS.splitlines().index("   .. adapter-matrix:table view=releases") + 1


def test_check_names_the_documents_without_blocks_and_checks_the_others(tmp_path):
    plain = tmp_path / "plain.md"
    plain.write_text("# Nothing generated here\n", encoding="utf-8")
    ok = tmp_path / "ok.md"
    ok.write_text(DOC, encoding="utf-8")
    assert cli("table", "--update", str(ok), str(plain)).code == 0
    res = cli("table", "--check", str(plain), str(ok))
    assert res.code == 0, res.err
    assert f"{plain}: no table blocks, skipped" in res.out and "1 file(s), 2 table block(s): up to date" in res.out
    ok.write_text(DOC, encoding="utf-8")
    res = cli("table", "--check", str(plain), str(ok))
    assert res.code == 1 and f"adapter-matrix table --update {ok}\n" in res.err  # the stale one, only
    other = tmp_path / "other.rst"
    other.write_text("Nothing\n=======\n", encoding="utf-8")
    res = cli("table", "--check", str(plain), str(other))
    assert res.code == 2 and f"none of {plain}, {other}: no adapter-matrix:table block found" in res.err


def test_format_short_names_are_aliases(tmp_path):
    for short, full in (("md", "markdown"), ("gfm", "markdown"), ("htm", "html"), ("rest", "rst"), ("MD", "markdown")):
        res = cli("table", "--matrix", MINIMAL, "--today", "2026-12-01", "--format", short)
        assert res.code == 0, res.err
        assert res.out == cli("table", "--matrix", MINIMAL, "--today", "2026-12-01", "--format", full).out
    doc = tmp_path / "d.md"
    doc.write_text("<!-- adapter-matrix:table format=md -->\n<!-- /adapter-matrix:table -->\n", encoding="utf-8")
    assert cli("table", "--matrix", MINIMAL, "--update", str(doc)).code == 0
    assert "| torch |" in doc.read_text(encoding="utf-8")
    res = cli("table", "--format", "xlsx")
    assert res.code == 2 and "or a short name: md (markdown)" in res.err
    assert "markdown (or md, gfm" in cli("table", "--help").out


def test_hand_edit_inside_a_block_fails_check_with_a_diff_and_the_fix(tmp_path):
    readme = tmp_path / "README.md"
    shutil.copy(REPO / "README.md", readme)
    text = readme.read_text(encoding="utf-8")
    edited = text.replace("| 2.13  |", "| 2.13* |", 1)
    assert edited != text
    readme.write_text(edited, encoding="utf-8")
    res = cli("table", "--check", str(readme))
    assert res.code == 1
    assert "-| 2.13* |" in res.out and "+| 2.13  |" in res.out
    assert f"adapter-matrix table --update {readme}" in res.err
    assert readme.read_text(encoding="utf-8") == edited  # --check never writes
    assert cli("table", "--update", str(readme)).code == 0
    assert readme.read_text(encoding="utf-8") == text


def test_check_reports_every_stale_file_in_one_call_with_one_command(tmp_path):
    docs_dir = tmp_path / "docs"
    docs_dir.mkdir()
    shutil.copy(REPO / "docs" / "compatibility.md", docs_dir / "compatibility.md")
    shutil.copytree(REPO / "evidence", tmp_path / "evidence")  # its verified blocks read ../evidence
    zh = docs_dir / "compatibility.md"
    text = zh.read_text(encoding="utf-8")
    assert "| 2.13  | 无 wheel " in text  # the Chinese grid's torch 2.13 row, whatever its column widths
    zh.write_text(text.replace("| 2.13  | 无 wheel ", "| 2.13  | 有 wheel ", 1), encoding="utf-8")
    fresh = tmp_path / "fresh.md"
    fresh.write_text(DOC, encoding="utf-8")
    ok = tmp_path / "ok.md"
    ok.write_text(DOC, encoding="utf-8")
    assert cli("table", "--update", str(ok)).code == 0
    res = cli("table", "--check", str(zh), str(fresh), str(ok))
    assert res.code == 1
    assert res.out.count("(on disk)") == 2 and "-| 2.13  | 有 wheel " in res.out and "-stale content" in res.out
    assert f"adapter-matrix table --update {zh} {fresh}\n" in res.err


def test_the_fix_command_repeats_the_options_that_change_the_output(tmp_path):
    doc = tmp_path / "doc with space.md"
    doc.write_text("<!-- adapter-matrix:table view=verified -->\n<!-- /adapter-matrix:table -->\n", encoding="utf-8")
    res = cli("table", "--matrix", MINIMAL, "--results", str(RESULTS), "--today", "2026-12-01", "--check", str(doc))
    assert res.code == 1
    assert f"adapter-matrix table --matrix {MINIMAL} --today 2026-12-01 --results {RESULTS} --update '{doc}'" in res.err


def test_unclosed_block_and_bad_options_are_usage_errors(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("<!-- adapter-matrix:table view=grid -->\nno end\n")
    res = cli("table", "--check", str(doc))
    assert res.code == 2 and f"{doc}:1:1: adapter-matrix:table block is not closed" in res.err
    doc.write_text("text\n\n<!-- adapter-matrix:table colour=red -->\n<!-- /adapter-matrix:table -->\n")
    res = cli("table", "--check", str(doc))
    assert res.code == 2 and f"{doc}:3:1: unknown marker option(s) colour" in res.err
    doc.write_text("<!-- adapter-matrix:table view=pie -->\n<!-- /adapter-matrix:table -->\n")
    res = cli("table", "--check", str(doc))
    assert res.code == 2 and "unknown view 'pie'; choose from grid, verified, releases" in res.err
    doc.write_text("<!-- adapter-matrix:table format=html -->\n<!-- /adapter-matrix:table -->\n")
    res = cli("table", "--check", str(doc))
    assert res.code == 2 and "format=html cannot be embedded in a markdown document" in res.err
    doc.write_text("<!-- adapter-matrix:table release=9.9 -->\n<!-- /adapter-matrix:table -->\n")
    res = cli("table", "--check", str(doc))
    assert res.code == 2 and "no release 9.9" in res.err
    doc.write_text("no markers here\n")
    res = cli("table", "--check", str(doc))
    assert res.code == 2 and "no adapter-matrix:table block found" in res.err
    assert "Traceback" not in res.err


def test_nothing_is_written_when_any_file_fails_to_render(tmp_path):
    good = tmp_path / "good.md"
    good.write_text(DOC, encoding="utf-8")
    bad = tmp_path / "bad.md"
    bad.write_text("<!-- adapter-matrix:table view=verified -->\n<!-- /adapter-matrix:table -->\n", encoding="utf-8")
    res = cli("table", "--update", str(good), str(bad))
    assert res.code == 2 and "needs the result records" in res.err
    assert good.read_text(encoding="utf-8") == DOC


def test_verified_blocks_read_their_records_relative_to_the_document(tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copytree(RESULTS, tmp_path / "records")
    doc = tmp_path / "docs" / "verified.md"
    doc.write_text(
        "<!-- adapter-matrix:table view=verified results=../records -->\n<!-- /adapter-matrix:table -->\n",
        encoding="utf-8",
    )
    res = cli("table", "--matrix", MINIMAL, "--today", "2026-12-01", "--update", str(doc))
    assert res.code == 0, res.err
    text = doc.read_text(encoding="utf-8")
    assert "verified 2026-11-20, torch 2.3.1 at `3f2a9c1`" in text
    assert "failed 2026-11-21, torch 2.3.1 at `3f2a9c1`" in text
    doc.write_text(text.replace("../records", "../nowhere"), encoding="utf-8")
    res = cli("table", "--matrix", MINIMAL, "--check", str(doc))
    assert res.code == 2 and "nowhere: no such folder" in res.err


def test_rst_documents_get_a_list_table_that_docutils_reads(tmp_path):
    pytest.importorskip("docutils")
    from docutils.core import publish_doctree

    doc = tmp_path / "compat.rst"
    doc.write_text(
        "Compatibility\n=============\n\n.. adapter-matrix:table view=grid lang=zh\n\n.. /adapter-matrix:table\n\nAfter.\n",
        encoding="utf-8",
    )
    assert cli("table", "--matrix", MINIMAL, "--update", str(doc)).code == 0
    text = doc.read_text(encoding="utf-8")
    assert ".. list-table:: demo-adapter\uff1atorch \u00d7 Python" in text and text.endswith(
        ".. /adapter-matrix:table\n\nAfter.\n"
    )
    warnings = io.StringIO()
    tree = publish_doctree(text, settings_overrides={"warning_stream": warnings, "report_level": 1})
    assert warnings.getvalue() == ""
    # every maintained release: each cell shows the newest serving it (2.0.0 unnamed, the
    # deprecated 1.0.0 named), and the note under the table names the older ones
    assert "已弃用（1.0.0）" in tree.astext() and "每个版本的结果（包括 1.0.0）" in tree.astext()


def test_rst_blocks_are_found():
    text = "Title\n=====\n\n.. adapter-matrix:table view=grid lang=en\n\nold\n\n.. /adapter-matrix:table\n"
    (block,) = find_blocks(text, "rst")
    assert block.options == {"view": "grid", "lang": "en"}
    with pytest.raises(MarkerError):
        find_blocks(".. adapter-matrix:table\n", "rst")


def test_output_check_finds_a_stale_or_missing_page_and_names_the_command(tmp_path):
    page = tmp_path / "page.html"
    args = (
        "table",
        "--matrix",
        MINIMAL,
        "--today",
        "2026-12-01",
        "--view",
        "releases",
        "--format",
        "html",
        "--lang",
        "zh",
    )
    res = cli(*args, "--output", str(page), "--check")
    assert res.code == 1 and "+<!DOCTYPE html>" in res.out
    fix = f"adapter-matrix table --matrix {MINIMAL} --today 2026-12-01 --view releases --format html --lang zh --output {page}"
    assert fix in res.err
    assert not page.exists()  # --check never writes
    assert cli(*fix.split()[1:]).code == 0
    assert cli(*args, "--output", str(page), "--check").code == 0
    page.write_text(page.read_text(encoding="utf-8").replace("已弃用", "supported"), encoding="utf-8")
    res = cli(*args, "--output", str(page), "--check")
    assert res.code == 1 and "+" in res.out and "已弃用" in res.out


@pytest.mark.parametrize(
    "args,message",
    [
        (("--update", "--check", "README.md"), "--update and --check exclude each other"),
        (("README.md",), "give --update or --check with FILES"),
        (("--check",), "--check needs FILES or --output FILE"),
        (("--update",), "--update needs at least one FILE"),
        (("--view", "releases", "--check", "README.md"), "--view: a block takes these from its marker"),
        (("--check", "README.md", "--output", "x.html"), "not both"),
        (("--update", "--output", "x.html"), "--output writes the file by itself"),
        (("--today", "yesterday"), "--today 'yesterday': write a date as YYYY-MM-DD"),
        (("--format", "xlsx"), "unknown format 'xlsx'; choose from markdown, rst, html, csv, json"),
        (("--lang", "fr"), "unknown language 'fr'; choose from en, zh"),
        (("--view", "verified"), "the verified view needs the result records"),
        (("--view", "verified", "--results", "no/such/dir"), "no/such/dir: no such folder"),
    ],
)
def test_usage_errors_exit_2_with_one_message(args, message):
    res = cli("table", *args)
    assert res.code == 2, res.out + res.err
    assert message in res.err and "Traceback" not in res.err


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


def test_update_with_a_writer_failing_midway_leaves_each_file_old_or_new(tmp_path):
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    for doc in (first, second):
        doc.write_text(DOC, encoding="utf-8")
    calls = []

    def fail_on_the_second_file(fh, data: str) -> None:
        calls.append(data)
        fh.write(data if len(calls) == 1 else data[: len(data) // 2])
        if len(calls) == 2:
            raise OSError("disk full")

    matrix = load(MINIMAL).matrix
    with pytest.raises(OSError):
        docs.sync(matrix, [str(first), str(second)], write=True, writer=fail_on_the_second_file)
    assert first.read_text(encoding="utf-8") == calls[0]  # new
    assert second.read_text(encoding="utf-8") == DOC  # old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.md"]


def test_a_kill_during_update_leaves_the_old_file(tmp_path):
    """A real SIGKILL between the first and the second half of the write."""
    doc = tmp_path / "doc.md"
    doc.write_text(DOC, encoding="utf-8")
    ready = tmp_path / "half-written"
    script = f"""
import time
from adapter_matrix.tables import docs
from adapter_matrix.matrix.loader import load

def slow(fh, data):
    fh.write(data[: len(data) // 2])
    fh.flush()
    open({str(ready)!r}, "w").close()
    time.sleep(60)
    fh.write(data[len(data) // 2 :])

docs.sync(load({MINIMAL!r}).matrix, [{str(doc)!r}], write=True, writer=slow)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=str(REPO))
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None, "the writer exited before it was killed"
            assert time.monotonic() < deadline, "the writer never started"
            time.sleep(0.02)
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert doc.read_text(encoding="utf-8") == DOC
    # the half-written bytes are in the temporary file only, never in the document
    (temporary,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert temporary.name.startswith(".doc.md.") and temporary.stat().st_size > 0


def test_atomic_write_keeps_the_file_mode(tmp_path):
    target = tmp_path / "doc.md"
    target.write_text("x")
    target.chmod(0o640)
    atomic_write(str(target), "y")
    assert target.read_text() == "y" and (target.stat().st_mode & 0o777) == 0o640
