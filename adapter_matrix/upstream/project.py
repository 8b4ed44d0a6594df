"""What ``init`` reads of an existing project, without building or importing it.

An adapter repository already declares things the first ``compat.yaml`` must agree with: its
version, its ``requires-python``, where its package data comes from, and which folders hold
the sources a build reads. They are read statically, in the order setuptools itself uses:

version
    ``[project] version``; a dynamic one from ``[tool.setuptools.dynamic] version = {attr}``
    (the ``__version__`` of that module), ``setup.cfg`` ``[metadata] version`` (a literal or
    ``attr:``), or a literal ``version=`` in ``setup.py``'s ``setup(...)`` call. A version
    computed by code (setuptools-scm, a file read at build time) cannot be known without
    running the backend: :attr:`ProjectFacts.why` says so and ``init`` takes ``--version``.
``requires-python``
    ``[project] requires-python``, else ``setup.cfg`` ``python_requires``, else a literal
    ``python_requires=`` in ``setup.py``.
package data
    whether ``setup.py`` or ``setup.cfg`` declares ``package_data``: a
    ``[tool.setuptools.package-data]`` table would replace it (PyPA's setuptools applies the
    pyproject table over setup.py's), silently dropping e.g. ``lib/*.so`` from the wheel.
evidence sources
    the package, the tests, the top-level folders holding native sources and the build's
    own files (:func:`evidence_sources`).
"""

from __future__ import annotations

import ast
import configparser
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..backend import SETUPTOOLS, backend_of

__all__ = [
    "ProjectFacts",
    "project_facts",
    "evidence_sources",
    "holds_native_sources",
    "package_folder",
    "build_inputs",
]


@dataclass(frozen=True)
class ProjectFacts:
    """What an existing project declares. ``None`` where it declares nothing readable;
    ``why`` says what could not be read (the version), ``version_from`` where it was read."""

    version: Optional[str] = None
    requires_python: Optional[str] = None
    why: str = ""
    version_from: str = ""
    has_project_table: bool = False  # pyproject.toml has [project]: setuptools reads its metadata there
    package_data_in: str = ""  # "setup.py" or "setup.cfg" when one declares package_data
    builds_with_torch: bool = False  # [build-system] requires names torch: a compiled adapter
    backend: str = SETUPTOOLS  # the build backend (adapter_matrix.backend): how compat.yaml reaches the wheel
    wheel_packages: bool = False  # scikit-build-core's wheel.packages is set: the project chose what ships
    name: Optional[str] = None  # the distribution's name as the project declares it, where it says
    name_from: str = ""  # where the name was read
    # [tool.hatch], [tool.flit], [tool.pdm] as read: what those backends leave out of the wheel and
    # sdist (adapter_matrix.upstream.tree_backends)
    tool: Mapping[str, Any] = field(default_factory=dict)

    @property
    def include_package_data(self) -> bool:
        """Whether setuptools ships the package files MANIFEST.in names: its default for a
        project configured in pyproject.toml ([project]) since setuptools 61."""
        return self.has_project_table


def _names(requirements: List[str]) -> List[str]:
    from packaging.requirements import InvalidRequirement, Requirement

    from ..names import canonical_name

    out: List[str] = []
    for text in requirements:
        try:
            out.append(canonical_name(Requirement(text).name))
        except InvalidRequirement:
            continue  # not ours to lint: the build frontend reports it
    return out


def _setup_call(root: str) -> Tuple[Optional[Dict[str, ast.expr]], str]:
    """The keywords of ``setup(...)`` in ``setup.py`` and its text ({} and "" when absent)."""
    path = os.path.join(root, "setup.py")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None, ""
    try:
        tree = ast.parse(text, path)
    except (SyntaxError, ValueError):
        return {}, text
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name == "setup":
                return {k.arg: k.value for k in node.keywords if k.arg}, text
    return {}, text


def _literal(node: Optional[ast.expr]) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _setup_cfg(root: str) -> Optional[configparser.ConfigParser]:
    path = os.path.join(root, "setup.cfg")
    if not os.path.isfile(path):
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return parser


