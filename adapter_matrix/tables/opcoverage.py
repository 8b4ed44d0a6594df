"""The op-coverage views: what PyTorch's OpInfo sweep found on the device, per torch line.

``ops``
    torch line (newest first) x op family: how many ops pass, fail and are unsupported,
    plus the float32 match rate (ops matching CPU forward and backward) and the time.
``op-dtypes``
    torch line x dtype and direction (forward, backward, module): how many tasks pass and
    fail, so a reader sees at once whether, say, bfloat16 or backward holds up on a line.
``op-failures``
    the ops that do not pass, with the torch lines, the dtypes and directions they fail
    in, and why (the expectations' reason, or the error when unexplained); ops that fail
    alike share a row.

Both read op-sweep records (:mod:`adapter_matrix.device.opsweep.record`, which decides
every status and count); nothing here imports torch or re-judges a task.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..device.opsweep.expected import DTYPES, KINDS
from ..device.opsweep.worker import FAMILIES
from ..matrix.model import Matrix
from ..matrix.queries import Releases
from .table import Column, Span, Table, TableCell, plain
from .words import legend, word

__all__ = ["ops", "op_dtypes", "op_failures"]

NEEDS = "the {view} view needs op-sweep records: give --results DIR (or results=DIR in a marker)"


def _family_cell(counts: Optional[Dict[str, int]], lang: str) -> TableCell:
    if counts is None:
        return plain("")
    failed = counts["failed"] + counts["unexpected"]
    state = "ops_new" if counts["unexpected"] else "ops_known" if counts["failed"] else "ops_ok"
    title = word("ops_cell_about", lang).format(**counts)
    return plain(f"{counts['passed']}/{failed}/{counts['unsupported']}", state, title)


def _sweep_facts(record: Dict[str, Any]) -> Dict[str, Any]:
    """What the JSON format of the ops and op-dtypes views carries of one sweep record."""
    keys = ("torch", "torch_line", "python", "device", "mode", "seconds", "timestamp", "ops", "tasks_run", "ok",
            "float32", "families", "by_dtype")
    return {key: record[key] for key in keys}


def _minutes(seconds: float) -> str:
    return f"{max(1, round(seconds / 60))} min"


def ops(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Any = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """torch line x op family: passed/failed/unsupported op counts of each line's sweep."""
    if records is None:
        raise ValueError(NEEDS.format(view="ops"))
    families = [f for f in FAMILIES if any(f in r["families"] for r in records)]
    rows = []
    facts = []
    for record in records:
        f32 = record["float32"]
        rate = f"{f32['matched']}/{f32['compared']} ({f32['percent']:.1f}%)" if f32["compared"] else ""
        skipped = sum(c["skipped"] for c in record["families"].values())
        row = [plain(record["torch_line"], title=f"torch {record['torch']}, Python {record['python']}"),
               plain(f"{record['ops']}" + (word("ops_skipped", lang).format(n=skipped) if skipped else "")),
               plain(rate)]
        row += [_family_cell(record["families"].get(f), lang) for f in families]
        row.append(plain(_minutes(record["seconds"])))
        rows.append(tuple(row))
        facts.append(_sweep_facts(record))
    columns = (
        (Column("torch", word("torch", lang)), Column("ops", word("ops_count", lang)), Column("float32", word("ops_float32", lang)))
        + tuple(Column(f, f) for f in families)
        + (Column("time", word("ops_time", lang)),)
    )
    device = records[0]["device"] if records else matrix.adapter.device
    title = word("ops_title", lang).format(dist=matrix.adapter.distribution, device=device)
    data = {"adapter": matrix.adapter.distribution, "release": None, "sweeps": facts}
    return Table("ops", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)


def _task_state(record: Dict[str, Any], task: str, failed: int) -> str:
    """The legend state of one dtype/kind cell: the worst of the failures touching it."""
    states = {f["state"] for f in record["failures"] if task in f["tasks"]}
    for state, shown in (("unexpected", "ops_new"), ("failed", "ops_known"), ("unsupported", "ops_unsupported")):
        if state in states:
            return shown
    return "ops_new" if failed else "ops_ok"  # a failure the record does not list is not explained


