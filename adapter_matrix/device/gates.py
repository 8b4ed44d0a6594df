"""The C++ version gates of an adapter, read from its gates header.

A gate is a ``#define NAME ADAPTER_TORCH_AT_LEAST(M, m)`` (or its negation) in the
adapter's ``csrc/version_gates.h``. Reading the header, rather than keeping a second
list, lets ``probe`` say which gates a torch release turns on and ``shims report`` find
gates that are constant for every supported torch (dead code once the floor rises).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List

from packaging.version import Version

__all__ = ["Gate", "read_gates", "HEADER"]

HEADER = "version_gates.h"
_DEFINE = re.compile(
    r"^#define\s+(?P<name>ADAPTER_\w+)\s+\(?(?P<neg>!?)\s*ADAPTER_TORCH_AT_LEAST\((?P<major>\d+),\s*(?P<minor>\d+)\)\)?\s*$",
    re.M,
)


@dataclass(frozen=True)
class Gate:
    """``name`` is on for torch >= ``since`` (or, when ``negated``, below it)."""

    name: str
    since: Version
    negated: bool
    line: int

    def on(self, torch: Version) -> bool:
        at_least = (torch.major, torch.minor) >= (self.since.major, self.since.minor)
        return at_least != self.negated

    def describe(self) -> str:
        return f"{self.name} ({'before' if self.negated else 'from'} torch {self.since})"


def read_gates(csrc: Path) -> List[Gate]:
    """Every gate defined in ``csrc/version_gates.h`` (empty if the adapter has none)."""
    path = Path(csrc) / HEADER
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    gates = []
    for m in _DEFINE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        gates.append(Gate(m["name"], Version(f"{m['major']}.{m['minor']}"), bool(m["neg"]), line))
    return gates
