"""What a cell's record will say, gathered while the cell runs: one declared field each.

:class:`adapter_matrix.nox.cellrun.CellRun` is this state with the means to run the cell;
:mod:`adapter_matrix.nox.cellrecord` writes it. Hooks read these fields, and may set
``refusals`` (a companion refusal probe's findings).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..ci.install import InstallAttempt
from ..ci.record import BuildSeen, CompanionRefusal, OpsSummary, TreeState
from ..ci.suites import Suites


@dataclass(eq=False)
class CellState:
    """The record's inputs, each set by the step that learns it."""

    # the cell's own `check --json` document (the second one, after the load: the record's binary)
    check: Optional[Dict[str, object]] = None
    # the native part's build step: `source_hash`, `build_seconds`, `compiled` (a hook may say more)
    build: Optional[Dict[str, Any]] = None
    # each project built against the cell's torch, in order: `project`, `version`, `source_hash`, ...
    builds: List[BuildSeen] = field(default_factory=list)
    suites: Optional[Suites] = None  # the suite groups that count, judged after the tests
    ops: Optional[OpsSummary] = None  # the op sweep's summary, once it is done
    refusals: List[CompanionRefusal] = field(default_factory=list)  # a companion refusal probe's findings (hooks)
    companions_unavailable: Dict[str, str] = field(default_factory=dict)  # companion name -> why the index had none
    attempt: Optional[InstallAttempt] = None  # how torch went in: its source, options, variant and companions
    tree: TreeState = field(default_factory=TreeState)  # the sources it ran on (ci/evidence.py's tree_state)
    phases: Dict[str, float] = field(default_factory=dict)  # wall seconds of each phase
    phase_cpu: Dict[str, float] = field(default_factory=dict)  # CPU seconds of each phase
