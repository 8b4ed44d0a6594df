"""Every view x format x language against its golden file, byte for byte.

Regenerate the golden files after an intended change with

    ADAPTER_MATRIX_UPDATE_GOLDEN=1 python -m pytest tests/unit/test_table_golden.py

(the regenerated cases report as skipped), then review `git diff tests/fixtures/tables/`.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Tuple

import pytest

from adapter_matrix.ci.record import read_records
from adapter_matrix.device.opsweep.record import read_records as read_sweeps
from adapter_matrix.matrix.loader import load
from adapter_matrix.matrix.model import Matrix
from adapter_matrix.tables import views as tables
from adapter_matrix.tables.formats import FORMATS
from adapter_matrix.tables.words import LANGS

from .helpers import FIXTURES

TODAY = _dt.date(2026, 12, 1)  # after one fixture's support window ended: eol must show
TABLES = FIXTURES / "tables"
GOLDEN = TABLES / "golden"
RESULTS = TABLES / "results"
OP_SWEEPS = TABLES / "op-sweeps"
MATRICES = {
    "minimal": FIXTURES / "minimal.yaml",
    "empty": TABLES / "empty.yaml",
    "dimensions": TABLES / "dimensions.yaml",
    "torch_npu": FIXTURES / "matrices" / "torch_npu.yaml",  # release lines, a CANN dimension
    "ipex": FIXTURES / "matrices" / "ipex.yaml",  # torch variants, an OS, a nightly pin
    "companions": FIXTURES / "companions.yaml",  # torchvision, torchaudio (an open requirement), an adapter pin
}
# IPEX is archived (fixes until 2026-03-31): its tables are shown while it was maintained.
TODAYS = {"ipex": _dt.date(2026, 1, 15)}
EXTENSIONS = {"markdown": "md", "rst": "rst", "html": "html", "csv": "csv", "json": "json"}
UPDATE = os.environ.get("ADAPTER_MATRIX_UPDATE_GOLDEN") == "1"
# Every HTML page inlines the same stylesheet: it is kept once, in STYLESHEET, and the golden
# pages hold PLACEHOLDER in its stead, so a page's golden file is its head and table body.
STYLESHEET = GOLDEN / "style.css"
PLACEHOLDER = "<style>/* tests/fixtures/tables/golden/style.css */</style>\n"
STYLE = re.compile(r"<style>\n(.*?)</style>\n", re.S)
# The op-coverage views read op-sweep records and take only the adapter's name from the
# matrix: one matrix shows them.
CASES = [
    (m, v, f, lang)
    for m in MATRICES
    for v in tables.VIEWS
    if tables.RECORDS.get(v) != "op-sweeps" or m == "minimal"
    for f in FORMATS
    # The selector page is its JSON document (its golden file) inside a fixed script and
    # stylesheet; test_table_selector.py ties the two and the browser tests run the script.
    if not (v == "selector" and f == "html")
    for lang in LANGS
]


@lru_cache(maxsize=None)
def matrix(name: str) -> Matrix:
    return load(MATRICES[name]).matrix


def records_for(view: str):
    """The fixture records a view is drawn from (:data:`tables.RECORDS`), or None."""
    kind = tables.RECORDS.get(view)
    if kind == "results":
        return read_records(str(RESULTS))
    if kind == "op-sweeps":
        return read_sweeps(str(OP_SWEEPS))
    return None


def render(name: str, view: str, fmt: str, lang: str) -> str:
    records = records_for(view)
    return tables.render(matrix(name), view=view, fmt=fmt, lang=lang, today=TODAYS.get(name, TODAY), records=records)


def split_stylesheet(page: str) -> Tuple[str, str]:
    """(the page with PLACEHOLDER for its one <style> block, the stylesheet)."""
    blocks = list(STYLE.finditer(page))
    assert len(blocks) == 1, f"an HTML page has one <style> block, this one {len(blocks)}"
    block = blocks[0]
    return page[: block.start()] + PLACEHOLDER + page[block.end() :], block.group(1)


def golden_path(name: str, view: str, fmt: str, lang: str) -> Path:
    return GOLDEN / name / f"{view}.{lang}.{EXTENSIONS[fmt]}"


def test_every_format_has_a_golden_extension():
    assert set(EXTENSIONS) == set(FORMATS)


@pytest.mark.parametrize("name,view,fmt,lang", CASES, ids=["-".join(c) for c in CASES])
def test_output_matches_its_golden_file(name, view, fmt, lang):
    text = render(name, view, fmt, lang)
    if fmt == "html":
        text, stylesheet = split_stylesheet(text)
        if UPDATE:
            STYLESHEET.write_bytes(stylesheet.encode("utf-8"))  # the same for every page (test below)
    data = text.encode("utf-8")
    path = golden_path(name, view, fmt, lang)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        pytest.skip(f"regenerated {path.relative_to(FIXTURES.parent.parent)}")
    assert path.exists(), f"no golden file {path}; run with ADAPTER_MATRIX_UPDATE_GOLDEN=1 and review the diff"
    assert data == path.read_bytes()


def test_every_html_page_inlines_the_one_golden_stylesheet():
    pages = [render(*case) for case in CASES if case[2] == "html"]
    sheets = {split_stylesheet(page)[1] for page in pages}
    assert len(pages) > 1 and len(sheets) == 1, "the HTML pages differ in their stylesheet"
    if UPDATE:
        pytest.skip("regenerated with the pages")
    assert sheets.pop().encode("utf-8") == STYLESHEET.read_bytes()


def test_no_stale_golden_files_are_left_behind():
    expected = {golden_path(*case) for case in CASES} | {STYLESHEET}
    assert set(GOLDEN.rglob("*.*")) == expected
