"""The use case of ``init``: a frozen request, a ``run`` and a typed result.

The command line (:mod:`adapter_matrix.cli.init`) parses its options into an
:class:`InitRequest` (what this package may not import passed in: the tests' imports
(``device``), the README's table (``tables``), an installed distribution's version
(``check``), and how a matrix's diagnostics are listed, since they print) and prints the
:class:`InitResult`; the run neither prints nor exits. A request it cannot run raises
:class:`~adapter_matrix.errors.AdapterMatrixError`; a refused choice a
:class:`~adapter_matrix.errors.ChoiceError` naming it, the command line puts its option in front. ``--from-index`` is a code path of its own (``cli/from_index.py``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple

from ..errors import AdapterMatrixError, ChoiceError
from ..files import atomic_write, make_folders, write_failed
from ..matrix.diagnostics import MatrixError
from .adopt import Planned, package_name, plan_adoption, require_lines
from .project import ProjectFacts, package_folder, project_facts
from .toolpin import ToolPin

__all__ = ["InitRequest", "InitResult", "run"]


class InitRequest(NamedTuple):
    """What ``init`` is asked, one field per option as given."""

    distribution: Optional[str] = None
    device: Optional[str] = None
    on: Optional[str] = None
    torch: Tuple[str, ...] = ()
    python: Optional[str] = None
    version: Optional[str] = None
    upstream: str = "pypi"
    record: Optional[str] = None
    output: str = "compat.yaml"
    force: bool = False
    package: Optional[str] = None
    matrix_only: bool = False
    dry_run: bool = False
    tool_ref: Optional[str] = None
    tool_repository: Optional[str] = None
    tool: Optional[str] = None
    # the requirements a tests/ folder's PyTorch-style tests import (device.testimports)
    test_needs: Callable[[str], List[str]] = lambda folder: []
    # the README's table drawn from the matrix written, between its markers (tables.docs.sync)
    sync_readme: Callable[[Any, str], None] = lambda matrix, path: None
    # the version of a distribution installed here, or None (check.facts)
    installed: Callable[[str], Optional[str]] = lambda name: None
    # lists an invalid matrix's diagnostics before the refusal
    report: Callable[[List[Any]], None] = lambda diagnostics: None


class InitResult(NamedTuple):
    """What ``init`` wrote (or, ``dry_run``, would write)."""

    output: str
    root: str
    layer: bool  # --on: a layer's matrix and registration
    dry_run: bool
    written: bool  # the matrix is (would be) written; else kept, it exists
    summary: str  # the matrix written: what it holds and what to run next
    planned: Tuple[Planned, ...]  # the adoption's other files
    pyproject_errors: Tuple[str, ...] = ()  # where pyproject.toml disagrees with the matrix written
    pin: Optional[ToolPin] = None  # what the workflow and the hooks use
    require: str = ""  # how the package requires its matrix


def _package(request: InitRequest, distribution: str) -> str:
    pkg = request.package or package_name(distribution)
    if not pkg.isidentifier():
        raise ChoiceError("package", f"{pkg!r} is not an importable name; give --package")
    return pkg


def _write(root: str, output: str, text: Optional[str], planned: Sequence[Planned], folders: bool) -> None:
    """The matrix (unless kept) and the planned files, each written atomically."""
    if text is not None:
        atomic_write(output, text)
    for item in planned:
        target = os.path.join(root, item.path)
        if item.action in ("write", "edit"):
            if folders:
                make_folders(os.path.dirname(target))
            atomic_write(target, item.text or "")
        elif item.action == "link":
            try:
                os.symlink(item.text or "", target)
            except OSError as exc:  # a FileWriteError's line, never "None: cannot write: None"
                raise write_failed(exc, target) from None


def _same_name(facts: ProjectFacts, distribution: str) -> None:
    """Refuse a --distribution the project is not installed by: the matrix, its entry point
    and ``require()`` would name a distribution pip never installs (``check`` could not find
    the adapter, and the entry point would point at a package that does not exist)."""
    from ..names import canonical_name

    if facts.name and canonical_name(facts.name) != canonical_name(distribution):
        raise ChoiceError(
            "distribution",
            f"{distribution!r} is not this project's name: {facts.name_from} is {facts.name!r}, the name pip "
            f"installs it by — give --distribution {facts.name}",
        )


def _kept_matrix(output: str, distribution: str) -> str:
    """What to say of the matrix ``init`` keeps: another adapter's is refused before anything is
    written (the entry point would register it under --distribution); one that is not valid yet
    (a file being written) is kept, and said so: the README's table and the hooks need it valid."""
    from ..matrix.loader import load
    from ..names import canonical_name

    try:
        kept = load(output, check_modules=False).matrix
    except MatrixError as exc:
        errors = sum(1 for d in exc.diagnostics if d.severity == "error")
        return (
            f"{output}: kept (exists), not a valid matrix yet ({errors} error(s)): `adapter-matrix validate` "
            "lists them; the README's table and the hooks need it valid"
        )
    if kept.adapter is not None and canonical_name(kept.adapter.distribution) != canonical_name(distribution):
        raise ChoiceError(
            "distribution",
            f"{distribution!r} is not the adapter of {output}, which is {kept.adapter.distribution!r}: give "
            f"--distribution {kept.adapter.distribution}, or --force to replace the matrix",
        )
    return ""


