"""Records are untrusted input: a downloaded artifact can hold anything.

Every hostile record below is fed to ``results DIR --into evidence`` and to ``validate
--results DIR --strict``: each ends in one clear message naming the file and exit 2,
nothing is written outside the evidence folder (nor anything at all into it), and no
traceback escapes (the CLI runs in-process with exceptions re-raised). A property test
does the same for generated records.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import string
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter_matrix import limits
from adapter_matrix.ci import evidence
from adapter_matrix.matrix.loader import load

from .helpers import cli
from .test_release import MATRIX, SUPPORTED, _record

NOW = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _project(root: Path) -> Path:
    (root / "demo").mkdir(parents=True)
    (root / "demo" / "__init__.py").write_text('__version__ = "2.0.0"\n')
    (root / "demo" / "compat.yaml").write_text(MATRIX)
    (root / "compat.yaml").symlink_to("demo/compat.yaml")
    (root / "suite").mkdir()
    (root / "suite" / "test_core.py").write_text("def test_core():\n    pass\n")
    (root / "evidence").mkdir()
    (root / "artifacts").mkdir()
    return root


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = _project(tmp_path / "repo")  # one level down: an escape to tmp_path is visible
    monkeypatch.chdir(root)
    return root


def _good(project: Path) -> dict:
    matrix = load(project / "compat.yaml").matrix
    return _record(matrix, SUPPORTED[0]).to_json()


def _snapshot(top: Path) -> set:
    return {str(p.relative_to(top)) for p in top.rglob("*")}


def _feed(project: Path, body, name: str = "record.json"):
    """Plant ``body`` (a record, or raw bytes) as an artifact; run both readers."""
    path = project / "artifacts" / name
    path.write_bytes(body if isinstance(body, bytes) else json.dumps(body).encode())
    merged = cli("results", "artifacts", "--into", "evidence", cwd=project)
    gated = cli("validate", "--matrix", "compat.yaml", "--results", "artifacts", "--strict", cwd=project)
    return merged, gated


HOSTILE = {
    "dot-dot cell": ({"cell": "../../escaped"}, "is not a plain name"),
    "absolute release": ({"release": "/elsewhere"}, "is not a plain name"),
    "empty cell": ({"cell": ""}, "the cell name is empty"),
    "NUL in the cell": ({"cell": "py3.10\x00-torch2.2"}, "holds a control character"),
    "a cell that is a mapping": ({"cell": {"a": 1}}, "cell is a mapping, expected a string"),
    "an integer timestamp": ({"timestamp": 1700000000}, "timestamp is a int, expected an ISO date and time"),
    "suites that are a list": ({"suites": [1, 2]}, "suites is a list, expected a mapping or null"),
    "a cell named like the release file": ({"cell": "release"}, "too long or reserved"),
    "a date in the future": ({"timestamp": "2099-01-01T00:00:00+00:00"}, "a record cannot come from the future"),
}


@pytest.mark.parametrize("change,says", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_record_is_one_clear_message_and_nothing_is_written(project, change, says):
    record = dict(_good(project), **change)
    before = _snapshot(project.parent)
    merged, gated = _feed(project, record)
    for res in (merged, gated):
        assert res.code == 2, res.out + res.err
        assert "artifacts/record.json" in res.err and says in res.err
        assert "Traceback" not in res.out + res.err
    assert _snapshot(project.parent) - before == {"repo/artifacts/record.json"}  # nothing else, anywhere
    assert not os.path.exists("/elsewhere")


def test_the_clock_skew_is_one_day(project):
    soon = (_dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(hours=20)).isoformat(timespec="seconds")
    merged, _gated = _feed(project, dict(_good(project), timestamp=soon))
    assert merged.code == 0, merged.err
    late = (_dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(days=1, hours=1)).isoformat(timespec="seconds")
    merged, _gated = _feed(project, dict(_good(project), timestamp=late))
    assert merged.code == 2 and "by more than the 1-day clock skew" in merged.err


MALFORMED = {
    "not JSON": (b"{", "Expecting"),
    "not UTF-8": (b'{"cell": "\xff\xfe"}', "not UTF-8"),
    "nested too deeply": (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
}


@pytest.mark.parametrize("body,says", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_file_is_one_clear_message(project, body, says):
    before = _snapshot(project.parent)
    for res in _feed(project, body):
        assert res.code == 2 and "artifacts/record.json: not a result record" in res.err and says in res.err
    assert _snapshot(project.parent) - before == {"repo/artifacts/record.json"}


def test_a_huge_file_is_read_no_further_than_the_bound(project, monkeypatch):
    monkeypatch.setattr(limits, "RECORD_LIMIT", 4096)
    body = json.dumps(dict(_good(project), error="x" * 10_000)).encode()
    for res in _feed(project, body):
        assert res.code == 2 and "artifacts/record.json: not a result record (larger than" in res.err


def test_into_a_file_is_a_clear_message(project):
    (project / "artifacts" / "record.json").write_text(json.dumps(_good(project)))
    (project / "not-a-folder").write_text("")
    res = cli("results", "artifacts", "--into", "not-a-folder", cwd=project)
    assert res.code == 2 and "--into not-a-folder: not a folder" in res.err
    assert (project / "not-a-folder").read_text() == ""


def test_a_linked_release_folder_cannot_lead_outside(project, tmp_path):
    (tmp_path / "outside").mkdir()
    (project / "evidence" / "2.0.0").symlink_to(tmp_path / "outside")
    matrix = load(project / "compat.yaml").matrix
    with pytest.raises(evidence.EvidenceError, match="outside the evidence folder"):
        evidence.write_evidence(str(project / "evidence"), _record(matrix, SUPPORTED[0]), matrix)
    assert list((tmp_path / "outside").iterdir()) == []


@pytest.mark.parametrize("name", ["..", ".", "a/b", "a\\b", "C:x", "/abs", "", "x\x00", "x\n", ".hidden", "x" * 201])
def test_no_name_that_is_not_one_plain_path_component(name):
    with pytest.raises(evidence.EvidenceError):
        evidence.check_name(name, "cell")
    assert evidence.check_name("py3.13t-torch2.9-cann8.1.RC1-v2.9.0.post6", "cell")


# -- the property: any record file, no traceback, no write outside, bounded time -----------

NAMES = st.one_of(
    st.sampled_from(["py3.10-torch2.2", "../x", "/abs", "", "a\x00b", "release", "..", "a/b", "C:\\x", "x" * 300]),
    st.text(alphabet=string.printable + "\x00\u00e9\u2014", max_size=12),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)
KEYS = [
    "cell",
    "release",
    "outcome",
    "timestamp",
    "sources",
    "suites",
    "tests",
    "companions",
    "ops",
    "duration",
    "commit",
    "torch",
    "dirty",
]


@st.composite
def records(draw):
    record = {"cell": draw(NAMES), "outcome": draw(st.sampled_from(["passed", "failed", 3, None]))}
    record["release"] = draw(st.one_of(NAMES, st.none(), st.just("2.0.0")))
    record["timestamp"] = draw(st.one_of(st.just(NOW), st.just("2099-01-01T00:00:00Z"), VALUES))
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=5)):
        record[key] = draw(VALUES)
    return record


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(body=st.one_of(records(), VALUES, st.binary(max_size=40)))
def test_any_record_file_ends_cleanly_and_writes_nothing_outside(tmp_path_factory, body):
    top = tmp_path_factory.mktemp("fuzz")
    project = _project(top / "repo")
    before = _snapshot(top)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    (project / "artifacts" / "record.json").write_bytes(raw)
    started = time.perf_counter()
    merged = cli("results", "artifacts", "--into", "evidence", cwd=project)  # raises on a traceback
    gated = cli("validate", "--matrix", "compat.yaml", "--results", "artifacts", "--strict", cwd=project)
    assert time.perf_counter() - started < 10
    assert merged.code in (0, 1, 2) and gated.code in (0, 2)
    written = _snapshot(top) - before - {"repo/artifacts/record.json"}
    assert all(p.startswith("repo/evidence") for p in written), written  # never outside the evidence folder
    if merged.code == 2:
        assert "record.json" in merged.err or "no result records" in merged.err
