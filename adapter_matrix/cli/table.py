"""`table`: render a view of the matrix, or keep the copies in documents current."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

import typer

from ..errors import EXIT_UNSUPPORTED, ChoiceError
from .base import MATRIX_HELP, TODAY_HELP, console_for, date_or_exit, fail, load_or_exit, one_matrix, release_or_exit
from .common import app

if TYPE_CHECKING:  # the model stays off the CLI's start-up path
    import datetime as _dt

    from ..matrix.model import Layer, Matrix
    from ..matrix.queries import Releases
    from ..tables.resolve import Resolutions


def _table_fix(options: Dict[str, Optional[str]], tail: List[str]) -> str:
    """The ``adapter-matrix table`` command line that rewrites what ``--check`` found stale."""
    import shlex

    args = ["adapter-matrix", "table"]
    for flag, value in options.items():
        if value is not None:
            args += [flag, value]
    return " ".join(shlex.quote(a) for a in args + tail)


def _platform(
    matrix: Matrix,
    output: Optional[str],
    support_channel: Optional[str],
    platform_name: Optional[str],
    platform_id: Optional[str],
    when: Optional[_dt.date],
    check_: bool,
    common: Dict[str, Optional[str]],
) -> None:
    """--view platform: write (or --check) ID.json and ID.md in the --output folder (ID: --id)."""
    import os

    from ..files import printable
    from ..tables import docs
    from ..tables.platform import platform_entry

    if not output:
        fail("--view platform writes two files: give --output FOLDER")
    try:
        entry = platform_entry(matrix, support_channel or "", platform_name, when, platform_id)
    except ChoiceError as exc:  # a choice of this command: its option in front
        fail(f"--{exc.subject} {exc}")
    except ValueError as exc:
        fail(str(exc))
    stale = []
    for suffix, text in ((".json", entry.json_text), (".md", entry.markdown)):
        path = os.path.join(output, entry.platform_id + suffix)
        try:
            if not check_:
                os.makedirs(output, exist_ok=True)
            outcome = docs.sync_output(path, text, write=not check_)
        except OSError as exc:
            fail(str(exc))
        if check_ and outcome.changed:
            typer.echo(outcome.diff, nl=False)
            stale.append(path)
        else:
            console_for().print(f"{printable(path)}: {'written' if outcome.changed else 'up to date'}", markup=False)
    if stale:
        options = {
            **common,
            "--view": "platform",
            "--support-channel": support_channel,
            "--platform-name": platform_name,
            "--id": platform_id,
        }
        fix = _table_fix(options, ["--output", output])
        console_for(stderr=True).print(f"{' '.join(stale)} stale; fix with:\n    {fix}", markup=False, style="red")
        raise typer.Exit(EXIT_UNSUPPORTED)


def _is_layer(path: str) -> bool:
    from ..validation.layerfile import is_layer_file

    return is_layer_file(path)


def _stack_table(
    path: str,
    adapter_path: Optional[str],
    view: Optional[str],
    fmt: Optional[str],
    lang: Optional[str],
    output: Optional[str],
    check_: bool,
    when: Optional[_dt.date],
    release: Optional[str] = None,
    dimension: Optional[str] = None,
    resolve: bool = False,
    recorded: Sequence[str] = (),
) -> None:
    """A layer's matrix: its stack view (the adapter's matrix, when installed, names the
    package of each release line the layer names); ``release`` and ``dimension``
    (``cann=9.1.0``) filter its rows; ``resolve``: resolve each row's commands instead."""
    from ..matrix.cache import load_any, load_matrix
    from ..matrix.diagnostics import MatrixError
    from ..matrix.discovery import registered_matrices
    from ..matrix.model import LayerResult
    from ..names import canonical_name
    from ..tables.formats import render_table
    from ..tables.views.stack import stack

    if view not in (None, "stack"):
        fail(f"{path} is a layer's matrix: its view is stack (the adapter's matrix has the others)")
    loaded = load_any(path)
    if not isinstance(loaded, LayerResult):  # the caller read `layer:` in it
        fail(f"{path} is not a layer's matrix")
    layer = loaded.layer
    adapter = load_or_exit(adapter_path).matrix if adapter_path else None
    for located in [] if adapter is not None else registered_matrices():
        try:
            found = load_matrix(located.path).matrix
        except MatrixError:
            continue
        if canonical_name(found.adapter.distribution) == layer.name_of_adapter:
            adapter = found
            break
    if resolve:
        if adapter is None:
            fail(f"--resolve checks the stack's commands: give {layer.adapter}'s matrix with --adapter-matrix")
        if output or check_ or fmt or lang:
            fail("--resolve checks the stack table's commands: give no --output, --check, --format or --lang")
        try:
            stack(layer, "en", adapter, when, release, dimension)  # the same refusals as the table
        except ChoiceError as exc:
            fail(f"--{exc.subject} {exc}")
        _resolve_stack(layer, adapter, when, release, dimension, list(recorded))
        return
    try:
        text = render_table(stack(layer, lang or "en", adapter, when, release, dimension), fmt or "markdown")
    except ChoiceError as exc:  # an unknown release or dimension
        fail(f"--{exc.subject} {exc}")
    except ValueError as exc:  # a bad format or language
        fail(str(exc))
    flags = {
        "--matrix": path,
        "--adapter-matrix": adapter_path,
        "--release": release,
        "--dimension": dimension,
        "--format": fmt,
        "--lang": lang,
    }
    _emit(text, output, check_, _table_fix(flags, []))


