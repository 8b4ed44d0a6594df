"""Keep generated tables in sync with the matrix (``table --update/--check/--output``).

Two kinds of target: blocks between markers inside hand-written documents
(:func:`sync`), and whole generated files such as the HTML page (:func:`sync_output`).
Either way every file is rendered before any is written, and each write is atomic, so
an error or a kill leaves every file old or new, never half-written.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..files import FileReadError, atomic_write, printable, read_regular, unified_diff
from ..matrix.model import Matrix
from ..tables import views as tables
from .markers import Block, MarkerError, rewrite, syntax_for
from .views.common import Records

__all__ = ["DocError", "Outcome", "BLOCK_OPTIONS", "load_records", "sync", "sync_output"]

DocError = MarkerError
BLOCK_OPTIONS = ("view", "lang", "release", "format", "results", "dimension")
Writer = Callable[[Any, str], None]


@dataclass(frozen=True)
class Outcome:
    """What a sync found in one file: its blocks (0 for a whole file), whether it is
    stale, and the unified diff from the file on disk to the generated text."""

    path: str
    blocks: int
    changed: bool
    diff: str
    skipped: Tuple[str, ...] = ()  # JSON files its blocks' records folders hold that are not records, said once


def load_records(folder: str, kind: str = "results") -> Records:
    """The records under ``folder`` of ``kind`` (:data:`views.RECORDS`: the nox cells'
    ``results``, or ``op-sweeps``); ``DocError`` when it has none. A folder without op-sweep
    records (an evidence folder) gives its result records instead, if one holds an op
    sweep's summary: the ``ops`` view reads their counts per family."""
    from ..ci.record import RecordError, read_records

    if kind == "op-sweeps":
        from ..device.opsweep.record import SweepRecordError
        from ..device.opsweep.record import read_records as read_sweeps

        try:
            return read_sweeps(folder)
        except SweepRecordError as exc:
            try:
                cells = read_records(folder, allow_empty=True) if os.path.isdir(folder) else None
            except RecordError:
                cells = None
            if cells is not None and any(r.ops is not None for r in cells):
                return cells
            raise DocError(
                f"{exc} \u2014 run `adapter-matrix ops sweep --output FILE` (the nox cells write results/ops/), "
                "or point results= / --results at its records"
            ) from None

    try:
        return read_records(folder)
    except RecordError as exc:
        raise DocError(
            f"{exc} \u2014 run the nox sessions first, or point results= / --results at their records"
        ) from None


class _Renderer:
    """Renders the blocks of documents, reading each results folder once."""

    def __init__(self, matrix: Matrix, today: Optional[_dt.date], results: Optional[str]) -> None:
        self.matrix = matrix
        self.today = today
        self.results = results
        self._records: Dict[str, Records] = {}
        self.skipped: List[str] = []  # of every folder read so far, each file once (RecordSet.skipped)

    def records(self, folder: str, kind: str) -> Records:
        key = os.path.abspath(folder) + "\0" + kind
        if key not in self._records:
            from ..ci.record import RecordSet

            found = self._records[key] = load_records(folder, kind)
            self.skipped += found.skipped if isinstance(found, RecordSet) else ()  # op-sweep records are a list
        return self._records[key]

    def block(self, block: Block, syntax: str, path: str) -> str:
        """The body of one block, from its marker options (``view=grid lang=zh``)."""
        where = f"{path}:{block.line}:1"
        options = block.options
        unknown = sorted(set(options) - set(BLOCK_OPTIONS))
        if unknown:
            raise MarkerError(
                f"{where}: unknown marker option(s) {', '.join(unknown)} \u2014 allowed: {', '.join(BLOCK_OPTIONS)}"
            )
        from .formats import format_named

        try:
            fmt = format_named(options.get("format", syntax))
        except ValueError as exc:
            raise MarkerError(f"{where}: {exc}") from None
        if fmt != syntax:
            raise MarkerError(
                f"{where}: format={fmt} cannot be embedded in a {syntax} document \u2014 remove the option, "
                f"or write a whole file with `adapter-matrix table --format {fmt} --output FILE`"
            )
        release = None
        if "release" in options:
            from ..matrix.queries import select_releases

            release = select_releases(self.matrix, options["release"])
            if not release:
                raise MarkerError(
                    f"{where}: no release {options['release']} in {self.matrix.path} \u2014 use one of its releases or release lines"
                )
        records = None
        kind = tables.RECORDS.get(options.get("view", "grid"), "results")
        if "results" in options:  # relative to the document, so the block renders the same from anywhere
            records = self.records(os.path.join(os.path.dirname(os.path.abspath(path)), options["results"]), kind)
        elif kind == "results" and options.get("view") == "verified" and self.results is not None:
            records = self.records(self.results, kind)
        try:
            return tables.render(
                self.matrix,
                view=options.get("view", "grid"),
                fmt=fmt,
                lang=options.get("lang", "en"),
                release=release,
                today=self.today,
                records=records,
                dimension=options.get("dimension"),
            )
        except ValueError as exc:
            raise MarkerError(f"{where}: {exc}") from None


