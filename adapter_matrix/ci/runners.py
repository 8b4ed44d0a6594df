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

from typing import Dict, List, Mapping, NamedTuple, Sequence, Tuple

from ..errors import AdapterMatrixError
from ..matrix.model import Matrix
from .plan import PlanRow, row_labels

__all__ = ["GithubRow", "RunnerError", "github_rows"]


class RunnerError(AdapterMatrixError):
    """A planned row needs a runner-provided value that no label names (exit 2)."""


class GithubRow(NamedTuple):
    """One ``include`` entry of the reusable workflow's cell matrices (``plan --format github``)."""

    session: str
    python: str
    torch: str
    id: str
    runs_on: Tuple[str, ...]  # written as runs-on, only when the row needs a runner-provided value

    def as_json(self) -> Dict[str, object]:
        row: Dict[str, object] = {"session": self.session, "python": self.python, "torch": self.torch, "id": self.id}
        if self.runs_on:
            row["runs-on"] = list(self.runs_on)
        return row


def github_rows(matrix: Matrix, rows: Sequence[PlanRow], given: Mapping[str, Sequence[str]]) -> List[GithubRow]:
    """The GitHub rows of a plan, each with its runner labels (:func:`row_labels`);
    :class:`RunnerError` naming the first row that lacks a label and every value some row lacks one for."""
    out: List[GithubRow] = []
    first = None
    missing: Dict[str, None] = {}
    for row in rows:
        on = row_labels(matrix, row.requires, given)
        if on.unnamed:
            first = first or (row, on.unnamed[0])
            missing.update(dict.fromkeys(on.unnamed))
        out.append(GithubRow(row.session, str(row.cell.python), str(row.cell.torch), str(row.id), on.labels))
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
