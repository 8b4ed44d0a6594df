"""The ``torch.backends`` entry points of an environment, linted without loading them, and
the chain of plugins a stack loads through entry points.

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

The chain (issue 56 item 6). A stack above the adapter is held together by entry points too:
``import vllm`` imports torch, which autoloads the adapter (``torch.backends``); vLLM then picks
its platform from ``vllm.platform_plugins`` (at the first ``vllm.platforms.current_platform``),
runs every ``vllm.general_plugins`` entry in each process it starts, and Dynamo loads
``torch_dynamo_backends`` at the first ``torch.compile(backend=...)`` naming one. :data:`CHAIN_GROUPS`
are read from the same dist-info ``entry_points.txt`` files, in that order, never imported; the
section's ``chain`` lists them (group, name, value, distribution, version) when the environment
holds a plugin of a group beyond ``torch.backends`` (else it is left out, and the section is
what it was before the chain). One more finding:

- ``platform-conflict``: ``vllm.platform_plugins`` entry points of two or more distributions
  that vLLM would load together. vLLM's rule (``vllm/plugins/__init__.py``,
  ``load_plugins_by_group``, and ``vllm/platforms/__init__.py``,
  ``resolve_current_platform_cls_qualname``): it loads the group's entry points from
  ``importlib.metadata`` (one distribution of a name: the first on the path), keeping only the
  names ``VLLM_PLUGINS`` lists when it is set (split on ``,``, names matched exactly, no
  spaces stripped; set but empty loads none; it filters ``vllm.general_plugins`` by the same
  list), keyed by name (two entry points of one name: the last one listed replaces the other,
  silently); an entry point that fails to load (its module or function missing) is logged and
  skipped. It then calls each plugin's function; one that returns None (no device of its own)
  or raises is not activated, and two or more activated out-of-tree plugins raise
  ``RuntimeError: Only one platform plugin can be activated``. What a function returns is
  decided when it runs, on the machine's devices (vllm-ascend's ``register`` returns its
  platform unconditionally), so this lint counts every plugin vLLM would load: those
  ``VLLM_PLUGINS`` admits (read from this process's environment, for ``--env`` too), whose
  module is installed and defines the function. Loaded from two distributions under two
  names, vLLM refuses as soon as both return a platform; under one name, it keeps one of
  them without a word. Either is a problem; the fix is to uninstall one, or (distinct names)
  to name the one to load in ``VLLM_PLUGINS``, with the general plugins to keep.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple, TypedDict

from .. import limits

if TYPE_CHECKING:
    from ..memo import Stamp

from ..answer import AutoloadSection, PluginSeen
from ..documents import DocumentError, from_json
from ..names import canonical_name

__all__ = ["GROUP", "CHAIN_GROUPS", "lint", "section_of", "autoload_entry", "autoload_section", "autoload_lines"]

GROUP = "torch.backends"
PLATFORM_GROUP = "vllm.platform_plugins"
GENERAL_GROUP = "vllm.general_plugins"
DYNAMO_GROUP = "torch_dynamo_backends"
# the groups of the chain, in the order a stack loads them
CHAIN_GROUPS = (GROUP, PLATFORM_GROUP, GENERAL_GROUP, DYNAMO_GROUP)
VLLM_PLUGINS = "VLLM_PLUGINS"


def _entry_points(info: str) -> List[Tuple[str, str, str]]:
    """(group, name, value) of the :data:`CHAIN_GROUPS` in a dist-info's entry_points.txt."""
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
        elif section in CHAIN_GROUPS and "=" in line and not line.startswith(("#", ";")):
            name, _, value = line.partition("=")
            out.append((section, name.strip(), value.strip()))
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
            if seen > limits.MAX_SOURCE_FILES:
                return False
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                    if re.search(r"privateuse1", fh.read(), re.I):
                        return True
            except OSError:
                continue
    return False