def run(request: InitRequest) -> InitResult:
    """A first matrix for an adapter (or, ``on``, a layer) and the files that adopt the tool."""
    if request.record is not None:
        raise ChoiceError("record", "records an index's answer for --from-index DISTRIBUTION: give it")
    if request.on is not None:
        if request.distribution is None or request.device is not None:
            raise AdapterMatrixError(
                "a layer: give --distribution NAME --on ADAPTER, and no --device (the adapter's matrix has it)"
            )
        return _layer(request, request.distribution, request.on)
    if request.distribution is None or request.device is None:
        raise AdapterMatrixError(
            "give --distribution NAME and --device NAME (or --from-index DISTRIBUTION to import a published history)"
        )
    return _adapter(request, request.distribution, request.device)


def _adapter(request: InitRequest, distribution: str, device: str) -> InitResult:
    from ..matrix.loader import load_text
    from .index import UpstreamError, read_upstream
    from .project import evidence_sources, holds_native_sources
    from .starter import choose_lines, starter_text
    from .toolpin import tool_pin

    output, matrix_only = request.output, request.matrix_only
    keep_matrix = os.path.exists(output) and not request.force
    if keep_matrix and matrix_only:
        raise AdapterMatrixError(f"{output} exists; give --force to replace it, or --output another file")
    root = os.path.dirname(os.path.abspath(output))
    pkg = _package(request, distribution)
    # an existing project's own declarations win over the defaults: a matrix that disagrees
    # with them fails `validate --pyproject` at once, and plans cells pip would refuse
    facts = project_facts(root)
    _same_name(facts, distribution)
    kept_note = _kept_matrix(output, distribution) if keep_matrix else ""
    version = request.version
    if version is None:
        if facts.why and not keep_matrix:
            raise AdapterMatrixError(f"{root}: {facts.why}")
        version = facts.version or "0.1.0"
    python = request.python if request.python is not None else facts.requires_python
    pin = tool_pin(request.tool_repository, request.tool_ref, request.tool)
    sources = evidence_sources(root, pkg)
    text = None
    written = None
    lines: List[Any] = []
    if not keep_matrix:
        upstream = request.upstream
        try:
            lines = choose_lines(read_upstream(upstream), list(request.torch))
            text = starter_text(
                distribution,
                device,
                lines,
                "PyPI" if upstream == "pypi" else os.path.basename(upstream),
                version,
                python,
                sources=[] if matrix_only else sources,
            )
        except UpstreamError as exc:
            raise AdapterMatrixError(str(exc)) from exc
        try:
            written = load_text(text, output).matrix
        except MatrixError as exc:  # a name the file cannot hold, e.g. a device that is no identifier
            request.report(exc.diagnostics)
            raise AdapterMatrixError(f"{output} was not written: the options above make an invalid matrix") from exc
    compiled = facts.builds_with_torch or holds_native_sources(root, sources)
    planned = tuple(
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
            test_needs=request.test_needs(os.path.join(root, "tests")),  # PyTorch-style tests' imports
        )
    )
    read = f" (from {facts.version_from})" if facts.version_from and version == facts.version else ""
    summary = (
        f"{output}: written \u2014 torch {lines[0].minor}\u2013{lines[-1].minor}, release {version}{read}; "
        "next: `adapter-matrix validate`, `adapter-matrix table`, `adapter-matrix plan`"
        if lines
        else kept_note
    )
    result = InitResult(output, root, False, request.dry_run, text is not None, summary, planned, pin=pin)
    if request.dry_run:
        return result
    _write(root, output, text, planned, folders=True)
    readme = [i for i in planned if i.path == "README.md" and i.action in ("write", "edit")]
    if text is not None and written is not None and readme:
        target = os.path.join(root, readme[0].path)
        try:  # the table itself, not only its markers: the tables hook init installs checks it
            request.sync_readme(written, target)
        except OSError as exc:
            raise write_failed(exc, target) from None
    pyproject = os.path.join(root, "pyproject.toml")
    errors: Tuple[str, ...] = ()
    if written is not None and not matrix_only and os.path.isfile(pyproject):
        # what init keeps of the project (its requires-python) may disagree with the torch lines
        # chosen: said now, not first by the hook or CI
        from .pyproject import check_pyproject

        errors = tuple(str(f) for f in check_pyproject(written, pyproject) if f.severity == "error")
    require = require_lines(package_folder(root, pkg)) if planned else ""
    return result._replace(pyproject_errors=errors, require=require)


