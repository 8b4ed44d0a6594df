"""``init``'s scaffolding: the files an adapter repository needs to adopt adapter-matrix.

Beside the first ``compat.yaml`` (:mod:`adapter_matrix.upstream.starter`), ``init`` plans:

``noxfile.py``
    the ``device(...)`` cells on :mod:`adapter_matrix.nox`;
``.github/workflows/matrix.yml``
    a caller of adapter-matrix's reusable workflow, pinned to a ref ``init`` knows
    (:mod:`adapter_matrix.upstream.toolpin`);
``.github/workflows/torch-release.yml``
    a daily caller of adapter-matrix's ``torch-migrate.yml``: a pull request per new torch release;
``.pre-commit-config.yaml``
    the two hooks (``adapter-matrix-validate``, ``adapter-matrix-tables``), at the same ref;
``README.md``
    a block with the table markers (appended to an existing README);
``PKG/compat.yaml`` (``src/PKG/compat.yaml`` in a ``src/`` layout)
    a link to the root ``compat.yaml``, so the wheel carries the matrix;
``pyproject.toml``
    the entry-point, dependency and package-data lines, added in place (comments and order
    kept), the package data in the build backend's own setting (setuptools' package-data,
    scikit-build-core's ``wheel.packages``; for meson-python the line to add to
    ``meson.build`` is said); where ``setup.py`` declares ``package_data``, ``MANIFEST.in``
    ships the matrix instead (a pyproject table would replace setup.py's);
``MANIFEST.in``
    for setuptools, also the build inputs its sdist leaves out (``CMakeLists.txt``, the
    folders of native sources CMake reads): the cells build from the sdist;

and reads what an existing project declares (:mod:`adapter_matrix.upstream.project`).
Every file is written only if absent, README, pyproject.toml and MANIFEST.in excepted;
:func:`plan_adoption` says what would happen to each.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Set, Tuple

from ..backend import MESON, SCIKIT_BUILD, SETUPTOOLS, TREE_BACKENDS
from ..files import read_keeping_newlines
from ..matrix.textedit import apply_edits
from ..urls import PYTORCH_INDEX
from .project import ProjectFacts, build_inputs, package_folder, project_facts
from .pyproject import _HEADER, _Locator
from .toolpin import ToolPin, tool_pin
from .tree_backends import ROOT_INCLUDE, gaps

__all__ = [
    "Planned",
    "package_name",
    "noxfile_text",
    "workflow_text",
    "migrate_workflow_text",
    "precommit_text",
    "readme_text",
    "require_lines",
    "pyproject_edit",
    "plan_adoption",
]


@dataclass(frozen=True)
class Planned:
    """One file of the adoption: ``action`` is ``write``, ``edit``, ``link`` or ``keep``
    (present already: left alone), ``text`` what a write or edit puts there, ``note`` why or
    what (shown after the action; for ``keep``, instead of it)."""

    path: str
    action: str
    text: Optional[str] = None
    note: str = ""


def package_name(distribution: str) -> str:
    """The import name a distribution's package has by convention (``my-adapter`` -> ``my_adapter``)."""
    return re.sub(r"[^0-9A-Za-z_]", "_", distribution).lower()


def noxfile_text(distribution: str, requirements: Sequence[str] = ()) -> str:
    """The noxfile ``init`` writes; ``requirements``: what the tests import that pytest does
    not bring (PyTorch's test machinery: device/testimports.py), written out to be seen and edited."""
    wanted = (
        f"        requirements={json.dumps(list(requirements))},  # the tests import PyTorch's test machinery (found by init)\n"
        if requirements
        else ""
    )
    return _NOXFILE.replace("{requirements}", wanted).format(distribution=distribution)


_NOXFILE = '''"""{distribution}'s matrix cells: one `device(...)` session per row of `adapter-matrix plan`.

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
{requirements}        # build=("adapter-matrix", "build", "--json"),  # a native part, compiled against the cell's torch
        # env={{"MY_DRIVER_VERSION": "2.1"}},  # what a runner provides
    )
)
'''


