"""The id of a cell, and of the plan row (nox session) that tests it: one type, built and read here.

``py3.11-torch2.4`` names the Python and the torch row of a cell; the values of its extra
dimensions follow (``-cann8.1.RC1``), and a plan of several releases appends the
release (``-v2.0.0``). Ids are file names (``results/<id>.json``), nox session names
(``device(<id>)``) and JSON values, so :class:`CellId` is a ``str``; it also knows the
order people read cells in.
"""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

__all__ = ["CellId"]


class CellId(str):
    """``py{python}-torch{torch}[-{dimension}{value}...][-v{release}]``, as a string."""

    __slots__ = ()

    @classmethod
    def of(
        cls,
        python: object,
        torch: object,
        dimensions: Iterable[Tuple[str, object]] = (),
        release: Optional[object] = None,
    ) -> CellId:
        """The id of a cell (no ``release``) or of a plan row (``release`` when several are planned)."""
        dims = "".join(f"-{name}{value}" for name, value in dimensions)
        return cls(f"py{python}-torch{torch}{dims}" + (f"-v{release}" if release is not None else ""))

    @property
    def sort_key(self) -> Tuple[Tuple[int, ...], Tuple[int, ...], str]:
        """By torch line, then Python: ``py3.9-torch2.10`` after ``py3.13-torch2.9``; an id
        not of this form (a record written by hand) after every one that is."""
        try:
            python, torch = self.split("-torch", 1)
            line = tuple(int(x) for x in torch.split("-")[0].split("."))
            minor = tuple(int(x) for x in python[2:].rstrip("t").split("."))
            return (line, minor, str(self))
        except ValueError:
            return ((999,), (999,), str(self))
