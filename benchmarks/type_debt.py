"""How untyped the package still is, against issue 70's bounds.

Run from the repository: ``python benchmarks/type_debt.py [--folder adapter_matrix] [--no-mypy]``.
It prints each figure beside its bound and exits 1 when one is broken (0 when all hold), so CI
or a reviewer can re-run it after a change.

- *Any in annotations* (bound 300): every ``Any`` in a parameter's, a return's or a field's
  annotation (string annotations included), where a declared type of the project's could stand.
- *Dict[str, Any]* (bound 100): every ``Dict[str, Any]`` (or ``dict[str, Any]``) written in the
  code, annotation or alias: a JSON section read as a plain dict instead of a declared document
  (``documents.declare``, a ``TypedDict``).
- *functions over 80 lines* (bound 8): ``def`` to its last line, nested functions counted on
  their own; command handlers in ``cli/`` were most of them.
- *mypy --strict* per named package (each must be clean): mypy with the project's configuration
  (``pyproject.toml``) and ``--strict``, over the named packages at once; an error is counted
  against the named package of the file it is in (errors in modules they import but which are
  not named are left out).
- *string-key reads* (no bound, a trend): ``x["key"]`` and ``x.get("key")`` with a literal key.
  Environment variables (``environ``) are left out.

docs/development.md ("Typing") gives the numbers at each step.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import re
import subprocess
import sys
from typing import Dict, List, NamedTuple, Optional, Sequence

ANY_BOUND = 300
DICT_BOUND = 100
LONG_LINES = 80
LONG_BOUND = 8
# The packages held to mypy --strict (issue 70, item 4): each is a folder or a module of the package.
STRICT = ("check/", "binary/", "tables/", "ci/", "nox/", "documents.py", "answer.py")
_DICT_TEXT = re.compile(r"\b[Dd]ict\[\s*str\s*,\s*Any\s*\]")


class Figures(NamedTuple):
    any_notes: int
    dict_any: int
    long_functions: List[str]
    key_reads: int


def _annotations(tree: ast.AST) -> List[ast.expr]:
    notes: List[ast.expr] = [
        n.annotation for n in ast.walk(tree) if isinstance(n, (ast.arg, ast.AnnAssign)) and n.annotation
    ]
    notes += [n.returns for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns]
    return notes


def _any_count(tree: ast.AST) -> int:
    count = 0
    for note in _annotations(tree):
        for node in ast.walk(note):
            if isinstance(node, ast.Name) and node.id == "Any":
                count += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                count += node.value.replace("[", " ").replace("]", " ").replace(",", " ").split().count("Any")
    return count


def _is_dict_any(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("Dict", "dict")):
        return False
    key = node.slice
    return (
        isinstance(key, ast.Tuple)
        and len(key.elts) == 2
        and isinstance(key.elts[0], ast.Name)
        and key.elts[0].id == "str"
        and isinstance(key.elts[1], ast.Name)
        and key.elts[1].id == "Any"
    )


def _dict_any_count(tree: ast.AST) -> int:
    """In the code (annotations, aliases, casts) and in string annotations; never in docstrings."""
    count = sum(1 for node in ast.walk(tree) if _is_dict_any(node))
    for note in _annotations(tree):
        for node in ast.walk(note):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                count += len(_DICT_TEXT.findall(node.value))
    return count


def _long_functions(tree: ast.AST, where: str) -> List[str]:
    return [
        f"{where}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LONG_LINES
    ]


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


def figures(root: pathlib.Path) -> Dict[str, Figures]:
    per: Dict[str, Figures] = {}
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        per[where] = Figures(_any_count(tree), _dict_any_count(tree), _long_functions(tree, where), _key_reads(tree))
    return per


def strict_errors(root: pathlib.Path) -> Dict[str, Optional[int]]:
    """mypy --strict's errors per named package (None: mypy is not installed)."""
    targets = [str(root / part) for part in STRICT]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", *targets], capture_output=True, text=True, check=False
        )
    except OSError:
        return dict.fromkeys(STRICT)
    if "No module named mypy" in done.stderr:
        return dict.fromkeys(STRICT)
    errors: Dict[str, Optional[int]] = dict.fromkeys(STRICT, 0)
    prefix = root.as_posix().rstrip("/") + "/"
    for line in done.stdout.splitlines():
        if ": error: " not in line or not line.startswith(prefix):
            continue
        inside = line[len(prefix) :].split(":", 1)[0]
        for part in STRICT:
            if inside == part or (part.endswith("/") and inside.startswith(part)):
                errors[part] = (errors[part] or 0) + 1
    return errors


def _line(name: str, value: int, bound: int) -> str:
    return f"{name}: {value} (bound {bound}) {'ok' if value <= bound else 'OVER'}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="adapter_matrix")
    parser.add_argument("--no-mypy", action="store_true", help="skip the mypy --strict figures")
    args = parser.parse_args(argv)
    root = pathlib.Path(args.folder)
    per = figures(root)
    any_notes = sum(f.any_notes for f in per.values())
    dict_any = sum(f.dict_any for f in per.values())
    long_functions = [name for f in per.values() for name in f.long_functions]
    broken = any_notes > ANY_BOUND or dict_any > DICT_BOUND or len(long_functions) > LONG_BOUND
    print(root)
    print("  " + _line("Any in annotations", any_notes, ANY_BOUND))
    print("  " + _line("Dict[str, Any]", dict_any, DICT_BOUND))
    print("  " + _line(f"functions over {LONG_LINES} lines", len(long_functions), LONG_BOUND))
    for name in long_functions:
        print(f"    {name}")
    print(f"  string-key reads: {sum(f.key_reads for f in per.values())} (no bound)")
    if not args.no_mypy:
        print("  mypy --strict (bound: clean)")
        for part, count in strict_errors(root).items():
            if count is None:
                print(f"    {part}: not run (mypy is not installed: pip install -e '.[lint]')")
                broken = True
            else:
                print(f"    {part}: {'clean' if count == 0 else f'{count} errors'}")
                broken = broken or count > 0
    print("  per part: Any / Dict[str, Any] / string-key reads")
    for part in ("check/", "cli/", "binary/", "tables/", "ci/", "nox/", "device/", "documents.py", "answer.py"):
        inside = [f for k, f in per.items() if k == part or (part.endswith("/") and k.startswith(part))]
        print(
            f"    {part}: {sum(f.any_notes for f in inside)} / {sum(f.dict_any for f in inside)}"
            f" / {sum(f.key_reads for f in inside)}"
        )
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
