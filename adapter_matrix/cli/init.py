"""`init`: a first compat.yaml for a new adapter, from PyPI's torch facts, and the files that adopt the tool."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional

import typer

from .base import console_for, fail, print_diagnostics
from .common import app

if TYPE_CHECKING:
    from ..upstream.adopt import Planned


def _said(action: str, item: Planned) -> str:
    """What init says of one file: the action and its note, or for a kept file its note alone."""
    if not item.note:
        return action
    return item.note if item.action == "keep" else f"{action} ({item.note})"


@app.command()
def init(
    distribution: Optional[str] = typer.Option(
        None, "--distribution", help="The adapter's distribution name on PyPI, e.g. my-adapter."
    ),
    device: Optional[str] = typer.Option(None, "--device", help="The PrivateUse1 device name, e.g. npu."),
    on: Optional[str] = typer.Option(
        None,
        "--on",
        metavar="ADAPTER",
        help="Adopt a layer that sits on this adapter (vllm-ascend on torch-npu): its matrix pins the adapter, "
        "torch and what else it needs (docs/stacks.md); give no --device.",
    ),
    from_index: Optional[str] = typer.Option(
        None,
        "--from-index",
        metavar="DISTRIBUTION",
        help="Import this adapter's published releases from --upstream (pypi, an index's URL, or a recorded folder) "
        "as the matrix, and write nothing else (docs/importing.md).",
    ),
    torch: List[str] = typer.Option(
        [],
        "--torch",
        help="A torch line (2.12) or a specifier set ('>=2.9') to cover; repeatable (default: the newest line).",
    ),
    python: Optional[str] = typer.Option(
        None,
        "--python",
        help="The release's Python range (default: the project's requires-python, else every Python its torch lines have).",
    ),
    version: Optional[str] = typer.Option(
        None,
        "--version",
        help="The adapter's first release (default: the project's [project] version, else 0.1.0).",
    ),
    upstream: str = typer.Option(
        "pypi",
        "--upstream",
        metavar="pypi|URL|PATH",
        help="Where the torch facts come from: 'pypi', or a recorded folder or Simple JSON file (offline); with "
        "--from-index also the adapter's releases: 'pypi', an index's Simple API URL (PEP 691 JSON or PEP 503 "
        "HTML; torch's facts from PyPI), or a recorded folder.",
    ),
    record: Optional[str] = typer.Option(
        None,
        "--record",
        metavar="DIR",
        help="With --from-index and --upstream pypi or URL: save what the import reads into DIR (torch.json and "
        "the adapter's answer with its wheels' metadata), then import from DIR.",
    ),
    output: str = typer.Option(
        "compat.yaml",
        "--output",
        "-o",
        help="The matrix to write; the other files go next to it (the repository root).",
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace an existing matrix (the other files are never replaced)."
    ),
    package: Optional[str] = typer.Option(
        None, "--package", help="The adapter's import package (default: the distribution's name, my_adapter)."
    ),
    matrix_only: bool = typer.Option(
        False, "--matrix-only", help="Write only the matrix, none of the adoption's other files."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be written, write nothing."),
    tool_ref: Optional[str] = typer.Option(
        None,
        "--tool-ref",
        help="The ref of adapter-matrix the workflow and the hooks are pinned to, a commit SHA or a tag "
        "(default: the commit this copy was installed from by git URL, else its version's tag).",
    ),
    tool_repository: Optional[str] = typer.Option(
        None, "--tool-repository", help="The https://github.com/OWNER/NAME of adapter-matrix (a fork's, say)."
    ),
    tool: Optional[str] = typer.Option(
        None,
        "--tool",
        help="What CI installs adapter-matrix with, a pip requirement (default: PyPI's release once published, "
        "else a git URL at the pinned ref).",
    ),
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
    if record is not None:
        fail("--record records an index's answer for --from-index DISTRIBUTION: give it")
    if on is not None:
        if distribution is None or device is not None:
            fail("a layer: give --distribution NAME --on ADAPTER, and no --device (the adapter's matrix has it)")
        return _init_layer(distribution, on, torch, python, version, output, force, package, matrix_only, dry_run)
    if distribution is None or device is None:
        fail("give --distribution NAME and --device NAME (or --from-index DISTRIBUTION to import a published history)")
    from ..errors import ChoiceError
    from ..files import atomic_write
    from ..matrix.diagnostics import MatrixError
    from ..matrix.loader import load_text
    from ..upstream.adopt import package_name, plan_adoption, require_lines
    from ..upstream.index import UpstreamError, read_upstream
    from ..upstream.project import evidence_sources, holds_native_sources, package_folder, project_facts
    from ..upstream.starter import choose_lines, starter_text
    from ..upstream.toolpin import tool_pin

    console = console_for()
    keep_matrix = os.path.exists(output) and not force
    if keep_matrix and matrix_only:
        fail(f"{output} exists; give --force to replace it, or --output another file")
    root = os.path.dirname(os.path.abspath(output))
    pkg = package or package_name(distribution)
    if not pkg.isidentifier():
        fail(f"--package {pkg!r} is not an importable name; give --package")
    # an existing project's own declarations win over the defaults: a matrix that disagrees
    # with them fails `validate --pyproject` at once, and plans cells pip would refuse
    facts = project_facts(root)
    if version is None:
        if facts.why and not keep_matrix:
            fail(f"{root}: {facts.why}")
        version = facts.version or "0.1.0"
    if python is None:
        python = facts.requires_python
    try:
        pin = tool_pin(tool_repository, tool_ref, tool)
    except ChoiceError as exc:
        fail(f"--{exc.subject} {exc}")
    sources = evidence_sources(root, pkg)
    text = None
    written = None
    if not keep_matrix:
        try:
            index = read_upstream(upstream)
            lines = choose_lines(index, torch)
            text = starter_text(
                distribution,
                device,
                lines,
                "PyPI" if upstream == "pypi" else os.path.basename(upstream),
                version,
                python,
                sources=[] if matrix_only else sources,
            )
        except ChoiceError as exc:  # the library names the choice; the option is ours to name
            fail(f"--{exc.subject} {exc}")
        except UpstreamError as exc:
            fail(str(exc))
        try:
            written = load_text(text, output).matrix
        except MatrixError as exc:  # a name the file cannot hold, e.g. a device that is no identifier
            print_diagnostics(exc.diagnostics)
            fail(f"{output} was not written: the options above make an invalid matrix")
    compiled = facts.builds_with_torch or holds_native_sources(root, sources)
    from ..device.testimports import requirements_of_tests

    planned = (
        []
        if matrix_only
        else plan_adoption(
            root,
            distribution,
            pkg,
            os.path.basename(output),
            version=version,
            facts=facts,
            pin=pin,
            compiled=compiled,
            test_needs=requirements_of_tests(os.path.join(root, "tests")),  # PyTorch-style tests' imports
        )
    )
    if dry_run:
        console.print(f"{output}: {'kept (exists)' if keep_matrix else 'would write'}", markup=False)
        for item in planned:
            what = {
                "write": "would write",
                "edit": "would edit",
                "link": f"would link to {item.text}",
                "keep": "kept (exists)",
            }[item.action]
            console.print(f"{os.path.join(root, item.path)}: {_said(what, item)}", markup=False)
        return
    try:
        if text is not None:
            atomic_write(output, text)
        for item in planned:
            target = os.path.join(root, item.path)
            if item.action in ("write", "edit"):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                atomic_write(target, item.text or "")
            elif item.action == "link":
                os.symlink(item.text or "", target)
        readme = [i for i in planned if i.path == "README.md" and i.action in ("write", "edit")]
        if text is not None and written is not None and readme:
            # the table itself, not only its markers: the tables hook init installs checks it
            from ..tables.docs import sync

            sync(written, [os.path.join(root, readme[0].path)], write=True)
    except OSError as exc:
        fail(f"{exc.filename}: cannot write: {exc.strerror}")
    if text is not None:
        read = f" (from {facts.version_from})" if facts.version_from and version == facts.version else ""
        console.print(
            f"{output}: written \u2014 torch {lines[0].minor}\u2013{lines[-1].minor}, release {version}{read}; "
            "next: `adapter-matrix validate`, `adapter-matrix table`, `adapter-matrix plan`",
            markup=False,
        )
    else:
        console.print(f"{output}: kept (exists)", markup=False)
    for item in planned:
        done = {
            "write": "written",
            "edit": "edited",  # the item's note says what was added
            "link": "linked to the matrix",
            "keep": "kept (exists)",
        }[item.action]
        console.print(f"{item.path}: {_said(done, item)}", markup=False)
    pyproject = os.path.join(root, "pyproject.toml")
    if written is not None and not matrix_only and os.path.isfile(pyproject):
        # what init keeps of the project (its requires-python) may disagree with the torch lines
        # chosen: said now, not first by the hook or CI
        from ..upstream.pyproject import check_pyproject

        errors = [f for f in check_pyproject(written, pyproject) if f.severity == "error"]
        if errors:
            console.print(
                f"\npyproject.toml disagrees with {os.path.basename(output)} on {len(errors)} line(s): each with its "
                "fix below; `adapter-matrix validate --pyproject pyproject.toml --write` applies them",
                markup=False,
            )
        for finding in errors:
            console.print(f"  {finding}", markup=False)
    if planned and not pin.is_commit:
        console.print(
            f"\nThe workflow and the hooks use adapter-matrix at the tag {pin.ref}: pin them to its commit "
            f"(`git ls-remote {pin.repository} {pin.ref}`, then `init --tool-ref SHA` in a fresh checkout, "
            "or edit the two refs)",
            markup=False,
        )
    if planned:
        console.print("\n" + require_lines(package_folder(root, pkg)), markup=False)


def _init_layer(
    distribution: str,
    adapter: str,
    torch: List[str],
    python: Optional[str],
    version: Optional[str],
    output: str,
    force: bool,
    package: Optional[str],
    matrix_only: bool,
    dry_run: bool,
) -> None:
    """``init --on ADAPTER``: a layer's first matrix (pinning the torch and the adapter installed
    here, when they are), and its registration: the package's link to the matrix, the entry
    point and the package data in pyproject.toml. A layer's cells are its adapter's: no noxfile
    or workflow is written."""
    from ..check.facts import distribution_version
    from ..errors import ChoiceError
    from ..files import atomic_write
    from ..matrix.cache import load_any
    from ..matrix.diagnostics import MatrixError
    from ..upstream.adopt import package_name, plan_adoption
    from ..upstream.project import package_folder, project_facts
    from ..upstream.starter import layer_text

    console = console_for()
    if os.path.exists(output) and not force:
        fail(f"{output} exists; give --force to replace it, or --output another file")
    if len(torch) > 1:
        fail("a layer's first release pins one torch: give --torch once (e.g. --torch 2.10.0)")
    root = os.path.dirname(os.path.abspath(output))
    pkg = package or package_name(distribution)
    if not pkg.isidentifier():
        fail(f"--package {pkg!r} is not an importable name; give --package")
    facts = project_facts(root)
    version = version or facts.version or "0.1.0"
    pinned_torch = torch[0] if torch else distribution_version("torch")
    try:
        text = layer_text(
            distribution, adapter, version, pinned_torch, distribution_version(adapter), python or facts.requires_python
        )
    except ChoiceError as exc:
        fail(f"--{exc.subject} {exc}")
    planned = [
        item
        for item in (
            []
            if matrix_only
            else plan_adoption(root, distribution, pkg, os.path.basename(output), version=version, facts=facts)
        )
        if item.path
        in (os.path.join(package_folder(root, pkg), "compat.yaml"), "pyproject.toml", "MANIFEST.in", "meson.build")
    ]
    if dry_run:
        console.print(f"{output}: would write", markup=False)
        for item in planned:
            console.print(f"{os.path.join(root, item.path)}: {_said('would ' + item.action, item)}", markup=False)
        return
    try:
        atomic_write(output, text)
        for item in planned:
            target = os.path.join(root, item.path)
            if item.action in ("write", "edit"):
                atomic_write(target, item.text or "")
            elif item.action == "link":
                os.symlink(item.text or "", target)
    except OSError as exc:
        fail(f"{exc.filename}: cannot write: {exc.strerror}")
    try:
        load_any(output, use_cache=False)
    except MatrixError as exc:  # a name the file cannot hold
        print_diagnostics(exc.diagnostics)
        fail(f"{output} was written, but the options above make an invalid layer's matrix: correct it by hand")
    console.print(
        f"{output}: written — layer {distribution} on {adapter}, release {version}; next: fill in what it "
        f"needs below it, then `adapter-matrix validate {output}` and `adapter-matrix check`",
        markup=False,
    )
    for item in planned:
        done = {
            "write": "written",
            "edit": "edited",
            "link": "linked to the matrix",
            "keep": "kept (exists)",
        }[item.action]
        console.print(f"{item.path}: {_said(done, item)}", markup=False)
