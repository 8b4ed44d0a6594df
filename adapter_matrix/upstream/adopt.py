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
from typing import List, Optional

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
]

TOOL_REPOSITORY = (
    "OWNER/adapter-matrix"  # where the reusable workflow and the hooks live (.pre-commit-hooks.yaml says the same)
)
TOOL_REV = "v0.1.0"


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
    return f"""# {distribution}

## Compatibility

Generated from compat.yaml by `adapter-matrix table --write README.md`:

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


def pyproject_edit(text: str, distribution: str, package: str) -> Optional[str]:
    """``text`` with the entry point and the package data added (``None``: both are there).
    Lines are inserted under an existing table, or a new table is appended; nothing else changes."""
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
    ]
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
    if not edits and not appended:
        return None
    out = apply_edits(text, edits)
    return out + ("" if out.endswith("\n") else "\n") + "".join(appended)


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
        with open(pyproject, encoding="utf-8") as fh:
            edited = pyproject_edit(fh.read(), distribution, package)
        out.append(Planned("pyproject.toml", "keep" if edited is None else "edit", edited))
    return out
