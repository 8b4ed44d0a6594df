"""The ``op-failures`` view: the ops of the OpInfo sweep that do not pass, with the torch
lines, the dtypes and directions they fail in, and why (the expectations' reason, or the
error when unexplained); ops that fail alike share a row.

It reads op-sweep records (:mod:`adapter_matrix.device.opsweep.record`, which decides every
status and count); nothing here imports torch or re-judges a task.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...ci.record import RecordSet
from ...device.opsweep.expected import DTYPES, KINDS
from ...device.opsweep.worker import FAMILIES
from ...matrix.model import Matrix
from ...matrix.queries import (
    Releases,
)
from ..table import Column, Span, Table, TableCell, plain
from ..words import legend, word
from .common import NEEDS, Records

__all__ = ["op_failures"]


def _tasks_text(tasks: Sequence[str]) -> str:
    """``forward: all; backward: float32, float64`` from ``["float32/forward", ...]``."""
    by_kind: OrderedDict[str, List[str]] = OrderedDict((k, []) for k in KINDS)
    for task in tasks:
        dtype, kind = task.split("/")
        by_kind[kind].append(dtype)
    parts = []
    for kind, dtypes in by_kind.items():
        if dtypes:
            parts.append(
                f"{kind}: " + ("all" if set(dtypes) >= set(DTYPES) else ", ".join(d for d in DTYPES if d in dtypes))
            )
    return "; ".join(parts)


def op_failures(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Any = None,
    records: Optional[Records] = None,
) -> Table:
    """One row per set of ops that do not pass alike: where, in what, and why."""
    if records is None or isinstance(records, RecordSet):
        raise ValueError(NEEDS.format(view="op-failures"))
    groups: OrderedDict[Tuple[Any, ...], Dict[str, Any]] = OrderedDict()
    for record in reversed(list(records)):  # oldest line first, so each row lists its lines in order
        for failure in record["failures"]:
            if failure["state"] == "unexpected":  # what disagrees, not the entry's reason
                why = f"{failure['problem']}: {failure['error'] or ''}".rstrip(": ")
            else:
                why = failure["reason"]
            key = (failure["op"], failure["state"], why, tuple(failure["tasks"]))
            group = groups.setdefault(key, dict(failure, why=why, lines=[]))
            group["lines"].append(record["torch_line"])
    swept = [r["torch_line"] for r in reversed(list(records))]
    # ops that fail alike (same family, lines, dtypes and reason) share a row
    rows_of: OrderedDict[Tuple[Any, ...], List[Dict[str, Any]]] = OrderedDict()
    for group in sorted(
        groups.values(), key=lambda g: (FAMILIES.index(g["family"]) if g["family"] in FAMILIES else 99, g["op"])
    ):
        alike = (group["family"], group["state"], group["why"], tuple(group["lines"]), tuple(group["tasks"]))
        rows_of.setdefault(alike, []).append(group)
    rows = []
    facts = []
    for same in rows_of.values():
        first = same[0]
        lines = (
            word("ops_every_line", lang) if first["lines"] == swept and len(swept) > 1 else ", ".join(first["lines"])
        )
        why = first["why"] + (
            f" (issue {first['issue']})" if first.get("issue") and first["state"] != "unexpected" else ""
        )
        state = {"unexpected": "ops_new", "failed": "ops_known", "unsupported": "ops_unsupported"}[first["state"]]
        ops_cell: List[Span] = []
        for group in same:
            ops_cell += ([Span(", ")] if ops_cell else []) + [Span(group["op"], code=True)]
        rows.append(
            (
                TableCell(tuple(ops_cell)),
                plain(first["family"]),
                plain(lines),
                plain(_tasks_text(first["tasks"])),
                plain(word(state, lang), state),
                plain(why),
            )
        )
        facts.append(
            {
                "ops": [g["op"] for g in same],
                "family": first["family"],
                "torch_lines": first["lines"],
                "tasks": first["tasks"],
                "state": first["state"],
                "outcome": first["outcome"],
                "reason": first["reason"],
                "issue": first.get("issue"),
                "error": first["error"],
            }
        )
    keys = ("op", "family", "torch", "tasks", "status", "why")
    columns = tuple(Column(k, word("torch" if k == "torch" else f"opf_{k}", lang)) for k in keys)
    title = word("op_failures_title", lang).format(dist=matrix.adapter.distribution)
    data = {"adapter": matrix.adapter.distribution, "release": None, "failures": facts}
    return Table("op-failures", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
