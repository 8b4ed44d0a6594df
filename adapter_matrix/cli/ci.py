"""`plan`, `results`, `release` and `tier`: what CI runs, what its runs recorded, the
freeze of a release, and a tier of cells run in parts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, List, Optional, Sequence

import typer

from .base import (
    MATRIX_HELP,
    TODAY_HELP,
    console_for,
    date_or_exit,
    fail,
    one_matrix,
    release_or_exit,
    run_or_exit,
)
from .common import app

if TYPE_CHECKING:
    from ..ci.commands import Rendered, TierRequest
    from ..ci.results import Summary


@app.command()
def plan(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    strategy: Optional[str] = typer.Option(
        None, "--strategy", "-s", metavar="full|edges|latest|smoke|pairwise", help="Which cells (default: full)."
    ),
    cover: Optional[int] = typer.Option(
        None,
        "--cover",
        metavar="1|2|3",
        help="The pairwise strategy's strength: 1 (every value once), 2 (every pair of values, the default) "
        "or 3 (every triple); implies --strategy pairwise.",
    ),
    fmt: str = typer.Option(
        "text",
        "--format",
        "-f",
        metavar="text|json|github",
        help="github: the reusable workflow's plan outputs (chunks of at most 256 rows).",
    ),
    release: Optional[str] = typer.Option(
        None, "--release", help="An adapter release or release line (default: every maintained release)."
    ),
    today: Optional[str] = typer.Option(None, "--today", help=TODAY_HELP),
    runners: Optional[str] = typer.Option(
        None,
        "--runners",
        help='JSON: runner labels per runner-provided value ({"cann9.1.0": ["self-hosted", "ascend"]}) '
        'or dimension ({"cann": [...]}), instead of the matrix\'s runner labels (--format github).',
    ),
    max_parallel: int = typer.Option(
        0,
        "--max-parallel",
        help="At most this many cell jobs at once, shared among the chunks (--format github); 0: no cap.",
    ),
) -> None:
    """List the cells to test, each named by its nox session.

    Every maintained release by default. A row that needs a runner-provided dimension (a
    driver) names it; --format github gives the reusable workflow its plan, in chunks, each
    row with its runner labels.
    """
    from ..ci.commands import PlanRequest, render_plan, run_plan

    labels = _runner_labels(runners)
    result = one_matrix(matrix)
    request = PlanRequest(
        result.matrix, strategy, cover, fmt, release_or_exit(result, release), date_or_exit(today), labels, max_parallel
    )
    _print(render_plan(run_or_exit(run_plan, request, PLAN_OPTIONS)))


# the option each request field comes from, for a refusal (ChoiceError names the field)
PLAN_OPTIONS = {"cover": "--cover", "strategy": "--strategy", "fmt": "--format", "max_parallel": "--max-parallel"}


def _print(rendered: Rendered) -> None:
    for line in rendered.out:
        typer.echo(line)
    for line in rendered.err:
        console_for(stderr=True).print(line, markup=False, highlight=False)


def _runner_labels(text: Optional[str]) -> dict:
    """``--runners``: a JSON object of label lists (a string is one label)."""
    if not text:
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        fail(f"--runners: not JSON: {exc}")
    if not isinstance(doc, dict) or not all(isinstance(v, (str, list)) for v in doc.values()):
        fail('--runners: a JSON object of label lists, e.g. {"cann9.1.0": ["self-hosted", "ascend"]}')
    return {k: [v] if isinstance(v, str) else [str(x) for x in v] for k, v in doc.items()}


@app.command()
def results(
    folders: List[str] = typer.Argument(
        ...,
        help="Folders of result records (searched recursively; the newest record of a cell and release wins, "
        "and two copies of one run must agree).",
    ),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    expect: Optional[str] = typer.Option(
        None,
        "--expect",
        metavar="full|edges|latest|smoke|pairwise",
        help="A plan strategy whose every cell must have a record.",
    ),
    fmt: str = typer.Option("text", "--format", "-f", metavar="text|markdown|json", help="markdown: md for short."),
    into: Optional[str] = typer.Option(
        None,
        "--into",
        help="Also merge the records into this evidence folder (e.g. evidence): one compact file per cell, newest wins.",
    ),
) -> None:
    """Aggregate the result records of test sessions.

    The newest record of a cell wins. Exit 1 if a cell failed or is missing; exit 2 for a
    record that is not one (malformed, dated in the future, a name that is not a plain file
    name) or an --into that is not a folder, with nothing written.
    """
    from ..ci.commands import ResultsRequest, run_results

    if into and os.path.lexists(into) and not os.path.isdir(into):  # before the matrix is looked for
        fail(f"--into {into}: not a folder — give the evidence folder (e.g. evidence)")
    target = one_matrix(matrix).matrix if into or expect is not None else None
    request = ResultsRequest(tuple(folders), target, expect, into)
    done = run_or_exit(run_results, request, {"expect": "--expect", "into": "--into"})
    for line in done.skipped:  # JSON files that are not records: said once each, the exit code unchanged
        console_for(stderr=True).print(line, markup=False, style="yellow")
    if into:
        for why in done.refused:
            console_for(stderr=True).print(f"[yellow]{why}[/]", markup=True, highlight=False)
        console_for(stderr=True).print(
            f"{into}: {len(done.merged)} evidence record(s) written"
            + (f", {len(done.unchanged)} unchanged" if done.unchanged else "")
            + (f", {len(done.refused)} refused" if done.refused else "")
        )
    _print_summary(done.summary, fmt, folders)
    if done.exit_code:
        raise typer.Exit(done.exit_code)


def _print_summary(summary: Summary, fmt: str, folders: Sequence[str]) -> None:
    """``results``' renderer: the records as a table, Markdown or JSON."""
    from ..ci import results as res
    from ..tables.formats import FORMAT_ALIASES

    fmt = FORMAT_ALIASES.get(fmt, fmt)  # the short names `table --format` takes
    if fmt == "json":
        written = [r.to_json() for r in summary.records]
        typer.echo(json.dumps({"ok": summary.ok, "records": written, "missing": summary.missing}, indent=2))
    elif fmt == "markdown":
        typer.echo(res.render_markdown(summary), nl=False)
    elif fmt == "text":
        from rich.table import Table

        table = Table(*res.HEADERS, title=f"{len(summary.records)} cell(s) in {', '.join(folders)}")
        style = {"passed": "green", "failed": "red", "missing": "yellow"}
        for row in res.rows(summary):
            table.add_row(*row[:3], f"[{style.get(row[3], 'red')}]{row[3]}[/]", *row[4:])
        console_for().print(table)
    else:
        fail(f"--format {fmt!r}: choose from text, markdown, json")