def _emit(text: str, output: Optional[str], check_: bool, fix: str) -> None:
    """A rendered table: printed, or written to ``output`` (with ``check_``: compared with it,
    exit 1 with the diff and the command that rewrites it when it is stale)."""
    import shlex

    from ..files import printable
    from ..tables import docs

    if not output:
        typer.echo(text, nl=False)
        return
    try:
        outcome = docs.sync_output(output, text, write=not check_)
    except OSError as exc:  # FileWriteError, one line already
        fail(str(exc))
    if check_ and outcome.changed:
        typer.echo(outcome.diff, nl=False)
        again = f"{fix} --output {shlex.quote(output)}"
        console_for(stderr=True).print(f"{output} is stale; fix with:\n    {again}", markup=False, style="red")
        raise typer.Exit(EXIT_UNSUPPORTED)
    console_for().print(f"{printable(output)}: {'written' if outcome.changed else 'up to date'}", markup=False)


def _resolve(matrix: Matrix, release: Releases, when: Optional[_dt.date], recorded: List[str]) -> None:
    """--resolve: every published command, through pip's resolver."""
    import tempfile

    from ..tables.resolve import build_index, check_commands
    from ..tables.views.selector import selector

    combinations = selector(matrix, release=release, today=when, picks=False).data["combinations"]
    from .progress import progress_report

    with tempfile.TemporaryDirectory() as index, progress_report() as report:
        url = build_index(recorded, index) if recorded else None
        found = check_commands(combinations, url, progress=report)
    _said(found, combinations, recorded)


def _resolve_stack(
    layer: Layer,
    adapter: Matrix,
    when: Optional[_dt.date],
    release: Optional[str],
    where: Optional[str],
    recorded: List[str],
) -> None:
    """--resolve of a layer's stack table: each row's commands, each for its own platform and Python."""
    import datetime as _datetime
    import tempfile

    from ..check.stack.space import Candidates
    from ..tables.resolve import build_index, check_commands
    from ..tables.views.stack import shown_releases, stack_installs
    from .progress import progress_report

    today = when or _datetime.date.today()
    candidates = Candidates()  # every row's search shares the stack's candidates
    combinations = [
        {"commands": list(i.commands), "python": i.python, "dimensions": i.dimensions, "torch": i.torch}
        for entry in shown_releases(layer, release, where)
        for i in stack_installs(adapter, layer, entry, today, candidates)
    ]
    with tempfile.TemporaryDirectory() as index, progress_report() as report:
        url = build_index(recorded, index) if recorded else None
        found = check_commands(combinations, url, progress=report)
    _said(found, combinations, recorded)


def _said(found: Resolutions, combinations: List[Dict[str, Any]], recorded: List[str]) -> None:
    """What --resolve found, said: each problem, each command not checked, the count; exit 1 on a problem."""
    where = f"the recorded index ({', '.join(recorded)})" if recorded else "the commands' indexes"
    for problem in found.problems:
        console_for(stderr=True).print(f"not installable: {problem}", markup=False, style="red")
    for skipped in found.unreachable:  # nothing is known of these: said apart, not a problem
        console_for(stderr=True).print(f"not checked: {skipped}", markup=False, style="yellow")
    unreachable = f", {len(found.unreachable)} not checked (an index unreachable)" if found.unreachable else ""
    console_for().print(
        f"{found.runs} resolutions of {len({tuple(c['commands']) for c in combinations if c['commands']})} published "
        f"commands, each for its platform and Python, against {where}: {len(found.problems)} problem(s){unreachable}",
        markup=False,
    )
    if found.problems:
        raise typer.Exit(EXIT_UNSUPPORTED)


