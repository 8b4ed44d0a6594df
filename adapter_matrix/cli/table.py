"""`table`: render a view of the matrix, or keep the copies in documents current.

The use case is :mod:`adapter_matrix.tables.table_command`; this module parses the options into its
request and prints its result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional

import typer

from ..errors import EXIT_UNSUPPORTED
from .base import (
    MATRIX_HELP,
    TODAY_HELP,
    console_for,
    date_or_exit,
    fail,
    load_or_exit,
    one_matrix,
    run_or_exit,
)
from .common import app

if TYPE_CHECKING:  # the model stays off the CLI's start-up path
    from ..tables.table_command import TableResult


class _Dashed(Dict[str, str]):
    """Each of the request's choices is the option of its name (``release`` -> ``--release``)."""

    def get(self, key: str, default: object = None) -> str:
        return "--" + key


def _is_layer(path: str) -> bool:
    from ..validation.layerfile import is_layer_file

    return is_layer_file(path)


def _said(result: TableResult) -> None:
    """``table``'s result printed: the table, each file written or compared, or --resolve's
    answer; exit 1 on a stale file or an uninstallable command, 2 on a failed write."""
    from ..files import printable

    console = console_for()
    for line in result.skipped:  # JSON files under --results that are not records: said once each
        console_for(stderr=True).print(line, markup=False, style="yellow")
    if result.text is not None:
        typer.echo(result.text, nl=False)
    for o in result.written:
        if result.check and o.changed:
            typer.echo(o.diff, nl=False)
        else:
            console.print(f"{printable(o.path)}: {'written' if o.changed else 'up to date'}", markup=False)
    for o in result.documents:
        if not o.blocks:
            console.print(f"{printable(o.path)}: no table blocks, skipped", markup=False)
        elif result.update:
            blocks = f"{o.blocks} block{'s' if o.blocks != 1 else ''}"
            console.print(f"{printable(o.path)}: {'updated' if o.changed else 'up to date'} ({blocks})", markup=False)
        elif o.changed:
            typer.echo(o.diff, nl=False)
    if result.problem:
        fail(result.problem)
    if result.stale:
        console_for(stderr=True).print(result.stale, markup=False, style="red")
        raise typer.Exit(EXIT_UNSUPPORTED)
    if result.check and result.documents:
        with_blocks = [o for o in result.documents if o.blocks]
        console.print(f"{len(with_blocks)} file(s), {sum(o.blocks for o in with_blocks)} table block(s): up to date")
    if result.resolved is not None:
        _resolved(result)


def _resolved(result: TableResult) -> None:
    """What --resolve found, said: each problem, each command not checked, the count; exit 1 on a problem."""
    assert result.resolved is not None
    found, commands, where = result.resolved
    for problem in found.problems:
        console_for(stderr=True).print(f"not installable: {problem}", markup=False, style="red")
    for skipped in found.unreachable:  # nothing is known of these: said apart, not a problem
        console_for(stderr=True).print(f"not checked: {skipped}", markup=False, style="yellow")
    unreachable = f", {len(found.unreachable)} not checked (an index unreachable)" if found.unreachable else ""
    console_for().print(
        f"{found.runs} resolutions of {commands} published "
        f"commands, each for its platform and Python, against {where}: {len(found.problems)} problem(s){unreachable}",
        markup=False,
    )
    if found.problems:
        raise typer.Exit(EXIT_UNSUPPORTED)