def op_dtypes(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Any = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """torch line x (dtype, direction): passed/failed task counts of each line's sweep
    (a crash or a timeout counts as failed; the cell's title has the breakdown)."""
    if records is None:
        raise ValueError(NEEDS.format(view="op-dtypes"))
    tasks = [(d, k) for d in DTYPES for k in KINDS if any(k in r["by_dtype"].get(d, {}) for r in records)]
    rows = []
    facts = []
    for record in records:
        row = [plain(record["torch_line"], title=f"torch {record['torch']}, Python {record['python']}")]
        for dtype, kind in tasks:
            counts = record["by_dtype"].get(dtype, {}).get(kind)
            if counts is None:
                row.append(plain(""))
                continue
            failed = counts["failed"] + counts["crashed"] + counts["timeout"]
            title = word("opd_cell_about", lang).format(**counts)
            row.append(plain(f"{counts['passed']}/{failed}", _task_state(record, f"{dtype}/{kind}", failed), title))
        rows.append(tuple(row))
        facts.append(_sweep_facts(record))
    columns = (Column("torch", word("torch", lang)),) + tuple(Column(f"{d}/{k}", f"{d} {word(f'opd_{k}', lang)}") for d, k in tasks)
    device = records[0]["device"] if records else matrix.adapter.device
    title = word("op_dtypes_title", lang).format(dist=matrix.adapter.distribution, device=device)
    data = {"adapter": matrix.adapter.distribution, "release": None, "sweeps": facts}
    return Table("op-dtypes", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)


def _tasks_text(tasks: Sequence[str]) -> str:
    """``forward: all; backward: float32, float64`` from ``["float32/forward", ...]``."""
    by_kind: "OrderedDict[str, List[str]]" = OrderedDict((k, []) for k in KINDS)
    for task in tasks:
        dtype, kind = task.split("/")
        by_kind[kind].append(dtype)
    parts = []
    for kind, dtypes in by_kind.items():
        if dtypes:
            parts.append(f"{kind}: " + ("all" if set(dtypes) >= set(DTYPES) else ", ".join(d for d in DTYPES if d in dtypes)))
    return "; ".join(parts)


def op_failures(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Any = None,
    records: Optional[Sequence[Dict[str, Any]]] = None,
) -> Table:
    """One row per set of ops that do not pass alike: where, in what, and why."""
    if records is None:
        raise ValueError(NEEDS.format(view="op-failures"))
    groups: "OrderedDict[Tuple[Any, ...], Dict[str, Any]]" = OrderedDict()
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
    rows_of: "OrderedDict[Tuple[Any, ...], List[Dict[str, Any]]]" = OrderedDict()
    for group in sorted(groups.values(), key=lambda g: (FAMILIES.index(g["family"]) if g["family"] in FAMILIES else 99, g["op"])):
        alike = (group["family"], group["state"], group["why"], tuple(group["lines"]), tuple(group["tasks"]))
        rows_of.setdefault(alike, []).append(group)
    rows = []
    facts = []
    for same in rows_of.values():
        first = same[0]
        lines = word("ops_every_line", lang) if first["lines"] == swept and len(swept) > 1 else ", ".join(first["lines"])
        why = first["why"] + (f" (issue {first['issue']})" if first.get("issue") and first["state"] != "unexpected" else "")
        state = {"unexpected": "ops_new", "failed": "ops_known", "unsupported": "ops_unsupported"}[first["state"]]
        ops_cell: List[Span] = []
        for group in same:
            ops_cell += ([Span(", ")] if ops_cell else []) + [Span(group["op"], code=True)]
        rows.append((TableCell(tuple(ops_cell)), plain(first["family"]), plain(lines), plain(_tasks_text(first["tasks"])),
                     plain(word(state, lang), state), plain(why)))
        facts.append({"ops": [g["op"] for g in same], "family": first["family"], "torch_lines": first["lines"], "tasks": first["tasks"],
                      "state": first["state"], "outcome": first["outcome"], "reason": first["reason"], "issue": first.get("issue"),
                      "error": first["error"]})
    keys = ("op", "family", "torch", "tasks", "status", "why")
    columns = tuple(Column(k, word("torch" if k == "torch" else f"opf_{k}", lang)) for k in keys)
    title = word("op_failures_title", lang).format(dist=matrix.adapter.distribution)
    data = {"adapter": matrix.adapter.distribution, "release": None, "failures": facts}
    return Table("op-failures", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
