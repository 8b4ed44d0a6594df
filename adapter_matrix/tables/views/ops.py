"""The ``ops`` view: what PyTorch's OpInfo sweep found on the device, per torch line:
torch line (newest first) x op family, how many ops pass, fail and are unsupported, plus
the float32 match rate (ops matching CPU forward and backward) and the time.

It reads op-sweep records (:mod:`adapter_matrix.device.opsweep.record`, which decides every
status and count), or the nox cells' result records, whose ``ops`` summary keeps the same
counts per family (:class:`adapter_matrix.ci.record.OpsSummary`): any adapter whose cells
sweep (``Adapter(ops=OpSweep())``) gets this view from its results or evidence folder. Each
torch line shows one sweep, picked by the sweep records' own rule (newest full, else newest);
nothing here imports torch or re-judges a task.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ...ci.record import OpsSummary, RecordSet
from ...device.opsweep.record import per_line, torch_line
from ...device.opsweep.worker import FAMILIES
from ...matrix.model import Matrix
from ...matrix.queries import (
    Releases,
)
from ..table import Column, Table, TableCell, plain
from ..words import legend, word
from .common import NEEDS, Records, sweep_facts

__all__ = ["ops", "cell_sweeps"]


def cell_sweeps(records: RecordSet) -> List[Dict[str, Any]]:
    """The sweeps the cells' result records summed up per family, one per torch line
    (:func:`~adapter_matrix.device.opsweep.record.per_line`), each with the keys of a sweep
    record this view reads; records without those counts (no sweep, or from before they were
    kept) are left out."""
    found = []
    for record in records:
        summary = record.ops
        if not isinstance(summary, OpsSummary) or summary.families is None or record.torch_claimed is None:
            continue
        found.append(
            {
                "torch": record.torch or record.torch_claimed,
                "torch_line": torch_line(record.torch_claimed),
                "python": record.python,
                "mode": summary.mode,
                "seconds": summary.seconds or 0.0,
                "timestamp": record.timestamp,
                "ops": summary.ops or 0,
                "ok": summary.ok,
                "float32": summary.float32 or {},
                "families": summary.families,
                "cell": str(record.cell),
                "release": record.release,
            }
        )
    return per_line(found)


def _family_cell(counts: Optional[Dict[str, int]], lang: str) -> TableCell:
    if counts is None:
        return plain("")
    failed = counts["failed"] + counts["unexpected"]
    state = "ops_new" if counts["unexpected"] else "ops_known" if counts["failed"] else "ops_ok"
    title = word("ops_cell_about", lang).format(**counts)
    return plain(f"{counts['passed']}/{failed}/{counts['unsupported']}", state, title)


def _minutes(seconds: float) -> str:
    return f"{max(1, round(seconds / 60))} min"


def ops(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Any = None,
    records: Optional[Records] = None,
) -> Table:
    """torch line x op family: passed/failed/unsupported op counts of each line's sweep (from
    op-sweep records, or from the cells' result records)."""
    if records is None:
        raise ValueError(NEEDS.format(view="ops"))
    if isinstance(records, RecordSet):
        records = cell_sweeps(records)
        if not records:
            raise ValueError(
                "no result record there holds an op sweep's counts per family: add ops=OpSweep() to the "
                "noxfile's Adapter (docs/op-coverage.md) and run a cell, or point at op-sweep records"
            )
    families = [f for f in FAMILIES if any(f in r["families"] for r in records)]
    rows = []
    facts = []
    for record in records:
        f32 = record["float32"]
        rate = f"{f32['matched']}/{f32['compared']} ({f32['percent']:.1f}%)" if f32.get("compared") else ""
        skipped = sum(c["skipped"] for c in record["families"].values())
        row = [
            plain(record["torch_line"], title=f"torch {record['torch']}, Python {record['python']}"),
            plain(f"{record['ops']}" + (word("ops_skipped", lang).format(n=skipped) if skipped else "")),
            plain(rate),
        ]
        row += [_family_cell(record["families"].get(f), lang) for f in families]
        row.append(plain(_minutes(record["seconds"])))
        rows.append(tuple(row))
        facts.append(sweep_facts(record))
    columns = (
        (
            Column("torch", word("torch", lang)),
            Column("ops", word("ops_count", lang)),
            Column("float32", word("ops_float32", lang)),
        )
        + tuple(Column(f, f) for f in families)
        + (Column("time", word("ops_time", lang)),)
    )
    device = records[0].get("device", matrix.adapter.device) if records else matrix.adapter.device
    title = word("ops_title", lang).format(dist=matrix.adapter.distribution, device=device)
    data = {"adapter": matrix.adapter.distribution, "release": None, "sweeps": facts}
    return Table("ops", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
