"""The ``op-dtypes`` view: torch line x dtype and direction (forward, backward, module):
how many tasks of the OpInfo sweep pass and fail, so a reader sees at once whether, say,
bfloat16 or backward holds up on a line.

It reads op-sweep records (:mod:`adapter_matrix.device.opsweep.record`, which decides every
status and count); nothing here imports torch or re-judges a task.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ...ci.record import RecordSet
from ...device.opsweep.expected import DTYPES, KINDS
from ...matrix.model import Matrix
from ...matrix.queries import (
    Releases,
)
from ..table import Column, Table, plain
from ..words import legend, word
from .common import NEEDS, Records, sweep_facts

__all__ = ["op_dtypes"]


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
    records: Optional[Records] = None,
) -> Table:
    """torch line x (dtype, direction): passed/failed task counts of each line's sweep
    (a crash or a timeout counts as failed; the cell's title has the breakdown)."""
    if records is None or isinstance(records, RecordSet):
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
        facts.append(sweep_facts(record))
    columns = (Column("torch", word("torch", lang)),) + tuple(
        Column(f"{d}/{k}", f"{d} {word(f'opd_{k}', lang)}") for d, k in tasks
    )
    device = records[0]["device"] if records else matrix.adapter.device
    title = word("op_dtypes_title", lang).format(dist=matrix.adapter.distribution, device=device)
    data = {"adapter": matrix.adapter.distribution, "release": None, "sweeps": facts}
    return Table("op-dtypes", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
