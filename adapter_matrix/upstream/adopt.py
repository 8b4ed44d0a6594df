"""``init``'s scaffolding: the files an adapter repository needs to adopt adapter-matrix.

Beside the first ``compat.yaml`` (:mod:`adapter_matrix.upstream.starter`), ``init`` plans:

``noxfile.py``
    the ``device(...)`` cells on :mod:`adapter_matrix.nox`;
``.github/workflows/matrix.yml``
    a caller of adapter-matrix's reusable workflow;
``.pre-commit-config.yaml``
    the two hooks (``adapter-matrix-validate``, ``adapter-matrix-tables``);
``README.md``
    a block with the table markers (only when there is no README);
``PKG/compat.yaml``
    a link to the root ``compat.yaml``, so the wheel carries the matrix;
``pyproject.toml``
    the package-data and entry-point lines, added in place (comments and order kept).

Every file is written only if absent; :func:`plan_adoption` says what would happen to each.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..matrix.textedit import apply_edits
from .pyproject import _HEADER, _Locator

__all__ = [
    "TOOL_REPOSITORY",
    "Planned",
    "package_name",
    "noxfile_text",
    "workflow_text",
    "precommit_text",
    "readme_text",
    "require_lines",
    "pyproject_edit",
    "plan_adoption",
    "evidence_sources",
    "ProjectFacts",
    "project_facts",
]

TOOL_REPOSITORY = (
    "OWNER/adapter-matrix"  # where the reusable workflow and the hooks live (.pre-commit-hooks.yaml says the same)
)
TOOL_REV = "v0.1.0"


# What a compiled adapter's build reads besides its package: a change to any of these can change
# the binary a cell tested, so the cell's evidence must age with them (issue 43).
_NATIVE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hh", ".hpp", ".cuh", ".cmake", ".in")
_NATIVE_FILES = ("CMakeLists.txt", "setup.py", "setup.cfg", "MANIFEST.in")
_NOT_SOURCES = {"build", "dist", "docs", "evidence", "results", "examples", "venv", "site", "node_modules"}


def _holds_native(folder: str) -> bool:
    for _, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _NOT_SOURCES]
        if any(f.endswith(_NATIVE_SUFFIXES) or f == "CMakeLists.txt" for f in files):
            return True
    return False


def evidence_sources(root: str, package: str) -> List[str]:
    """The paths (relative to ``root``) a cell's evidence is judged on: the package, the folders
    holding native sources (``csrc/``, ``cmake/``, a ``src/`` layout), the build's own files
    (``setup.py``, ``CMakeLists.txt``) and the tests. Sorted; only what exists."""
    found = set()
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, name)
        if name.startswith(".") or name in _NOT_SOURCES or os.path.islink(path):
            continue
        if (os.path.isdir(path) and (name in (package, "tests", "test") or _holds_native(path))) or (
            os.path.isfile(path) and name in _NATIVE_FILES
        ):
            found.add(name)
    return sorted(found)


@dataclass(frozen=True)
class ProjectFacts:
    """What an existing ``pyproject.toml`` declares that the first release must agree with;
    ``None`` where it declares nothing readable, ``why`` says what could not be read."""

    version: Optional[str] = None
    requires_python: Optional[str] = None
    why: str = ""


def project_facts(root: str) -> ProjectFacts:
    """The version and ``requires-python`` of the project in ``root`` (``[project]``), read
    without building it. A dynamic version cannot be known without running the build backend:
    ``why`` says so, and the caller takes ``--version``."""
    path = os.path.join(root, "pyproject.toml")
    if not os.path.isfile(path):
        return ProjectFacts()
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
    try:
        with open(path, "rb") as fh:
            project = tomllib.load(fh).get("project") or {}
    except (OSError, ValueError):
        return ProjectFacts(why="pyproject.toml cannot be read as TOML")
    version = project.get("version")
    requires = project.get("requires-python")
    why = ""
    if not isinstance(version, str):
        version = None
        if "version" in (project.get("dynamic") or []):
            why = "the project's version is dynamic (set by its build backend): give --version"
    return ProjectFacts(version, requires if isinstance(requires, str) else None, why)


@dataclass(frozen=True)
class Planned:
    """One file of the adoption: ``action`` is ``write``, ``edit``, ``link`` or ``keep``
    (present already: left alone), ``text`` what a write or edit puts there."""

    path: str
    action: str
    text: Optional[str] = None
    note: str = ""


def package_name(distribution: str) -> str:
    """The import name a distribution's package has by convention (``my-adapter`` -> ``my_adapter``)."""
    return re.sub(r"[^0-9A-Za-z_]", "_", distribution).lower()


