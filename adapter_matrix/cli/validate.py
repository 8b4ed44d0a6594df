"""`validate` and `schema`: is the matrix itself right?"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, List, Optional

import typer

if TYPE_CHECKING:
    from ..ci.record import RecordSet

from .common import (
    EXIT_USAGE,
    MATRIX_HELP,
    app,
    console_for,
    date_or_exit,
    fail,
    find_or_exit,
    load_or_exit,
    print_diagnostics,
)


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
        help="Check the torch and companion facts against the index: 'pypi', a recorded folder (--record), or torch's recorded Simple JSON file.",
    ),
    write: bool = typer.Option(
        False, "--write", help="With --upstream: update the torch and companion facts in the matrix file."
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
    """Lint the matrix: every error at once, as FILE:LINE:COL: message — fix. Exit 2 on errors."""
    from ..matrix.queries import cells

    if write and not upstream:
        fail("--write needs --upstream")
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
    from ..matrix.discovery import Located

    if (
        pyproject and not files and not matrix and os.path.isfile(pyproject)
    ):  # judged against its own matrix, not every installed one
        from ..upstream.pyproject import matrix_of

        own = matrix_of(pyproject)
        if own is None:
            fail(
                f"{pyproject} registers no matrix (no adapter_matrix.matrices entry point, no compat.yaml beside it); pass --matrix PATH"
            )
        located_all = [Located(own, "pyproject")]
    else:
        located_all = [Located(f, "argument") for f in files] if files else find_or_exit(matrix)
    index = None
    if upstream:
        from ..upstream import companion_index as upstream_companions
        from ..upstream import companion_write
        from ..upstream import index as up
        from ..upstream import own as upstream_own
        from ..upstream import write as upstream_write

        if record:
            raw, _origin = up.read_answer("pypi")
            for located in located_all:
                written = upstream_companions.record(record, load_or_exit(located.path, fresh=True).matrix, raw)
                console_for().print(f"recorded {', '.join(written)}")
            upstream = record
        index = up.read_upstream(upstream)

    notes: list = []
    histories: dict = {}  # the adapter's own releases on the index, read once per distribution

    def own_history(m: Any) -> Any:
        name = m.adapter.distribution
        if name not in histories and upstream is not None:
            histories[name] = upstream_own.read_own(upstream, m)
        return histories.get(name)

    def findings_of(path: str) -> Any:
        notes.clear()  # a --write re-reads the file: report on what it says now
        result = load_or_exit(path, fresh=True)
        found = list(result.warnings)
        if pyproject:
            from ..upstream.pyproject import check_pyproject

            found += check_pyproject(result.matrix, pyproject)
        companion_answers = None
        if index is not None and upstream is not None:
            found += up.verify(result.matrix, index)
            try:
                companion_answers = upstream_companions.read_companions(upstream, result.matrix)
            except OSError as exc:  # FileWriteError: a full disk, a read-only folder; the file is unchanged
                fail(str(exc))
            found += upstream_companions.verify_companions(result.matrix, *companion_answers, upstream)
            found += upstream_own.verify_own(result.matrix, own_history(result.matrix), upstream)
        from ..ci.evidence import evidence_folder
        from ..ci.release import adapter_version, read_frozen, version_findings

        frozen = (
            records.frozen if records is not None else read_frozen(evidence_folder(result.matrix, environ={}))
        )  # changed code needs a new version: judged against the releases frozen in the evidence folder
        if frozen:
            found += version_findings(result.matrix, frozen, adapter_version(result.matrix, pyproject), strict)
        if records is not None:
            from ..ci.evidence import claimed_supported, gate

            gated = gate(result.matrix, records, on, strict)
            found += [g.diagnostic for g in gated]
            missing = [g for g in gated if g.cell is not None]
            claimed = len(claimed_supported(result.matrix, on))
            notes.append(
                f"{result.matrix.path}: evidence in {results} — {claimed - len(missing)} of {claimed} cells claimed supported have a fresh passing record"
            )
        return result.matrix, found, companion_answers

    failed = False
    for located in located_all:
        m, findings, answers = findings_of(located.path)
        if write and index is not None:  # --write needs --upstream (refused above)
            try:
                changed = upstream_write.write(located.path, m, index)
                if changed:
                    m, findings, answers = findings_of(located.path)
                changed_companions = companion_write.write_companions(located.path, m, answers[0])
                if changed_companions:
                    m, findings, answers = findings_of(located.path)
                changed_own = upstream_own.write_own(located.path, m, own_history(m))
            except OSError as exc:  # FileWriteError: a full disk, a read-only folder; the file is unchanged
                fail(str(exc))
            what = [
                w
                for w, done in (("torch", changed), ("companion", changed_companions), ("release", changed_own))
                if done
            ]
            if what:
                console_for().print(f"{m.path}: updated the {' and '.join(what)} facts from {upstream}")
                m, findings, answers = findings_of(located.path)  # report on what the file says now
            else:
                subject = "torch and companion facts" if any(c.torch_facts for c in m.companions) else "torch facts"
                console_for().print(f"{m.path}: {subject} already up to date")
        print_diagnostics(findings)
        errors = sum(1 for d in findings if d.severity == "error")
        failed = failed or errors > 0
        console_for().print(
            f"{m.path}: {'invalid' if errors else 'valid'} \u2014 {len(m.releases)} release(s)"
            + (f" in {len(m.release_lines())} release lines" if m.release_lines() else "")
            + f", {len(m.torch)} torch lines, "
            f"{len(cells(m))} cells, {len(m.shims)} shims"
            + (f", {len(m.companions)} companions" if m.companions else "")
            + (f", {errors} error(s)" if errors else "")
            + (f", {len(findings) - errors} warning(s)" if len(findings) - errors else "")
        )
        for note in notes:
            console_for().print(note, markup=False)
    if failed:
        raise typer.Exit(EXIT_USAGE)


@app.command()
def schema(
    output: Optional[str] = typer.Option(
        None, "--output", "-o", help="Write to this file (atomically) instead of stdout."
    ),
) -> None:
    """Print the JSON Schema of compat.yaml (reference it from the file so editors validate it)."""
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
