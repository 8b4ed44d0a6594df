"""The ``torch.backends`` entry points of an environment, linted without loading them.

Since torch 2.5, ``import torch`` imports every installed adapter that registers one (device
backend autoload). An adapter that fails there breaks ``import torch`` itself, and the cause is
often hidden (torch-spyre #2925, pytorch #180712). Read from the dist-info folders and the
modules' source, never imported, this names:

- ``stale``: two dist-info folders of one distribution in one folder (an interrupted upgrade), or
  one whose recorded files are gone (an uninstall that left it): torch still runs its entry point;
- ``module-missing``: an entry point whose module is not installed;
- ``function-missing``: an entry point whose function its module does not define (read with
  :mod:`ast`; a compiled module is taken on trust);
- ``privateuse1-conflict``: two autoloaded adapters that both claim PrivateUse1, which one
  process can give to one backend.

Each finding is a problem of the environment, not of one adapter: ``check`` lists them once
and exits 1. ``check --deep`` then loads the adapter in a subprocess to show the chained cause.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Set, Tuple

if TYPE_CHECKING:
    from ..memo import Stamp

from ..names import canonical_name

__all__ = ["GROUP", "lint", "autoload_entry", "autoload_section"]

GROUP = "torch.backends"
MAX_SOURCE_FILES = 2000  # a package scanned for PrivateUse1 is read up to this many modules


def _entry_points(info: str) -> List[Tuple[str, str]]:
    """(name, value) of the ``torch.backends`` group in a dist-info's entry_points.txt."""
    try:
        with open(os.path.join(info, "entry_points.txt"), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return []
    out, section = [], None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == GROUP and "=" in line and not line.startswith(("#", ";")):
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def _recorded_files_gone(site: str, info: str) -> bool:
    """Whether every file a dist-info records outside itself is gone (an uninstall left it)."""
    try:
        with open(os.path.join(info, "RECORD"), encoding="utf-8", errors="replace") as fh:
            paths = [line.split(",", 1)[0] for line in fh if line.strip()]
    except OSError:
        return False
    own = os.path.basename(info) + "/"
    others = [p for p in paths if not p.startswith(own) and not p.startswith("..") and not p.endswith(".pth")]
    return bool(others) and not any(os.path.lexists(os.path.join(site, p)) for p in others[:50])


def _module_file(module: str, paths: Sequence[str]) -> Optional[str]:
    """Where ``module`` (dotted) would be imported from, found along ``paths`` without importing."""
    parts = module.split(".")
    for base in paths:
        folder = os.path.join(base, *parts[:-1])
        last = parts[-1]
        for candidate in (os.path.join(folder, last, "__init__.py"), os.path.join(folder, last + ".py")):
            if os.path.isfile(candidate):
                return candidate
        if os.path.isdir(os.path.join(folder, last)):
            return os.path.join(folder, last)  # a namespace package
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        compiled = [n for n in names if n.startswith(last + ".") and n.endswith((".so", ".pyd"))]
        if compiled:
            return os.path.join(folder, compiled[0])
    return None


def _defines(source_file: str, name: str) -> Optional[bool]:
    """Whether the module defines ``name`` at its top level (under an ``if`` or ``try`` too);
    None when that cannot be told from its source (compiled, ``import *``, ``__getattr__``)."""
    if not source_file.endswith(".py"):
        return None
    import ast  # only when an entry point is linted: a warm check reads the stored section

    try:
        with open(source_file, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read(), source_file)
    except (OSError, SyntaxError, ValueError):
        return None
    found = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                found.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.Assign):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):  # a definition under a condition still counts
            for field in ("body", "orelse", "finalbody", "handlers"):
                todo += getattr(node, field, [])
        elif isinstance(node, ast.ExceptHandler):
            todo += node.body
    return None if "__getattr__" in found else name in found


def _claims_privateuse1(package: str) -> bool:
    """Whether the package's Python source renames or registers PrivateUse1."""
    seen = 0
    for folder, dirs, names in os.walk(package):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "tests", "test")]
        for name in names:
            if not name.endswith(".py"):
                continue
            seen += 1
            if seen > MAX_SOURCE_FILES:
                return False
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                    if re.search(r"privateuse1", fh.read(), re.I):
                        return True
            except OSError:
                continue
    return False


