"""The result record is declared once: its reference, its checks and its evidence form follow.

``ResultRecord`` in ``adapter_matrix/ci/record.py`` names every key with its type, meaning
and whether the evidence form keeps it. docs/evidence.md shows the reference generated
from it (``GOLDEN_UPDATE=1`` rewrites the block after a change to the declaration); a
record read back is checked key by key against the same declaration.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from adapter_matrix.ci.record import RecordError, ResultRecord, evidence_keys, reference_markdown
from adapter_matrix.documents import keys_of

from .helpers import REPO

DOC = REPO / "docs" / "evidence.md"
BLOCK = re.compile(r"(<!-- result-record:begin[^\n]*-->\n)(.*?)(<!-- result-record:end -->)", re.S)

GOOD = {
    "schema": 2,
    "cell": "py3.11-torch2.13",
    "release": "0.2.1",
    "outcome": "passed",
    "timestamp": "2026-12-01T10:00:00+00:00",
    "suites": {"ops": {"passed": 3, "failed": 0}},
}


def test_the_reference_in_the_docs_is_the_declaration():
    text = DOC.read_text(encoding="utf-8")
    found = BLOCK.search(text)
    assert found is not None, "docs/evidence.md lost its result-record block"
    if os.environ.get("GOLDEN_UPDATE"):
        text = text[: found.start(2)] + reference_markdown() + text[found.end(2) :]
        DOC.write_text(text, encoding="utf-8")
        found = BLOCK.search(text)
    assert found is not None and found.group(2) == reference_markdown()
    for key in keys_of(ResultRecord):  # every key is described, in the order it is written
        assert key.doc and f"| `{key.name}` |" in found.group(2), key.name


def test_the_evidence_form_keeps_the_keys_the_declaration_marks_in_its_order():
    assert evidence_keys()[:4] == ("schema", "cell", "session", "release")
    assert evidence_keys()[-3:] == ("companions", "companions_unavailable", "ops")  # after the suites
    assert not {"python_minor", "skips", "phases", "companion_refusals"} & set(evidence_keys())
    record = ResultRecord.from_json(dict(GOOD, skips=["a: why"], phases={"tests": 1.5}), "r.json")
    assert list(record.evidence_json()) == [k for k in evidence_keys() if k in GOOD]


@pytest.mark.parametrize(
    "change, says",
    [
        ({"outcome": None}, "outcome is null, expected a string"),
        ({"dirty": "yes"}, "dirty is a string, expected true, false or null"),
        ({"duration": True}, "duration is a boolean, expected a number or null"),
        ({"suites": {"ops": {"passed": "3"}}}, "suites.ops.passed is a string, expected a whole number"),
        ({"companions": {"torchvision": 1}}, "companions.torchvision is a int, expected a string"),
        ({"sources": {"hash": 7}}, "sources.hash is a int, expected a string"),
        ({"timestamp": "yesterday"}, "'yesterday' is not an ISO date and time"),
        ({"release": "../x"}, "is not a plain name"),
    ],
)
def test_a_record_read_back_is_checked_key_by_key_against_the_declaration(change, says):
    with pytest.raises(RecordError) as info:
        ResultRecord.from_json(dict(GOOD, **change), "artifacts/r.json")
    assert str(info.value).startswith("artifacts/r.json: not a result record (") and says in str(info.value)


def test_a_missing_key_is_read_as_its_default_and_never_written_back():
    record = ResultRecord.from_json(GOOD, "r.json")
    assert record.companions == {} and record.torch is None and record.passed
    assert json.dumps(record.to_json()) == json.dumps(GOOD)  # the keys it had, in the declared order
    with pytest.raises(RecordError, match=r"the record has no timestamp"):
        ResultRecord.from_json({k: v for k, v in GOOD.items() if k != "timestamp"}, "r.json")