@app.command()
def release(
    version: str = typer.Argument(..., help="The adapter release to freeze, as compat.yaml names it (e.g. 0.1.0)."),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    results: Optional[str] = typer.Option(
        None, "--results", help="The evidence folder (default: the matrix's evidence: folder:)."
    ),
) -> None:
    """Freeze a release's evidence, once.

    Writes EVIDENCE/VERSION/release.json with the hash of the evidence sources, the commit
    and the date. From then on its records are judged against that hash, not the working
    tree (docs/releasing.md). Exit 2 if it is frozen already with other sources, the sources
    are uncommitted, or the matrix has no such release.
    """
    from ..ci.evidence import evidence_folder
    from ..ci.record import read_records
    from ..ci.release import freeze
    from ..matrix.diagnostics import display_path

    target = one_matrix(matrix).matrix
    folder = results or evidence_folder(target, environ={})
    frozen, written = freeze(target, version, folder)
    records = read_records(folder, allow_empty=True)
    own = [r for r in records if r.release == frozen.version]
    ran = sum(1 for r in own if r.ran_on == frozen.sources_hash)
    where = f"commit {frozen.commit[:10]}" if frozen.commit else "no git commit"
    console_for().print(
        f"{display_path(frozen.path)}: release {frozen.version} {'frozen' if written else 'was frozen already'} on {frozen.date} "
        f"({where}, sources hash {frozen.sources_hash}); {ran} of its {len(own)} record(s) ran on these sources",
        markup=False,
    )
    if ran < len(own):
        console_for().print(
            f"the other records of {frozen.version} ran on other sources and do not count for it: "
            f"`adapter-matrix validate --results {folder} --strict` names them",
            markup=False,
        )


