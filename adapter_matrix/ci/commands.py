"""The use cases of ``plan``, ``results`` and ``tier``: each a frozen request, a ``run`` and a typed result.

The command line (:mod:`adapter_matrix.cli.ci`) parses its options into the request (the
matrix loaded, a ``--release`` or ``--today`` read into the model's terms) and prints the
result; the run neither prints nor exits. A request it cannot run raises
:class:`~adapter_matrix.errors.ChoiceError` naming the request's field (the command line puts
that option in front: ``--cover 3 is ...``), or another
:class:`~adapter_matrix.errors.AdapterMatrixError` worded whole. docs/development.md
("Adding a command") takes ``plan`` as its worked example.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Callable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ..errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_UNSUPPORTED, AdapterMatrixError, ChoiceError
from ..matrix.model import Matrix
from ..matrix.queries import Releases
from .chunks import Chunks
from .plan import PlanRow
from .results import Summary
from .tier import TierRun

__all__ = [
    "PLAN_FORMATS",
    "PlanRequest",
    "PlanResult",
    "run_plan",
    "render_plan",
    "ResultsRequest",
    "ResultsResult",
    "run_results",
    "TierRequest",
    "TierResult",
    "run_tier",
    "tier_summary",
]

PLAN_FORMATS = ("text", "json", "github")


# -- plan ----------------------------------------------------------------------------------


class PlanRequest(NamedTuple):
    """What ``plan`` is asked, one field per option (the matrix loaded, ``--release`` and
    ``--today`` read, ``--runners`` parsed)."""

    matrix: Matrix
    strategy: Optional[str] = None  # default: full, or pairwise with a cover
    cover: Optional[int] = None
    fmt: str = "text"
    release: Releases = None
    today: Optional[_dt.date] = None
    runners: Mapping[str, Sequence[str]] = {}  # --runners: labels per value or dimension (github)
    max_parallel: int = 0


class PlanResult(NamedTuple):
    """The rows of the plan; with ``--format github`` the chunks the reusable workflow runs."""

    strategy: str
    fmt: str
    rows: Tuple[PlanRow, ...]
    chunks: Optional[Chunks] = None
    footer: Optional[str] = None  # what the rows stand for (text format): "60 cells of 286 cover every pair of ..."


def run_plan(request: PlanRequest) -> PlanResult:
    """The cells ``request`` asks for, each named by its nox session."""
    from .covering import STRENGTHS
    from .plan import STRATEGIES, plan
    from .release import past_releases

    cover, strategy = request.cover, request.strategy
    if cover is not None and strategy not in (None, "pairwise"):
        raise ChoiceError(
            "cover", f"{cover} is the strength of the pairwise strategy, not of {strategy}: leave --strategy out"
        )
    if cover is not None and cover not in STRENGTHS:
        raise ChoiceError("cover", f"{cover}: choose from {', '.join(map(str, STRENGTHS))}")
    strategy = strategy or ("pairwise" if cover is not None else "full")
    if strategy not in STRATEGIES:
        raise ChoiceError("strategy", f"{strategy!r}: choose from {', '.join(STRATEGIES)}")
    if request.fmt not in PLAN_FORMATS:
        raise ChoiceError("fmt", f"{request.fmt!r}: choose from {', '.join(PLAN_FORMATS)}")
    if request.max_parallel < 0:  # refused in every format, not only where github's chunks read it
        raise ChoiceError("max_parallel", f"{request.max_parallel}: a number of jobs, 0 for no cap")
    matrix = request.matrix
    # a release frozen with other sources is not this tree's to test (docs/releasing.md)
    rows = plan(matrix, strategy, request.release, request.today, skip=past_releases(matrix), cover=cover or 2)
    chunks = None
    if request.fmt == "github":
        from .chunks import split
        from .runners import github_rows

        # a row that needs a runner-provided dimension (a driver) names the runner labels
        include = [row.as_json() for row in github_rows(matrix, rows, request.runners)]
        chunks = split(include, request.max_parallel)
    footer = None
    if request.fmt == "text":
        full = (
            rows
            if strategy == "full"
            else plan(matrix, "full", request.release, request.today, skip=past_releases(matrix))
        )
        footer = _plan_footer(matrix, rows, len(full), strategy, cover or 2)
    return PlanResult(strategy, request.fmt, tuple(rows), chunks, footer)


def _plan_footer(matrix: Matrix, rows: Sequence[PlanRow], total: int, strategy: str, cover: int) -> str:
    """What a plan's rows stand for: ``60 cells of 286 cover every pair of Python, torch, cann, arch``."""
    from .plan import covered_values

    if strategy != "pairwise":
        return f"{len(rows)} cells of {total} ({strategy})"
    order = ["Python", "torch line"] + [d.name for d in matrix.dimensions]
    found = sorted({n for r in rows for n in covered_values(r.cell)}, key=lambda n: (order + [n]).index(n))
    names = dict.fromkeys({"torch line": "torch"}.get(name, name) for name in found)
    what = {1: "every value", 2: "every pair", 3: "every triple"}.get(cover, f"every {cover} values")
    return f"{len(rows)} cells of {total} cover {what} of {', '.join(names)}"


