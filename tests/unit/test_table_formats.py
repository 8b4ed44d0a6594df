"""Each format is valid for the tools that read it, in both languages.

Markdown: a fixed point of mdformat with mdformat-gfm, and it reads back as the cells'
text; reST: docutils parses it without a warning into the same cells; CSV reads back;
JSON validates against docs/compatibility-table.schema.json.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter_matrix.tables import views as tables
from adapter_matrix.tables.formats import JSON_SCHEMA_VERSION, render_csv, render_markdown, render_rst
from adapter_matrix.tables.table import Column, Span, Table, TableCell
from adapter_matrix.tables.words import LANGS, WORDS

from .helpers import REPO
from .test_table_golden import CASES, GOLDEN, TODAY, TODAYS, matrix, records_for, render

mdformat = pytest.importorskip("mdformat")
pytest.importorskip("mdformat_gfm", reason="mdformat-gfm is in the test extra: pip install -e '.[test]'")

MARKDOWN = sorted(GOLDEN.rglob("*.md"))


def _mdformat(text: str) -> str:
    return mdformat.text(text, extensions={"gfm"})


def _normalized(cell: TableCell) -> str:
    return re.sub(r"\s+", " ", cell.text).strip()


def _md_cells(text: str):
    """The text of every cell, as a GFM parser reads it (code spans as their content)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    rows, row = [], None
    for tok in tokens:
        if tok.type == "tr_open":
            row = []
        elif tok.type == "tr_close":
            rows.append(row)
        elif tok.type == "inline" and row is not None:
            row.append("".join(child.content for child in tok.children or ()))
    return rows


@pytest.mark.parametrize("path", MARKDOWN, ids=[f"{p.parent.name}/{p.name}" for p in MARKDOWN])
def test_markdown_is_left_unchanged_by_mdformat(path):
    text = path.read_text(encoding="utf-8")
    assert _mdformat(text) == text


def test_markdown_of_this_repository_is_a_fixed_point_in_both_languages():
    for view in ("grid", "releases"):
        for lang in LANGS:
            text = tables.render(matrix("minimal"), view=view, lang=lang, today=TODAY)
            assert _mdformat(text) == text


_TEXT = st.text(
    alphabet=st.sampled_from(
        list("abcXYZ019 .,:;-+=<>!?#*_[]()|`~&\\'\"/@%$^{}") + ["\u00d7", "\u2013", "支", "持", "验", "证", "\uff1a"]
    ),
    max_size=12,
)
_CELL = st.builds(
    lambda spans, state: TableCell(tuple(Span(t, c) for t, c in spans), state),
    st.lists(st.tuples(_TEXT, st.booleans()), max_size=3),
    st.sampled_from(["", "supported"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_CELL, min_size=2, max_size=2), max_size=3), st.tuples(_TEXT, _TEXT))
def test_any_cell_text_renders_as_mdformat_writes_it_and_reads_back(rows, labels):
    columns = (Column("a", labels[0]), Column("b", labels[1]))
    table = Table("grid", "en", "t", columns, tuple(tuple(r) for r in rows))
    text = render_markdown(table)
    assert _mdformat(text) == text
    expected = [[_normalized(TableCell((Span(c.label),))) for c in columns]]
    expected += [[_normalized(c) for c in row] for row in rows]
    assert _md_cells(text) == expected


def _rst_entries(text: str):
    """Parse with docutils; fail on any warning; return the text of every entry by row."""
    from docutils import nodes
    from docutils.core import publish_doctree

    warnings = io.StringIO()
    tree = publish_doctree(text, settings_overrides={"warning_stream": warnings, "report_level": 1, "halt_level": 5})
    assert warnings.getvalue() == ""
    assert not list(tree.findall(nodes.system_message))
    (table,) = list(tree.findall(nodes.table))
    return [[entry.astext() for entry in row.findall(nodes.entry)] for row in table.findall(nodes.row)]


