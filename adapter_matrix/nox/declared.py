"""The cells an :class:`Adapter` declares: its matrix, the plan rows this tree can test, and
what every cell of one nox run shares (the pure-Python wheels and adapter-matrix's own, built
once)."""

from __future__ import annotations

import os
from typing import Dict, List, Optional

import nox

from ..ci import adapterbuild as _adapterbuild
from ..ci.plan import PlanRow, plan
from ..ci.release import past_releases
from ..ci.wheels import TOOL, build_wheels, tool_wheel
from ..matrix.cache import load_matrix
from ..matrix.model import Matrix
from .declarations import Adapter


class Cells:
    """The cells :func:`cells` declared: the matrix, the plan rows by id, the adapter."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.root = os.path.abspath(adapter.root or os.getcwd())
        path = os.environ.get("ADAPTER_MATRIX_NOX_MATRIX") or os.path.join(self.root, adapter.matrix)
        self.matrix_file = os.path.abspath(path)  # for a command that runs outside the root (the op sweep)
        self.matrix: Matrix = load_matrix(path).matrix
        # the rows this tree can test: a release frozen with other sources is past (docs/releasing.md)
        self.rows: Dict[str, PlanRow] = {
            row.id: row for row in plan(self.matrix, "full", skip=past_releases(self.matrix))
        }
        self._wheels: List[str] = []
        self._tool: Optional[List[str]] = None

    @property
    def more_sources(self) -> List[str]:
        """``Adapter(sources=...)`` relative to the matrix's folder, as its ``evidence: sources:`` are."""
        base = os.path.dirname(os.path.abspath(self.matrix.path))
        return [os.path.relpath(os.path.join(self.root, s), base).replace(os.sep, "/") for s in self.adapter.sources]

    def compiled(self, project: str) -> bool:
        """Whether ``project`` (a folder) is built in each cell: it compiles against torch, or
        the adapter brings its own build command."""
        return _adapterbuild.builds_against_torch(project) or (
            self.adapter.build_command is not None and _adapterbuild.project_name(project) != TOOL
        )

    def wheels(self, session: nox.Session) -> List[str]:
        """The wheels of the pure-Python projects, built once per nox run into ``.nox/_wheels``
        (a compiled project is built in each cell: :func:`adapter_matrix.nox.cellinstall.adapter_wheels`)."""
        if not self._wheels:
            projects = [os.path.join(self.root, p) for p in self.adapter.projects]
            pure = [p for p in projects if not self.compiled(p)]
            if pure:
                session.log(f"building the wheels of {', '.join(os.path.relpath(p, self.root) for p in pure)}")
                self._wheels.extend(str(w) for w in build_wheels(pure, os.path.join(self.root, ".nox", "_wheels")))
        return self._wheels

    def tool(self, session: nox.Session) -> List[str]:
        """adapter-matrix for the cell, as a wheel of the copy running nox (once per run), so that
        the cell's ``check`` and the adapter's ``require()`` run in the cell's own environment;
        none when a project is adapter-matrix itself (this repository)."""
        if self._tool is None:
            projects = [os.path.join(self.root, p) for p in self.adapter.projects]
            if any(_adapterbuild.project_name(p) == TOOL for p in projects):
                self._tool = []
            else:
                session.log(f"packing {TOOL} (the copy running nox) for the cells")
                self._tool = [str(tool_wheel(os.path.join(self.root, ".nox", "_wheels", "tool")))]
        return self._tool
