"""`table`: render a view of the matrix, or keep the copies in documents current."""

from __future__ import annotations

from typing import Dict, List, Optional

import typer

from .common import (
    EXIT_UNSUPPORTED,
    MATRIX_HELP,
    TODAY_HELP,
    app,
    console_for,
    date_or_exit,
    fail,
    one_matrix,
    release_or_exit,
)


def _table_fix(options: Dict[str, Optional[str]], tail: List[str]) -> str:
    """The ``adapter-matrix table`` command line that rewrites what ``--check`` found stale."""
    import shlex

    args = ["adapter-matrix", "table"]
    for flag, value in options.items():
        if value is not None:
            args += [flag, value]
    return " ".join(shlex.quote(a) for a in args + tail)


@app.command()
def table(
    files: List[str] = typer.Argument(None, help="Documents whose adapter-matrix:table blocks to --update or --check."),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    view: Optional[str] = typer.Option(
        None,
        "--view",
        help="grid (torch x Python; the default), verified (the grid with test evidence), releases, dimension (a dimension x torch), "
        "capabilities, ops (op-sweep counts per torch line and op family), op-dtypes (task counts per torch line, dtype and direction) "
        "op-failures (the ops that do not match CPU, and why) or history (releases per torch line, post-releases grouped).",
    ),
    dimension: Optional[str] = typer.Option(
        None, "--dimension", help="The extra dimension of --view dimension (default: the first releases constrain)."
    ),
    fmt: Optional[str] = typer.Option(
        None, "--format", "-f", help="markdown (or md, gfm; the default), rst (rest), html (htm), csv or json."
    ),
    lang: Optional[str] = typer.Option(None, "--lang", help="Language of headers and legend: en (the default) or zh."),
    release: Optional[str] = typer.Option(
        None,
        "--release",
        help="An adapter release or release line (default: every maintained release; verified: the newest).",
    ),
    results: Optional[str] = typer.Option(
        None,
        "--results",
        help="Folder of result records for --view verified (and for verified blocks without results=), "
        "or of op-sweep records for --view ops, op-dtypes and op-failures.",
    ),
    today: Optional[str] = typer.Option(None, "--today", help=TODAY_HELP),
    output: Optional[str] = typer.Option(
        None, "--output", "-o", help="Write the table to this file, atomically; with --check, verify the file instead."
    ),
    update: bool = typer.Option(False, "--update", help="Rewrite the blocks between markers in FILES, atomically."),
    check_: bool = typer.Option(
        False, "--check", help="Exit 1 with a diff if a block in FILES (or the --output file) is stale."
    ),
) -> None:
    """Render a compatibility table, or keep the tables in documents and generated files up to date.

    Exit 0 done or up to date, 1 --check found a stale table (the diff and the fixing
    command are printed), 2 usage error, bad marker or invalid matrix.
    """

    from ..files import printable
    from ..tables import docs
    from ..tables import views as tables

    if update and check_:
        fail("--update and --check exclude each other")
    if files and output:
        fail("give FILES (blocks to --update/--check) or --output FILE (a whole generated file), not both")
    if files and not (update or check_):
        fail("give --update or --check with FILES")
    if update and output:
        fail("--output writes the file by itself; --update is for the blocks in FILES")
    if check_ and not (files or output):
        fail("--check needs FILES or --output FILE")
    if update and not files:
        fail("--update needs at least one FILE")
    if files:
        given = [
            flag
            for flag, value in (
                ("--view", view),
                ("--format", fmt),
                ("--lang", lang),
                ("--release", release),
                ("--dimension", dimension),
            )
            if value
        ]
        if given:
            fail(
                f"{', '.join(given)}: a block takes these from its marker (e.g. view=grid lang=zh), not from the command line"
            )
    when = date_or_exit(today)
    result = one_matrix(matrix)
    common = {"--matrix": matrix, "--today": today, "--results": results}
    console = console_for()
    if files:
        try:
            outcomes = docs.sync(result.matrix, files, write=update, today=when, results=results)
        except OSError as exc:  # FileWriteError: a full disk, a read-only folder; each document is whole, old or new
            fail(str(exc))
        stale = [o.path for o in outcomes if o.changed]
        for o in outcomes:
            if not o.blocks:
                console.print(f"{printable(o.path)}: no table blocks, skipped", markup=False)
            elif update:
                console.print(
                    f"{printable(o.path)}: {'updated' if o.changed else 'up to date'} ({o.blocks} block{'s' if o.blocks != 1 else ''})",
                    markup=False,
                )
            elif o.changed:
                typer.echo(o.diff, nl=False)
        if check_ and stale:
            fix = _table_fix(common, ["--update"] + stale)
            console_for(stderr=True).print(
                f"stale tables in {printable(' '.join(stale))}; fix with:\n    {fix}", markup=False, style="red"
            )
            raise typer.Exit(EXIT_UNSUPPORTED)
        if check_:
            with_blocks = [o for o in outcomes if o.blocks]
            console.print(
                f"{len(with_blocks)} file(s), {sum(o.blocks for o in with_blocks)} table block(s): up to date"
            )
        return
    try:
        records = docs.load_records(results, tables.RECORDS.get(view or "grid", "results")) if results else None
        text = tables.render(
            result.matrix,
            view=view or "grid",
            fmt=fmt or "markdown",
            lang=lang or "en",
            release=release_or_exit(result, release),
            today=when,
            records=records,
            dimension=dimension,
        )
    except ValueError as exc:  # a bad view, format or language, or unreadable records
        fail(str(exc))
    if not output:
        typer.echo(text, nl=False)
        return
    try:
        outcome = docs.sync_output(output, text, write=not check_)
    except OSError as exc:  # FileWriteError, one line already
        fail(str(exc))
    if check_ and outcome.changed:
        typer.echo(outcome.diff, nl=False)
        options = {"--view": view, "--dimension": dimension, "--format": fmt, "--lang": lang, "--release": release}
        fix = _table_fix({**common, **options}, ["--output", output])
        console_for(stderr=True).print(f"{output} is stale; fix with:\n    {fix}", markup=False, style="red")
        raise typer.Exit(EXIT_UNSUPPORTED)
    console.print(f"{printable(output)}: {'written' if outcome.changed else 'up to date'}", markup=False)
