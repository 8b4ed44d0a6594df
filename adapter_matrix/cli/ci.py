"""`plan`, `results`, `release` and `tier`: what CI runs, what its runs recorded, the
freeze of a release, and a tier of cells run in parts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import List, Optional

import typer

from ..errors import EXIT_UNSUPPORTED
from .base import (
    MATRIX_HELP,
    TODAY_HELP,
    console_for,
    date_or_exit,
    fail,
    fail_with,
    one_matrix,
    release_or_exit,
)
from .common import app


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
    from ..ci.covering import STRENGTHS
    from ..ci.plan import STRATEGIES
    from ..ci.plan import plan as make_plan

    if cover is not None and strategy not in (None, "pairwise"):
        fail(f"--cover {cover} is the strength of the pairwise strategy, not of {strategy}: leave --strategy out")
    if cover is not None and cover not in STRENGTHS:
        fail(f"--cover {cover}: choose from {', '.join(map(str, STRENGTHS))}")
    strategy = strategy or ("pairwise" if cover is not None else "full")
    if strategy not in STRATEGIES:
        fail(f"--strategy {strategy!r}: choose from {', '.join(STRATEGIES)}")
    if fmt not in ("text", "json", "github"):
        fail(f"--format {fmt!r}: choose from text, json, github")
    labels = _runner_labels(runners)
    result = one_matrix(matrix)
    from ..ci.release import past_releases

    # a release frozen with other sources is not this tree's to test (docs/releasing.md)
    rows = make_plan(
        result.matrix,
        strategy,
        release_or_exit(result, release),
        date_or_exit(today),
        skip=past_releases(result.matrix),
        cover=cover or 2,
    )
    if fmt == "json":
        typer.echo(json.dumps([r.as_dict() for r in rows], indent=2))
    elif fmt == "github":
        from ..ci.chunks import ChunkError, split
        from ..ci.runners import RunnerError, runs_on

        try:
            # a row that needs a runner-provided dimension (a driver) names the runner labels
            include = [
                dict(
                    {"session": r.session, "python": str(r.cell.python), "torch": str(r.cell.torch), "id": r.id},
                    **({"runs-on": list(on)} if on else {}),
                )
                for r, on in zip(rows, runs_on(result.matrix, rows, labels))
            ]
            chunks = split(include, max_parallel)
        except (ChunkError, RunnerError) as exc:
            fail_with(exc)
        for line in chunks.outputs():  # the plan job's $GITHUB_OUTPUT
            typer.echo(line)
        console_for(stderr=True).print(f"{strategy}: {chunks.summary()}", markup=False, highlight=False)
    else:
        width = max([28] + [len(r.session) for r in rows])
        for r in rows:
            requires = "".join(f"  requires {name} {value}" for name, value in r.requires)
            companions = "".join(f"  with {p.name} {p.version}" for p in r.companions)
            typer.echo(
                f"{r.session:<{width}} torch {r.cell.torch!s:<8} {r.cell.status.value:<12} {' '.join(r.tiers)}{requires}{companions}"
            )
        full = (
            rows
            if strategy == "full"
            else make_plan(
                result.matrix,
                "full",
                release_or_exit(result, release),
                date_or_exit(today),
                skip=past_releases(result.matrix),
            )
        )
        order = ["Python", "torch line"] + [d.name for d in result.matrix.dimensions]
        footer = _plan_footer(rows, len(full), strategy, cover or 2, order)
        console_for(stderr=True).print(footer, markup=False, highlight=False)


def _plan_footer(rows: list, total: int, strategy: str, cover: int, order: list) -> str:
    """What a plan's rows stand for: ``60 cells of 286 cover every pair of Python, torch, cann, arch``."""
    from ..ci.plan import covered_values

    if strategy != "pairwise":
        return f"{len(rows)} cells of {total} ({strategy})"
    names = dict.fromkeys(
        {"torch line": "torch"}.get(name, name)
        for name in sorted({n for r in rows for n in covered_values(r.cell)}, key=lambda n: (order + [n]).index(n))
    )
    what = {1: "every value", 2: "every pair", 3: "every triple"}.get(cover, f"every {cover} values")
    return f"{len(rows)} cells of {total} cover {what} of {', '.join(names)}"


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
    from ..ci import results as res
    from ..ci.record import read_records

    if into and os.path.lexists(into) and not os.path.isdir(into):
        fail(f"--into {into}: not a folder — give the evidence folder (e.g. evidence)")
    records = read_records(folders + ([into] if into and os.path.isdir(into) else []))
    if into:
        from ..ci.evidence import EvidenceError, evidence_path, write_evidence

        target = one_matrix(
            matrix
        ).matrix  # a record must be evidence of its release, and no weaker than the committed one
        inside = os.path.join(os.path.realpath(into), "")
        merged: List[str] = []
        unchanged: List[str] = []
        refused: List[str] = []
        for record in records:
            if os.path.realpath(record.path or "").startswith(inside):
                continue
            try:
                before = _read_bytes(evidence_path(into, record))
                path = write_evidence(into, record, target)
            except EvidenceError as exc:
                refused.append(str(exc))
                continue
            (unchanged if _read_bytes(path) == before else merged).append(path)
        for why in refused:
            console_for(stderr=True).print(f"[yellow]{why}[/]", markup=True, highlight=False)
        console_for(stderr=True).print(
            f"{into}: {len(merged)} evidence record(s) written"
            + (f", {len(unchanged)} unchanged" if unchanged else "")
            + (f", {len(refused)} refused" if refused else "")
        )
    expected = None
    if expect is not None:
        from ..ci.plan import STRATEGIES
        from ..ci.plan import plan as make_plan

        if expect not in STRATEGIES:
            fail(f"--expect {expect!r}: choose from {', '.join(STRATEGIES)}")
        from ..ci.release import past_releases

        expected_matrix = one_matrix(matrix).matrix
        expected = [
            r.cell.id for r in make_plan(expected_matrix, expect, skip=past_releases(expected_matrix))
        ]  # records name the cell
    summary = res.summarize(records, expected)
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
    if not summary.ok:
        raise typer.Exit(EXIT_UNSUPPORTED)


