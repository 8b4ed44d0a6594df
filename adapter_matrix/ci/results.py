"""Result records of test sessions, aggregated: which cells passed, which failed or are
missing, as a table (``adapter-matrix results``).

The records are read by :mod:`adapter_matrix.ci.record`, which declares their format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence

from .record import ResultRecord

__all__ = [
    "Summary",
    "summarize",
    "rows",
    "HEADERS",
    "render_markdown",
]


@dataclass(frozen=True)
class Summary:
    records: Sequence[ResultRecord]
    missing: List[str]  # expected cells without a record

    @property
    def failed(self) -> List[ResultRecord]:
        return [r for r in self.records if not r.passed]

    @property
    def ok(self) -> bool:
        return not self.failed and not self.missing


def summarize(records: Iterable[ResultRecord], expected: Optional[Sequence[str]] = None) -> Summary:
    kept = list(records)
    seen = {r.cell for r in kept}
    return Summary(kept, [cell for cell in (expected or ()) if cell not in seen])


def _tests(record: ResultRecord) -> str:
    t = record.tests or {}
    return f"{t.get('passed', 0)}/{t.get('failed', 0)}/{t.get('skipped', 0)}/{t.get('errors', 0)}" if t else "-"


def _workloads(record: ResultRecord) -> str:
    """The workloads group's passed/failed/skipped, "-" when the cell did not report the group."""
    w = (record.suites or {}).get("workloads")
    return f"{w.get('passed', 0)}/{w.get('failed', 0)}/{w.get('skipped', 0)}" if w else "-"


def _op_sweep(record: ResultRecord) -> str:
    """How much of the op sweep ran: ``full`` with the float32 match rate, ``sample``, or "-";
    then the compiled sample's match rate (or "compiled skipped"), when it ran; then PyTorch's
    test files (``ops tests``), when they ran."""
    ops = record.ops
    if ops is None:  # a record from before the summary was kept: only the suite counts
        return "ran" if (record.suites or {}).get("ops") else "-"
    f32 = ops.float32 or {}
    if ops.mode == "full" and f32.get("compared"):
        out = f"full, f32 {f32.get('matched', 0)}/{f32.get('compared')}"
    else:
        out = str(ops.mode or "-")
    compiled = ops.compiled  # absent from records before the compiled sample
    if compiled is not None:
        c32 = compiled.get("float32") or {}  # (a record's float32 is a mapping: read back checked)
        out += (
            ", compiled skipped"
            if compiled.get("skipped")
            else f", compiled {c32.get('matched', 0)}/{c32.get('compared', 0)}"
        )
    tests = ops.tests  # PyTorch's test files (ops tests), when they ran
    if isinstance(tests, dict) and isinstance(tests.get("files"), dict):
        outcomes = [f.get("outcomes") or {} for f in tests["files"].values() if isinstance(f, dict)]
        passed = sum(int(o.get("passed", 0)) for o in outcomes)
        ran = sum(int(n) for o in outcomes for n in o.values())
        new = len(tests.get("new_failures") or ())
        out += f", test files {len(outcomes)}: {passed}/{ran} passed" + (f", {new} new failures" if new else "")
    return out


def rows(summary: Summary) -> List[List[str]]:
    """Table rows: cell, Python, torch, outcome, tests p/f/s/e, workloads p/f/s, op sweep,
    build s, duration s, when, commit."""
    out = []
    for r in summary.records:
        build = f"{r.build_seconds or 0:.0f}" + (" (cached)" if r.build_cached else "")
        out.append(
            [
                r.cell,
                r.python or "",
                r.torch or r.torch_claimed or "",
                r.outcome,
                _tests(r),
                _workloads(r),
                _op_sweep(r),
                build,
                f"{r.duration or 0:.0f}",
                r.timestamp[:16].replace("T", " "),
                (r.commit or "")[:7] + ("+" if r.dirty else ""),
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

    def line(cols: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |"

    return (
        "\n".join([line(body[0]), "| " + " | ".join("-" * w for w in widths) + " |"] + [line(r) for r in body[1:]])
        + "\n"
    )
