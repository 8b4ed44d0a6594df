"""A plugin's cell (issue 57, item 1): ``Adapter(projects=["../adapter", "."])`` builds the
adapter, installs it, then builds the plugin against it, and the plugin's build requirement on
the adapter is met by that wheel, not asked of an index. The builds themselves are stood in for
(examples/fused-plugin's evidence holds real ones); what is checked is the order of the steps."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Tuple

from adapter_matrix import nox as cells_api
from adapter_matrix.ci import adapterbuild
from adapter_matrix.nox.cellinstall import adapter_wheels

from .helpers import REPO

MATRIX = REPO / "examples" / "cmake-adapter" / "compat.yaml"


class _Session:
    """What CellRun asks of a nox session while it builds: every call is logged in order."""

    def __init__(self, folder: Path) -> None:
        self.calls: List[Tuple[str, Any]] = []
        self.folder = folder
        self.posargs: List[str] = []
        self.virtualenv = type("V", (), {"location": str(folder / "venv")})()

    def create_tmp(self) -> str:
        return str(self.folder)

    def log(self, *args: Any) -> None:
        pass

    def install(self, *args: str, env: Any = None) -> None:
        self.calls.append(("install", [a for a in args if not a.startswith("-")]))

    def run(self, *args: str, **kwargs: Any) -> str:
        return "2.13.0+cpu cpython-311 linux-x86_64"


def _project(folder: Path, name: str, requires: List[str]) -> None:
    folder.mkdir(parents=True)
    listed = ", ".join(f'"{r}"' for r in requires)
    (folder / "pyproject.toml").write_text(f'[build-system]\nrequires = [{listed}]\n\n[project]\nname = "{name}"\n')


def test_a_plugin_is_built_after_its_adapter_is_installed_and_against_it(tmp_path, monkeypatch):
    _project(tmp_path / "adapter", "tiny-openreg", ["setuptools>=64", "torch"])
    _project(tmp_path / "plugin", "tiny-fused", ["setuptools>=64", "torch", "tiny_openreg"])
    session = _Session(tmp_path)

    def build_in_cell(project: str, *args: Any, **kwargs: Any) -> adapterbuild.Built:
        name = adapterbuild.project_name(project)
        session.calls.append(("build", name))
        return adapterbuild.Built(
            tmp_path / f"{name.replace('-', '_')}-1.0-cp311-cp311-linux_x86_64.whl", True, "k-src1"
        )

    monkeypatch.setattr(adapterbuild, "build_in_cell", build_in_cell)
    monkeypatch.setattr(cells_api.Cells, "tool", lambda self, session: ["adapter_matrix.whl"])
    declared = cells_api.Cells(
        cells_api.Adapter(matrix=str(MATRIX), projects=["adapter", "plugin"], root=str(tmp_path))
    )
    row = declared.rows["py3.11-torch2.13"]
    cell = cells_api.CellRun(session, row, declared)  # type: ignore[arg-type]

    wheels = adapter_wheels(cell, [])

    assert [Path(w).name.split("-")[0] for w in wheels] == ["tiny_openreg", "tiny_fused"]
    steps = [
        (kind, what if kind == "build" else [Path(w).name.split("-")[0] for w in what]) for kind, what in session.calls
    ]
    assert steps == [
        ("install", ["setuptools>=64"]),  # the adapter's build requirements, torch being the cell's
        ("build", "tiny-openreg"),
        ("install", ["tiny_openreg", "adapter_matrix.whl"]),  # installed before the plugin builds
        ("install", ["setuptools>=64"]),  # tiny_openreg is not asked of an index
        ("build", "tiny-fused"),
    ]
    assert [b["project"] for b in cell.builds] == ["tiny-openreg", "tiny-fused"]
    assert cell.build is not None and cell.build["compiled"] is True  # the record's build: the adapter's
