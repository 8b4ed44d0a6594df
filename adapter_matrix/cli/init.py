"""`init`: a first compat.yaml for a new adapter, from PyPI's torch facts, and the files that adopt the tool."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, List, Optional

import typer

from .base import console_for, print_diagnostics, run_or_exit
from .common import app

if TYPE_CHECKING:
    from ..upstream.adopt import Planned
    from ..upstream.init_command import InitResult


def _said(action: str, item: Planned) -> str:
    """What init says of one file: the action and its note, or for a kept file its note alone."""
    if not item.note:
        return action
    return item.note if item.action == "keep" else f"{action} ({item.note})"


_DISTRIBUTION = typer.Option(None, "--distribution", help="The adapter's distribution name on PyPI, e.g. my-adapter.")
_DEVICE = typer.Option(None, "--device", help="The PrivateUse1 device name, e.g. npu.")
_ON = typer.Option(
    None,
    "--on",
    metavar="ADAPTER",
    help="Adopt a layer that sits on this adapter (vllm-ascend on torch-npu): its matrix pins the adapter, "
    "torch and what else it needs (docs/stacks.md); give no --device.",
)
_FROM_INDEX = typer.Option(
    None,
    "--from-index",
    metavar="DISTRIBUTION",
    help="Import this adapter's published releases from --upstream (pypi, an index's URL, or a recorded folder) "
    "as the matrix, and write nothing else (docs/importing.md).",
)
_TORCH = typer.Option(
    [],
    "--torch",
    help="A torch line (2.12) or a specifier set ('>=2.9') to cover; repeatable (default: the newest line).",
)
_PYTHON = typer.Option(
    None,
    "--python",
    help="The release's Python range (default: the project's requires-python, else every Python its torch lines have).",
)
_VERSION = typer.Option(
    None,
    "--version",
    help="The adapter's first release (default: the project's [project] version, else 0.1.0).",
)
_UPSTREAM = typer.Option(
    "pypi",
    "--upstream",
    metavar="pypi|URL|PATH",
    help="Where the torch facts come from: 'pypi', or a recorded folder or Simple JSON file (offline); with "
    "--from-index also the adapter's releases: 'pypi', an index's Simple API URL (PEP 691 JSON or PEP 503 "
    "HTML; torch's facts from PyPI), or a recorded folder.",
)
_RECORD = typer.Option(
    None,
    "--record",
    metavar="DIR",
    help="With --from-index and --upstream pypi or URL: save what the import reads into DIR (torch.json and "
    "the adapter's answer with its wheels' metadata), then import from DIR.",
)
_OUTPUT = typer.Option(
    "compat.yaml",
    "--output",
    "-o",
    help="The matrix to write; the other files go next to it (the repository root).",
)
_FORCE = typer.Option(False, "--force", help="Replace an existing matrix (the other files are never replaced).")
_PACKAGE = typer.Option(
    None, "--package", help="The adapter's import package (default: the distribution's name, my_adapter)."
)
_MATRIX_ONLY = typer.Option(False, "--matrix-only", help="Write only the matrix, none of the adoption's other files.")
_DRY_RUN = typer.Option(False, "--dry-run", help="List what would be written, write nothing.")
_TOOL_REF = typer.Option(
    None,
    "--tool-ref",
    help="The ref of adapter-matrix the workflow and the hooks are pinned to, a commit SHA or a tag "
    "(default: the commit this copy was installed from by git URL, else its version's tag).",
)
_TOOL_REPOSITORY = typer.Option(
    None, "--tool-repository", help="The https://github.com/OWNER/NAME of adapter-matrix (a fork's, say)."
)
_TOOL = typer.Option(
    None,
    "--tool",
    help="What CI installs adapter-matrix with, a pip requirement (default: PyPI's release once published, "
    "else a git URL at the pinned ref).",
)
# a refused choice's subject -> its option (an installed adapter's version: as the option it would be)
_CHOICES = (
    "distribution",
    "torch",
    "python",
    "version",
    "adapter-version",
    "package",
    "record",
    "tool-ref",
    "tool-repository",
    "tool",
)
_OPTIONS = {subject: "--" + subject for subject in _CHOICES}
_WOULD = {"write": "would write", "edit": "would edit", "keep": "kept (exists)"}  # a link: "would link to" it
_DONE = {"write": "written", "edit": "edited", "link": "linked to the matrix", "keep": "kept (exists)"}


@app.command()
def init(
    distribution: Optional[str] = _DISTRIBUTION,
    device: Optional[str] = _DEVICE,
    on: Optional[str] = _ON,
    from_index: Optional[str] = _FROM_INDEX,
    torch: List[str] = _TORCH,
    python: Optional[str] = _PYTHON,
    version: Optional[str] = _VERSION,
    upstream: str = _UPSTREAM,
    record: Optional[str] = _RECORD,
    output: str = _OUTPUT,
    force: bool = _FORCE,
    package: Optional[str] = _PACKAGE,
    matrix_only: bool = _MATRIX_ONLY,
    dry_run: bool = _DRY_RUN,
    tool_ref: Optional[str] = _TOOL_REF,
    tool_repository: Optional[str] = _TOOL_REPOSITORY,
    tool: Optional[str] = _TOOL,
) -> None:
    """Adopt adapter-matrix in an adapter's repository.

    Writes a first compat.yaml (the adapter, its torch lines with their wheel facts, one
    experimental release; it validates as written), and next to it, each only if absent:
    noxfile.py with the cells, .github/workflows/matrix.yml calling the reusable workflow,
    .pre-commit-config.yaml with the hooks, a README.md with the table markers, the package's
    link to the matrix; pyproject.toml gets the entry point, the dependency and package data
    (MANIFEST.in the package data when setup.py declares its own). An existing project's
    version and requires-python are the first release's. Exit 0 written, 2 usage error.
    """
    if from_index is not None:  # an adapter's published history: a code path of its own
        from .from_index import init_from_index

        return init_from_index(from_index, device, upstream, output, force, dry_run, record)
    from ..check.facts import distribution_version
    from ..device.testimports import requirements_of_tests
    from ..upstream.init_command import InitRequest, run

    request = InitRequest(
        distribution, device, on, tuple(torch), python, version, upstream, record, output, force, package, matrix_only,
        dry_run, tool_ref, tool_repository, tool, test_needs=requirements_of_tests, sync_readme=_sync_readme,
        installed=distribution_version, report=print_diagnostics,
    )  # fmt: skip
    _said_all(run_or_exit(run, request, _OPTIONS))


def _sync_readme(matrix: Any, path: str) -> None:
    """The README's table drawn from the matrix written, between its markers."""
    from ..tables.docs import sync

    sync(matrix, [path], write=True)


