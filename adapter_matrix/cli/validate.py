"""`validate` and `schema`: is the matrix itself right?"""

from __future__ import annotations

import functools
import json
import os
from typing import TYPE_CHECKING, Any, List, Optional

import typer

if TYPE_CHECKING:
    from ..ci.record import RecordSet

from ..errors import EXIT_USAGE
from .base import (
    MATRIX_HELP,
    console_for,
    date_or_exit,
    fail,
    fail_invalid,
    find_or_exit,
    load_or_exit,
    print_diagnostics,
)
from .common import app


@app.command()
def validate(
    files: List[str] = typer.Argument(
        None, help="Matrix files to lint (as pre-commit passes them); default: --matrix, else discovery."
    ),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    pyproject: Optional[str] = typer.Option(
        None, "--pyproject", help="Also check this pyproject.toml's requires-python, classifiers and torch pin."
    ),
    upstream: Optional[str] = typer.Option(
        None,
        "--upstream",
        metavar="pypi|PATH",
        help="Check the torch and companion facts against the index: 'pypi', a recorded folder (--record), or torch's recorded Simple JSON file.",
    ),
    write: bool = typer.Option(
        False,
        "--write",
        help="With --upstream: update the torch and companion facts in the matrix file; with --pyproject: "
        "correct its requires-python, classifiers and torch pin to the matrix.",
    ),
    record: Optional[str] = typer.Option(
        None,
        "--record",
        help="With --upstream pypi: save PyPI's answers into this folder, then check against them (offline later with --upstream DIR).",
    ),
    results: Optional[str] = typer.Option(
        None,
        "--results",
        help="Evidence folder (e.g. evidence): warn for every cell claimed supported without a fresh passing record, "
        "and for a supported release that is not frozen (adapter-matrix release).",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="With --results: those findings, and changed code still carrying a frozen release's version, are errors (the release gate).",
    ),
    today: Optional[str] = typer.Option(
        None, "--today", help="With --results: judge the records' age on this date (YYYY-MM-DD)."
    ),
) -> None:
    """Lint the matrix: every error at once, each with its fix.

    Each finding is printed as FILE:LINE:COL: message — fix. Exit 0 clean (warnings are
    printed, not fatal), 2 on errors.
    """
    from ..matrix.queries import cells

    if write and not (upstream or pyproject):
        fail("--write needs --upstream or --pyproject")
    if files and matrix:
        fail("give matrix FILES or --matrix PATH, not both")
    if record and upstream != "pypi":
        fail("--record needs --upstream pypi")
    if (strict or today) and not results:
        fail("--strict and --today need --results")
    on = date_or_exit(today)
    records: Optional[RecordSet] = None
    if results is not None:
        from ..ci.record import read_records

        records = read_records(results, allow_empty=True)  # an empty folder: every claim is unverified
    paths = _paths(files, matrix, pyproject)
    from ..matrix.diagnostics import MatrixError
    from ..validation.index_answers import IndexAnswers
    from ..validation.layerfile import is_layer_file
    from ..validation.matrixfile import validate_file, write_facts

    layers = [path for path in paths if is_layer_file(path)]  # a layer's matrix: checked against its adapter's
    paths = [path for path in paths if path not in layers]

    if layers and (write or record):
        fail("--write and --record read an adapter's facts; a layer's pins are its own: correct them by hand")

    from .progress import network_progress

    reading = functools.partial(network_progress, quiet=upstream != "pypi")  # around what reads the index
    index: Optional[IndexAnswers] = None
    try:
        if upstream and record:
            for path in paths:
                with reading():
                    written = IndexAnswers.record(record, [load_or_exit(path, fresh=True).matrix])
                console_for().print(f"recorded {', '.join(written)}")
            upstream = record
        index = IndexAnswers(upstream) if upstream else None
    except OSError as exc:  # FileWriteError: a full disk, a read-only folder
        fail(str(exc))
    options = {"pyproject": pyproject, "records": records, "strict": strict, "today": on}
    failed = False
    for path in paths:
        if write and pyproject:
            _write_pyproject(path, pyproject)
        try:
            if write and index is not None:  # --write needs --upstream (refused above)
                with reading():
                    found, changed = write_facts(path, index, **options)
                m = found.matrix
                if changed:
                    console_for().print(f"{m.path}: updated the {' and '.join(changed)} facts from {upstream}")
                else:
                    subject = "torch and companion facts" if any(c.torch_facts for c in m.companions) else "torch facts"
                    console_for().print(f"{m.path}: {subject} already up to date")
            else:
                with reading():
                    found = validate_file(path, upstream=index, **options)
        except MatrixError as exc:  # no valid matrix: its errors listed, exit 2
            fail_invalid(path, exc)
        except OSError as exc:  # FileWriteError: a full disk, a read-only folder; the file is unchanged
            fail(str(exc))
        m, findings = found.matrix, found.findings
        print_diagnostics(findings)
        failed = failed or found.errors > 0
        console_for().print(
            f"{m.path}: {'invalid' if found.errors else 'valid'} \u2014 {len(m.releases)} release(s)"
            + (f" in {len(m.release_lines())} release lines" if m.release_lines() else "")
            + f", {len(m.torch)} torch lines, "
            f"{len(cells(m))} cells, {len(m.shims)} shims"
            + (f", {len(m.companions)} companions" if m.companions else "")
            + (f", {found.errors} error(s)" if found.errors else "")
            + (f", {len(findings) - found.errors} warning(s)" if len(findings) - found.errors else "")
        )
        if found.evidence is not None:
            fresh, claimed = found.evidence
            console_for().print(
                f"{m.path}: evidence in {results} — {fresh} of {claimed} cells claimed supported have a fresh passing record",
                markup=False,
            )
    with reading():
        import gc

        # no cyclic collection while the layers are read and checked: a layer of 5,000 releases is
        # a million objects, walked again by every collection its checks' allocations trigger
        gc.disable()
        try:
            failed = _validate_layers(layers, paths, index, on) or failed
        finally:
            gc.enable()
    if failed:
        raise typer.Exit(EXIT_USAGE)