def _attr_version(root: str, target: str) -> Optional[str]:
    """The ``__version__`` of ``module`` in ``module.__version__`` (flat or ``src/`` layout)."""
    from ..files import dunder_version

    module, _dot, name = target.strip().rpartition(".")
    if not module or name != "__version__":
        return None
    parts = module.split(".")
    for base in (root, os.path.join(root, "src")):
        for candidate in (os.path.join(base, *parts, "__init__.py"), os.path.join(base, *parts) + ".py"):
            if os.path.isfile(candidate):
                return dunder_version(candidate)
    return None


def project_facts(root: str) -> ProjectFacts:
    """What the project in ``root`` declares (module docstring); an empty record for a new one."""
    from ..files import read_toml

    pyproject = os.path.join(root, "pyproject.toml")
    doc: Dict[str, Any] = {}
    if os.path.isfile(pyproject):
        read = read_toml(pyproject)
        if read is None:
            return ProjectFacts(why="pyproject.toml cannot be read as TOML")
        doc = read
    project = doc.get("project")
    has_project = isinstance(project, dict)
    project = project if isinstance(project, dict) else {}
    requires = [r for r in (doc.get("build-system") or {}).get("requires") or [] if isinstance(r, str)]
    builds_with_torch = "torch" in _names(requires)
    setup_kw, setup_text = _setup_call(root)
    cfg = _setup_cfg(root)

    version, version_from = None, ""
    if isinstance(project.get("version"), str):
        version, version_from = project["version"], "pyproject.toml [project] version"
    elif not has_project or "version" in (project.get("dynamic") or []):
        dynamic = (((doc.get("tool") or {}).get("setuptools") or {}).get("dynamic") or {}).get("version")
        if isinstance(dynamic, dict) and isinstance(dynamic.get("attr"), str):
            version, version_from = _attr_version(root, dynamic["attr"]), f"the attr {dynamic['attr']}"
        if version is None and cfg is not None and cfg.has_option("metadata", "version"):
            raw = cfg.get("metadata", "version").strip()
            version = _attr_version(root, raw[5:]) if raw.startswith("attr:") else None if ":" in raw else raw
            version_from = "setup.cfg [metadata] version"
        if version is None and setup_kw:
            version, version_from = _literal(setup_kw.get("version")), "setup.py's setup(version=...)"
    why = ""
    if version is None:
        version_from = ""
        where = [
            name
            for name, says in (
                ("pyproject.toml", "version" in (project.get("dynamic") or [])),
                ("setup.cfg", cfg is not None and cfg.has_option("metadata", "version")),
                ("setup.py", (setup_kw or {}).get("version") is not None),
            )
            if says
        ]
        if where:
            why = f"the project's version is dynamic ({where[0]}: computed when it is built): give --version"

    python = project.get("requires-python") if isinstance(project.get("requires-python"), str) else None
    if python is None and cfg is not None and cfg.has_option("options", "python_requires"):
        python = cfg.get("options", "python_requires").strip() or None
    if python is None and setup_kw:
        python = _literal(setup_kw.get("python_requires"))

    name, name_from = None, ""
    if isinstance(project.get("name"), str):
        name, name_from = project["name"], "pyproject.toml [project] name"
    elif cfg is not None and cfg.has_option("metadata", "name"):
        name, name_from = cfg.get("metadata", "name").strip() or None, "setup.cfg [metadata] name"
    elif setup_kw and _literal(setup_kw.get("name")):
        name, name_from = _literal(setup_kw.get("name")), "setup.py's setup(name=...)"

    package_data_in = ""
    if setup_kw is not None and ("package_data" in setup_kw or (not setup_kw and "package_data" in setup_text)):
        package_data_in = "setup.py"  # an unparsable setup.py that mentions it is taken at its word
    elif cfg is not None and cfg.has_section("options.package_data"):
        package_data_in = "setup.cfg"
    tool: Dict[str, Any] = doc["tool"] if isinstance(doc.get("tool"), dict) else {}
    skbuild = tool.get("scikit-build") or {}
    wheel_table = skbuild.get("wheel") if isinstance(skbuild, dict) else None
    wheel_packages = isinstance(skbuild, dict) and (
        "wheel.packages" in skbuild or (isinstance(wheel_table, dict) and "packages" in wheel_table)
    )
    return ProjectFacts(
        version,
        python,
        why,
        version_from,
        has_project,
        package_data_in,
        builds_with_torch,
        backend_of(doc),
        wheel_packages,
        name,
        name_from if name else "",
        {k: v for k, v in tool.items() if k in ("hatch", "flit", "pdm") and isinstance(v, dict)},
    )


