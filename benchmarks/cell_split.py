"""Where a cell's time goes: its phases, its suite groups and its costliest tests.

    python benchmarks/cell_split.py results/py3.11-torch2.13.json       # one cell, in detail
    python benchmarks/cell_split.py results/*.json --budget 300          # cells side by side, their median

Reads what a cell leaves in ``results/`` (nothing is run): the result record's ``phases``
(wall seconds) and ``phase_cpu`` (CPU seconds of the session and every command it ran),
the op sweep's own timings (``ops.seconds``, ``ops.compiled.seconds``), and the cell's
pytest report ``results/junit/<cell>.xml``: each test's wall time and, from the
conformance suite's isolation, its ``cpu_seconds`` (the test's forked process and
whatever it started: ranks, interpreters, compilers).

Wall time is what a cell costs on this machine at that moment; on a shared machine it
grows with the load (other cells, other work), CPU time does not. The CPU time of a cell
on an idle 2-core machine bounds its wall time from below at CPU / 2, so ``cpu/2`` is
printed beside the wall time: a phase whose wall time is far above it waited for the
machine (or for the network, for ``install``). Read the shares and ratios of one record;
compare records of one machine at one load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from adapter_matrix.ci.suites import suite_group  # noqa: E402

CORES = 2  # the development machines (docs/testing.md states the budget on them)


@dataclass
class Test:
    name: str
    group: str
    wall: float
    cpu: Optional[float]  # None: a report without the isolation's property
    outcome: str


@dataclass
class Cell:
    cell: str
    wall: float  # the record's duration: the sum of its phases
    phases: Dict[str, float]
    phase_cpu: Dict[str, float]
    ops_eager: Optional[float]
    ops_compiled: Optional[float]
    tests: List[Test] = field(default_factory=list)

    @property
    def cpu(self) -> Optional[float]:
        return sum(self.phase_cpu.values()) if self.phase_cpu else None

    def groups(self) -> Dict[str, List[Test]]:
        out: Dict[str, List[Test]] = {}
        for t in self.tests:
            out.setdefault(t.group, []).append(t)
        return out


def read_junit(path: str) -> List[Test]:
    tests = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        group = props.get("suite") or suite_group(case.get("file") or "tests/conformance/-")
        cpu = props.get("cpu_seconds")
        outcome = next((tag for tag in ("failure", "error", "skipped") if case.find(tag) is not None), "passed")
        tests.append(
            Test(
                f"{case.get('classname', '')}::{case.get('name', '')}",
                group,
                float(case.get("time") or 0.0),
                float(cpu) if cpu is not None else None,
                outcome,
            )
        )
    return tests


def read_cell(record_path: str, junit: Optional[str] = None) -> Cell:
    with open(record_path, encoding="utf-8") as fh:
        record = json.load(fh)
    ops = record.get("ops") or {}
    compiled = ops.get("compiled") or {}
    cell = Cell(
        record["cell"],
        float(record.get("duration") or 0.0),
        dict(record.get("phases") or {}),
        dict(record.get("phase_cpu") or {}),
        ops.get("seconds"),
        compiled.get("seconds"),
    )
    junit = junit or os.path.join(os.path.dirname(os.path.abspath(record_path)), "junit", f"{cell.cell}.xml")
    if os.path.exists(junit):
        cell.tests = read_junit(junit)
    return cell


def _num(value: Optional[float], width: int = 7) -> str:
    return f"{value:{width}.1f}" if value is not None else " " * (width - 1) + "-"


def report(cell: Cell, top: int, budget: Optional[float]) -> None:
    cpu = cell.cpu
    load = f", {cpu:.0f} s CPU ({cpu / cell.wall:.2f} cores busy on average)" if cpu else ""
    print(f"cell {cell.cell}: {cell.wall:.0f} s wall{load}")
    if budget is not None:
        verdict = "within" if cell.wall <= budget else "OVER"
        print(
            f"budget {budget:.0f} s: {verdict} (wall); CPU/{CORES} = {_num(cpu / CORES if cpu else None, 1).strip()} s"
        )
    print(f"{'phase':<28}{'wall':>8}{'share':>7}{'cpu':>8}{'cpu/2':>8}")
    for name, wall in cell.phases.items():
        c = cell.phase_cpu.get(name)
        print(
            f"{name:<28}{wall:8.1f}{wall / cell.wall:7.0%}{_num(c, 8)}{_num(c / CORES if c is not None else None, 8)}"
        )
        if name == "tests" and cell.tests:
            for group, tests in sorted(cell.groups().items(), key=lambda kv: -sum(t.wall for t in kv[1])):
                w = sum(t.wall for t in tests)
                cs = [t.cpu for t in tests if t.cpu is not None]
                c = sum(cs) if cs else None
                label = f"  {group} ({len(tests)})"
                print(f"{label:<28}{w:8.1f}{w / cell.wall:7.0%}{_num(c, 8)}{_num(c / CORES if c else None, 8)}")
        if name == "ops":
            for label, seconds in (("  eager sweep", cell.ops_eager), ("  compiled sample", cell.ops_compiled)):
                if seconds is not None:
                    print(f"{label:<28}{seconds:8.1f}{seconds / cell.wall:7.0%}")
    if cell.tests and top:
        by = "cpu" if any(t.cpu is not None for t in cell.tests) else "wall"
        ranked = sorted(cell.tests, key=lambda t: -((t.cpu or 0.0) if by == "cpu" else t.wall))[:top]
        print(f"\nthe {len(ranked)} costliest of {len(cell.tests)} tests (by {by}):")
        print(f"{'wall':>8}{'cpu':>8}  test")
        for t in ranked:
            mark = "" if t.outcome == "passed" else f"  [{t.outcome}]"
            print(f"{t.wall:8.1f}{_num(t.cpu, 8)}  {t.name}{mark}")


def table(cells: Sequence[Cell], budget: Optional[float]) -> None:
    names = sorted({name for c in cells for name in c.phases})
    print(f"{'cell':<20}{'wall':>7}{'cpu':>7}" + "".join(f"{n:>9}" for n in names))
    for c in cells:
        print(f"{c.cell:<20}{c.wall:7.0f}{_num(c.cpu, 7)}" + "".join(_num(c.phases.get(n), 9) for n in names))
    walls = [c.wall for c in cells]
    cpus = [c.cpu for c in cells if c.cpu]
    median = statistics.median(walls)
    line = f"median of {len(cells)} cells: {median:.0f} s wall"
    if cpus:
        line += f", {statistics.median(cpus):.0f} s CPU"
    if budget is not None:
        line += f"; budget {budget:.0f} s: {'within' if median <= budget else 'OVER'}"
    print(line)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", help="result records (results/<cell>.json)")
    parser.add_argument(
        "--junit", help="the cell's pytest report (default: results/junit/<cell>.xml beside the record)"
    )
    parser.add_argument("--top", type=int, default=12, help="how many of the costliest tests to list")
    parser.add_argument("--budget", type=float, help="seconds a cell may take: say whether it (the median) is within")
    parser.add_argument("--json", action="store_true", help="the split as JSON")
    args = parser.parse_args(argv)
    cells = [read_cell(p, args.junit if len(args.records) == 1 else None) for p in args.records]
    if args.json:
        out = []
        for c in cells:
            groups = {
                g: {
                    "tests": len(ts),
                    "wall": round(sum(t.wall for t in ts), 2),
                    "cpu": round(sum(t.cpu or 0.0 for t in ts), 2),
                }
                for g, ts in c.groups().items()
            }
            out.append(
                {
                    "cell": c.cell,
                    "wall": c.wall,
                    "cpu": c.cpu,
                    "phases": c.phases,
                    "phase_cpu": c.phase_cpu,
                    "groups": groups,
                    "ops": {"eager": c.ops_eager, "compiled": c.ops_compiled},
                }
            )
        json.dump(out, sys.stdout, indent=2)
        print()
    elif len(cells) == 1:
        report(cells[0], args.top, args.budget)
    else:
        table(cells, args.budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