def noxfile_text(distribution: str) -> str:
    return f'''"""{distribution}'s matrix cells: one `device(...)` session per row of `adapter-matrix plan`.

    nox -l                                # every cell of compat.yaml
    nox -t smoke                          # the smoke tier
    nox -s "device(py3.11-torch2.13)"     # one cell, by the id `adapter-matrix plan` prints
    ADAPTER_MATRIX_WHEELS=/path/to/wheels nox -s "device(py3.11-torch2.13)"   # offline

adapter_matrix.nox declares the cells; this file says what to build and how to test.
"""

import nox

from adapter_matrix.nox import Adapter, Pytest, cells

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["device"]  # a bare `nox` runs every cell: select a tier with -t

cells(
    Adapter(
        matrix="compat.yaml",
        projects=["."],  # the folders built into wheels and installed, in order
        tests=Pytest("tests"),  # or Command(["python", "-m", "mysuite", "{{posargs}}"])
        # build=("adapter-matrix", "build", "--json"),  # a native part, compiled against the cell's torch
        # env={{"MY_DRIVER_VERSION": "2.1"}},  # what a runner provides
    )
)
'''


def workflow_text() -> str:
    return f"""# The compatibility matrix on GitHub Actions: one job per cell of compat.yaml, through
# adapter-matrix's reusable workflow (pin it to the commit SHA of the release you adopt).
name: matrix

on:
  push:
    branches: [main]
  pull_request:

permissions: {{}}

jobs:
  matrix:
    permissions:
      contents: read
    uses: {TOOL_REPOSITORY}/.github/workflows/adapter-matrix.yml@{TOOL_REV}
    with:
      strategy: ${{{{ github.event_name == 'pull_request' && 'smoke' || 'edges' }}}}
      env: '{{"ADAPTER_MATRIX_TORCH_INDEX_URL": "https://download.pytorch.org/whl/cpu", "ADAPTER_MATRIX_TORCH_VARIANT": "cpu"}}'
"""


def precommit_text() -> str:
    return f"""# adapter-matrix's hooks: compat.yaml is valid, and the tables in README.md agree with it.
repos:
  - repo: https://github.com/{TOOL_REPOSITORY}
    rev: {TOOL_REV}
    hooks:
      - id: adapter-matrix-validate
      - id: adapter-matrix-tables
        args: [README.md]
"""


def readme_text(distribution: str) -> str:
    return f"# {distribution}\n\n" + _readme_block()


def _readme_block() -> str:
    return """## Compatibility

Generated from compat.yaml by `adapter-matrix table --update README.md`:

<!-- adapter-matrix:table view=grid -->
<!-- /adapter-matrix:table -->
"""


def require_lines(package: str) -> str:
    """What the adapter's ``__init__`` starts with."""
    return (
        f"# {package}/__init__.py, first lines:\n"
        "from adapter_matrix import require\n\n"
        "support = require(__name__)   # raises UnsupportedEnvironment with the fix (warns under autoload)\n"
    )


def _entry(distribution: str, package: str) -> str:
    return f'{distribution} = "{package}:compat.yaml"'


def pyproject_edit(text: str, distribution: str, package: str, package_data: bool = True) -> Optional[str]:
    """``text`` with the entry point and the package data added (``None``: both are there).
    Lines are inserted under an existing table, or a new table is appended; nothing else changes.
    ``package_data=False`` leaves package data alone: a ``[tool.setuptools.package-data]`` table
    would replace what a ``setup.py`` declares (its ``lib/*.so`` silently leave the wheel)."""
    at = _Locator("pyproject.toml", text)
    wanted = [
        (
            "project.entry-points.adapter_matrix.matrices",
            '[project.entry-points."adapter_matrix.matrices"]',
            _entry(distribution, package),
            re.compile(rf'^\s*"?{re.escape(distribution)}"?\s*=', re.M),
        ),
        (
            "tool.setuptools.package-data",
            "[tool.setuptools.package-data]",
            f'{package} = ["compat.yaml"]',
            re.compile(r"compat\.yaml"),
        ),
    ][: 2 if package_data else 1]
    edits = []
    appended = []
    for name, header, line, present in wanted:
        has_table = any(
            (m := _HEADER.match(raw)) and m.group(1).replace(" ", "").replace('"', "") == name for raw in at.lines
        )
        if has_table:
            start, end = at._table(name)
            body = "\n".join(at.lines[start:end])
            if present.search(body):
                continue
            offset = sum(len(raw) + 1 for raw in at.lines[:start])  # the line after the header
            key = line.split(" = ")[0]
            listed = re.compile(rf'^[ \t]*"?{re.escape(key)}"?[ \t]*=[ \t]*\[', re.M).search(text, offset)
            if listed is not None and listed.start() < offset + len(body) + 1:  # the key exists: add to its list
                edits.append((listed.end(), listed.end(), '"compat.yaml", '))
            else:
                edits.append((offset, offset, line + "\n"))
        else:
            appended.append(f"\n{header}\n{line}\n")
    edits += _dependency_edit(at, text)
    if not edits and not appended:
        return None
    out = apply_edits(text, edits)
    return out + ("" if out.endswith("\n") else "\n") + "".join(appended)


