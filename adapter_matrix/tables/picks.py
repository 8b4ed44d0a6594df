"""The selector page's picks: for every pick the page can express, ``check``'s answer.

A pick is a value of every axis but the release (each extra dimension, Python, the torch
line) and, when a release serves the rest, that release. A pick no combination describes,
or one whose combination is not usable (end of life, broken), is an *unsupported pick*:
the page shows ``check``'s reason and ``check``'s first fix for it. A pick is asked of
``check`` as ``check --python P --torch T --set DIM=V [--adapter R]`` would ask it (the
torch line as its ``.0`` release), with one difference: the torch is asked for, not
installed, so any build of its line is as near as another (``asked``: no variant family to
keep; a matrix without variants answers exactly as the command does).

Everything is computed here, when the page is generated, by :func:`check.fixes.ranked`,
the function ``check``'s fixes are the head of; the page's script only looks answers up:

- ``reason``/``nearest``: per pick without a release that no combination describes,
  ``check``'s reason (for the release of its first fix: why the nearest release does not
  serve the pick as it is) and its first fix;
- ``toward``: per such pick and per axis, the first of ``check``'s ranked fixes that has the
  pick's value on that axis: where a click on a greyed-out value moves the other choices;
- ``toward_release``: per pick and release that serves no combination of it, the first of
  the ranked fixes of that release (a click on a greyed-out release);
- a combination that is not usable carries ``nearest``: per pick it answers, ``check``'s
  first fix for that pick with its release installed.

Picks are numbered by their values' places on the axes (mixed radix, first axis most
significant), so each table is an array indexed by the pick's number, run-length encoded
in one string. ``tests/unit/test_table_selector.py`` asks ``check`` itself (``verdict``) for
every unsupported pick of three matrices and compares.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import itertools
from contextvars import ContextVar
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from packaging.version import Version

from ..check import fixes as _fixes
from ..check.fixes import FixSpace, Ranked, fix_answer_of, ranked
from ..check.judgment import Environment
from ..check.verdict import verdict
from ..matrix.model import Matrix, PythonVersion, Status, Value
from .selector_entries import SelectorAxis, SelectorEntry

__all__ = ["pick_answers", "reporting"]

Report = Callable[[str, int, int], None]  # (the step, how many are done, of how many)
_REPORT: ContextVar[Optional[Report]] = ContextVar("adapter_matrix_picks_report", default=None)


@contextlib.contextmanager
def reporting(report: Optional[Report]) -> Iterator[None]:
    """Within the block, the selector page's answers report their progress to ``report``
    (torch_npu's 2,080 picks take seconds: the command line shows them, cli/progress.py)."""
    token = _REPORT.set(report)
    try:
        yield
    finally:
        _REPORT.reset(token)


Pick = Tuple[str, ...]  # the values of the pick axes, in their order


def _value(matrix: Matrix, name: str, text: str) -> Value:
    dim = matrix.dimension(name)
    assert dim is not None  # an axis is a dimension of the matrix
    return next(v for v in dim.values if str(v) == text)


def _environment(
    matrix: Matrix, keys: Sequence[str], pick: Pick, adapter: Optional[str] = None, torch: Optional[str] = None
) -> Environment:
    """The environment ``check`` is asked about for a pick: its Python, its torch line (or
    ``torch``, a combination's own torch), its extra-dimension values, and ``adapter``."""
    values = dict(zip(keys, pick))
    dims = tuple((k, _value(matrix, k, values[k])) for k in keys if k not in ("python", "torch"))
    return Environment(
        PythonVersion.parse(values["python"]),
        torch=Version(torch or values["torch"]),
        adapter=Version(adapter) if adapter is not None else None,
        dimensions=dims,
    )


def _identity(release: str, line: str, python: str, dims: Dict[str, str]) -> Tuple[Any, ...]:
    return release, line, python, tuple(sorted(dims.items()))


def _fits(entry: SelectorEntry, keys: Sequence[str], pick: Pick) -> bool:
    """Whether a combination answers a pick (a combination without a value of a
    dimension serves every value of it)."""
    for key, value in zip(keys, pick):
        if key == "python":
            mine: Optional[str] = entry["python"]
        elif key == "torch":
            mine = entry["torch_line"]
        else:
            mine = entry["dimensions"].get(key)
        if mine is not None and mine != value:
            return False
    return True


class _Index:
    """Where each of ``check``'s ranked cells is among the page's combinations."""

    def __init__(self, entries: Sequence[SelectorEntry]) -> None:
        self.at: Dict[Tuple[Any, ...], List[int]] = {}
        for i, e in enumerate(entries):
            key = _identity(e["release"], e["torch_line"], e["python"], e["dimensions"])
            self.at.setdefault(key, []).append(i)
        self.entries = entries
        self.memo: Dict[Tuple[Any, ...], Optional[int]] = {}

    def of(self, item: Ranked) -> Optional[int]:
        cell = item.cell
        memo = (cell.release.version, cell.line.minor, cell.python, cell.dimensions, cell.torch)
        if memo not in self.memo:
            dims = {name: str(value) for name, value in cell.dimensions}
            key = _identity(str(cell.release.version), str(cell.line.minor), str(cell.python), dims)
            found = [i for i in self.at.get(key, []) if self.entries[i]["commands"]]
            exact = [i for i in found if Version(self.entries[i]["torch"]).public == cell.torch.public]
            self.memo[memo] = next(iter(exact or found), None)
        return self.memo[memo]


def _first(order: Sequence[Tuple[Ranked, int]], keep: Any = None) -> int:
    return next((i for item, i in order if keep is None or keep(i)), -1)


def _on_page(order: Sequence[Ranked], index: _Index) -> List[Tuple[Ranked, int]]:
    """The entries of a ranked order that are among the page's combinations, with their place."""
    return [(item, i) for item in order if (i := index.of(item)) is not None]


def _answer(order: Sequence[Tuple[Ranked, int]]) -> Tuple[int, int]:
    """``check``'s answer (:func:`~adapter_matrix.check.fixes.fix_answer_of`) as places on the page: its first fix and the
    fix that changes a held value, listed after it (-1: none)."""
    place = {id(item): i for item, i in order}
    said = fix_answer_of(item for item, _i in order)
    return (
        place[id(said.first)] if said.first is not None else -1,
        place[id(said.held)] if said.held is not None else -1,
    )


def _runs(values: Sequence[int]) -> str:
    """``values`` run-length encoded, as one string: ``value,count,value,count,...`` (a
    release's answers repeat along the torch axis: torch_npu's 38 releases x 1,040 picks
    in 11 KB; a string keeps the indented JSON document one line per table)."""
    out: List[int] = []
    for value in values:
        if out and out[-2] == value:
            out[-1] += 1
        else:
            out += [value, 1]
    return ",".join(map(str, out))


def pick_answers(
    space: FixSpace, entries: Sequence[SelectorEntry], axes: Sequence[SelectorAxis], today: _dt.date
) -> Tuple[Dict[str, Any], Dict[int, Dict[str, Dict[str, int]]]]:
    """The ``picks`` document of the selector view (see the module's docstring), and per
    combination that is not usable, its answers: pick number -> ``check``'s first fix.
    ``space``: the matrix as the fix search reads it, made once for the page's picks."""
    matrix = space.matrix
    keys = [a["key"] for a in axes if a["key"] != "release"]
    values = [a["values"] for a in axes if a["key"] != "release"]
    releases: List[str] = next((a["values"] for a in axes if a["key"] == "release"), [])
    index = _Index(entries)
    default_release = entries[0]["release"] if entries else None
    reasons: Dict[str, int] = {}
    reason: List[int] = []
    nearest: List[int] = []
    held: List[int] = []
    toward: Dict[str, List[int]] = {k: [] for k in keys}
    by_release: Dict[str, Dict[str, List[int]]] = {r: {"nearest": [], "held": []} for r in releases}
    fitting: Dict[int, List[Tuple[int, Pick]]] = {n: [] for n in range(len(entries))}

    def said(env: Environment) -> Tuple[int, Status]:
        answer = verdict(matrix, env, today, with_fixes=False)
        return reasons.setdefault("; ".join(answer.reasons), len(reasons)), answer.outcome

    report, total = _REPORT.get(), 1
    for v in values:
        total *= len(v)
    for number, pick in enumerate(itertools.product(*values)):
        if report is not None and number % 50 == 0:
            report("check's answers for the selector page's picks", number, total)
        here = [i for i, e in enumerate(entries) if _fits(e, keys, pick)]
        env = _environment(matrix, keys, pick)
        served = {entries[i]["release"] for i in here}
        # check's order for the pick, and its answer with each release that serves none of it installed
        full, answers = _fixes.pick_answers(space, env, today, [Version(r) for r in releases if r not in served])
        order = _on_page(full, index)
        described = bool(here)
        first, system = (-1, -1) if described else _answer(order)
        release = entries[first]["release"] if first >= 0 else default_release
        # check's reason with the first fix's release: why the nearest does not serve the pick as it is
        reason.append(said(env._replace(adapter=Version(release)))[0] if not described and release else -1)
        nearest.append(first)
        held.append(system)
        # a greyed-out value: the first fix that has it and holds every held value (pip alone)
        pip = [(item, i) for item, i in order if not item.target.changed_dims]
        for k, key in enumerate(keys):
            has = [key], pick[k : k + 1]
            toward[key].append(-1 if described else _first(pip, lambda i, has=has: _fits(entries[i], *has)))
        for version in releases:
            if version in served:
                for runs in by_release[version].values():
                    runs.append(-1)
                continue
            mine = answers[Version(version)]
            for name, item, base in (("nearest", mine.first, first), ("held", mine.held, system)):
                at = index.of(item) if item is not None else None
                at = at if at is not None else -1
                # -2: the pick's own answer (a release nearer than none rarely changes it)
                by_release[version][name].append(-2 if at == base and not described else at)
        for i in here:
            fitting[i].append((number, pick))
    if report is not None:
        report("check's answers for the selector page's picks", total, total)
    document = {
        "axes": keys,
        "reasons": list(reasons),
        "reason": _runs(reason),
        "nearest": _runs(nearest),
        "held": _runs(held),
        "toward": {k: _runs(v) for k, v in toward.items()},
        "by_release": {r: {k: _runs(v) for k, v in tables.items()} for r, tables in by_release.items()},
    }
    return document, _unusable(space, entries, keys, fitting, index, today)


def _unusable(
    space: FixSpace,
    entries: Sequence[SelectorEntry],
    keys: Sequence[str],
    fitting: Dict[int, List[Tuple[int, Pick]]],
    index: _Index,
    today: _dt.date,
) -> Dict[int, Dict[str, Dict[str, int]]]:
    """Per combination that is not usable (no commands), check's answers for each pick it fits
    with that combination installed: pick number -> its first fix, and the one holding every
    held value."""
    matrix = space.matrix
    unusable: Dict[int, Dict[str, Dict[str, int]]] = {}
    for i, entry in enumerate(entries):
        if entry["commands"]:
            continue
        answers_here: Dict[str, Dict[str, int]] = {"nearest": {}, "held": {}}
        for number, pick in fitting[i]:
            env = _environment(matrix, keys, pick, entry["release"], entry["torch"])
            now = verdict(matrix, env, today, with_fixes=False).outcome
            first, system = _answer(_on_page(ranked(space, env, today, now, asked=True), index))
            answers_here["nearest"][str(number)] = first
            if system >= 0:
                answers_here["held"][str(number)] = system
        unusable[i] = answers_here
    return unusable
