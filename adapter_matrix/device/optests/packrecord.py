"""The record of an ``ops tests`` run: one JSON document, for a cell's results and the ``ops`` views.

Counts per file (outcomes, how the file ended: completed, crashed in a test, timed out), the
tests that disagree with the expectations (new failures, new passes), those that fail on CPU
too (the CPU control), and every test that did not pass, with its error.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, TypedDict, cast

from ...errors import AdapterMatrixError
from .packrun import BROKEN, TestOutcome, TestsResult

__all__ = ["RECORD_KIND", "TestsRecordError", "build", "summary", "check"]

RECORD_KIND = "op-tests"
RECORD_SCHEMA = 1


class TestsRecordError(AdapterMatrixError, ValueError):
    """A file that is not an ``ops tests`` record."""

    __test__ = False


class _EntryBase(TypedDict):
    file: str
    test: str  # the test's id
    outcome: str


class RecordEntry(_EntryBase, total=False):
    """A test of the record's lists (new failures, new passes, CPU too, not passed)."""

    error: str
    reason: str


class FileEntry(TypedDict):
    """A file's counts in the record."""

    tests: int
    outcomes: Dict[str, int]  # the outcomes that occurred, with their counts
    ended: str
    seconds: float
    shards: int
    new_failures: int
    new_passes: int
    known: int
    cpu_too: int


class OpTestsRecord(TypedDict):
    """The ``ops tests`` record (``kind`` op-tests, ``schema`` 1), keys in the order written."""

    kind: str
    schema: int
    torch: str
    device: str
    pack: Dict[str, object]  # the test pack's own document, as written
    expected: str
    control: Optional[str]  # "cpu" when failures ran again on CPU
    configured: List[str]
    ok: bool
    seconds: float
    files: Dict[str, FileEntry]
    new_failures: List[RecordEntry]
    new_passes: List[RecordEntry]
    cpu_too: List[RecordEntry]
    not_passed: List[RecordEntry]


def _entry(t: TestOutcome) -> RecordEntry:
    out: RecordEntry = {"file": t.file, "test": t.id, "outcome": t.outcome}
    if t.error:
        out["error"] = t.error
    if t.reason:
        out["reason"] = t.reason
    return out


def build(result: TestsResult, pack: Optional[Mapping[str, object]] = None, expected: str = "") -> OpTestsRecord:
    files: Dict[str, FileEntry] = {}
    for f in result.files:
        mine = [t for t in result.tests if t.file == f.file]
        files[f.file] = {
            "tests": len(mine),
            "outcomes": {k: v for k, v in f.counts.items() if v},
            "ended": f.ended,
            "seconds": f.seconds,
            "shards": f.shards,
            "new_failures": sum(1 for t in mine if t.verdict == "new-failure"),
            "new_passes": sum(1 for t in mine if t.verdict == "new-pass"),
            "known": sum(1 for t in mine if t.verdict == "known"),
            "cpu_too": sum(1 for t in mine if t.verdict == "cpu-too"),
        }
    return {
        "kind": RECORD_KIND,
        "schema": RECORD_SCHEMA,
        "torch": result.torch,
        "device": result.device,
        "pack": dict(pack or {}),
        "expected": expected,
        "control": result.control,
        "configured": list(result.configured),
        "ok": result.ok,
        "seconds": result.seconds,
        "files": files,
        "new_failures": [_entry(t) for t in result.by_verdict("new-failure")],
        "new_passes": [_entry(t) for t in result.by_verdict("new-pass")],
        "cpu_too": [_entry(t) for t in result.by_verdict("cpu-too")],
        "not_passed": [_entry(t) for t in result.tests if t.outcome in BROKEN and t.verdict == "known"],
    }


def check(doc: object, name: str) -> OpTestsRecord:
    """``doc`` if it is an ``ops tests`` record, else :class:`TestsRecordError`."""
    if not isinstance(doc, dict) or doc.get("kind") != RECORD_KIND or not isinstance(doc.get("files"), dict):
        raise TestsRecordError(f"{name}: not an `ops tests` record (kind {RECORD_KIND!r})")
    return cast(OpTestsRecord, doc)  # its kind says so; written by build


def summary(doc: OpTestsRecord) -> Dict[str, object]:
    """What a cell's result record keeps: counts per file and the new failures' test ids (the
    result record holds it as it is, so its shape is this function's)."""
    return {
        "ok": doc["ok"],
        "files": {
            name: {"outcomes": f["outcomes"], "ended": f["ended"], "new_failures": f["new_failures"]}
            for name, f in doc["files"].items()
        },
        "new_failures": [e["test"] for e in doc["new_failures"]],
        "cpu_too": len(doc["cpu_too"]),
        "seconds": doc["seconds"],
    }


def files_table(doc: OpTestsRecord) -> List[List[str]]:
    """Rows of the per-file view: file, tests, passed, failed (new), known, CPU too, skipped, ended."""
    rows = []
    for name, f in doc["files"].items():
        o = f["outcomes"]
        broken = sum(o.get(k, 0) for k in BROKEN)
        rows.append(
            [
                name,
                str(f["tests"]),
                str(o.get("passed", 0)),
                f"{broken} ({f['new_failures']} new)",
                str(f["known"]),
                str(f["cpu_too"]),
                str(o.get("skipped", 0) + o.get("xfailed", 0)),
                f["ended"],
            ]
        )
    return rows
