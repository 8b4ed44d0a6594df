"""The stack folded into ``check``'s answer: the layers' verdicts and the stack's fixes.

``check`` judges each adapter's matrix as before; when layers sit on that adapter (their
matrices installed, or given with ``--matrix``), :func:`with_stack` makes the answer the
stack's: the worst status of the adapter and every layer, the layers' broken pins as its
reasons, and whole stacks as its fixes (:mod:`.stack_fixes`), so that no fix repairs the
adapter by breaking a layer.
"""

from __future__ import annotations

import datetime as _dt
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ..answer import LayerSeen, StackSeen
from ..matrix.model import Layer, Matrix, Value
from ..matrix.status import Status
from ..names import canonical_name
from .facts import distribution_version
from .judgment import Environment, Verdict
from .stack import installed_stack, judge_stack, stack_packages
from .stack_fixes import Held, stack_fixes

__all__ = ["StackQuestion", "split_overrides", "with_stack"]


class StackQuestion(NamedTuple):
    """What ``check`` asks of a stack besides the environment: assumed versions of the stack's
    packages (``--companion vllm=0.23.0``; ``none``: not installed), and the ``--set`` values."""

    versions: Mapping[str, str]  # canonical name -> version text or "none"
    dimensions: Mapping[str, str]  # --set NAME=VALUE


def split_overrides(overrides: Mapping[str, str], layers: Sequence[Layer]) -> Tuple[Dict[str, str], Dict[str, str]]:
    """``--companion`` values as (the adapter's companions', the stack's packages')."""
    names = set(stack_packages(layers))
    companions: Dict[str, str] = {}
    stack: Dict[str, str] = {}
    for name, value in overrides.items():
        (stack if canonical_name(name) in names else companions)[name] = value
    return companions, {canonical_name(k): v for k, v in stack.items()}


def _held(matrix: Matrix, layers: Sequence[Layer], question: StackQuestion) -> Held:
    """What the user holds: each ``--set`` value, and each layer version given with ``--companion``."""
    dims: List[Tuple[str, Value]] = []
    for name, text in question.dimensions.items():
        dim = matrix.dimension(name)
        if dim is not None:
            try:
                dims.append((name, dim.value(text)))
            except ValueError:
                continue  # the environment's detection already refused it
    layer_names = {layer.name for layer in layers}
    packages = []
    for name, text in question.versions.items():
        if name in layer_names and text != "none":
            try:
                packages.append((name, Version(text)))
            except InvalidVersion:
                continue
    return Held(tuple(dims), tuple(packages))


def _versions(layers: Sequence[Layer], question: StackQuestion) -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {}
    for name in stack_packages(layers):
        given = question.versions.get(name)
        out[name] = (None if given == "none" else given) if given is not None else distribution_version(name)
    return out


def with_stack(
    matrix: Matrix,
    layers: Sequence[Layer],
    env: Environment,
    decided: Verdict,
    question: StackQuestion,
    today: _dt.date,
) -> Tuple[Verdict, StackSeen, Tuple[Tuple[str, str], ...]]:
    """``decided`` (the adapter's verdict, companions folded in) as the stack's verdict, the
    stack section of the answer, and what the stack holds besides torch and the adapter, as
    installed (``check --constraints`` pins it)."""
    stack = installed_stack(env, layers, _versions(layers, question))
    judged = judge_stack(matrix, layers, stack, today, adapter=decided._replace(fixes=()))
    status = judged.status
    seen = tuple(
        LayerSeen(
            name=v.layer.distribution,
            matrix=v.layer.path,
            installed=str(v.installed) if v.installed is not None else None,
            release=str(v.release.version) if v.release is not None else None,
            status=v.status,
            problems=v.problems,
            decided_by=tuple(str(m) for m in v.decided_by),
        )
        for v in judged.layers
    )
    out = decided._replace(
        outcome=status,
        reasons=judged.reasons,
        decided_by=tuple(m for v in judged.layers if v.problems for m in v.decided_by) + decided.decided_by,
        # one assumption per dimension that could not be detected (the stack's, replacing the adapter's)
        assumptions=judged.adapter.assumptions
        + judged.assumptions
        + tuple(a for v in judged.layers for a in v.assumptions),
        fixes=(),
    )
    conflict = no_fix = None
    if status is not Status.SUPPORTED:
        holding = _held(matrix, layers, question)
        found = stack_fixes(matrix, layers, stack, holding, today, now=status, adapter=decided._replace(fixes=()))
        out = out._replace(fixes=found.fixes)
        conflict, no_fix = found.conflict, found.reason
    held = tuple((name, str(version)) for name, version in stack.packages if version is not None)
    return out, StackSeen(seen, conflict, no_fix), held
