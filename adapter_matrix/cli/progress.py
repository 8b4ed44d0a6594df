"""Progress of the steps that take more than a moment (``init --from-index``, ``validate
--upstream pypi``, ``table --resolve``, the selector page's answers), on stderr so that stdout
stays the command's answer: a rich bar with a counter, the elapsed time and an ETA on a
terminal, one plain line per step in a log, nothing when ``quiet``."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional

from .base import console_for

if TYPE_CHECKING:
    from ..upstream.metadata import Report

__all__ = ["progress_report", "network_progress", "sweep_progress"]


@contextlib.contextmanager
def progress_report(quiet: bool = False) -> Iterator[Optional[Report]]:
    """A :data:`Report` that shows on stderr for the duration of the block (None when ``quiet``)."""
    if quiet:
        yield None
        return
    console = console_for(stderr=True)
    if not console.is_terminal:
        yield _plain(console)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
    )
    tasks: Dict[str, Any] = {}

    def report(what: str, done: int, total: int) -> None:
        if what not in tasks:
            tasks[what] = bars.add_task(what, total=total)
        bars.update(tasks[what], completed=done, total=total)

    with bars:
        yield report


def _plain(console: Any) -> Report:
    """A log's line per step: what it is and how many, when it starts."""
    shown: Dict[str, int] = {}

    def report(what: str, done: int, total: int) -> None:
        if what not in shown:
            shown[what] = total
            console.print(f"{what}: {total} to do", markup=False, highlight=False)

    return report


@contextlib.contextmanager
def network_progress(quiet: bool = False) -> Iterator[None]:
    """Within the block, every batch of reads from an index shows its progress
    (:func:`adapter_matrix.upstream.metadata.reporting`)."""
    from ..upstream.metadata import noting, reporting

    with progress_report(quiet) as report:
        if report is None:
            yield
            return
        console = console_for(stderr=True)
        # each retry as it happens, with its real cause (a refused connection, a DNS failure, a timeout)
        with reporting(report), noting(lambda line: console.print(line, markup=False, highlight=False)):
            yield


@contextlib.contextmanager
def sweep_progress(quiet: bool, on_task: Callable[[Any], None]) -> Iterator[Callable[[Any, int, int], None]]:
    """``ops sweep``'s ``progress(task, done, total)`` for the duration of the block: a bar per
    worker module (``op sweep: op_db``; the compiled sample apart) with its counter, elapsed
    time and ETA on a terminal, its line when it starts in a log, nothing when ``quiet``
    (``--json``: stdout is the record). ``on_task`` sees every task (a crash is said as it happens)."""
    with progress_report(quiet) as report:

        def progress(task: Any, done: int, total: int) -> None:
            on_task(task)
            if report is not None:
                kind = " compiled" if task.kind == "compiled" else ""
                report(f"op sweep: {task.family}{kind}", done, total)

        yield progress