class Rendered(NamedTuple):
    """A result as the command line prints it: lines on stdout, then lines on stderr."""

    out: Tuple[str, ...]
    err: Tuple[str, ...] = ()


def render_plan(result: PlanResult) -> Rendered:
    """``plan``'s output in its format: a line per row, the rows as JSON, or the plan job's outputs."""
    if result.fmt == "json":
        return Rendered((json.dumps([r.as_dict() for r in result.rows], indent=2),))
    if result.chunks is not None:  # github: the plan job's $GITHUB_OUTPUT, and what it needs on stderr
        return Rendered(tuple(result.chunks.outputs()), (f"{result.strategy}: {result.chunks.summary()}",))
    width = max([28] + [len(r.session) for r in result.rows])
    lines = []
    for r in result.rows:
        requires = "".join(f"  requires {name} {value}" for name, value in r.requires)
        companions = "".join(f"  with {p.name} {p.version}" for p in r.companions)
        lines.append(
            f"{r.session:<{width}} torch {r.cell.torch!s:<8} {r.cell.status.value:<12} {' '.join(r.tiers)}{requires}{companions}"
        )
    return Rendered(tuple(lines), (result.footer,) if result.footer else ())


# -- results -------------------------------------------------------------------------------


class ResultsRequest(NamedTuple):
    """What ``results`` is asked: the folders of records, and what to do with them."""

    folders: Tuple[str, ...]
    matrix: Optional[Matrix] = None  # loaded for --into and --expect
    expect: Optional[str] = None  # a plan strategy whose every cell must have a record
    into: Optional[str] = None  # an evidence folder to merge the records into


class ResultsResult(NamedTuple):
    """The records summarized, and what ``--into`` did with each."""

    summary: Summary
    merged: Tuple[str, ...] = ()  # evidence files written
    unchanged: Tuple[str, ...] = ()
    refused: Tuple[str, ...] = ()  # why a record is not evidence
    skipped: Tuple[str, ...] = ()  # JSON files that are not result records (RecordSet.skipped)

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.summary.ok else EXIT_UNSUPPORTED


def run_results(request: ResultsRequest) -> ResultsResult:
    """The newest record of each cell in ``request.folders`` (and ``--into``'s), merged into
    ``--into`` as evidence, against the cells ``--expect``'s plan wants."""
    from . import results
    from .record import read_records

    into = request.into
    if into and os.path.lexists(into) and not os.path.isdir(into):
        raise ChoiceError("into", f"{into}: not a folder — give the evidence folder (e.g. evidence)")
    records = read_records(list(request.folders) + ([into] if into and os.path.isdir(into) else []))
    merged: List[str] = []
    unchanged: List[str] = []
    refused: List[str] = []
    if into and request.matrix is not None:
        from .evidence import EvidenceError, evidence_path, write_evidence

        inside = os.path.join(os.path.realpath(into), "")
        for record in records:  # a record must be evidence of its release, and no weaker than the committed one
            if os.path.realpath(record.path or "").startswith(inside):
                continue
            try:
                before = _read_bytes(evidence_path(into, record))
                path = write_evidence(into, record, request.matrix)
            except EvidenceError as exc:
                refused.append(str(exc))
                continue
            (unchanged if _read_bytes(path) == before else merged).append(path)
    expected = None
    if request.expect is not None and request.matrix is not None:
        from .plan import STRATEGIES, plan
        from .release import past_releases

        if request.expect not in STRATEGIES:
            raise ChoiceError("expect", f"{request.expect!r}: choose from {', '.join(STRATEGIES)}")
        matrix = request.matrix
        expected = [
            r.cell.id for r in plan(matrix, request.expect, skip=past_releases(matrix))
        ]  # records name the cell
    return ResultsResult(
        results.summarize(records, expected), tuple(merged), tuple(unchanged), tuple(refused), records.skipped
    )


def _read_bytes(path: str) -> Optional[bytes]:
    """A regular file's bytes, or ``None`` if there is none."""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        return fh.read()


# -- tier ----------------------------------------------------------------------------------


