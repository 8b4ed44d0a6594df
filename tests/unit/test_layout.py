"""The package's folders are its stages, and the imports follow them.

``compat.yaml`` flows one way: the ``matrix`` stage loads and validates it into the model;
``check``, ``device``, ``ci``, ``tables`` and ``upstream`` consume the model; ``cli`` wires
commands to them. A module may import its own stage and earlier stages only, and no two
modules import each other, even through a function-level import.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Dict, List, Set

import adapter_matrix

PACKAGE = pathlib.Path(adapter_matrix.__file__).parent

# Earlier stages first. `_version`, `errors` (the one error base) and `files` (atomic writes) are shared plumbing, not
# stages. The package root is the public face (``from adapter_matrix import require``):
# it may load any stage, and no module imports it.
STAGES = [
    "_version",
    "errors",
    "files",
    "matrix",
    "check",
    "device",
    "binary",
    "ci",
    "tables",
    "upstream",
    "nox",
    "cli",
    "__main__",
    "__init__",
]


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _imports() -> Dict[str, Set[str]]:
    """Module -> the package modules it imports (at any depth of the file)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: Dict[str, Set[str]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" and name != "__init__" else name.split(".")[:-1]
        targets: Set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                    stem = base + (node.module.split(".") if node.module else [])
                elif node.module and node.module.split(".")[0] == "adapter_matrix":
                    stem = node.module.split(".")[1:]
                else:
                    continue
                for alias in node.names:  # `from . import x` may name a module or an attribute
                    candidate = ".".join(stem + [alias.name])
                    targets.add(candidate if candidate in modules else ".".join(stem) or "__init__")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("adapter_matrix."):
                        targets.add(alias.name.split(".", 1)[1])
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _stage(module: str) -> int:
    return STAGES.index(module.split(".")[0])


def test_every_module_belongs_to_a_stage():
    assert all(m.split(".")[0] in STAGES for m in _imports())


def test_no_stage_imports_a_later_stage():
    late = [f"{m} imports {t}" for m, targets in _imports().items() for t in targets if _stage(t) > _stage(m)]
    assert late == []


def test_no_import_cycle():
    graph = _imports()
    cycles: List[str] = []
    state: Dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, path: List[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(path[path.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_the_walker_sees_function_level_imports():
    # guards the test itself: views imports the formats only inside render()
    assert "tables.formats" in _imports()["tables.views"]
