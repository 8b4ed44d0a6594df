"""How untyped the package still is: ``Any`` in annotations and string-key reads.

Run from the repository: ``python benchmarks/type_debt.py [FOLDER]`` (default ``adapter_matrix``).

- *Any in annotations*: every ``Any`` in a parameter's, a return's or a field's annotation
  (string annotations included), where a declared type of the project's could stand.
- *string-key reads*: ``x["key"]`` and ``x.get("key")`` with a literal key: how often a value is
  read as a plain dict instead of a declared document (``documents.declare``). Environment
  variables (``environ``) are left out; what remains is mostly the tool's own JSON sections
  (binary, autoload, deep, the op sweep's record, the selector's entries).

Issue 58 tracks both going down; docs/development.md gives the numbers at each step.
"""

from __future__ import annotations

import ast
import pathlib
import sys
from typing import Dict, Tuple


def _any_count(tree: ast.AST) -> int:
    notes = [n.annotation for n in ast.walk(tree) if isinstance(n, (ast.arg, ast.AnnAssign)) and n.annotation]
    notes += [n.returns for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns]
    count = 0
    for note in notes:
        for node in ast.walk(note):
            if isinstance(node, ast.Name) and node.id == "Any":
                count += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                count += node.value.replace("[", " ").replace("]", " ").replace(",", " ").split().count("Any")
    return count


def _environ(node: ast.expr) -> bool:
    return "environ" in ast.unparse(node)


def _key_reads(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and not _environ(node.value):
                count += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and not _environ(node.func.value):
                count += 1
    return count


def main(folder: str = "adapter_matrix") -> None:
    root = pathlib.Path(folder)
    per: Dict[str, Tuple[int, int]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        per[path.relative_to(root).as_posix()] = (_any_count(tree), _key_reads(tree))
    print(
        f"{root}: Any in annotations {sum(a for a, _ in per.values())}, string-key reads {sum(r for _, r in per.values())}"
    )
    for part in ("check/", "cli/quick.py", "binary/", "documents.py", "answer.py"):
        inside = [v for k, v in per.items() if k.startswith(part)]
        print(f"  {part}: Any {sum(a for a, _ in inside)}, string-key reads {sum(r for _, r in inside)}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
