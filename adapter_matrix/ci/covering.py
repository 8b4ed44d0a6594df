"""Covering arrays over a fixed set of candidate rows: the ``pairwise`` plan strategy.

A candidate is one testable cell, given as its values (``{"torch line": "2.4", "Python":
"3.11", "cann": "9.1.0"}``) and the targets it must stand for on its own (its release).
:func:`cover` picks candidates, in their given order, so that

- every ``must`` target of any candidate is in a picked one (every release is tested), and
- every combination of ``strength`` values (every pair, for strength 2) that occurs together
  in some candidate occurs together in a picked one; a candidate with fewer values than
  ``strength`` stands for the combination of all its values.

Only combinations that some candidate holds are asked for, so constraints (a CANN release
bound to one torch line, a Python a torch line has no wheel for) are obeyed by
construction: no picked row is a cell the matrix does not have.

Why not a covering-array library: the generators on PyPI (``allpairspy``, the most used)
build rows from independent parameter lists and meet constraints through a filter
callback, so a row may be a combination that is no cell, and with a matrix's constraints
they leave pairs out (``allpairspy`` 2.5.1 missed 55 of the 130 pairs of the torch_npu
fixture, 2026-12). Picking among the plan's own rows is set cover, for which the greedy
choice is the classic answer: at most ``H(m)`` times the fewest rows that cover
(Chvátal 1979; ``m`` the most targets one row holds, ``H`` the harmonic number: 2.08 for
pairs of 3 dimensions plus the release). A last pass drops any picked row whose targets
all lie in other picked rows, so the result is irredundant: it is the whole candidate set
only if every candidate holds a target no other holds.
"""

from __future__ import annotations

import heapq
from itertools import combinations
from typing import Dict, FrozenSet, Hashable, List, Mapping, Sequence, Set, Tuple

__all__ = ["Candidate", "STRENGTHS", "targets_of", "cover"]

STRENGTHS = (1, 2, 3)  # 3-way is still cheap (a row of k values holds C(k, 3) triples)

Target = Tuple[Hashable, ...]
Candidate = Tuple[Mapping[str, Hashable], Sequence[Hashable]]  # (values, must-targets)


def targets_of(candidate: Candidate, strength: int) -> FrozenSet[Target]:
    """What one candidate stands for: its must-targets and its value combinations."""
    values, must = candidate
    items = sorted(values.items(), key=lambda kv: kv[0])
    size = min(strength, len(items))
    combos = {("values",) + combo for combo in combinations(items, size)} if size else set()
    return frozenset(combos | {("must", m) for m in must})


def cover(candidates: Sequence[Candidate], strength: int = 2) -> List[int]:
    """The indices of the candidates to keep, ascending (greedy set cover, ties to the earlier
    candidate, then redundant picks dropped); deterministic for a given input order."""
    if strength not in STRENGTHS:
        raise ValueError(f"strength {strength}: choose from {', '.join(map(str, STRENGTHS))}")
    sets = [targets_of(c, strength) for c in candidates]
    uncovered: Set[Target] = set().union(*sets) if sets else set()
    # Lazy greedy: a stored gain only overstates the gain now (targets only get covered), so
    # a popped entry whose gain is still current is the best, and the earliest among equals.
    heap = [(-len(s), i) for i, s in enumerate(sets) if s]
    heapq.heapify(heap)
    picked: List[int] = []
    while uncovered and heap:
        stored, i = heapq.heappop(heap)
        gain = len(sets[i] & uncovered)
        if gain == -stored:
            picked.append(i)
            uncovered -= sets[i]
        elif gain:
            heapq.heappush(heap, (-gain, i))
    return sorted(_irredundant(picked, sets))


def _irredundant(picked: List[int], sets: Sequence[FrozenSet[Target]]) -> List[int]:
    """``picked`` less each row whose every target another kept row also holds; the rows
    picked last (the ones that added least) are dropped first."""
    times: Dict[Target, int] = {}
    for i in picked:
        for t in sets[i]:
            times[t] = times.get(t, 0) + 1
    kept = list(picked)
    for i in reversed(picked):
        if all(times[t] > 1 for t in sets[i]):
            kept.remove(i)
            for t in sets[i]:
                times[t] -= 1
    return kept