def workflow_text(pin: Optional[ToolPin] = None, compiled: bool = False) -> str:
    """The caller of adapter-matrix's reusable workflow, pinned to ``pin`` (its workflow and the
    tool at one ref). ``compiled``: the adapter builds native code, so its cells keep their
    compiler objects (ccache)."""
    pin = tool_pin() if pin is None else pin
    how = (
        f"the commit of {pin.label}"
        if pin.is_commit and pin.label != pin.ref
        else f"{pin.label} (pin both to its commit: `git ls-remote {pin.repository} {pin.label}`)"
    )
    lines = [
        "# The compatibility matrix on GitHub Actions: one job per cell of compat.yaml, through",
        f"# adapter-matrix's reusable workflow and the tool at {how}.",
        "# Each cell builds the adapter against the cell's torch and Python, then runs its tests.",
        "name: matrix",
        "",
        "on:",
        "  push:",
        "    branches: [main]",
        "  pull_request:",
        "",
        "permissions: {}",
        "",
        "jobs:",
        "  matrix:",
        "    permissions:",
        "      contents: read",
        f"    uses: {pin.uses('.github/workflows/adapter-matrix.yml')}",
        "    with:",
        "      strategy: ${{ github.event_name == 'pull_request' && 'smoke' || 'edges' }}",
        f"      tool: {_yaml_string(pin.requirement)}",
        f'      env: \'{{"ADAPTER_MATRIX_TORCH_INDEX_URL": "{PYTORCH_INDEX.format(label="cpu")}", '
        '"ADAPTER_MATRIX_TORCH_VARIANT": "cpu"}\'',
    ]
    if compiled:
        lines.append("      ccache: true  # keep the compiler's objects between runs, per cell")
    lines += [
        "      # A build that needs more than torch (docs/adopting.md): `setup`, a bash script each cell",
        "      # runs first (sudo apt-get install -y libnuma-dev); `container`, a vendor toolkit's image",
        "      # to run each cell in, pinned by its digest. Past 256 cells the plan runs in chunks of at",
        "      # most 256 jobs; `max-parallel: 20` would cap the cell jobs running at once.",
    ]
    return "\n".join(lines) + "\n"


def migrate_workflow_text(pin: Optional[ToolPin] = None) -> str:
    """The daily caller of adapter-matrix's ``torch-migrate.yml``: a pull request per new torch
    release (docs/releasing.md). The write permissions are this job's only: the reusable
    workflow's one job pushes the branch, opens or edits the pull request, or files the issue."""
    pin = tool_pin() if pin is None else pin
    lines = [
        "# The day torch ships: each day, for a torch release compat.yaml does not describe, `adapter-matrix",
        "# migrate` and the new line's cells, then one pull request per torch line (updated, never duplicated),",
        "# or an issue when nothing could be built: adapter-matrix's reusable torch-migrate.yml (docs/releasing.md).",
        "name: torch releases",
        "",
        "on:",
        "  schedule:",
        '    - cron: "17 6 * * *"',
        "  workflow_dispatch:",
        "",
        "permissions: {}",
        "",
        "jobs:",
        "  migrate:",
        "    permissions:",
        "      contents: write  # push the branch adapter-matrix/torch-X.Y",
        "      pull-requests: write  # open or update its pull request",
        "      issues: write  # the issue when nothing could be built",
        f"    uses: {pin.uses('.github/workflows/torch-migrate.yml')}",
        "    with:",
        f"      tool: {_yaml_string(pin.requirement)}",
        f'      env: \'{{"ADAPTER_MATRIX_TORCH_INDEX_URL": "{PYTORCH_INDEX.format(label="cpu")}", '
        '"ADAPTER_MATRIX_TORCH_VARIANT": "cpu"}\'',
        "      # release-candidates: true  # also PyTorch's test channel, before the final release",
    ]
    return "\n".join(lines) + "\n"


def _yaml_string(text: str) -> str:
    """``text`` as a double-quoted YAML scalar (a requirement holds ``@`` and ``:``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def precommit_text(pin: Optional[ToolPin] = None) -> str:
    pin = tool_pin() if pin is None else pin
    rev = f"{pin.ref}  # frozen: {pin.label}" if pin.is_commit and pin.label != pin.ref else pin.ref
    return f"""# adapter-matrix's hooks: compat.yaml is valid, and the tables in README.md agree with it.
repos:
  - repo: {pin.repository}
    rev: {rev}
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


