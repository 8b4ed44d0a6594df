"""Result records of test sessions: read, aggregate, and tell whether everything passed.

A record is the JSON file a ``device(...)`` session writes (``adapter_matrix.ci.cells``):
the full one in ``results/``, its compact evidence copy in ``evidence/`` (both read the
same way). Records are read recursively, so a folder of downloaded CI artifacts works as
is, and several folders merge: the newest record of each cell wins.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Union

from ..files import JSONFileError, json_files

__all__ = ["RecordError", "Summary", "read_records", "summarize", "render_markdown"]


class RecordError(ValueError):
    """A folder without records, or a record that is not one."""


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


def read_records(folders: Union[str, Sequence[str]], allow_empty: bool = False) -> List[Dict[str, Any]]:
    """Every result record under ``folders``: the newest per (cell, adapter release), sorted by cell.

    ``RecordError`` for a missing folder, a file that is not JSON, or (unless
    ``allow_empty``) no records at all.
    """
    folders = [folders] if isinstance(folders, str) else list(folders)
    for folder in folders:
        if not os.path.isdir(folder):
            raise RecordError(f"{folder}: no such folder")
    by_cell: Dict[Any, Dict[str, Any]] = {}
    try:
        for path, record in (entry for folder in folders for entry in json_files(folder)):
            if not isinstance(record, dict) or "cell" not in record or "outcome" not in record:
                continue  # other JSON files (op-sweep records, junit conversions) are not ours
            record["_path"] = path
            key = (record["cell"], record.get("release"))  # one release's evidence never hides another's
            old = by_cell.get(key)
            if old is None or record.get("timestamp", "") > old.get("timestamp", ""):
                by_cell[key] = record
    except JSONFileError as exc:
        raise RecordError(f"{exc.path}: not a result record ({exc.reason})") from None
    if not by_cell and not allow_empty:
        raise RecordError(f"{', '.join(folders)}: no result records")
    return [by_cell[k] for k in sorted(by_cell, key=lambda k: (_cell_key(k[0]), str(k[1])))]


def _cell_key(cell: str) -> tuple:
    """Sort py3.9-torch2.10 after py3.13-torch2.9: by torch line, then Python."""
    try:
        py, torch = cell.split("-torch", 1)
        t = tuple(int(x) for x in torch.split("-")[0].split("."))
        p = tuple(int(x) for x in py[2:].rstrip("t").split("."))
        return (t, p, cell)
    except ValueError:
        return ((999,), (999,), cell)


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
    """How much of the op sweep ran: ``full`` with the float32 match rate, ``sample``, or "-"."""
    ops = record.get("ops")
    if not isinstance(ops, dict):  # a record from before the summary was kept: only the suite counts
        return "ran" if (record.get("suites") or {}).get("ops") else "-"
    f32 = ops.get("float32") or {}
    if ops.get("mode") == "full" and f32.get("compared"):
        return f"full, f32 {f32.get('matched', 0)}/{f32['compared']}"
    return str(ops.get("mode") or "-")


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


HEADERS = ["cell", "Python", "torch", "outcome", "tests p/f/s/e", "workloads p/f/s", "op sweep", "build s", "duration s", "when (UTC)", "commit"]


def render_markdown(summary: Summary) -> str:
    body = [HEADERS] + rows(summary)
    widths = [max(len(r[i]) for r in body) for i in range(len(HEADERS))]
    line = lambda cols: "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |"  # noqa: E731
    return "\n".join([line(body[0]), "| " + " | ".join("-" * w for w in widths) + " |"] + [line(r) for r in body[1:]]) + "\n"