@app.command()
def tier(
    strategy: str = typer.Argument(
        ..., metavar="{full|edges|latest|smoke|pairwise}", help="The tier: the plan strategy whose cells run."
    ),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    tag: List[str] = typer.Option(
        [], "--tag", "-t", help="Only cells with this nox tag (torch2.4, py3.8, ...); repeat for several."
    ),
    python: List[str] = typer.Option([], "--python", "-p", help="Only cells of this Python; repeat for several."),
    force: bool = typer.Option(False, "--force", help="Also run cells that have a fresh passing record."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would run and why; run nothing."),
    commit: bool = typer.Option(
        False, "--commit", help="git-commit each torch line's evidence records as soon as the line is done."
    ),
    docs: Optional[List[str]] = typer.Option(
        None,
        "--docs",
        metavar="FILE",
        help="With --commit: regenerate these documents' tables and commit them too "
        "(default: docs/compatibility.md if it exists).",
    ),
    min_free_gb: float = typer.Option(
        25.0, "--min-free-gb", help="Below this much free disk before a torch line, drop torch wheels from uv's cache."
    ),
    ops: Optional[List[str]] = typer.Option(
        None,
        "--ops",
        metavar="sample|full|none|tests",
        help="How much of PyTorch's op tests the cells run (an adapter whose noxfile declares ops=OpSweep() or "
        "op_tests=OpTests()): sample, full or none sets $ADAPTER_MATRIX_OPS for the op sweep (full: all of op_db "
        "and module_db); tests sets $ADAPTER_MATRIX_OPS_TESTS=on, PyTorch's test files of a test pack. Repeatable.",
    ),
) -> None:
    """Run the cells of a tier that lack a fresh passing record.

    Each cell without a fresh passing evidence record (the release gate's rule) runs through
    ./noxfile.py, one torch line after another; cells that have one are skipped, so an
    interrupted tier picks up where it stopped. Each cell's expected duration comes from the
    records' durations; a run says `cell N/M` with the time elapsed and an ETA. Exit 0 when every selected cell ends with a
    fresh passing record, 1 otherwise, 2 for a usage error, 4 when SIGTERM or SIGINT stopped
    it (nox's whole process group is ended, the finished cells' records are kept;
    docs/testing.md).
    """
    from ..ci.commands import run_tier, tier_summary

    request = _tier_request(strategy, matrix, tag, python, force, dry_run, commit, docs, min_free_gb, ops)
    done = run_or_exit(run_tier, request, {"min_free_gb": "--min-free-gb"})
    if done.run is None:  # --dry-run
        return
    if done.shown:
        subprocess.run(
            [sys.executable, "-m", "adapter_matrix", "results", "--matrix", request.matrix.path, *done.shown],
            check=False,
        )
    for line in tier_summary(done.run):
        request.echo(line)
    if done.exit_code:
        raise typer.Exit(done.exit_code)


def _tier_request(
    strategy: str,
    matrix: Optional[str],
    tag: List[str],
    python: List[str],
    force: bool,
    dry_run: bool,
    commit: bool,
    docs: Optional[List[str]],
    min_free_gb: float,
    ops: Optional[List[str]],
) -> TierRequest:
    """``tier``'s options as its request; ``--ops`` goes to the cells' nox sessions, which
    inherit it (adapter_matrix.nox.OpSweep)."""
    from ..ci.commands import TierRequest
    from ..device.opsweep import OPS_ENV, SWEEP_MODES
    from ..device.optests import TESTS_ENV

    if docs and not commit:
        fail("--docs names the documents --commit commits: give --commit too")
    for value in ops or ():
        if value not in (*SWEEP_MODES, "tests"):
            fail(f"--ops {value!r}: choose from {', '.join(SWEEP_MODES)}, tests")
    sweep_modes = [v for v in ops or () if v != "tests"]
    if len(sweep_modes) > 1:
        fail(f"--ops {' and '.join(sweep_modes)}: one sweep mode at most (and tests)")
    target = one_matrix(matrix).matrix
    out = console_for()

    def echo(line: str) -> None:
        out.print(line, markup=False)

    if not dry_run:  # the cells' nox sessions inherit them
        if sweep_modes:
            os.environ[OPS_ENV] = sweep_modes[0]  # adapter_matrix.nox.OpSweep
        if "tests" in (ops or ()):
            os.environ[TESTS_ENV] = "on"  # adapter_matrix.nox.OpTests
    shown = tuple(docs) if docs is not None else None
    return TierRequest(
        strategy, target, echo, os.getcwd(), tuple(tag), tuple(python), force, dry_run, commit, shown, min_free_gb
    )
