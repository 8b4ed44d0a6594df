"""The package is a star, and the imports keep it one.

``compat.yaml`` is read once, into the validated model: ``matrix`` is the core. Four
spokes consume the model, each for one job, and never import each other: ``check``
(is this environment a supported combination), ``device`` (the reference device, its
build and op sweep), ``ci`` (plans, a cell's run, its result record, evidence) and
``upstream`` (facts from package indexes). ``tables`` draws the model and the records
of ``ci`` and ``device`` (and asks ``upstream`` whether an index answers); ``nox`` runs cells with ``ci`` and ``device``; ``validation``
joins ``upstream`` and ``ci`` for ``validate``; ``cli`` wires commands to all of them.
Beside the model in the core sit the plumbing every part shares (``_version``, ``limits``, ``urls``, ``errors``,
``names``, ``files``, ``backend``, ``documents``) and ``answer``, the check document that ``check``
writes and ``ci`` reads: a contract between two spokes lives in the core, so neither
imports the other. No two modules import each other, even
through a function-level import. docs/development.md draws the same map.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Dict, List, Set

import pytest

import adapter_matrix

PACKAGE = pathlib.Path(adapter_matrix.__file__).parent

# The core, in layers: a module imports its own layer and earlier ones only.
CORE = ["_version", "limits", "urls", "errors", "names", "files", "backend", "documents", "memo", "matrix", "answer"]
SPOKES = ["check", "device", "ci", "upstream"]
# What each part outside the core may import besides the core and itself. The package
# root is the public face (``from adapter_matrix import require``): no module imports it.
MAY_IMPORT = {
    **{spoke: set() for spoke in SPOKES},
    # the binary check reads what check knows of an environment and where device builds live
    "binary": {"check", "device"},
    # check: the selector's commands are check's fixes; upstream: `--resolve` asks whether an index
    # answers through the one HTTP client (retried as pip retries)
    "tables": {"ci", "device", "check", "upstream"},
    "validation": {"ci", "upstream"},  # validate's findings: the index's facts and the release gate
    "nox": {"ci", "device"},
    "migration": {"upstream", "device"},  # migrate: the index's facts, the probe and the shim skeleton
    "cli": {"check", "device", "ci", "upstream", "tables", "binary", "validation", "migration"},
    "__main__": {"cli"},
    "__init__": {"check"},
}


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


def _part(module: str) -> str:
    return module.split(".")[0]


def _allowed(module: str, target: str) -> bool:
    here, there = _part(module), _part(target)
    if here == there:
        return True
    if here in CORE:
        return there in CORE and CORE.index(there) < CORE.index(here)
    return there in CORE or there in MAY_IMPORT[here]


def test_every_module_belongs_to_a_part_of_the_star():
    assert {_part(m) for m in _imports()} <= set(CORE) | set(MAY_IMPORT)


def test_imports_follow_the_star():
    wrong = [f"{m} imports {t}" for m, targets in _imports().items() for t in targets if not _allowed(m, t)]
    assert wrong == []


def test_the_package_root_holds_only_the_core():
    # every other part is a folder of its own (nox/, validation/, binary/, ...): issue 58
    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert modules - set(CORE) == set()


def test_the_spokes_never_import_each_other():
    # the rule above, said plainly: check, device, ci and upstream share only the core
    graph = _imports()
    crossing = {
        (_part(m), _part(t))
        for m, targets in graph.items()
        for t in targets
        if _part(m) in SPOKES and _part(t) in SPOKES
    }
    assert {(a, b) for a, b in crossing if a != b} == set()


def test_the_checker_sees_a_spoke_that_imports_another():
    # guards the rule itself: a spoke importing another spoke is refused, the core is not
    assert not _allowed("ci.verify", "check.report")
    assert not _allowed("check.guard", "ci.record")
    assert _allowed("ci.verify", "answer") and _allowed("tables.views.verified", "ci.evidence")
    assert not _allowed("matrix.model", "answer") and not _allowed("answer", "check.report")


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


# A module's name says its one job, so no two modules share one: `check.companions`,
# `upstream.companions` and `matrix.companions` were three jobs behind one name. The
# command line's modules are named after their commands (`cli/table.py` runs `table`) and
# the table views after the view they draw, so those two folders may echo a name found
# elsewhere. The op sweep's `record` stays until the next device release: the conformance
# suite imports it, and renaming it would age that release's evidence (docs/development.md).
NAMED_AFTER_ELSEWHERE = ("cli", "tables.views")
SHARED_FOR_NOW = {"record": {"ci.record", "device.opsweep.record"}}


def _modules_by_name() -> Dict[str, List[str]]:
    names: Dict[str, List[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        if path.name == "__init__.py" or module.rpartition(".")[0] in NAMED_AFTER_ELSEWHERE:
            continue
        names.setdefault(module.rpartition(".")[2], []).append(module)
    return names


def test_no_two_modules_share_a_name():
    shared = {name: set(modules) for name, modules in _modules_by_name().items() if len(modules) > 1}
    assert shared == SHARED_FOR_NOW


def test_the_facades_are_gone():
    """Code is imported from its home: no module re-exports another's names for old callers."""
    assert not (PACKAGE / "ci" / "cells.py").exists()
    for module in ("ci/results.py", "check/verdict.py"):
        tree = ast.parse((PACKAGE / module).read_text())
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        exported = next(
            (
                {ast.literal_eval(e) for e in n.value.elts}
                for n in tree.body
                if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
            ),
            set(),
        )
        assert not exported & imported, module