def require_lines(folder: str) -> str:
    """What the adapter's ``__init__`` starts with (``folder``: the package's, ``src/PKG`` in a src layout)."""
    return (
        f"# {folder.replace(os.sep, '/')}/__init__.py, first lines:\n"
        "from adapter_matrix import require\n\n"
        "support = require(__name__)   # raises UnsupportedEnvironment with the fix (warns under autoload)\n"
    )


def _entry(distribution: str, package: str) -> str:
    return f'{distribution} = "{package}:compat.yaml"'


def pyproject_edit(
    text: str,
    distribution: str,
    package: str,
    package_data: bool = True,
    backend: str = SETUPTOOLS,
    folder: Optional[str] = None,
) -> Optional[Tuple[str, List[str]]]:
    """``text`` with the entry point, the ``adapter-matrix`` dependency and the package data
    added, and what of them was added (``None``: all are there). Lines are inserted under an existing table, or a new table
    is appended; nothing else changes.

    The package data is the ``backend``'s own setting: setuptools'
    ``[tool.setuptools.package-data]`` (keyed by package, so a ``src/`` layout too);
    scikit-build-core's ``wheel.packages`` (the package ``folder``, ``src/PKG``, copied whole
    into the wheel: its default finds a package only under the distribution's own name).
    ``package_data=False`` leaves it alone: a setuptools table would replace what a
    ``setup.py`` declares (its ``lib/*.so`` silently leave the wheel), and a
    ``wheel.packages`` the project set is its choice. A file without ``[project]`` is left
    alone: a ``[project.entry-points]`` table would make a ``[project]`` without a name or
    version."""
    at = _Locator("pyproject.toml", text)
    if not any((m := _HEADER.match(raw)) and m.group(1).strip() == "project" for raw in at.lines):
        return None
    data = {
        SETUPTOOLS: (
            "tool.setuptools.package-data",
            "[tool.setuptools.package-data]",
            f'{package} = ["compat.yaml"]',
            re.compile(r"compat\.yaml"),
        ),
        SCIKIT_BUILD: (
            "tool.scikit-build",
            "[tool.scikit-build]",
            f'wheel.packages = ["{(folder or package).replace(os.sep, "/")}"]',
            re.compile(r"^\s*wheel\.packages\s*=", re.M),
        ),
        # flit-core and pdm-backend ship the package folder whole, but their sdist (which the cells
        # build from) leaves out the matrix at the root that the package's link points to
        **{name: (*setting, re.compile(r"compat\.yaml")) for name, setting in ROOT_INCLUDE.items()},
    }.get(backend)
    wanted = [
        (
            "project.entry-points.adapter_matrix.matrices",
            '[project.entry-points."adapter_matrix.matrices"]',
            _entry(distribution, package),
            re.compile(rf'^\s*"?{re.escape(distribution)}"?\s*=', re.M),
        ),
        *([data] if package_data and data is not None else []),
    ]
    edits = []
    appended = []
    added = []  # what init says it added: the lines here differ per backend and per project
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
        if name.startswith("project."):
            added.append("the entry point")
        else:  # the package data, in the backend's own words
            added.append(
                f"{'compat.yaml' if backend in (SETUPTOOLS, *ROOT_INCLUDE) else line.split(' = ')[0]} in {header}"
            )
    dependency = _dependency_edit(at, text)
    if dependency:
        added.insert(1 if added and added[0] == "the entry point" else 0, 'the requirement "adapter-matrix"')
    edits += dependency
    if not edits and not appended:
        return None
    out = apply_edits(text, edits)
    return out + ("" if out.endswith("\n") else "\n") + "".join(appended), added


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


def _minimal_pyproject(distribution: str, package: str, version: str = "0.1.0") -> str:
    return f"""[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "{distribution}"
version = "{version}"
dependencies = ["adapter-matrix"]

[tool.setuptools]
packages = ["{package}"]

[tool.setuptools.package-data]
{package} = ["compat.yaml"]

[project.entry-points."adapter_matrix.matrices"]
{_entry(distribution, package)}
"""