def _dependency_edit(at: _Locator, text: str) -> List[Tuple[int, int, str]]:
    """Add ``adapter-matrix`` to ``[project] dependencies``: ``require()`` imports it at the
    adapter's import, so the wheel must pull it in. Nothing when it is listed already, when
    dependencies are dynamic, or when there is no ``[project]`` table."""
    if not any((m := _HEADER.match(raw)) and m.group(1).strip() == "project" for raw in at.lines):
        return []
    start, end = at._table("project")
    offset = sum(len(raw) + 1 for raw in at.lines[:start])
    body = "\n".join(at.lines[start:end])
    if re.search(r"""["']adapter[-_.]matrix(?![-_.\w])""", body, re.I) or re.search(
        r"^\s*dynamic\s*=.*\bdependencies\b", body, re.M
    ):
        return []
    listed = re.search(r"^[ \t]*dependencies[ \t]*=[ \t]*\[", body, re.M)
    if listed is not None:
        return [(offset + listed.end(), offset + listed.end(), '"adapter-matrix", ')]
    return [(offset, offset, 'dependencies = ["adapter-matrix"]\n')]


def _minimal_pyproject(distribution: str, package: str) -> str:
    return f"""[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "{distribution}"
version = "0.1.0"
dependencies = ["adapter-matrix"]

[tool.setuptools]
packages = ["{package}"]

[tool.setuptools.package-data]
{package} = ["compat.yaml"]

[project.entry-points."adapter_matrix.matrices"]
{_entry(distribution, package)}
"""


def plan_adoption(root: str, distribution: str, package: str, matrix: str = "compat.yaml") -> List[Planned]:
    """What adopting adapter-matrix writes in ``root`` (``matrix`` is written by the caller)."""
    files = [
        ("noxfile.py", noxfile_text(distribution)),
        (os.path.join(".github", "workflows", "matrix.yml"), workflow_text()),
        (".pre-commit-config.yaml", precommit_text()),
        ("README.md", readme_text(distribution)),
    ]
    out = [
        Planned(path, "keep" if os.path.lexists(os.path.join(root, path)) else "write", text) for path, text in files
    ]
    out = [_readme_edit(root, item) if item.path == "README.md" and item.action == "keep" else item for item in out]
    link = os.path.join(package, "compat.yaml")
    if os.path.lexists(os.path.join(root, link)):
        out.append(Planned(link, "keep"))
    elif os.path.isdir(os.path.join(root, package)):
        out.append(Planned(link, "link", os.path.relpath(os.path.join(root, matrix), os.path.join(root, package))))
    else:
        out.append(Planned(link, "keep", note=f"no package folder {package}/: link {link} to {matrix} once it exists"))
    pyproject = os.path.join(root, "pyproject.toml")
    if not os.path.exists(pyproject):
        out.append(Planned("pyproject.toml", "write", _minimal_pyproject(distribution, package)))
    else:
        own_data = _setup_py_declares_package_data(root)
        with open(pyproject, encoding="utf-8") as fh:
            edited = pyproject_edit(fh.read(), distribution, package, package_data=not own_data)
        note = (
            f"{'edited (entry point added)' if edited else 'kept'}; setup.py declares package_data, which a "
            f'pyproject table would replace: add "compat.yaml" to package_data[{package!r}] in setup.py'
            if own_data
            else ""
        )
        out.append(Planned("pyproject.toml", "keep" if edited is None else "edit", edited, note))
    return out


def _readme_edit(root: str, kept: Planned) -> Planned:
    """An existing README gains the table block at its end, unless it has one (the tables hook
    that init installs checks the README: without the block it would fail at once)."""
    path = os.path.join(root, kept.path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return kept
    if "adapter-matrix:table" in text:
        return kept
    sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return Planned(kept.path, "edit", text + sep + _readme_block(), "edited (the table block added at its end)")


def _setup_py_declares_package_data(root: str) -> bool:
    path = os.path.join(root, "setup.py")
    try:
        with open(path, encoding="utf-8") as fh:
            return "package_data" in fh.read()
    except OSError:
        return False