@app.command()
def table(
    files: List[str] = typer.Argument(None, help="Documents whose adapter-matrix:table blocks to --update or --check."),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    adapter_matrix: Optional[str] = typer.Option(
        None,
        "--adapter-matrix",
        help="With a layer's --matrix: its adapter's compat.yaml (default: the installed adapter's), for the "
        "release lines it names and the command that installs each stack.",
    ),
    view: Optional[str] = typer.Option(
        None,
        "--view",
        metavar="VIEW",
        help="One of: grid (torch x Python; the default), verified (the grid with test evidence), releases, "
        "dimension (a dimension x torch), capabilities, companions (the companions' releases per torch line), "
        "ops (op-sweep counts per torch line and op family), op-dtypes (task counts per torch line, dtype and "
        "direction), op-failures (the ops that do not match CPU, and why), platform (pytorch.org's Additional "
        "Platforms entry: ID.json and ID.md in the --output folder), selector (each combination's install "
        "commands, as check writes them; --format html: the selector page, with --results the evidence of each), "
        "history (releases per torch line, post-releases grouped), stack (a layer's --matrix: each release with "
        "the packages below it and, with its adapter's matrix, the commands that install the stack per platform), lag (days from each torch release to the adapter's first releases for it).",
    ),
    dimension: Optional[str] = typer.Option(
        None,
        "--dimension",
        help="The extra dimension of --view dimension (default: the first releases constrain); of a layer's "
        "stack table, NAME=VALUE keeps the releases that admit that value (cann=9.1.0).",
    ),
    fmt: Optional[str] = typer.Option(
        None,
        "--format",
        "-f",
        metavar="markdown|rst|html|csv|json",
        help="markdown (or md, gfm; the default), rst (rest), html (htm), csv or json.",
    ),
    lang: Optional[str] = typer.Option(
        None, "--lang", metavar="en|zh", help="Language of headers and legend (default: en)."
    ),
    release: Optional[str] = typer.Option(
        None,
        "--release",
        help="An adapter release or release line (default: every maintained release; verified: the newest); of a "
        "layer's stack table, one of its releases.",
    ),
    results: Optional[str] = typer.Option(
        None,
        "--results",
        help="Folder of result records for --view verified (and for verified blocks without results=), "
        "or of op-sweep records for --view ops, op-dtypes and op-failures.",
    ),
    today: Optional[str] = typer.Option(None, "--today", help=TODAY_HELP),
    support_channel: Optional[str] = typer.Option(
        None, "--support-channel", help="--view platform: the URL where users get help (pytorch.org requires one)."
    ),
    platform_name: Optional[str] = typer.Option(
        None, "--platform-name", help="--view platform: the name pytorch.org shows (default: the distribution)."
    ),
    platform_id: Optional[str] = typer.Option(
        None,
        "--id",
        help="--view platform: pytorch.org's id of the entry, which names the files (ascend_npu writes "
        "ascend_npu.json and ascend_npu.md; default: the distribution).",
    ),
    resolve_: bool = typer.Option(
        False,
        "--resolve",
        help="Resolve every install command the selector and the platform entry publish (pip --dry-run, for the "
        "command's own OS, architecture and Python) instead of rendering; exit 1 naming each that no longer installs "
        "what it claims (a yanked pin, another torch). Commands needing an index that cannot be reached are listed "
        "apart (not checked), not as problems.",
    ),
    recorded: List[str] = typer.Option(
        [],
        "--recorded",
        help="With --resolve: a folder of recorded PyPI answers (PEP 691 JSON, repeatable) to resolve against, offline; "
        "commands that need another index are not checked.",
    ),
    output: Optional[str] = typer.Option(
        None, "--output", "-o", help="Write the table to this file, atomically; with --check, verify the file instead."
    ),
    update: bool = typer.Option(False, "--update", help="Rewrite the blocks between markers in FILES, atomically."),
    check_: bool = typer.Option(
        False, "--check", help="Exit 1 with a diff if a block in FILES (or the --output file) is stale."
    ),
) -> None:
    """Render a compatibility table, or keep tables up to date.

    The tables in documents (between markers) and generated files. Exit 0 done or up to date, 1 --check found a stale table (the diff and the fixing
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
    if matrix and not files and _is_layer(matrix):
        _stack_table(
            matrix, adapter_matrix, view, fmt, lang, output, check_, when, release, dimension, resolve_, recorded
        )
        return
    if adapter_matrix:
        fail("--adapter-matrix goes with a layer's --matrix (the stack view)")
    if view == "stack":
        fail("--view stack draws a layer's matrix: give the layer's compat.yaml with --matrix")
    result = one_matrix(matrix)
    common = {"--matrix": matrix, "--today": today, "--results": results}
    console = console_for()
    if resolve_:
        if files or output or update or check_ or (view not in (None, "selector", "platform")):
            fail("--resolve checks the selector's commands: give no FILES, --output, --update, --check or other --view")
        _resolve(result.matrix, release_or_exit(result, release), when, recorded)
        return
    if recorded:
        fail("--recorded is an option of --resolve")
    if view == "platform":
        _platform(result.matrix, output, support_channel, platform_name, platform_id, when, check_, {**common})
        return
    if support_channel or platform_name or platform_id:
        fail("--support-channel, --platform-name and --id are options of --view platform")
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
    from ..tables.picks import reporting
    from .progress import progress_report

    try:
        records = docs.load_records(results, tables.RECORDS.get(view or "grid", "results")) if results else None
        with progress_report() as report, reporting(report):  # the selector's answers take seconds
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
    options = {"--view": view, "--dimension": dimension, "--format": fmt, "--lang": lang, "--release": release}
    _emit(text, output, check_, _table_fix({**common, **options}, []))
