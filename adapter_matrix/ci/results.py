"""Result records of test sessions, aggregated: which cells passed, which failed or are
missing, as a table (``adapter-matrix ci results``).

The records are read by :mod:`adapter_matrix.ci.record`, which owns their format; the
reader's names are re-exported here for the callers that have always imported them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from .record import CLOCK_SKEW, RECORD_LIMIT, RecordError, Records, check_record, read_records

__all__ = [
    "RecordError",
    "Records",
    "CLOCK_SKEW",
    "RECORD_LIMIT",
    "Summary",
    "check_record",
    "read_records",
    "summarize",
    "render_markdown",
]


@dataclass(frozen=True)
class Summary:
    records: List[Dict[str, Any]]
    missing: List[str]  # expected cells without a record

    @property
    def failed(self) -> List[Dict[str, Any]]:
        return [r for r in self.records if r.get("outcome") != "passed"]

    @property
    def ok(self) -> bool:
        return not self.failed and not self.missing


def summarize(records: List[Dict[str, Any]], expected: Optional[Sequence[str]] = None) -> Summary:
    seen = {r["cell"] for r in records}
    missing = [cell for cell in (expected or ()) if cell not in seen]
    return Summary(records, missing)


def _tests(record: Dict[str, Any]) -> str:
    t = record.get("tests") or {}
    return f"{t.get('passed', 0)}/{t.get('failed', 0)}/{t.get('skipped', 0)}/{t.get('errors', 0)}" if t else "-"


def _workloads(record: Dict[str, Any]) -> str:
    """The workloads group's passed/failed/skipped, "-" when the cell did not report the group."""
    w = (record.get("suites") or {}).get("workloads")
    return f"{w.get('passed', 0)}/{w.get('failed', 0)}/{w.get('skipped', 0)}" if w else "-"


def _op_sweep(record: Dict[str, Any]) -> str:
    """How much of the op sweep ran: ``full`` with the float32 match rate, ``sample``, or "-";
    then the compiled sample's match rate (or "compiled skipped"), when it ran."""
    ops = record.get("ops")
    if not isinstance(ops, dict):  # a record from before the summary was kept: only the suite counts
        return "ran" if (record.get("suites") or {}).get("ops") else "-"
    f32: Any = ops.get("float32") if isinstance(ops.get("float32"), dict) else {}
    if ops.get("mode") == "full" and f32.get("compared"):
        out = f"full, f32 {f32.get('matched', 0)}/{f32['compared']}"
    else:
        out = str(ops.get("mode") or "-")
    compiled: Any = ops.get("compiled")  # absent from records before the compiled sample
    if isinstance(compiled, dict):
        c32: Any = compiled.get("float32") if isinstance(compiled.get("float32"), dict) else {}
        out += (
            ", compiled skipped"
            if compiled.get("skipped")
            else f", compiled {c32.get('matched', 0)}/{c32.get('compared', 0)}"
        )
    return out


def rows(summary: Summary) -> List[List[str]]:
    """Table rows: cell, Python, torch, outcome, tests p/f/s/e, workloads p/f/s, op sweep,
    build s, duration s, when, commit."""
    out = []
    for r in summary.records:
        build = f"{r.get('build_seconds') or 0:.0f}" + (" (cached)" if r.get("build_cached") else "")
        out.append(
            [
                r["cell"],
                str(r.get("python", "")),
                str(r.get("torch") or r.get("torch_claimed", "")),
                r["outcome"],
                _tests(r),
                _workloads(r),
                _op_sweep(r),
                build,
                f"{r.get('duration', 0):.0f}",
                str(r.get("timestamp", ""))[:16].replace("T", " "),
                str(r.get("commit") or "")[:7] + ("+" if r.get("dirty") else ""),
            ]
        )
    for cell in summary.missing:
        out.append([cell, "", "", "missing", "-", "-", "-", "-", "-", "", ""])
    return out


HEADERS = [
    "cell",
    "Python",
    "torch",
    "outcome",
    "tests p/f/s/e",
    "workloads p/f/s",
    "op sweep",
    "build s",
    "duration s",
    "when (UTC)",
    "commit",
]


def render_markdown(summary: Summary) -> str:
    body = [HEADERS] + rows(summary)
    widths = [max(len(r[i]) for r in body) for i in range(len(HEADERS))]
    line = lambda cols: "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |"
    return (
        "\n".join([line(body[0]), "| " + " | ".join("-" * w for w in widths) + " |"] + [line(r) for r in body[1:]])
        + "\n"
    )
