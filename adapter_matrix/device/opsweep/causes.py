"""A sweep's disagreements grouped by cause, so that a first sweep of a new adapter reads.

A device without autograd kernels fails every backward task, one without complex dtypes
every complex64 task: thousands of lines that say one thing. :func:`digest` reads a sweep
record and returns, first, the dtypes and kinds where nothing passed (a missing
capability, with its commonest error), then the disagreements grouped by their error
with the op names, numbers and sample indexes taken out, each with its count per family,
its dtypes and kinds and a few of its ops. The record itself keeps every task.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Tuple, TypedDict

from .record import SweepRecord

__all__ = ["CauseGroup", "Digest", "cause_of", "digest"]

BROKEN = ("failed", "crashed", "timeout")
CAUSE_CHARS = 140
_SAMPLE = re.compile(r"^sample \d+: ")
_QUOTED_OP = re.compile(r"'(aten|prims|[a-z_]+)::[^']*'")
_NUMBER = re.compile(r"(?<![A-Za-z_])[-+]?\d+(\.\d+)?(e[-+]?\d+)?")


class CauseGroup(TypedDict):
    """The disagreeing tasks of one cause: how many, per family, dtype and kind (commonest
    first), how many ops, the first few of them."""

    cause: str
    tasks: int
    families: Dict[str, int]
    dtypes: Dict[str, int]
    kinds: Dict[str, int]
    ops: int
    examples: List[str]


class Digest(TypedDict):
    """What :func:`digest` finds in a record."""

    absent: List[Dict[str, object]]  # {"dtype" or "kind": its name, "tasks": failing tasks, "cause": the commonest}
    causes: List[CauseGroup]


def cause_of(error: object) -> str:
    """An error with what varies between ops taken out: the sample's index, the quoted
    operator (``'aten::add.out'``), numbers; cut to one short line."""
    text = _SAMPLE.sub("", str(error or "no error")).replace("structure: ", "")
    text = _QUOTED_OP.sub(r"'\1::…'", text)
    text = _NUMBER.sub("N", text)
    return text if len(text) <= CAUSE_CHARS else text[: CAUSE_CHARS - 1] + "…"


def _counts(items: Counter[str]) -> Dict[str, int]:
    return dict(sorted(items.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class _Group:
    cause: str
    tasks: int = 0
    families: Counter[str] = field(default_factory=Counter)
    dtypes: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    ops: List[str] = field(default_factory=list)

    def done(self, examples: int) -> CauseGroup:
        return {
            "cause": self.cause,
            "tasks": self.tasks,
            "families": _counts(self.families),
            "dtypes": _counts(self.dtypes),
            "kinds": _counts(self.kinds),
            "ops": len(self.ops),
            "examples": self.ops[:examples],
        }


def digest(record: SweepRecord, examples: int = 3) -> Digest:
    """``absent``: each dtype (all kinds) and each kind (all dtypes) where tasks ran and
    none passed, with its task count and commonest cause; ``causes``: the disagreeing
    tasks grouped by :func:`cause_of`, largest first."""
    tasks = [t for t in record.get("tasks", ()) if t.get("problem")]
    absent: List[Dict[str, object]] = []
    broken = [t for t in record.get("tasks", ()) if t.get("outcome") in BROKEN]
    by_dtype = record.get("by_dtype", {})
    totals: Dict[Tuple[str, str], Counter[str]] = {}
    for dtype, kinds in by_dtype.items():
        for kind, counts in kinds.items():
            for key in (("dtype", dtype), ("kind", kind)):
                totals.setdefault(key, Counter()).update(counts)
    for (axis, value), counts in sorted(totals.items()):  # axis: dtype or kind
        ran = sum(counts.values()) - counts.get("skipped", 0)
        failing = sum(counts.get(o, 0) for o in BROKEN)
        if ran and not counts.get("passed") and failing:
            mine = Counter(cause_of(t.get("error")) for t in broken if t.get(axis) == value)
            absent.append({axis: value, "tasks": failing, "cause": mine.most_common(1)[0][0] if mine else "no error"})
    groups: Dict[str, _Group] = {}
    for t in tasks:
        cause = cause_of(t.get("error")) if t.get("outcome") != "passed" else "passes now: " + str(t["problem"])
        group = groups.setdefault(cause, _Group(cause))
        group.tasks += 1
        group.families[t.get("family", "other")] += 1
        group.dtypes[t["dtype"]] += 1  # a task's JSON always has its dtype and kind (Task.to_json)
        group.kinds[t["kind"]] += 1
        if t["op"] not in group.ops:
            group.ops.append(t["op"])
    causes = [g.done(examples) for g in sorted(groups.values(), key=lambda g: (-g.tasks, g.cause))]
    return {"absent": absent, "causes": causes}