# What a compiled adapter's build reads besides its package: a change to any of these can change
# the binary a cell tested, so the cell's evidence must age with them (issue 43).
_NATIVE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hh", ".hpp", ".cuh", ".cmake", ".in")
# the build's own files: pyproject.toml counts by its build tables only (adapter_matrix.backend)
_NATIVE_FILES = ("CMakeLists.txt", "setup.py", "setup.cfg", "MANIFEST.in", "pyproject.toml", "meson.build")
_NOT_SOURCES = {"build", "dist", "docs", "evidence", "results", "examples", "venv", "site", "node_modules"}
_NOT_BUILT = {"tests", "test", "benchmarks"}  # native files there are not the adapter's build inputs


def _holds_native(folder: str) -> bool:
    for _, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _NOT_SOURCES]
        if any(f.endswith(_NATIVE_SUFFIXES) or f == "CMakeLists.txt" for f in files):
            return True
    return False


def evidence_sources(root: str, package: str) -> List[str]:
    """The paths (relative to ``root``) a cell's evidence is judged on: the package (in a
    ``src/`` layout, ``src``), the folders holding native sources (``csrc/``, ``cmake/``),
    the build's own files (``setup.py``, ``CMakeLists.txt``) and the tests. Sorted; only
    what exists."""
    found = set()
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, name)
        if name.startswith(".") or name in _NOT_SOURCES or os.path.islink(path):
            continue
        folder = os.path.isdir(path) and (
            name in (package, "tests", "test")
            or (name == "src" and os.path.isdir(os.path.join(path, package)))
            or _holds_native(path)
        )
        if folder or (os.path.isfile(path) and name in _NATIVE_FILES):
            found.add(name)
    return sorted(found)


def holds_native_sources(root: str, sources: List[str]) -> bool:
    """Whether any of ``sources`` (from :func:`evidence_sources`) is native: a compiled adapter."""
    return any(
        name == "CMakeLists.txt"
        or (os.path.isdir(os.path.join(root, name)) and _holds_native(os.path.join(root, name)))
        for name in sources
    )


def package_folder(root: str, package: str) -> str:
    """Where ``package`` lives in ``root``: ``src/PKG`` in a ``src/`` layout, else ``PKG``
    (also for a package not written yet)."""
    if not os.path.isdir(os.path.join(root, package)) and os.path.isdir(os.path.join(root, "src", package)):
        return os.path.join("src", package)
    return package


def build_inputs(root: str) -> List[Tuple[str, str]]:
    """What a setuptools sdist must carry for the build to run from it, as (path, MANIFEST.in
    line): each top-level ``CMakeLists.txt`` and folder holding native sources (``csrc/``,
    ``cmake/``, ``third_party/``, the package's own ``csrc/``), tests left out. setuptools ships
    a package's Python files and the sources an ``Extension`` lists, never what CMake reads."""
    out: List[Tuple[str, str]] = []
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, name)
        if name.startswith(".") or name in _NOT_SOURCES or name in _NOT_BUILT or os.path.islink(path):
            continue
        if name == "CMakeLists.txt" and os.path.isfile(path):
            out.append((name, f"include {name}"))
        elif os.path.isdir(path):
            patterns = set()
            for _, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _NOT_SOURCES and d != "__pycache__"]
                for f in files:
                    if f == "CMakeLists.txt":
                        patterns.add(f)
                    elif f.endswith(_NATIVE_SUFFIXES):
                        patterns.add("*" + os.path.splitext(f)[1])
            if patterns:
                out.append((name, f"recursive-include {name} {' '.join(sorted(patterns))}"))
    return out