# The options of `table`, declared apart so that its handler stays short.
_FILES = typer.Argument(None, help="Documents whose adapter-matrix:table blocks to --update or --check.")
_MATRIX = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP)
_ADAPTER_MATRIX = typer.Option(
    None,
    "--adapter-matrix",
    help="With a layer's --matrix: its adapter's compat.yaml (default: the installed adapter's), for the "
    "release lines it names and the command that installs each stack.",
)
_VIEW = typer.Option(
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
)
_DIMENSION = typer.Option(
    None,
    "--dimension",
    help="The extra dimension of --view dimension (default: the first releases constrain); of a layer's "
    "stack table, NAME=VALUE keeps the releases that admit that value (cann=9.1.0).",
)
_FMT = typer.Option(
    None,
    "--format",
    "-f",
    metavar="markdown|rst|html|csv|json",
    help="markdown (or md, gfm; the default), rst (rest), html (htm), csv or json.",
)
_LANG = typer.Option(None, "--lang", metavar="en|zh", help="Language of headers and legend (default: en).")
_RELEASE = typer.Option(
    None,
    "--release",
    help="An adapter release or release line (default: every maintained release; verified: the newest); of a "
    "layer's stack table, one of its releases.",
)
_RESULTS = typer.Option(
    None,
    "--results",
    help="Folder of result records for --view verified (and for verified blocks without results=), "
    "or of op-sweep records for --view ops, op-dtypes and op-failures.",
)
_TODAY = typer.Option(None, "--today", help=TODAY_HELP)
_SUPPORT_CHANNEL = typer.Option(
    None, "--support-channel", help="--view platform: the URL where users get help (pytorch.org requires one)."
)
_PLATFORM_NAME = typer.Option(
    None, "--platform-name", help="--view platform: the name pytorch.org shows (default: the distribution)."
)
_PLATFORM_ID = typer.Option(
    None,
    "--id",
    help="--view platform: pytorch.org's id of the entry, which names the files (ascend_npu writes "
    "ascend_npu.json and ascend_npu.md; default: the distribution).",
)
_RESOLVE = typer.Option(
    False,
    "--resolve",
    help="Resolve every install command the selector and the platform entry publish (pip --dry-run, for the "
    "command's own OS, architecture and Python) instead of rendering; exit 1 naming each that no longer installs "
    "what it claims (a yanked pin, another torch). Commands needing an index that cannot be reached are listed "
    "apart (not checked), not as problems. Its answer is that report and the exit code: not with --format or --lang.",
)
_RECORDED = typer.Option(
    [],
    "--recorded",
    help="With --resolve: a folder of recorded PyPI answers (PEP 691 JSON, repeatable) to resolve against, offline; "
    "commands that need another index are not checked.",
)
_OUTPUT = typer.Option(
    None, "--output", "-o", help="Write the table to this file, atomically; with --check, verify the file instead."
)
_UPDATE = typer.Option(False, "--update", help="Rewrite the blocks between markers in FILES, atomically.")
_CHECK = typer.Option(False, "--check", help="Exit 1 with a diff if a block in FILES (or the --output file) is stale.")


@app.command()
def table(
    files: List[str] = _FILES,
    matrix: Optional[str] = _MATRIX,
    adapter_matrix: Optional[str] = _ADAPTER_MATRIX,
    view: Optional[str] = _VIEW,
    dimension: Optional[str] = _DIMENSION,
    fmt: Optional[str] = _FMT,
    lang: Optional[str] = _LANG,
    release: Optional[str] = _RELEASE,
    results: Optional[str] = _RESULTS,
    today: Optional[str] = _TODAY,
    support_channel: Optional[str] = _SUPPORT_CHANNEL,
    platform_name: Optional[str] = _PLATFORM_NAME,
    platform_id: Optional[str] = _PLATFORM_ID,
    resolve_: bool = _RESOLVE,
    recorded: List[str] = _RECORDED,
    output: Optional[str] = _OUTPUT,
    update: bool = _UPDATE,
    check_: bool = _CHECK,
) -> None:
    """Render a compatibility table, or keep tables up to date.

    The tables in documents (between markers) and generated files. Exit 0 done or up to date, 1 --check found a stale table (the diff and the fixing
    command are printed), 2 usage error, bad marker or invalid matrix.
    """
    from ..tables.table_command import TableRequest, refusal, run
    from .progress import progress_report

    request = TableRequest(
        files=tuple(files or ()),
        matrix=matrix,
        adapter_matrix=adapter_matrix,
        view=view,
        dimension=dimension,
        fmt=fmt,
        lang=lang,
        release=release,
        results=results,
        today=today,
        support_channel=support_channel,
        platform_name=platform_name,
        platform_id=platform_id,
        resolve=resolve_,
        recorded=tuple(recorded),
        output=output,
        update=update,
        check=check_,
        load=lambda path: one_matrix(path).matrix,
        load_adapter=lambda path: load_or_exit(path).matrix,
        is_layer=_is_layer,
        progress=progress_report,
    )
    refused = refusal(request)  # before --today is read, as the options are
    if refused:
        fail(refused)
    _said(run_or_exit(run, request._replace(when=date_or_exit(today)), _Dashed()))