def _read(path: str, missing_ok: bool = False) -> str:
    """The text of a document (a regular file, at most
    :data:`~adapter_matrix.limits.MAX_READ_BYTES`), its line endings as they are."""
    try:
        return read_regular(path).decode("utf-8")
    except FileReadError as exc:
        if not os.path.lexists(path):
            if missing_ok:
                return ""
            raise MarkerError(f"{printable(path)}: no such file") from None
        raise MarkerError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise MarkerError(f"{printable(path)}: cannot read: it is not UTF-8 (byte {exc.start})") from None


def sync(
    matrix: Matrix,
    paths: Sequence[str],
    write: bool,
    today: Optional[_dt.date] = None,
    results: Optional[str] = None,
    writer: Optional[Writer] = None,
) -> List[Outcome]:
    """Regenerate every block of every file; when ``write``, replace the stale files.

    A file without blocks gets an outcome with ``blocks == 0``; :class:`MarkerError`
    when no file has a block (a single document without one is a mistake).

    ``results`` is the records folder for ``view=verified`` blocks without their own
    ``results=`` option. ``writer`` is passed to :func:`atomic_write` (tests fail it
    midway). Nothing is written unless every block of every file rendered.
    """
    renderer = _Renderer(matrix, today, results)
    outcomes = []
    pending = []
    for path in paths:
        old = _read(path)
        syntax = syntax_for(path)
        before = len(renderer.skipped)
        new, blocks = rewrite(old, syntax, lambda b: renderer.block(b, syntax, path), path)  # noqa: B023  # called within this iteration
        changed = new != old
        if changed:
            pending.append((path, new))
        diff = unified_diff(old, new, path) if changed else ""
        outcomes.append(Outcome(path, len(blocks), changed, diff, tuple(renderer.skipped[before:])))
    if not any(o.blocks for o in outcomes):
        # One document without blocks, or a list of them, is a mistake; in a longer list
        # (a glob such as docs/*.md) the documents without blocks are only named.
        path = outcomes[0].path if len(outcomes) == 1 else "none of " + ", ".join(o.path for o in outcomes)
        raise MarkerError(
            f"{path}: no adapter-matrix:table block found \u2014 add "
            + (
                "`.. adapter-matrix:table view=grid` and `.. /adapter-matrix:table`"
                if syntax_for(outcomes[0].path) == "rst"
                else "`<!-- adapter-matrix:table view=grid -->` and `<!-- /adapter-matrix:table -->`"
            )
            + " (markers inside code examples do not count)"
        )
    if write:
        for path, new in pending:
            if writer:
                atomic_write(path, new, write=writer)
            else:
                atomic_write(path, new)
    return outcomes


def sync_output(path: str, text: str, write: bool, writer: Optional[Writer] = None) -> Outcome:
    """Compare a whole generated file with ``text``; when ``write``, replace it if stale."""
    old = _read(path, missing_ok=True)
    changed = old != text
    if changed and write:
        if writer:
            atomic_write(path, text, write=writer)
        else:
            atomic_write(path, text)
    return Outcome(path, 0, changed, unified_diff(old, text, path) if changed else "")
