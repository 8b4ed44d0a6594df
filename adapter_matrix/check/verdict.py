"""The verdict for an environment and the fixes that reach a supported cell.

``check`` and the runtime guard ask :func:`verdict`; it reads the model's cells through
:mod:`adapter_matrix.matrix.queries` and never re-decides a cell's status.
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.diagnostics import Mark
from ..matrix.model import Matrix, PythonVersion, Release, ShimRange, Status, TorchLine
from ..matrix.queries import Cell, cell_status, cells, claimed_patches, shim_for

__all__ = ["Outcome", "Environment", "Fix", "Verdict", "verdict", "torch_requirement"]


class Outcome(str, enum.Enum):
    """The answer of ``check``; each has a documented exit code."""

    SUPPORTED = "supported"
    EXPERIMENTAL = "experimental"
    DEPRECATED = "deprecated"
    EOL = "eol"
    BROKEN = "broken"
    UNSUPPORTED = "unsupported"

    @property
    def exit_code(self) -> int:
        """0 supported; 3 works with a warning; 1 unsupported or known broken."""
        if self is Outcome.SUPPORTED:
            return 0
        if self in (Outcome.EXPERIMENTAL, Outcome.DEPRECATED, Outcome.EOL):
            return 3
        return 1

    def __str__(self) -> str:
        return self.value

class Environment(NamedTuple):
    """What is installed (or what a what-if question assumes)."""

    python: PythonVersion
    python_full: str = ""
    implementation: str = "cpython"
    torch: Optional[Version] = None
    adapter: Optional[Version] = None
    dimensions: Tuple[Tuple[str, Optional[Version]], ...] = ()

    def dimension(self, name: str) -> Optional[Version]:
        return dict(self.dimensions).get(name)

class Fix(NamedTuple):
    """A supported combination reachable from an environment, as commands to paste."""

    summary: str
    commands: Tuple[str, ...]
    changes: Tuple[str, ...]
    cell: Cell

class Verdict(NamedTuple):
    """The answer for one environment, with the rows that decided it."""

    outcome: Outcome
    reasons: Tuple[str, ...]
    release: Optional[Release] = None
    line: Optional[TorchLine] = None
    shim: Optional[ShimRange] = None
    decided_by: Tuple[Mark, ...] = ()
    assumptions: Tuple[str, ...] = ()
    fixes: Tuple[Fix, ...] = ()

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code

def torch_requirement(release: Release, line: TorchLine) -> str:
    """The pip requirement for ``line`` under ``release``: the whole line when every known
    patch is claimed, else the newest claimed patch exactly."""
    patches = claimed_patches(release, line)
    if patches and len(patches) == len(line.patches):
        return f"torch{line.spec.text}"
    return f"torch=={max(patches)}" if patches else f"torch{line.spec.text}"


# -- verdicts ----------------------------------------------------------------------------


def _python_range(pythons: Sequence[PythonVersion]) -> str:
    plain = [p for p in pythons if not p.free_threaded]
    if not plain:
        return ", ".join(str(p) for p in pythons) or "none"
    return f"{plain[0]}\u2013{plain[-1]}" if len(plain) > 1 else str(plain[0])


def verdict(matrix: Matrix, env: Environment, today: Optional[_dt.date] = None) -> Verdict:
    """Decide whether ``env`` is a supported combination, and how to reach one if not."""
    today = today or _dt.date.today()
    if env.adapter is None:
        return _verdict_without_adapter(matrix, env, today)
    release = matrix.release(env.adapter)
    if release is None:
        known = ", ".join(str(r.version) for r in matrix.releases)
        reason = f"{matrix.adapter.distribution} {env.adapter} is not a release this matrix describes (known: {known})"
        return _unsupported(matrix, env, today, reason, ())
    return _verdict_for_release(matrix, env, release, today)


def _verdict_without_adapter(matrix: Matrix, env: Environment, today: _dt.date) -> Verdict:
    """No adapter installed: say which release would serve this environment, and how to get it."""
    rank = {o: i for i, o in enumerate(Outcome)}
    answers = [_verdict_for_release(matrix, env, rel, today) for rel in reversed(matrix.releases)]
    best = min(answers, key=lambda v: rank[v.outcome], default=None)
    reason = f"{matrix.adapter.distribution} is not installed"
    if best is None or best.release is None or best.outcome is Outcome.UNSUPPORTED:
        return _unsupported(matrix, env, today, reason, ())
    here = [c for c in cells(matrix, best.release, today) if c.line is best.line and c.python == env.python]
    install = _fix_for(matrix, env, here[0]) if here and best.outcome is Outcome.SUPPORTED else None
    return Verdict(
        Outcome.UNSUPPORTED,
        (reason, f"release {best.release.version} would be {best.outcome}" + "".join(f": {r}" for r in best.reasons[:1])),
        best.release,
        best.line,
        best.shim,
        best.decided_by,
        best.assumptions,
        (install,) if install else best.fixes or tuple(_fixes(matrix, env, today)),
    )


def _verdict_for_release(matrix: Matrix, env: Environment, release: Release, today: _dt.date) -> Verdict:
    def fail(reason: str, *marks: Mark) -> Verdict:
        return _unsupported(matrix, env, today, reason, marks, release)

    if env.implementation.lower() != "cpython":
        return fail(f"torch publishes wheels for CPython only, not {env.implementation}")
    if env.torch is None:
        return fail("torch is not installed")
    line = matrix.torch_line(env.torch)
    if line is None:
        known = ", ".join(str(t.minor) for t in matrix.torch)
        return fail(f"torch {env.torch} is not a torch release this matrix describes (described: {known})")
    if not release.torch.contains(env.torch):
        return fail(
            f"{matrix.adapter.distribution} {release.version} supports torch {release.torch}, not {env.torch}",
            release.mark_of("torch"),
        )
    if env.python not in line.python:
        return fail(
            f"torch {line.minor} has no wheel for Python {env.python} (it has {_python_range(line.python)})",
            line.mark,
        )
    if not release.python.admits(env.python):
        return fail(
            f"{matrix.adapter.distribution} {release.version} supports Python {release.python}, not {env.python}",
            release.mark_of("python"),
        )
    assumptions = []
    dims: Dict[str, Optional[Version]] = {}
    for name, spec in release.dimensions:
        value = env.dimension(name)
        dims[name] = value
        if value is None:
            assumptions.append(f"{name} could not be detected; assumed it satisfies {spec}")
        elif not spec.contains(value):
            return fail(
                f"{matrix.adapter.distribution} {release.version} needs {name} {spec}, found {value}",
                release.mark_of("dimensions"),
            )
    status, reason, _link, marks = cell_status(release, env.torch, env.python, dims, today)
    outcome = Outcome(status.value)
    reasons = (reason,) if reason else ()
    shim = shim_for(matrix, env.torch)
    if shim is not None:
        marks = marks + (shim.mark,)
    fixes: Tuple[Fix, ...] = ()
    if outcome is not Outcome.SUPPORTED:
        fixes = tuple(_fixes(matrix, env, today))
    return Verdict(outcome, reasons, release, line, shim, (line.mark,) + marks, tuple(assumptions), fixes)


def _unsupported(
    matrix: Matrix,
    env: Environment,
    today: _dt.date,
    reason: str,
    marks: Iterable[Mark],
    release: Optional[Release] = None,
) -> Verdict:
    return Verdict(Outcome.UNSUPPORTED, (reason,), release, None, None, tuple(marks), (), tuple(_fixes(matrix, env, today)))


# -- fixes -------------------------------------------------------------------------------


def _fix_for(matrix: Matrix, env: Environment, cell: Optional[Cell]) -> Optional[Fix]:
    """How to get from ``env`` to ``cell``. A new Python is a new environment, so its
    command installs both the adapter and torch."""
    if cell is None:
        return None
    python_changes = cell.python != env.python
    adapter_changes = env.adapter != cell.release.version
    torch_changes = env.torch is None or not (
        matrix.torch_line(env.torch) is cell.line and cell.release.torch.contains(env.torch)
    )
    changes = tuple(
        name for name, changed in (("python", python_changes), ("adapter", adapter_changes), ("torch", torch_changes)) if changed
    )
    requirements = []
    if adapter_changes or python_changes:
        requirements.append(f"{matrix.adapter.distribution}=={cell.release.version}")
    if torch_changes or python_changes:
        requirements.append(torch_requirement(cell.release, cell.line))
    pip = f"python{cell.python} -m pip" if python_changes else "pip"
    commands = (f"{pip} install " + " ".join(f"'{r}'" for r in requirements),) if requirements else ()
    parts = []
    if python_changes:
        parts.append(f"use Python {cell.python}")
    if torch_changes:
        parts.append(f"install torch {cell.line.minor}")
    if adapter_changes:
        parts.append(f"install {matrix.adapter.distribution} {cell.release.version}")
    summary = " and ".join(parts) or "nothing to change"
    summary += f" ({cell.status}: {matrix.adapter.distribution} {cell.release.version}, torch {cell.torch}, Python {cell.python})"
    return Fix(summary, commands, changes, cell)


_REACHABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)


def _fixes(matrix: Matrix, env: Environment, today: _dt.date, limit: int = 3) -> List[Fix]:
    """The nearest usable cells, cheapest change first, one per kind of change.

    Changing Python costs most (a new environment), then changing the adapter, then
    torch. Within a kind of change a supported cell beats an experimental or deprecated
    one, and the torch line nearest to the installed one wins, the newer on ties.
    """
    usable = [c for c in cells(matrix, today=today) if c.status in _REACHABLE]

    def line_key(v: Version) -> int:
        return v.major * 1000 + v.minor

    def cost(cell: Cell) -> Tuple[int, int, int, int, int]:
        python_change = int(cell.python != env.python)
        adapter_change = int(env.adapter is not None and cell.release.version != env.adapter)
        if env.torch is None:
            distance = -line_key(cell.line.minor)  # nothing installed: the newest line
        else:
            gap = line_key(cell.line.minor) - line_key(env.torch)
            distance = abs(gap) * 2 + int(gap < 0)  # the nearest line, the newer one on ties
        python_gap = abs(line_key(cell.python.version) - line_key(env.python.version))
        return (
            python_change * 2 + adapter_change,
            _REACHABLE.index(cell.status),
            distance,
            -matrix.releases.index(cell.release),
            python_gap,
        )

    out: List[Fix] = []
    seen = set()
    for cell in sorted(usable, key=cost):
        fix = _fix_for(matrix, env, cell)
        if fix is None or not fix.changes or fix.changes in seen:
            continue
        seen.add(fix.changes)
        out.append(fix)
        if len(out) == limit:
            break
    return out