@pytest.mark.parametrize("case", [c for c in CASES if c[2] == "rst"], ids=lambda c: "-".join((c[0], c[1], c[3])))
def test_rst_parses_without_warnings_into_the_same_cells(case):
    pytest.importorskip("docutils")
    name, view, _fmt, lang = case
    table = tables.build(matrix(name), view, lang, today=TODAYS.get(name, TODAY), records=records_for(view))
    rows = _rst_entries(render(name, view, "rst", lang))
    assert rows == [[c.label for c in table.columns]] + [[_normalized(c) for c in row] for row in table.rows]


@settings(max_examples=200, deadline=None)
@given(st.lists(_CELL, min_size=2, max_size=2))
def test_any_cell_text_survives_rst(row):
    pytest.importorskip("docutils")
    table = Table("grid", "en", "t", (Column("a", "a"), Column("b", "b")), (tuple(row),))
    entries = _rst_entries(render_rst(table))
    assert entries[1] == [_normalized(c) for c in row]


@pytest.mark.parametrize("lang", LANGS)
def test_csv_reads_back_as_the_table(lang):
    table = tables.build(matrix("dimensions"), "grid", lang, today=TODAY)
    rows = list(csv.reader(io.StringIO(render_csv(table))))
    assert rows == [[c.label for c in table.columns]] + [[c.text for c in row] for row in table.rows]


@pytest.mark.parametrize("case", [c for c in CASES if c[2] == "json"], ids=lambda c: "-".join((c[0], c[1], c[3])))
def test_json_validates_against_the_published_schema(case):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "docs" / "compatibility-table.schema.json").read_text())
    name, view, _fmt, lang = case
    doc = json.loads(render(name, view, "json", lang))
    jsonschema.validate(doc, schema, format_checker=jsonschema.FormatChecker())
    assert doc["schema_version"] == JSON_SCHEMA_VERSION == schema["properties"]["schema_version"]["const"]


def test_json_facts_do_not_depend_on_the_language():
    en, zh = (json.loads(render("dimensions", "verified", "json", lang)) for lang in LANGS)
    assert en["cells"] == zh["cells"] and en["cells"]
    assert [[c["state"] for c in r] for r in en["rows"]] == [[c["state"] for c in r] for r in zh["rows"]]
    assert en["columns"] != zh["columns"] or en["title"] != zh["title"]


def test_every_word_exists_in_both_languages_with_the_same_fields():
    same_in_both = {"torch", "python"}  # names, not words
    for key, texts in WORDS.items():
        assert len(texts) == len(LANGS) and all(t.strip() for t in texts), key
        fields = [sorted(re.findall(r"\{(\w+)\}", t)) for t in texts]
        assert all(f == fields[0] for f in fields), f"{key}: the languages name different fields"
        if key not in same_in_both:
            assert len(set(texts)) == len(texts), f"{key}: not translated"


def test_every_state_has_a_label_and_a_description():
    for state in tables.STATES:
        assert state in WORDS and f"{state}_about" in WORDS


@pytest.mark.parametrize("view", list(tables.VIEWS))
def test_zh_and_en_tables_have_the_same_shape_and_states(view):
    records = records_for(view)
    en, zh = (tables.build(matrix("dimensions"), view, lang, today=TODAY, records=records) for lang in LANGS)
    assert [[c.state for c in r] for r in en.rows] == [[c.state for c in r] for r in zh.rows]
    assert [c.key for c in en.columns] == [c.key for c in zh.columns]
    assert [s for s, _l, _d in en.legend] == [s for s, _l, _d in zh.legend]


def test_bad_view_language_and_format_name_the_choices():
    with pytest.raises(ValueError, match="choose from grid, verified, releases"):
        tables.render(matrix("minimal"), view="matrix")
    with pytest.raises(ValueError, match="choose from en, zh"):
        tables.render(matrix("minimal"), lang="fr")
    with pytest.raises(ValueError, match="choose from markdown, rst, html, csv, json"):
        tables.render(matrix("minimal"), fmt="xlsx")
    with pytest.raises(ValueError, match="needs the result records"):
        tables.render(matrix("minimal"), view="verified")