def _said_all(result: InitResult) -> None:
    """What init wrote (or would write), file by file, and what to do next."""
    console = console_for()
    if result.dry_run:
        kept = "would write" if result.written else "kept (exists)"
        console.print(f"{result.output}: {kept}", markup=False)
        for item in result.planned:
            what = ("would " + item.action) if result.layer else _WOULD.get(item.action) or f"would link to {item.text}"
            console.print(f"{os.path.join(result.root, item.path)}: {_said(what, item)}", markup=False)
        return
    console.print(result.summary or f"{result.output}: kept (exists)", markup=False)
    for item in result.planned:
        console.print(f"{item.path}: {_said(_DONE[item.action], item)}", markup=False)
    if result.pyproject_errors:
        console.print(
            f"\npyproject.toml disagrees with {os.path.basename(result.output)} on {len(result.pyproject_errors)} "
            "line(s): each with its fix below; `adapter-matrix validate --pyproject pyproject.toml --write` applies them",
            markup=False,
        )
    for finding in result.pyproject_errors:
        console.print(f"  {finding}", markup=False)
    pin = result.pin
    if result.planned and pin is not None and not pin.is_commit:
        console.print(
            f"\nThe workflow and the hooks use adapter-matrix at the tag {pin.ref}: pin them to its commit "
            f"(`git ls-remote {pin.repository} {pin.ref}`, then `init --tool-ref SHA` in a fresh checkout, "
            "or edit the two refs)",
            markup=False,
        )
    if result.require:
        console.print("\n" + result.require, markup=False)