def plan_adoption(
    root: str,
    distribution: str,
    package: str,
    matrix: str = "compat.yaml",
    *,
    version: str = "0.1.0",
    facts: Optional[ProjectFacts] = None,
    pin: Optional[ToolPin] = None,
    compiled: bool = False,
    test_needs: Sequence[str] = (),
) -> List[Planned]:
    """What adopting adapter-matrix writes in ``root`` (``matrix`` is written by the caller).
    ``facts`` is what the project declares (read when not given), ``pin`` where the workflow
    and the hooks take adapter-matrix from, ``compiled`` whether the adapter builds native code
    (its workflow caches compiler objects)."""
    facts = project_facts(root) if facts is None else facts
    pin = tool_pin() if pin is None else pin
    files = [
        ("noxfile.py", noxfile_text(distribution, test_needs)),
        (os.path.join(".github", "workflows", "matrix.yml"), workflow_text(pin, compiled)),
        (os.path.join(".github", "workflows", "torch-release.yml"), migrate_workflow_text(pin)),
        (".pre-commit-config.yaml", precommit_text(pin)),
        ("README.md", readme_text(distribution)),
    ]
    out = [
        Planned(path, "keep" if os.path.lexists(os.path.join(root, path)) else "write", text) for path, text in files
    ]
    out = [_readme_edit(root, item) if item.path == "README.md" and item.action == "keep" else item for item in out]
    folder = package_folder(root, package)
    link = os.path.join(folder, "compat.yaml")
    if os.path.lexists(os.path.join(root, link)):
        out.append(Planned(link, "keep"))
    elif os.path.isdir(os.path.join(root, folder)):
        out.append(Planned(link, "link", os.path.relpath(os.path.join(root, matrix), os.path.join(root, folder))))
    else:
        out.append(Planned(link, "keep", note=f"no package folder {folder}/: link {link} to {matrix} once it exists"))
    pyproject = os.path.join(root, "pyproject.toml")
    legacy = os.path.exists(os.path.join(root, "setup.py")) or os.path.exists(os.path.join(root, "setup.cfg"))
    manifest: List[str] = []  # what MANIFEST.in must name (setuptools only: other backends ship the tree)
    if legacy and not facts.has_project_table:
        # the metadata lives in setup.py/setup.cfg: a [project] table (a new pyproject.toml, or an
        # entry-point table in the existing one) would take it over with a name and version of ours
        where = facts.package_data_in or "setup.py"
        out.append(
            Planned(
                "pyproject.toml",
                "keep",
                note=f"{'kept' if os.path.exists(pyproject) else 'not written'}: the metadata is in {where}; add to it "
                f'the entry point adapter_matrix.matrices: "{_entry(distribution, package).replace(chr(34), "")}", '
                f'the requirement "adapter-matrix", and "compat.yaml" to the package data of {package}',
            )
        )
    elif not os.path.exists(pyproject):
        out.append(Planned("pyproject.toml", "write", _minimal_pyproject(distribution, package, version)))
    else:
        inside = os.path.normpath(os.path.join(root, matrix)) == os.path.normpath(os.path.join(root, link))
        own_data = (
            bool(facts.package_data_in)
            or (facts.backend == SCIKIT_BUILD and facts.wheel_packages)
            or (facts.backend in TREE_BACKENDS and inside)  # no link: the package folder holds the matrix
        )
        text, back = read_keeping_newlines(pyproject)
        edited = pyproject_edit(
            text, distribution, package, package_data=not own_data, backend=facts.backend, folder=folder
        )
        if edited is None:
            out.append(Planned("pyproject.toml", "keep"))
        else:
            out.append(Planned("pyproject.toml", "edit", back(edited[0]), f"{_listed(edited[1])} added"))
        if facts.backend == SETUPTOOLS and facts.package_data_in:
            manifest.append(f"include {link.replace(os.sep, '/')}")
        elif facts.backend == MESON:
            out.append(_meson_note(folder, package))
        elif facts.backend in TREE_BACKENDS:
            out += _tree_notes(facts, link, None if inside else os.path.relpath(os.path.join(root, matrix), root))
        elif facts.backend not in (SETUPTOOLS, SCIKIT_BUILD):
            out.append(Planned("pyproject.toml", "keep", note=f"an unknown build backend: make its wheel ship {link}"))
    if facts.backend == SETUPTOOLS and (legacy or facts.has_project_table):
        manifest += [line for _path, line in build_inputs(root)]
    if manifest:
        out.append(_manifest_edit(root, manifest, facts.package_data_in))
    return out


