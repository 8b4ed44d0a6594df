"""Which runners a plan row runs on: labels for the values a CI runner must provide.

A row that needs a runner-provided value (``requires cann 9.1.0``) runs on the runners
labelled for it. Labels come, per value, from the ``runners`` the workflow is given
(``{"cann9.1.0": ["self-hosted", "ascend"]}`` for one value, ``{"cann": [...]}`` for every
value of the dimension; the list is the whole ``runs-on`` for that value), else from the
matrix: its base labels (``ci: runs-on:``, default ``self-hosted``) and the dimension's
``runner:`` label. A value neither names is refused before any job starts: on GitHub such a
job would wait for a runner that does not exist, or run on one without the toolkit.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

from ..errors import AdapterMatrixError
from ..matrix.model import Matrix
from .plan import DEFAULT_RUNNER, PlanRow

__all__ = ["RunnerError", "runs_on"]


class RunnerError(AdapterMatrixError):
    """A planned row needs a runner-provided value that no label names (exit 2)."""


def runs_on(matrix: Matrix, rows: Sequence[PlanRow], given: Mapping[str, Sequence[str]]) -> List[Tuple[str, ...]]:
    """The ``runs-on`` labels of each row (empty: any runner); :class:`RunnerError` naming the
    first row that lacks a label and every value some row lacks one for."""
    out: List[Tuple[str, ...]] = []
    first = None
    missing: Dict[str, None] = {}
    for row in rows:
        labels: List[str] = []
        for name, value in row.requires:
            named = given.get(f"{name}{value}", given.get(name))
            if named is not None:
                labels += named
                continue
            dim = matrix.dimension(name)
            label = dim.runner.label(value) if dim is not None and dim.runner is not None else None
            if label is None:
                first = first or (row, f"{name}{value}")
                missing[f"{name}{value}"] = None
                continue
            labels += [*(matrix.runs_on or DEFAULT_RUNNER), label]
        out.append(tuple(dict.fromkeys(labels)))
    if first is not None:
        row, key = first
        needs = ", ".join(f"{n} {v}" for n, v in row.requires)
        others = [k for k in missing if k != key]
        raise RunnerError(
            f'row {row.id} needs a runner with {needs} and no runner label names "{key}"'
            + (f" (nor {', '.join(others)}, which other rows need)" if others else "")
            + f': add "{key}" (or its dimension) to the runners, a JSON object of label lists, or the value to '
            "the dimension's runner: mapping in the matrix"
        )
    return out