def test_the_library_words_no_command_line_option_first():
    """An error outside the command line names the value, not an option: a `ChoiceError` says
    which choice it was, and the command line puts its own option in front (`--torch 3.0: ...`)."""
    import re

    worded = []
    for path in PACKAGE.rglob("*.py"):
        if _module_name(path).split(".")[0] in ("cli", "__main__"):
            continue
        text = path.read_text()
        worded += [f"{path.name}: {m.group(0)}" for m in re.finditer(r"raise \w+\(\s*f?[\"']--[a-z]", text)]
        worded += [f"{path.name}: {m.group(0)}" for m in re.finditer(r"Error\(\s*\"[a-z-]+\",\s*f?[\"']--", text)]
    assert worded == []


def test_a_public_class_name_is_one_concept():
    """One name per concept: two public classes of one name in two modules (a matrix's
    ``Adapter`` and the nox API's) make every reader ask which one. Private helpers
    (``_Reader``) are each module's own."""
    homes: Dict[str, List[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                homes.setdefault(node.name, []).append(_module_name(path))
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


# -- no hidden state (issue 70) ------------------------------------------------------------
# The environment being judged is one object passed down (check.pipeline.run locates it and
# hands the `Target` to every step that reads it); no module of check/, binary/ or tables/ keeps
# state between calls: a memo is an object its caller makes and passes down (the stack search's
# candidates: check.stack.space.Candidates, one per answer or stack table; the fix search's
# claimed lines: check.fixes.FixSpace, one per answer or selector page). No exception.
STATEFUL_PARTS = ("check", "binary", "tables")
_MUTATORS = {
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault",
    "add", "discard", "sort", "reverse", "appendleft", "move_to_end",
}  # fmt: skip
_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "bytearray", "Counter"}


def _mutable(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        name = value.func.id if isinstance(value.func, ast.Name) else getattr(value.func, "attr", "")
        return name in _MUTABLE_CALLS
    return False


def _module_state(tree: ast.Module) -> Dict[str, List[str]]:
    """Module-level name -> how it is changed after import (a `global` rebinding, an item
    stored or deleted, a mutating method, an augmented assignment), and the memo decorators."""
    held: Set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and _mutable(node.value):
            held |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and node.value is not None and _mutable(node.value):
            held |= {node.target.id} if isinstance(node.target, ast.Name) else set()
    changed: Dict[str, List[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            for name in node.names:
                changed.setdefault(name, []).append(f"global, line {node.lineno}")
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.value, ast.Name) and node.value.id in held:
                changed.setdefault(node.value.id, []).append(f"item set, line {node.lineno}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            if isinstance(node.func.value, ast.Name) and node.func.value.id in held:
                changed.setdefault(node.func.value.id, []).append(f".{node.func.attr}(), line {node.lineno}")
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in held:
            changed.setdefault(node.target.id, []).append(f"augmented, line {node.lineno}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:  # a memo decorator is module state too
                called = decorator.func if isinstance(decorator, ast.Call) else decorator
                if ast.unparse(called).split(".")[-1] in ("lru_cache", "cache"):
                    changed.setdefault(node.name, []).append(f"@{ast.unparse(called)}, line {node.lineno}")
    return changed


def test_no_module_level_mutable_state():
    found = {}
    for part in STATEFUL_PARTS:
        for path in sorted((PACKAGE / part).rglob("*.py")):
            where = path.relative_to(PACKAGE).as_posix()
            state = _module_state(ast.parse(path.read_text(encoding="utf-8")))
            if state:
                found[where] = state
    assert found == {}


def test_the_state_checker_sees_a_global_and_a_mutated_table():
    # guards the rule itself: how facts.py kept the judged environment before issue 70, and a
    # mutated table; a read-only lookup table and a local list are not state
    stored = ast.parse("_judged = None\ndef judge(t):\n    global _judged\n    _judged = t\n")
    assert "_judged" in _module_state(stored)
    table = ast.parse(
        "_SEEN = {}\n_KINDS = {'a': 1}\ndef f(k):\n    _SEEN[k] = _KINDS[k]\n    out = []\n    out.append(k)\n"
    )
    assert set(_module_state(table)) == {"_SEEN"}
    memo = ast.parse("import functools\n@functools.lru_cache(None)\ndef f(k):\n    return k\n")
    assert set(_module_state(memo)) == {"f"}


def test_the_environment_judged_is_an_argument():
    """`check --env`'s environment reaches the facts and the binary section as an argument:
    facts.py has no judge()/judged(), and the binary probe takes the target."""
    facts = ast.parse((PACKAGE / "check" / "facts.py").read_text(encoding="utf-8"))
    defined = {n.name for n in facts.body if isinstance(n, ast.FunctionDef)}
    assert not {"judge", "judged"} & defined
    section = ast.parse((PACKAGE / "binary" / "section.py").read_text(encoding="utf-8"))
    binary = next(n for n in section.body if isinstance(n, ast.FunctionDef) and n.name == "binary_section")
    assert "target" in [a.arg for a in binary.args.args]


# -- every command in check's shape (issue 70) ---------------------------------------------
# cli/ parses the options into a frozen request, calls the use case's run() in the package that
# owns it and prints its typed result: no command handler is longer than this.
HANDLER_LINES = 60
# A handler over the bound while another branch converts it; empty since every command has
# the shape (issue 70's item 1 merged).
HANDLERS_FOR_NOW: Set[str] = set()
# The modules that hold the commands' use cases, found as the command line finds them: every
# module outside cli/ that cli/ imports a run()/run_*() from. A new command's module is held as
# soon as its handler calls it, with no list to extend (docs/development.md, "Adding a command").
# Each of their run()s takes one request, a NamedTuple; check's carries the probes it reads
# binary/ and device/ through (they import check, so check cannot import them).


def _command_modules() -> Set[str]:
    """The modules (paths in the package) a module of cli/ imports a run() or run_*() from."""
    found: Set[str] = set()
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            if not any(a.name == "run" or a.name.startswith("run_") for a in node.names):
                continue
            if node.level == 2:  # from ..tables.table_command import run
                parts = node.module.split(".")
            elif node.level == 0 and node.module.startswith("adapter_matrix."):
                parts = node.module.split(".")[1:]
            else:  # cli's own helpers (from .base import run_or_exit)
                continue
            if parts[0] == "cli":
                continue
            module = PACKAGE.joinpath(*parts)
            module = module / "__init__.py" if module.is_dir() else module.with_suffix(".py")
            found.add(module.relative_to(PACKAGE).as_posix())
    return found


def _handlers() -> Dict[str, int]:
    """cli module.function -> its length in lines, for every typer command."""
    out: Dict[str, int] = {}
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                "command" in ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list
            ):
                out[f"{path.stem}.{node.name}"] = (node.end_lineno or node.lineno) - node.lineno + 1
    return out


def test_every_command_handler_is_short():
    handlers = _handlers()
    assert {"ci.plan", "validate.validate", "device.build", "init.init"} <= set(handlers)  # the walker sees them
    long = {name: lines for name, lines in handlers.items() if lines > HANDLER_LINES and name not in HANDLERS_FOR_NOW}
    assert long == {}


def test_every_run_takes_one_frozen_request():
    import importlib

    modules = _command_modules()
    assert {"ci/commands.py", "tables/table_command.py", "upstream/init_command.py"} <= modules  # the walker sees them
    runs = 0
    for module in sorted(modules):
        name = "adapter_matrix." + module[: -len(".py")].replace("/", ".")
        loaded = importlib.import_module(name)
        for node in ast.parse((PACKAGE / module).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and (node.name == "run" or node.name.startswith("run_")):
                runs += 1
                params = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                assert len(params) == 1 and not node.args.vararg and not node.args.kwarg, f"{name}.{node.name}"
                request = getattr(loaded, ast.unparse(params[0].annotation))
                assert request.__name__.endswith("Request") and hasattr(request, "_fields"), f"{name}.{node.name}"
                with pytest.raises(AttributeError):  # frozen: a NamedTuple's fields cannot be set
                    setattr(
                        request._make(request._field_defaults.get(f) for f in request._fields), request._fields[0], None
                    )
    # plan, results, tier, validate, schema, build, new-shim, migrate torch and pending, table, init,
    # ops sweep, tests and pack, check
    assert runs >= 15