class EntryJson(TypedDict):
    """A ``torch.backends`` entry point as the lint writes it (:class:`~adapter_matrix.answer.AutoloadEntry`)."""

    name: str
    value: str
    distribution: str
    version: str
    dist_info: str


class AutoloadProblemJson(TypedDict):
    kind: str
    message: str
    fix: str


class PluginJson(TypedDict):
    """An entry point of the chain (:class:`~adapter_matrix.answer.PluginSeen`)."""

    group: str
    name: str
    value: str
    distribution: str
    version: str


class _LintKeys(TypedDict):
    ok: bool
    entry_points: List[EntryJson]
    problems: List[AutoloadProblemJson]


class LintJson(_LintKeys, total=False):
    """The ``autoload`` section as :func:`lint` writes and stores it; ``chain`` only when it
    holds more than ``torch.backends``."""

    chain: List[PluginJson]


class _Found(NamedTuple):
    """An entry point of a group of the chain, as a dist-info folder declares it."""

    group: str
    name: str
    value: str
    distribution: str
    version: str
    dist_info: str

    def entry(self) -> EntryJson:
        return {
            "name": self.name,
            "value": self.value,
            "distribution": self.distribution,
            "version": self.version,
            "dist_info": self.dist_info,
        }

    def plugin(self) -> PluginJson:
        return {
            "group": self.group,
            "name": self.name,
            "value": self.value,
            "distribution": self.distribution,
            "version": self.version,
        }


