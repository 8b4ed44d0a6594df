"""`validate` and `schema`: is the matrix itself right?"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, List, Optional

import typer

if TYPE_CHECKING:
    from ..ci.record import RecordSet
    from ..validation.command import LayerDone, ValidateRequest, ValidateResult

from ..errors import EXIT_USAGE
from .base import (
    MATRIX_HELP,
    console_for,
    date_or_exit,
    fail,
    fail_invalid,
    find_or_exit,
    print_diagnostics,
    say_invalid,
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
    from ..validation.command import run

    request = _validate_request(files, matrix, pyproject, upstream, write, record, results, strict, today)
    _print_validation(run(request), results)


def _validate_request(
    files: List[str],
    matrix: Optional[str],
    pyproject: Optional[str],
    upstream: Optional[str],
    write: bool,
    record: Optional[str],
    results: Optional[str],
    strict: bool,
    today: Optional[str],
) -> ValidateRequest:
    """``validate``'s options as its request: refused when they do not go together, the files
    found, ``--results``' records read."""
    from ..validation.command import ValidateRequest
    from ..validation.layerfile import is_layer_file
    from .progress import network_progress

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
        for line in records.skipped:  # JSON files that are not records: said once each, as `results` does
            console_for(stderr=True).print(line, markup=False, style="yellow")
    paths = tuple(_paths(files, matrix, pyproject))
    if (write or record) and any(is_layer_file(path) for path in paths):
        fail("--write and --record read an adapter's facts; a layer's pins are its own: correct them by hand")
    reading = functools.partial(network_progress, quiet=upstream != "pypi")  # around what reads the index
    return ValidateRequest(paths, pyproject, upstream, write, record, records, results, strict, on, reading)


def _print_validation(result: ValidateResult, results: Optional[str]) -> None:
    """``validate``'s renderer: each file's findings and summary line, in the order they were
    found; a file that stopped the run is listed last, then exit 2."""
    from ..matrix.queries import cells

    for written in result.recorded:
        console_for().print(f"recorded {written}")
    for done in result.files:
        m, found = done.found.matrix, done.found
        if done.pyproject is not None:
            console_for().print(done.pyproject, markup=False)
        if done.facts is not None:
            console_for().print(done.facts)
        print_diagnostics(found.findings)
        warnings = len(found.findings) - found.errors
        console_for().print(
            f"{m.path}: {'invalid' if found.errors else 'valid'} \u2014 {len(m.releases)} release(s)"
            + (f" in {len(m.release_lines())} release lines" if m.release_lines() else "")
            + f", {len(m.torch)} torch lines, "
            f"{len(cells(m))} cells, {len(m.shims)} shims"
            + (f", {len(m.companions)} companions" if m.companions else "")
            + (f", {found.errors} error(s)" if found.errors else "")
            + (f", {warnings} warning(s)" if warnings else "")
        )
        if found.evidence is not None:
            fresh, claimed = found.evidence
            console_for().print(
                f"{m.path}: evidence in {results} — {fresh} of {claimed} cells claimed supported have a fresh passing record",
                markup=False,
            )
    for layer in result.layers:
        _print_layer(layer)
    for path, invalid in result.invalid[: -1 if result.stopped is None else None]:
        say_invalid(path, invalid)
    if result.invalid and result.stopped is None:
        fail_invalid(*result.invalid[-1])
    if result.stopped is not None:
        if result.stopped.invalid is not None:
            fail_invalid(result.stopped.path, result.stopped.invalid)
        fail(result.stopped.problem or "")
    if result.failed:
        raise typer.Exit(EXIT_USAGE)


def _print_layer(done: LayerDone) -> None:
    found = done.found
    print_diagnostics(found.findings)
    warnings = len(found.findings) - found.errors
    on_adapter = (
        f"on {found.adapter.path}" if found.adapter is not None else f"on {found.layer.adapter} (its matrix not found)"
    )
    console_for().print(
        f"{done.path}: {'invalid' if found.errors else 'valid'} \u2014 layer {found.layer.distribution}, "
        f"{len(found.layer.releases)} release(s) {on_adapter}"
        + (f", {found.errors} error(s)" if found.errors else "")
        + (f", {warnings} warning(s)" if warnings else ""),
        markup=False,
    )


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
    from ..validation.command import SchemaRequest, run_schema

    try:
        done = run_schema(SchemaRequest(output))
    except OSError as exc:  # FileWriteError: a missing folder, a full disk, a file where a folder should be
        fail(str(exc))
    if done.written is None:
        typer.echo(done.text, nl=False)