def _write_pyproject(path: str, pyproject: str) -> None:
    """Correct ``pyproject``'s requires-python, classifiers and torch pin to the matrix at
    ``path`` (the validation that follows reports what is left)."""
    from ..files import atomic_write
    from ..upstream.pyproject import fixed_pyproject

    text, left = fixed_pyproject(load_or_exit(path, fresh=True).matrix, pyproject)
    if text is None:
        if not left:
            console_for().print(f"{pyproject}: already agrees with {path}", markup=False)
        return
    try:
        atomic_write(pyproject, text)
    except OSError as exc:  # FileWriteError: a read-only folder; the file is unchanged
        fail(str(exc))
    console_for().print(f"{pyproject}: corrected to agree with {path}", markup=False)


def _validate_layers(layers: List[str], adapters: List[str], index: Any, on: Any) -> bool:
    """Each layer's matrix against its adapter's (among ``adapters``, else the installed one);
    whether one has errors."""
    from ..matrix.diagnostics import MatrixError
    from ..matrix.discovery import registered_matrices
    from ..validation.layerfile import validate_layer

    if not layers:
        return False
    from ..matrix.cache import load_matrix

    known = [load_or_exit(path).matrix for path in adapters]
    for located in registered_matrices():
        try:
            known.append(load_matrix(located.path).matrix)
        except MatrixError:  # an installed adapter's broken matrix (or a layer's) is no adapter to check against
            continue
    from ..matrix.stack_rules import layer_cycles

    failed = False
    results = []
    for path in layers:
        try:
            results.append((path, validate_layer(path, known, upstream=index, today=on)))
        except MatrixError as exc:
            fail_invalid(path, exc)
    # layers that require one another in a cycle: an error at the pin that closes it
    cycles = layer_cycles([found.layer for _path, found in results])
    for path, found in results:
        found.findings.extend(d for d in cycles if d.mark.file == found.layer.path)
        print_diagnostics(found.findings)
        failed = failed or found.errors > 0
        warnings = len(found.findings) - found.errors
        on_adapter = (
            f"on {found.adapter.path}"
            if found.adapter is not None
            else f"on {found.layer.adapter} (its matrix not found)"
        )
        console_for().print(
            f"{path}: {'invalid' if found.errors else 'valid'} \u2014 layer {found.layer.distribution}, "
            f"{len(found.layer.releases)} release(s) {on_adapter}"
            + (f", {found.errors} error(s)" if found.errors else "")
            + (f", {warnings} warning(s)" if warnings else ""),
            markup=False,
        )
    return failed


def _paths(files: List[str], matrix: Optional[str], pyproject: Optional[str]) -> List[str]:
    """The matrix files to validate: FILES, else --matrix, else a --pyproject's own matrix (not
    every installed one), else discovery."""
    if files:
        return list(files)
    if pyproject and not matrix and os.path.isfile(pyproject):
        from ..upstream.pyproject import matrix_of

        own = matrix_of(pyproject)
        if own is None:
            fail(
                f"{pyproject} registers no matrix (no adapter_matrix.matrices entry point, no compat.yaml beside it); pass --matrix PATH"
            )
        return [own]
    return [located.path for located in find_or_exit(matrix)]


@app.command()
def schema(
    output: Optional[str] = typer.Option(
        None, "--output", "-o", help="Write to this file (atomically) instead of stdout."
    ),
) -> None:
    """Print the JSON Schema of compat.yaml.

    Reference it from the file (`# yaml-language-server: $schema=...`) so editors validate it.
    """
    from ..files import atomic_write
    from ..matrix.schema import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if output:
        try:
            atomic_write(output, text)
        except OSError as exc:  # FileWriteError: a missing folder, a full disk, a file where a folder should be
            fail(str(exc))
    else:
        typer.echo(text, nl=False)