def _read_bytes(path: str) -> Optional[bytes]:
    """A regular file's bytes, or ``None`` if there is none."""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        return fh.read()


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
    ops: Optional[str] = typer.Option(
        None,
        "--ops",
        metavar="sample|full|none",
        help="How much of PyTorch's op tests the cells' op sweep runs (an adapter whose noxfile declares "
        "ops=OpSweep()): sets $ADAPTER_MATRIX_OPS for the cells; full: all of op_db and module_db.",
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
    from ..ci import tier as tiers
    from ..ci.evidence import evidence_folder
    from ..ci.plan import STRATEGIES
    from ..errors import EXIT_INTERRUPTED

    if strategy not in STRATEGIES:
        fail(f"{strategy!r} is not a tier: choose from {', '.join(STRATEGIES)}")
    if docs and not commit:
        fail("--docs names the documents --commit commits: give --commit too")
    from ..device.opsweep import OPS_ENV, SWEEP_MODES

    if ops is not None and ops not in SWEEP_MODES:
        fail(f"--ops {ops!r}: choose from {', '.join(SWEEP_MODES)}")
    target = one_matrix(matrix).matrix
    steps = tiers.select(target, strategy, tag, python, force)
    out = console_for()

    def echo(line: str) -> None:
        out.print(line, markup=False)

    if not steps and (tag or python):  # a typo in a tag must not pass as a tier with nothing to do
        from ..ci.plan import plan as make_plan
        from ..ci.release import past_releases

        rows = make_plan(target, strategy, skip=past_releases(target))
        known = sorted({t for r in rows for t in r.tags}, key=lambda t: (t.rstrip("0123456789."), len(t), t))
        asked = ", ".join([*(f"-t {t}" for t in tag), *(f"-p {p}" for p in python)])
        fail(f"no cell of the {strategy} tier matches {asked} (its tags: {', '.join(known)})")
    for step in steps:
        echo(step.describe())
    echo(tiers.forecast(steps))
    if dry_run:
        return
    cwd = os.getcwd()
    nox = tiers.tool("nox")
    if not os.path.isfile(os.path.join(cwd, "noxfile.py")):
        fail(f"no noxfile.py in {cwd}: run the tier from the adapter's repository (docs/nox.md)")
    if nox is None:
        fail("nox is not installed: pip install nox (uv too, for the shared wheel cache)")
    if docs is None:
        docs = [d for d in ("docs/compatibility.md",) if os.path.exists(d)]
    if ops is not None:  # the cells' nox sessions inherit it (adapter_matrix.nox.OpSweep)
        os.environ[OPS_ENV] = ops
    done = tiers.run(target, steps, [nox], cwd, echo, commit=commit, docs=docs, min_free_gb=min_free_gb)
    # The table of the releases this tier ran, not of every release the folder holds.
    ran = sorted({str(step.row.cell.release.version) for step in steps})
    shown = [f for f in (os.path.join(evidence_folder(target), r) for r in ran) if os.path.isdir(f)]
    if shown:
        subprocess.run(
            [sys.executable, "-m", "adapter_matrix", "results", "--matrix", target.path, *shown], check=False
        )
    echo(
        f"{done.final.get('verified', 0)} of {done.selected} selected cells have a fresh passing record"
        + "".join(f", {n} {state}" for state, n in sorted(done.final.items()) if state != "verified")
    )
    echo(
        f"wall time {done.minutes:.0f} min for {done.ran} cells; disk free {done.free_at_start:.0f} GB at the start, "
        f"{done.lowest_free:.0f} GB at the lowest (after a line)"
    )
    if done.signal is not None:
        echo(
            f"stopped by {done.signal}: "
            + (f"{done.interrupted} was interrupted (no record)" if done.interrupted else "no cell was running")
            + (f"; not started: {', '.join(done.not_started)}" if done.not_started else "")
            + "; the finished cells' records are kept: run the tier again to go on"
        )
        raise typer.Exit(EXIT_INTERRUPTED)
    if not done.ok:
        raise typer.Exit(EXIT_UNSUPPORTED)