class TierRequest(NamedTuple):
    """What ``tier`` is asked: the strategy's cells (those tags, those Pythons) run through
    the adapter's noxfile in ``cwd``; ``echo`` prints a line of its progress."""

    strategy: str
    matrix: Matrix
    echo: Callable[[str], None]
    cwd: str
    tags: Tuple[str, ...] = ()
    pythons: Tuple[str, ...] = ()
    force: bool = False
    dry_run: bool = False
    commit: bool = False
    docs: Optional[Tuple[str, ...]] = None  # default: docs/compatibility.md if it exists
    min_free_gb: float = 25.0


class TierResult(NamedTuple):
    """How the tier went (None: a dry run) and the evidence folders of the releases it ran."""

    run: Optional[TierRun]
    shown: Tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        if self.run is None:
            return EXIT_OK
        if self.run.signal is not None:
            return EXIT_INTERRUPTED
        return EXIT_OK if self.run.ok else EXIT_UNSUPPORTED


def run_tier(request: TierRequest) -> TierResult:
    """Run the cells of the tier that lack a fresh passing record (docs/testing.md)."""
    from . import tier as tiers
    from .evidence import evidence_folder
    from .plan import STRATEGIES

    if request.strategy not in STRATEGIES:
        raise AdapterMatrixError(f"{request.strategy!r} is not a tier: choose from {', '.join(STRATEGIES)}")
    if not request.min_free_gb >= 0:  # a negative floor would never stop a run on a full disk
        raise ChoiceError(
            "min_free_gb", f"{request.min_free_gb:g}: the free disk space, in GB, a cell needs (0: no check)"
        )
    matrix, echo = request.matrix, request.echo
    records = tiers.evidence_records(matrix)
    for line in records.skipped:  # a file the tier cannot judge a cell by, said once
        echo(line)
    steps = tiers.select(matrix, request.strategy, request.tags, request.pythons, request.force, records)
    if not steps and (request.tags or request.pythons):  # a typo in a tag must not pass as a tier with nothing to do
        from .plan import plan
        from .release import past_releases

        rows = plan(matrix, request.strategy, skip=past_releases(matrix))
        known = sorted({t for r in rows for t in r.tags}, key=lambda t: (t.rstrip("0123456789."), len(t), t))
        asked = ", ".join([*(f"-t {t}" for t in request.tags), *(f"-p {p}" for p in request.pythons)])
        raise AdapterMatrixError(
            f"no cell of the {request.strategy} tier matches {asked} (its tags: {', '.join(known)})"
        )
    for step in steps:
        echo(step.describe())
    echo(tiers.forecast(steps))
    if request.dry_run:
        return TierResult(None)
    nox = tiers.tool("nox")
    if not os.path.isfile(os.path.join(request.cwd, "noxfile.py")):
        raise AdapterMatrixError(
            f"no noxfile.py in {request.cwd}: run the tier from the adapter's repository (docs/nox.md)"
        )
    if nox is None:
        raise AdapterMatrixError("nox is not installed: pip install nox (uv too, for the shared wheel cache)")
    docs = request.docs
    if docs is None:
        docs = tuple(d for d in ("docs/compatibility.md",) if os.path.exists(d))
    done = tiers.run(
        matrix,
        steps,
        [nox],
        request.cwd,
        echo,
        commit=request.commit,
        docs=docs,
        min_free_gb=request.min_free_gb,
    )
    # The table of the releases this tier ran, not of every release the folder holds.
    ran = sorted({str(step.row.cell.release.version) for step in steps})
    shown = [f for f in (os.path.join(evidence_folder(matrix), r) for r in ran) if os.path.isdir(f)]
    return TierResult(done, tuple(shown))


def tier_summary(done: TierRun) -> List[str]:
    """The lines that close a tier: the cells with a fresh passing record, the costs, and a stop."""
    lines = [
        f"{done.final.get('verified', 0)} of {done.selected} selected cells have a fresh passing record"
        + "".join(f", {n} {state}" for state, n in sorted(done.final.items()) if state != "verified"),
        f"wall time {done.minutes:.0f} min for {done.ran} cells; disk free {done.free_at_start:.0f} GB at the start, "
        f"{done.lowest_free:.0f} GB at the lowest (after a line)",
    ]
    if done.signal is not None:
        lines.append(
            f"stopped by {done.signal}: "
            + (f"{done.interrupted} was interrupted (no record)" if done.interrupted else "no cell was running")
            + (f"; not started: {', '.join(done.not_started)}" if done.not_started else "")
            + "; the finished cells' records are kept: run the tier again to go on"
        )
    return lines