def _listed(parts: List[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _tree_notes(facts: ProjectFacts, link: str, matrix: Optional[str]) -> List[Planned]:
    """hatchling, flit-core and pdm-backend ship the package folder whole: said, or what of the
    project's own configuration leaves the matrix out and the change that ships it."""
    slash = link.replace(os.sep, "/")
    found = gaps(facts.backend, facts.tool, slash, None if matrix is None else matrix.replace(os.sep, "/"))
    if not found:
        said = f"{facts.backend} ships every file of the package folder in the wheel: {slash} needs no package-data setting"
        if facts.backend in ROOT_INCLUDE and matrix is not None:  # written by pyproject_edit
            said += f"; the sdist the cells build from gets the link's target, compat.yaml, in {ROOT_INCLUDE[facts.backend][1]}"
        return [Planned("pyproject.toml", "keep", note=said)]
    return [Planned("pyproject.toml", "keep", note=gap) for gap in found]


def _meson_note(folder: str, package: str) -> Planned:
    """meson-python ships what ``meson.build`` installs: init says the line, never edits the build."""
    line = f"py.install_sources('{folder.replace(os.sep, '/')}/compat.yaml', subdir: '{package}')"
    return Planned("meson.build", "keep", note=f"add `{line}` to meson.build: meson-python ships what it installs")


def _manifest_edit(root: str, lines: List[str], package_data_in: str) -> Planned:
    """MANIFEST.in with ``lines`` added, each unless the file names its path already.

    ``include PKG/compat.yaml`` when setup.py/setup.cfg declares package_data: setuptools'
    ``include_package_data`` (on for a project with ``[project]``) adds what MANIFEST.in names
    to the package data setup.py declares, where a ``[tool.setuptools.package-data]`` table
    would replace it. The build inputs (``include CMakeLists.txt``, ``recursive-include csrc
    ...``): setuptools' sdist leaves out what CMake reads, and the cells build from the sdist.
    A folder the file mentions already is left to its author's lines."""
    path = os.path.join(root, "MANIFEST.in")
    back: Callable[[str], str] = str
    try:
        text: Optional[str]
        text, back = read_keeping_newlines(path)
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError):
        return Planned("MANIFEST.in", "keep", note=f"unreadable: add the lines {lines!r}")
    named = _manifest_paths(text or "")
    added = [line for line in lines if line.split()[1] not in named]
    whys = []
    if any(line.endswith("/compat.yaml") for line in added):
        whys.append(f"{package_data_in} declares package_data, which a pyproject table would replace")
    if any(not line.endswith("/compat.yaml") for line in added):
        whys.append("the sdist the cells build from must carry what CMake and the compiler read")
    why = "; ".join(whys)
    if not added:
        return Planned("MANIFEST.in", "keep")
    if text is None:
        return Planned("MANIFEST.in", "write", "\n".join(added) + "\n", f"{', '.join(added)}: {why}")
    sep = "" if not text or text.endswith("\n") else "\n"
    edited = back(text + sep + "\n".join(added) + "\n")
    return Planned("MANIFEST.in", "edit", edited, f"{', '.join(added)} added: {why}")


def _manifest_paths(text: str) -> Set[str]:
    """The paths and top folders a MANIFEST.in's directives name (``include csrc/a.h`` names
    ``csrc/a.h`` and ``csrc``)."""
    named: Set[str] = set()
    for raw in text.splitlines():
        words = raw.split("#", 1)[0].split()
        if len(words) < 2:
            continue
        directive, args = words[0], words[1:]
        if directive in ("recursive-include", "graft", "recursive-exclude", "prune"):
            args = args[:1]  # the folder; the rest are patterns
        for arg in args:
            named.add(arg)
            named.add(arg.split("/", 1)[0])
    return named


def _readme_edit(root: str, kept: Planned) -> Planned:
    """An existing README gains the table block at its end, unless it has one (the tables hook
    that init installs checks the README: without the block it would fail at once)."""
    path = os.path.join(root, kept.path)
    try:
        text, back = read_keeping_newlines(path)
    except (OSError, UnicodeDecodeError):
        return kept
    if "adapter-matrix:table" in text:
        return kept
    sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return Planned(kept.path, "edit", back(text + sep + _readme_block()), "the table block added at its end")