def lint(paths: Sequence[str]) -> Dict[str, Any]:
    """The ``autoload`` section of ``check --json``: the entry points found and the problems."""
    entries: List[Dict[str, Any]] = []
    problems: List[Dict[str, Any]] = []
    earlier: Set[str] = set()  # distributions of earlier folders: importlib's entry_points() keeps the first
    for site in paths:
        try:
            names = sorted(os.listdir(site or "."))
        except OSError:
            continue
        infos: Dict[str, List[str]] = {}
        for item in names:
            if item.endswith(".dist-info"):
                dist, _, rest = item[: -len(".dist-info")].partition("-")
                if canonical_name(dist) in earlier:
                    continue  # shadowed: the same distribution in a folder earlier on the path
                infos.setdefault(canonical_name(dist), []).append(rest)
                for ep_name, value in _entry_points(os.path.join(site, item)):
                    entries.append(
                        {
                            "name": ep_name,
                            "value": value,
                            "distribution": dist,
                            "version": rest,
                            "dist_info": os.path.join(site, item),
                        }
                    )
        for dist, versions in infos.items():
            if len(versions) > 1 and any(
                e["distribution"] and canonical_name(e["distribution"]) == dist for e in entries
            ):
                problems.append(
                    {
                        "kind": "stale",
                        "message": f"{site} holds {len(versions)} dist-info folders of {dist} ({', '.join(versions)}): "
                        "one is left from an interrupted upgrade, and torch's autoload runs the entry points of both",
                        "fix": f"pip uninstall {dist} until none is left, then install it once",
                    }
                )
        earlier.update(infos)
    for entry in entries:
        label = f"entry point {entry['name']} = {entry['value']} ({entry['distribution']} {entry['version']})"
        site = os.path.dirname(entry["dist_info"])
        if _recorded_files_gone(site, entry["dist_info"]):
            problems.append(
                {
                    "kind": "stale",
                    "message": f"{label}: every file {os.path.basename(entry['dist_info'])} records is gone; an uninstall left it, and torch still runs the entry point",
                    "fix": f"remove {entry['dist_info']}",
                }
            )
            continue
        module, _, attr = entry["value"].partition(":")
        module, attr = module.strip(), attr.split("[")[0].strip()
        found = _module_file(module, paths)
        entry["module_file"] = found
        if found is None:
            problems.append(
                {
                    "kind": "module-missing",
                    "message": f"{label}: module {module} is not installed, so `import torch` fails loading it",
                    "fix": f"reinstall {entry['distribution']}, or uninstall it",
                }
            )
            continue
        if attr:
            defined = _defines(found, attr.split(".")[0])
            if defined is False:
                problems.append(
                    {
                        "kind": "function-missing",
                        "message": f"{label}: {module} defines no {attr}, which torch's autoload calls",
                        "fix": f"install a release of {entry['distribution']} whose {module} defines {attr}",
                    }
                )
    claiming = []
    for entry in entries:
        found = entry.get("module_file")
        if found:
            package = found if os.path.isdir(found) else os.path.dirname(found)
            if _claims_privateuse1(package):
                claiming.append(entry)
    if len(claiming) > 1:
        named = ", ".join(f"{e['distribution']} ({e['name']})" for e in claiming)
        problems.append(
            {
                "kind": "privateuse1-conflict",
                "message": f"{named} all autoload and claim PrivateUse1, which one process gives to one backend: `import torch` activates the first and the others fail",
                "fix": "uninstall all but one, or set TORCH_DEVICE_BACKEND_AUTOLOAD=0 and import the one you use",
            }
        )
    shown = [{k: v for k, v in e.items() if k != "module_file"} for e in entries]
    return {"ok": not problems, "entry_points": shown, "problems": problems}


def autoload_entry(paths: Sequence[str]) -> str:
    """Where :func:`autoload_section` keeps the lint of ``paths`` (a memo entry)."""
    from .site import Site
    from .store import environment_key

    return environment_key("torch.backends", "", Site(tuple(paths)), None)


def autoload_section(paths: Sequence[str]) -> Dict[str, Any]:
    """:func:`lint` of ``paths``, from the cache while no folder, dist-info or entry point's
    module it read has changed (an install or uninstall changes its folder)."""
    from ..memo import load_stamped, stamp, store_stamped

    key = autoload_entry(paths)
    cached = load_stamped(key)
    if cached is not None:
        return cached
    deps: Dict[str, Stamp] = {p: stamp(p) for p in paths if p}
    report = lint(paths)
    for entry in report["entry_points"]:
        deps[entry["dist_info"]] = stamp(entry["dist_info"])
        module = entry["value"].partition(":")[0].strip()
        found = _module_file(module, paths)
        if found:
            deps[found] = stamp(found)
    store_stamped(key, deps, report)
    return report


def autoload_lines(section: Dict[str, Any]) -> List[List[Tuple[str, str]]]:
    """The report's lines: nothing when all is well, else each problem and its fix."""
    lines: List[List[Tuple[str, str]]] = []
    for problem in section.get("problems", ()):
        lines.append([("autoload: ", "bold red"), (problem["message"], "")])
        lines.append([("fix:", "bold"), (" " + problem["fix"], "")])
    return lines
