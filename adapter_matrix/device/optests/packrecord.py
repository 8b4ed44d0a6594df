"""The record of an ``ops tests`` run: one JSON document, for a cell's results and the ``ops`` views.

Counts per file (outcomes, how the file ended: completed, crashed in a test, timed out), the
tests that disagree with the expectations (new failures, new passes), those that fail on CPU
too (the CPU control), and every test that did not pass, with its error.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ...errors import AdapterMatrixError
from .packrun import BROKEN, TestsResult

__all__ = ["RECORD_KIND", "TestsRecordError", "build", "summary", "check"]

RECORD_KIND = "op-tests"
RECORD_SCHEMA = 1


class TestsRecordError(AdapterMatrixError, ValueError):
    """A file that is not an ``ops tests`` record."""

    __test__ = False


def _entry(t: Any) -> Dict[str, Any]:
    out = {"file": t.file, "test": t.id, "outcome": t.outcome}
    if t.error:
        out["error"] = t.error
    if t.reason:
        out["reason"] = t.reason
    return out


def build(result: TestsResult, pack: Optional[Mapping[str, Any]] = None, expected: str = "") -> Dict[str, Any]:
    files: Dict[str, Any] = {}
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


def check(doc: Any, name: str) -> Dict[str, Any]:
    """``doc`` if it is an ``ops tests`` record, else :class:`TestsRecordError`."""
    if not isinstance(doc, dict) or doc.get("kind") != RECORD_KIND or not isinstance(doc.get("files"), dict):
        raise TestsRecordError(f"{name}: not an `ops tests` record (kind {RECORD_KIND!r})")
    return doc


def summary(doc: Mapping[str, Any]) -> Dict[str, Any]:
    """What a cell's result record keeps: counts per file and the new failures' test ids."""
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


def files_table(doc: Mapping[str, Any]) -> List[List[str]]:
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
