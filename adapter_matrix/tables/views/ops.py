"""The ``ops`` view: what PyTorch's OpInfo sweep found on the device, per torch line:
torch line (newest first) x op family, how many ops pass, fail and are unsupported, plus
the float32 match rate (ops matching CPU forward and backward) and the time.

It reads op-sweep records (:mod:`adapter_matrix.device.opsweep.record`, which decides every
status and count); nothing here imports torch or re-judges a task.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ...device.opsweep.worker import FAMILIES
from ...matrix.model import Matrix
from ...matrix.queries import (
    Releases,
)
from ..table import Column, Table, TableCell, plain
from ..words import legend, word
from .common import NEEDS, SweepRecords, sweep_facts

__all__ = ["ops"]


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
    records: Optional[SweepRecords] = None,
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
    device = records[0]["device"] if records else matrix.adapter.device
    title = word("ops_title", lang).format(dist=matrix.adapter.distribution, device=device)
    data = {"adapter": matrix.adapter.distribution, "release": None, "sweeps": facts}
    return Table("ops", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
