"""Progress of the commands that read the network (``init --from-index``, ``validate
--upstream pypi``, ``table --resolve``), on stderr so that stdout stays the command's answer:
a rich bar with counts on a terminal, a few plain lines in a log (a quarter at a time), nothing
when ``quiet``."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional

from .base import console_for

if TYPE_CHECKING:
    from ..upstream.metadata import Report

__all__ = ["progress_report", "network_progress"]


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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bars = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    )
    tasks: Dict[str, Any] = {}

    def report(what: str, done: int, total: int) -> None:
        if what not in tasks:
            tasks[what] = bars.add_task(what, total=total)
        bars.update(tasks[what], completed=done, total=total)

    with bars:
        yield report


def _plain(console: Any) -> Report:
    """Lines for a log: the start, each quarter, the end."""
    shown: Dict[str, int] = {}

    def report(what: str, done: int, total: int) -> None:
        quarter = 4 * done // total if total else 4
        if shown.get(what, -1) < quarter:
            shown[what] = quarter
            console.print(f"{what}: {done}/{total}", markup=False, highlight=False)

    return report


@contextlib.contextmanager
def network_progress(quiet: bool = False) -> Iterator[None]:
    """Within the block, every batch of reads from an index shows its progress
    (:func:`adapter_matrix.upstream.metadata.reporting`)."""
    from ..upstream.metadata import reporting

    with progress_report(quiet) as report:
        if report is None:
            yield
            return
        with reporting(report):
            yield
