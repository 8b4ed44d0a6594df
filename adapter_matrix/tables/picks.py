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

import datetime as _dt
import itertools
from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.version import Version

from ..check.fixes import Ranked, ranked
from ..check.judgment import Environment
from ..check.verdict import verdict
from ..matrix.model import Matrix, PythonVersion, Status, Value

__all__ = ["pick_answers"]

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


def _fits(entry: Dict[str, Any], keys: Sequence[str], pick: Pick) -> bool:
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

    def __init__(self, entries: Sequence[Dict[str, Any]]) -> None:
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
    matrix: Matrix, entries: Sequence[Dict[str, Any]], axes: Sequence[Dict[str, Any]], today: _dt.date
) -> Tuple[Dict[str, Any], Dict[int, Dict[str, int]]]:
    """The ``picks`` document of the selector view (see the module's docstring), and per
    combination that is not usable, its answers: pick number -> ``check``'s first fix."""
    keys = [a["key"] for a in axes if a["key"] != "release"]
    values = [a["values"] for a in axes if a["key"] != "release"]
    releases: List[str] = next((a["values"] for a in axes if a["key"] == "release"), [])
    index = _Index(entries)
    default_release = entries[0]["release"] if entries else None
    reasons: Dict[str, int] = {}
    reason: List[int] = []
    nearest: List[int] = []
    toward: Dict[str, List[int]] = {k: [] for k in keys}
    toward_release: Dict[str, List[int]] = {r: [] for r in releases}
    fitting: Dict[int, List[Tuple[int, Pick]]] = {n: [] for n in range(len(entries))}
    for number, pick in enumerate(itertools.product(*values)):
        here = [i for i, e in enumerate(entries) if _fits(e, keys, pick)]
        env = _environment(matrix, keys, pick)
        order = [
            (item, i)
            for item in ranked(matrix, env, today, Status.UNSUPPORTED, asked=True)
            if (i := index.of(item)) is not None
        ]
        described = bool(here)
        first = -1 if described else _first(order)
        said = -1
        release = entries[first]["release"] if first >= 0 else default_release
        if not described and release is not None:
            # check's reason with the first fix's release: why the nearest does not serve the pick as it is
            text = "; ".join(verdict(matrix, env._replace(adapter=Version(release)), today, with_fixes=False).reasons)
            said = reasons.setdefault(text, len(reasons))
        reason.append(said)
        nearest.append(first)
        for k, key in enumerate(keys):
            has = [key], pick[k : k + 1]
            toward[key].append(-1 if described else _first(order, lambda i, has=has: _fits(entries[i], *has)))
        served = {entries[i]["release"] for i in here}
        for version in releases:
            toward_release[version].append(
                -1 if version in served else _first(order, lambda i, r=version: entries[i]["release"] == r)
            )
        for i in here:
            fitting[i].append((number, pick))
    unusable: Dict[int, Dict[str, int]] = {}
    for i, entry in enumerate(entries):
        if entry["commands"]:
            continue
        answers = {}
        for number, pick in fitting[i]:
            env = _environment(matrix, keys, pick, entry["release"], entry["torch"])
            now = verdict(matrix, env, today, with_fixes=False).outcome
            order = [
                (item, j) for item in ranked(matrix, env, today, now, asked=True) if (j := index.of(item)) is not None
            ]
            answers[str(number)] = _first(order)
        unusable[i] = answers
    document = {
        "axes": keys,
        "reasons": list(reasons),
        "reason": _runs(reason),
        "nearest": _runs(nearest),
        "toward": {k: _runs(v) for k, v in toward.items()},
        "toward_release": {r: _runs(v) for r, v in toward_release.items()},
    }
    return document, unusable