def _found(paths: Sequence[str]) -> Tuple[List[_Found], List[AutoloadProblemJson]]:
    """Every entry point of the chain's groups in the folders of ``paths`` (a distribution
    once: importlib's entry_points() keeps the first folder's), and a ``stale`` problem for
    each folder holding two dist-infos of an autoloaded distribution."""
    chain: List[_Found] = []  # every group of CHAIN_GROUPS, torch.backends included
    problems: List[AutoloadProblemJson] = []
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
                for group, ep_name, value in _entry_points(os.path.join(site, item)):
                    chain.append(_Found(group, ep_name, value, dist, rest, os.path.join(site, item)))
        for dist, versions in infos.items():
            if len(versions) > 1 and any(
                e.group == GROUP and e.distribution and canonical_name(e.distribution) == dist for e in chain
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
    return chain, problems


def _entry_problem(entry: _Found, paths: Sequence[str]) -> Tuple[Optional[str], Optional[AutoloadProblemJson]]:
    """(the entry point's module file, what would fail when torch runs it)."""
    label = f"entry point {entry.name} = {entry.value} ({entry.distribution} {entry.version})"
    if _recorded_files_gone(os.path.dirname(entry.dist_info), entry.dist_info):
        return None, {
            "kind": "stale",
            "message": f"{label}: every file {os.path.basename(entry.dist_info)} records is gone; an uninstall left it, and torch still runs the entry point",
            "fix": f"remove {entry.dist_info}",
        }
    module, _, attr = entry.value.partition(":")
    module, attr = module.strip(), attr.split("[")[0].strip()
    found = _module_file(module, paths)
    if found is None:
        return None, {
            "kind": "module-missing",
            "message": f"{label}: module {module} is not installed, so `import torch` fails loading it",
            "fix": f"reinstall {entry.distribution}, or uninstall it",
        }
    if attr and _defines(found, attr.split(".")[0]) is False:
        return found, {
            "kind": "function-missing",
            "message": f"{label}: {module} defines no {attr}, which torch's autoload calls",
            "fix": f"install a release of {entry.distribution} whose {module} defines {attr}",
        }
    return found, None


def _privateuse1_conflict(claiming: List[_Found]) -> List[AutoloadProblemJson]:
    if len(claiming) < 2:
        return []
    named = ", ".join(f"{e.distribution} ({e.name})" for e in claiming)
    return [
        {
            "kind": "privateuse1-conflict",
            "message": f"{named} all autoload and claim PrivateUse1, which one process gives to one backend: `import torch` activates the first and the others fail",
            "fix": "uninstall all but one, or set TORCH_DEVICE_BACKEND_AUTOLOAD=0 and import the one you use",
        }
    ]


def lint(paths: Sequence[str], read: Optional[List[str]] = None) -> LintJson:
    """The ``autoload`` section of ``check --json``: the entry points found, the problems, and
    the chain when it holds more than ``torch.backends``. ``read`` gets the files the chain
    was read from beyond the torch.backends lint's (for the cache's stamps)."""
    chain, problems = _found(paths)
    entries = [e for e in chain if e.group == GROUP]
    claiming: List[_Found] = []
    for entry in entries:
        found, problem = _entry_problem(entry, paths)
        if problem is not None:
            problems.append(problem)
        if found:
            package = found if os.path.isdir(found) else os.path.dirname(found)
            if _claims_privateuse1(package):
                claiming.append(entry)
    problems += _privateuse1_conflict(claiming)
    read = [] if read is None else read
    for e in chain:
        read += [e.dist_info, os.path.join(e.dist_info, "entry_points.txt")]
    problems += _platform_conflicts(chain, paths, os.environ.get(VLLM_PLUGINS), read)
    report: LintJson = {"ok": not problems, "entry_points": [e.entry() for e in entries], "problems": problems}
    if any(e.group != GROUP for e in chain):  # else the section is what it was before the chain
        chain.sort(key=lambda e: CHAIN_GROUPS.index(e.group))  # stable: path order within a group
        report["chain"] = [e.plugin() for e in chain]
    return report


def _loadable(entry: _Found, paths: Sequence[str], read: List[str]) -> bool:
    """Whether ``importlib``'s ``load()`` of an entry point would succeed, as far as files tell:
    its module is installed and its source does not lack the function it names."""
    module, _, attr = entry.value.partition(":")
    found = _module_file(module.strip(), paths)
    if found is None:
        return False  # one installed later changes a folder of the path
    read.append(found)
    attr = attr.split("[")[0].strip()
    return not (attr and _defines(found, attr.split(".")[0]) is False)


def _and(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _selected(name: str, allowed: Optional[str]) -> bool:
    """Whether vLLM loads the plugin ``name`` under ``VLLM_PLUGINS=allowed`` (None: unset, all):
    ``envs.VLLM_PLUGINS`` is ``value.split(",")``, matched exactly (``""`` loads none)."""
    return allowed is None or name in allowed.split(",")


def _platform_conflicts(
    chain: List[_Found], paths: Sequence[str], allowed: Optional[str], read: List[str]
) -> List[AutoloadProblemJson]:
    """``platform-conflict``: vLLM would load ``vllm.platform_plugins`` of two or more
    distributions (the module docstring states vLLM's rule)."""
    loaded = [
        e for e in chain if e.group == PLATFORM_GROUP and _selected(e.name, allowed) and _loadable(e, paths, read)
    ]
    dists = list(dict.fromkeys(canonical_name(e.distribution) for e in loaded))
    if len(dists) < 2:
        return []
    named = _and([f"{canonical_name(e.distribution)} {e.version} ({e.name} = {e.value})" for e in loaded])
    names = list(dict.fromkeys(e.name for e in loaded))
    under = f" under VLLM_PLUGINS={allowed}" if allowed is not None else ""
    if len(names) == 1:
        return [
            {
                "kind": "platform-conflict",
                "message": f"{named} register one vLLM platform name, {names[0]} ({PLATFORM_GROUP}){under}: "
                "vLLM keeps one of them, the one importlib lists last, without a word",
                "fix": f"uninstall all but one of {_and(dists)}",
            }
        ]
    keep = loaded[0]
    others = {canonical_name(e.distribution) for e in loaded[1:]} - {canonical_name(keep.distribution)}
    general = [
        e.name
        for e in chain
        if e.group == GENERAL_GROUP and _selected(e.name, allowed) and canonical_name(e.distribution) not in others
    ]
    select = ",".join(dict.fromkeys([keep.name, *general]))
    return [
        {
            "kind": "platform-conflict",
            "message": f"{named} are vLLM platform plugins ({PLATFORM_GROUP}){under}, and vLLM loads every one: "
            "when two of them return a platform (one that finds no device of its own returns None and does not count), "
            'vLLM raises "Only one platform plugin can be activated"',
            "fix": f"uninstall all but one of {_and(dists)}, or have vLLM load one with VLLM_PLUGINS={select} "
            f"(it filters {GENERAL_GROUP} too: it names the general plugins to keep)",
        }
    ]


def autoload_entry(paths: Sequence[str]) -> str:
    """Where :func:`autoload_section` keeps the lint of ``paths`` (a memo entry)."""
    from .site import Site
    from .store import environment_key

    # the chain's format, and VLLM_PLUGINS, which decides the platform-conflict finding
    allowed = os.environ.get(VLLM_PLUGINS)
    selection = "chain 1; " + ("VLLM_PLUGINS unset" if allowed is None else f"VLLM_PLUGINS={allowed}")
    return environment_key(GROUP, selection, Site(tuple(paths)), None)


def section_of(report: Mapping[str, object]) -> AutoloadSection:
    """:func:`lint`'s report as the declared section (read once, then used typed)."""
    return from_json(AutoloadSection, report, "the autoload lint")


def autoload_section(paths: Sequence[str]) -> AutoloadSection:
    """:func:`lint` of ``paths``, from the cache while no folder, dist-info, ``entry_points.txt``
    or entry point's module it read has changed (an install or uninstall changes its folder)."""
    from ..memo import load_stamped, stamp, store_stamped

    key = autoload_entry(paths)
    cached = load_stamped(key)
    if cached is not None:
        try:
            return section_of(cached)
        except DocumentError:  # an entry of another shape: linted again
            pass
    deps: Dict[str, Stamp] = {p: stamp(p) for p in paths if p}
    read: List[str] = []
    report = lint(paths, read)
    for entry in report["entry_points"]:
        deps[entry["dist_info"]] = stamp(entry["dist_info"])
        module = entry["value"].partition(":")[0].strip()
        found = _module_file(module, paths)
        if found:
            deps[found] = stamp(found)
    deps.update((path, stamp(path)) for path in read)  # the chain's dist-infos and platform plugins' modules
    store_stamped(key, deps, report)
    return section_of(report)


# how the report says what each group of the chain does
_LOADS = {
    GROUP: "import torch loads",
    PLATFORM_GROUP: "vLLM's platform:",
    GENERAL_GROUP: "vLLM's general plugins, in every process it starts:",
    DYNAMO_GROUP: "torch.compile(backend=...) can load",
}


def chain_lines(chain: Sequence[PluginSeen]) -> List[List[Tuple[str, str]]]:
    """One line per group of the chain that holds something: its names, by distribution."""
    lines: List[List[Tuple[str, str]]] = []
    for group in CHAIN_GROUPS:
        by_dist: Dict[Tuple[str, str], List[str]] = {}
        for entry in chain:
            if entry.group == group:
                by_dist.setdefault((canonical_name(entry.distribution), entry.version), []).append(entry.name)
        if by_dist:
            said = "; ".join(f"{', '.join(names)} ({dist} {version})" for (dist, version), names in by_dist.items())
            loads = _LOADS[group]
            if group == PLATFORM_GROUP and sum(map(len, by_dist.values())) > 1:
                loads = "vLLM's platforms:"
            lead = ("plugins: ", "bold") if not lines else ("    ", "")
            lines.append([lead, (f"{loads} {said}", "")])
    return lines


def autoload_lines(section: AutoloadSection) -> List[List[Tuple[str, str]]]:
    """The report's lines: the chain when the section holds one (a plugin beyond
    ``torch.backends``), then each problem and its fix; nothing when neither."""
    lines = chain_lines(section.chain or ())
    for problem in section.problems:
        lines.append([("autoload: ", "bold red"), (problem.message, "")])
        lines.append([("fix:", "bold"), (" " + problem.fix, "")])
    return lines