def _layer(request: InitRequest, distribution: str, adapter: str) -> InitResult:
    """``init --on ADAPTER``: a layer's first matrix (pinning the torch and the adapter installed
    here, when they are), and its registration: the package's link to the matrix, the entry
    point and the package data in pyproject.toml. A layer's cells are its adapter's: no noxfile
    or workflow is written."""
    from ..matrix.cache import load_any
    from .starter import layer_text

    output = request.output
    if os.path.exists(output) and not request.force:
        raise AdapterMatrixError(f"{output} exists; give --force to replace it, or --output another file")
    if len(request.torch) > 1:
        raise AdapterMatrixError("a layer's first release pins one torch: give --torch once (e.g. --torch 2.10.0)")
    root = os.path.dirname(os.path.abspath(output))
    pkg = _package(request, distribution)
    facts = project_facts(root)
    _same_name(facts, distribution)
    version = request.version or facts.version or "0.1.0"
    pinned_torch = request.torch[0] if request.torch else request.installed("torch")
    text = layer_text(
        distribution,
        adapter,
        version,
        pinned_torch,
        request.installed(adapter),
        request.python or facts.requires_python,
    )
    registration = (
        os.path.join(package_folder(root, pkg), "compat.yaml"),
        "pyproject.toml",
        "MANIFEST.in",
        "meson.build",
    )
    planned = tuple(
        item
        for item in (
            []
            if request.matrix_only
            else plan_adoption(root, distribution, pkg, os.path.basename(output), version=version, facts=facts)
        )
        if item.path in registration
    )
    summary = (
        f"{output}: written — layer {distribution} on {adapter}, release {version}; next: fill in what it "
        f"needs below it, then `adapter-matrix validate {output}` and `adapter-matrix check`"
    )
    result = InitResult(output, root, True, request.dry_run, True, summary, planned)
    if request.dry_run:
        return result
    _write(root, output, text, planned, folders=False)
    try:
        load_any(output, use_cache=False)
    except MatrixError as exc:  # a name the file cannot hold
        request.report(exc.diagnostics)
        raise AdapterMatrixError(
            f"{output} was written, but the options above make an invalid layer's matrix: correct it by hand"
        ) from exc
    return result
