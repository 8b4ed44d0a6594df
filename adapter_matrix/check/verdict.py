"""The verdict for an environment: whether it is a supported combination, and why.

``check`` and the runtime guard ask :func:`verdict`; it reads the model through
:mod:`adapter_matrix.matrix.queries` and never re-decides a cell's status. A verdict that
is not "supported" carries the fixes :mod:`.fixes` finds.
"""

from __future__ import annotations

import datetime as _dt
from typing import List, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.diagnostics import Mark
from ..matrix.model import Matrix, PythonVersion, Release, Value
from ..matrix.queries import shim_for
from ..matrix.status import Status
from .claims import assess, torch_label
from .fixes import fixes
from .judgment import Environment, Verdict

__all__ = ["undetected", "verdict"]


def undetected(name: str) -> str:
    """How an assumption about a dimension that could not be detected begins (the stack's one
    assumption per dimension replaces the adapter's own: :func:`.stack.judge_stack`)."""
    return f"{name} could not be detected"


def _variant_label(torch: Version) -> str:
    if torch.local:
        return f"the {torch.local} build"
    return "no variant label: PyPI's default build, CUDA on Linux x86_64"


# -- verdicts ----------------------------------------------------------------------------


def _python_range(pythons: Sequence[PythonVersion]) -> str:
    plain = [p for p in pythons if not p.free_threaded]
    if not plain:
        return ", ".join(str(p) for p in pythons) or "none"
    return f"{plain[0]}\u2013{plain[-1]}" if len(plain) > 1 else str(plain[0])


def verdict(matrix: Matrix, env: Environment, today: Optional[_dt.date] = None, with_fixes: bool = True) -> Verdict:
    """Decide whether ``env`` is a supported combination, and how to reach one if not
    (``with_fixes=False``: without searching the fixes, for a stack's search, which has its own)."""
    today = today or _dt.date.today()
    if env.adapter is None:
        return _verdict_without_adapter(matrix, env, today, with_fixes)
    entries = matrix.releases_of(env.adapter)
    if not entries:
        known = ", ".join(dict.fromkeys(str(r.version) for r in matrix.releases))
        reason = f"{matrix.adapter.distribution} {env.adapter} is not a release this matrix describes (known: {known})"
        return _withfixes(matrix, env, today, Verdict(Status.UNSUPPORTED, (reason,)), with_fixes)
    # Entries of one version serve different values of a dimension (an OS): the one for
    # this machine answers, else the best answer.
    answers = [(not _fits_machine(matrix, rel, env), _verdict_for_release(matrix, env, rel, today)) for rel in entries]
    return _withfixes(matrix, env, today, min(answers, key=lambda a: (a[1].outcome.rank, a[0]))[1], with_fixes)


def _withfixes(matrix: Matrix, env: Environment, today: _dt.date, answer: Verdict, with_fixes: bool = True) -> Verdict:
    """``answer`` with the fixes that reach a usable cell, unless it is supported."""
    if answer.outcome is Status.SUPPORTED or not with_fixes:
        return answer
    return answer._replace(fixes=tuple(fixes(matrix, env, today, answer.outcome)))


def _fits_machine(matrix: Matrix, release: Release, env: Environment) -> bool:
    """Whether the release accepts every dimension value the user cannot change."""
    return _machine_mismatch(matrix, release, env) is None


def _machine_mismatch(matrix: Matrix, release: Release, env: Environment) -> Optional[Tuple[str, object, Value]]:
    """The first dimension value the user cannot change that the release refuses."""
    for name, constraint in release.dimensions:
        dim, value = matrix.dimension(name), env.dimension(name)
        if dim is not None and not dim.changeable and value is not None and not constraint.contains(value):
            return name, constraint, value
    return None


def _verdict_without_adapter(matrix: Matrix, env: Environment, today: _dt.date, with_fixes: bool) -> Verdict:
    """No adapter installed: say which release would serve this environment, and how to get it."""
    answers = [_verdict_for_release(matrix, env, rel, today) for rel in reversed(matrix.releases)]
    best = min(answers, key=lambda v: v.outcome.rank, default=None)
    reason = f"{matrix.adapter.distribution} is not installed"
    if best is None or best.release is None or best.outcome is Status.UNSUPPORTED:
        return _withfixes(matrix, env, today, Verdict(Status.UNSUPPORTED, (reason,)), with_fixes)
    would_be = f"release {best.release.version} would be {best.outcome}" + "".join(f": {r}" for r in best.reasons[:1])
    return _withfixes(
        matrix, env, today, best._replace(outcome=Status.UNSUPPORTED, reasons=(reason, would_be)), with_fixes
    )


def _verdict_for_release(matrix: Matrix, env: Environment, release: Release, today: _dt.date) -> Verdict:
    """The answer of one release for ``env``, without fixes (the caller adds them once)."""
    dist = matrix.adapter.distribution

    def fail(reason: str, *marks: Mark) -> Verdict:
        return Verdict(Status.UNSUPPORTED, (reason,), release, None, None, tuple(marks))

    if env.implementation.lower() != "cpython":
        return fail(f"torch publishes wheels for CPython only, not {env.implementation}")
    mismatch = _machine_mismatch(matrix, release, env)
    if mismatch is not None:  # a release for another machine: say so first
        name, constraint, value = mismatch
        return fail(f"{dist} {release.label} needs {name} {constraint}, found {value}", release.mark_of("dimensions"))
    if env.torch is None:
        return fail("torch is not installed")
    line = matrix.torch_line(env.torch)
    if line is None:
        known = ", ".join(str(t.minor) for t in matrix.torch)
        return fail(f"torch {torch_label(env.torch)} is not a torch release this matrix describes (described: {known})")
    if not release.torch.contains(env.torch):
        return fail(
            f"{dist} {release.label} supports torch {release.torch}, not {torch_label(env.torch)}",
            release.mark_of("torch"),
        )
    if release.variant and env.torch.local != release.variant:
        return fail(
            f"{dist} {release.version} needs torch's {release.variant} build, found torch {env.torch} ({_variant_label(env.torch)})",
            release.mark_of("torch-variant") if "torch-variant" in dict(release.marks) else release.mark_of("torch"),
        )
    if env.python not in line.python:
        return fail(
            f"torch {line.minor} has no wheel for Python {env.python} (it has {_python_range(line.python)})", line.mark
        )
    if not release.python.admits(env.python):
        return fail(
            f"{dist} {release.label} supports Python {release.python}, not {env.python}", release.mark_of("python")
        )
    assumptions: List[str] = []
    for name, constraint in release.dimensions:
        detected = env.dimension(name)
        if detected is None:
            assumptions.append(f"{undetected(name)}; assumed it satisfies {constraint}")
        elif not constraint.contains(detected):
            return fail(
                f"{dist} {release.label} needs {name} {constraint}, found {detected}", release.mark_of("dimensions")
            )
    status, reasons, _link, marks = assess(matrix, release, env.torch, env.python, dict(env.dimensions), today)
    shim = shim_for(matrix, env.torch)
    if shim is not None:
        marks = marks + (shim.mark,)
    return Verdict(status, reasons, release, line, shim, (line.mark,) + marks, tuple(assumptions))
