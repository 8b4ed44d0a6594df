"""The ``op-tests`` view: PyTorch's own test files of a test pack on the device (``ops tests``),
per torch line and file, from the cells' result records (``ops.tests``): the tests by outcome,
how the file ended (completed, crashed in a test, timed out) and the new failures' test ids.
Each torch line shows the newest record that ran them; nothing here imports torch or re-judges
a test.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ...ci.record import OpsSummary, RecordSet
from ...device.opsweep.record import torch_line
from ...matrix.model import Matrix
from ...matrix.queries import (
    Releases,
)
from ..table import Column, Table, plain
from ..words import legend, word
from .common import NEEDS, Records

__all__ = ["op_tests"]

BROKEN = ("failed", "error", "crashed", "timeout")


def _newest_per_line(records: RecordSet) -> List[Dict[str, Any]]:
    newest: Dict[str, Dict[str, Any]] = {}
    for record in records:
        summary = record.ops
        tests = summary.tests if isinstance(summary, OpsSummary) else None
        if not isinstance(tests, dict) or record.torch_claimed is None:
            continue
        line = torch_line(record.torch_claimed)
        found = {"line": line, "torch": record.torch or record.torch_claimed, "when": record.timestamp or "", **tests}
        if line not in newest or found["when"] > newest[line]["when"]:
            newest[line] = found
    return sorted(
        newest.values(), key=lambda r: [int(p) if p.isdigit() else 0 for p in r["line"].split(".")], reverse=True
    )


def op_tests(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Any = None,
    records: Optional[Records] = None,
) -> Table:
    """torch line x test file: passed / failed / skipped tests, how the file ended, new failures."""
    if not isinstance(records, RecordSet):
        raise ValueError(NEEDS.format(view="op-tests"))
    lines = _newest_per_line(records)
    if not lines:
        raise ValueError(
            "no result record there holds PyTorch's test files (ops tests): add op_tests=OpTests() to the noxfile's "
            "Adapter and run a cell with ADAPTER_MATRIX_OPS_TESTS=on (docs/op-coverage.md)"
        )
    rows = []
    facts = []
    for found in lines:
        new = list(found.get("new_failures") or ())
        for name, f in (found.get("files") or {}).items():
            outcomes = f.get("outcomes") or {}
            broken = sum(int(outcomes.get(k, 0)) for k in BROKEN)
            state = "ops_new" if f.get("new_failures") else "ops_known" if broken else "ops_ok"
            rows.append(
                (
                    plain(found["line"], title=f"torch {found['torch']}"),
                    plain(name),
                    plain(
                        f"{outcomes.get('passed', 0)}/{broken}/{outcomes.get('skipped', 0) + outcomes.get('xfailed', 0)}",
                        state,
                    ),
                    plain(str(f.get("ended", ""))),
                )
            )
            facts.append({"torch_line": found["line"], "file": name, "outcomes": outcomes, "ended": f.get("ended")})
        if new:
            rows.append(
                (plain(found["line"]), plain(word("opt_new", lang)), plain(", ".join(new), "ops_new"), plain(""))
            )
    columns = (
        Column("torch", word("torch", lang)),
        Column("file", word("opt_file", lang)),
        Column("tests", word("opt_tests", lang)),
        Column("ended", word("opt_ended", lang)),
    )
    title = word("op_tests_title", lang).format(dist=matrix.adapter.distribution, device=matrix.adapter.device)
    data = {"adapter": matrix.adapter.distribution, "release": None, "files": facts}
    return Table("op-tests", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
