"""The selector view's combinations and axes, typed: the rows of the ``combinations`` and
``axes`` of its JSON document, as the page's script, the picks (``tables.picks``) and the
pytorch.org export (``tables.platform``) read them. They are built once, by the selector
view, and serialised as they are: a ``TypedDict`` is the plain dict ``json.dumps`` writes,
so typing them changes no byte of the page or its JSON."""

from __future__ import annotations

from typing import Dict, List, Optional, TypedDict

__all__ = ["EntryEvidence", "SelectorAxis", "SelectorEntry"]


class EntryEvidence(TypedDict):
    """What the page says of a combination's result record."""

    state: str  # verified, stale, failed, ... (ci.evidence.Verification.state)
    date: Optional[str]
    torch: Optional[str]  # the torch the cell ran
    commit: Optional[str]  # the short hash it ran at


class _EntryKeys(TypedDict):
    release: str
    torch_line: str  # "2.6"
    torch: str  # the build the commands install, "2.6.0+cpu"
    python: str  # "3.13t" for a free-threaded build
    dimensions: Dict[str, str]  # the extra dimensions' values
    status: str  # a Status value
    commands: List[str]  # check's install commands for a fresh environment; none: not usable


class SelectorEntry(_EntryKeys, total=False):
    """One combination of the selector: one cell of the matrix with its install commands."""

    series: Dict[str, str]  # the release states a compatible series of these dimensions
    reason: str  # why the status (the cell's reason)
    verification: EntryEvidence
    nearest: Dict[str, int]  # not usable: per pick number, check's first fix (a combination's index)
    held: Dict[str, int]  # and the fix that changes a held value, where it differs


class _AxisKeys(TypedDict):
    key: str  # a dimension's name, "python", "torch" or "release"
    label: str
    values: List[str]  # newest first


class SelectorAxis(_AxisKeys, total=False):
    """One question the page asks, in the page's order."""

    changeable: bool  # an extra dimension: whether a fix may change it (a SoC: no)
    kind: str  # an extra dimension's kind (enum, version)
