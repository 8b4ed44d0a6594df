"""``ops sweep`` talks while it runs (issue 67 item 3): a bar per worker module with its counter,
the elapsed time and an ETA on a terminal, one line per step in a log, nothing under ``--json``;
a crash is said as it happens either way."""

from __future__ import annotations

import io

from rich.console import Console

from adapter_matrix.cli import progress as shown
from adapter_matrix.device.opsweep.runner import Task


def _tasks():
    eager = [
        Task("add", "op_db", "float32", "forward", "passed"),
        Task("mul", "op_db", "float32", "forward", "crashed"),
    ]
    return [(t, i + 1, 2) for i, t in enumerate(eager)] + [
        (Task("add", "op_db", "float32", "compiled", "passed"), 1, 1)
    ]


def _sweep(quiet: bool):
    seen = []
    with shown.sweep_progress(quiet, seen.append) as progress:
        for task, done, total in _tasks():
            progress(task, done, total)
    return seen


def test_in_a_log_each_step_is_one_line_when_it_starts(capsys):
    seen = _sweep(quiet=False)
    assert [t.op for t in seen] == ["add", "mul", "add"]  # every task reaches the caller (its crash lines)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["op sweep: op_db: 2 to do", "op sweep: op_db compiled: 1 to do"]


def test_under_json_nothing_is_said_but_every_task_still_reaches_the_caller(capsys):
    assert len(_sweep(quiet=True)) == 3
    assert capsys.readouterr() == ("", "")


def test_on_a_terminal_a_bar_counts_with_elapsed_time_and_eta(monkeypatch):
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=120, color_system=None)
    monkeypatch.setattr(shown, "console_for", lambda stderr=False: terminal)
    _sweep(quiet=False)
    text = screen.getvalue()
    assert "op sweep: op_db" in text and "2/2" in text and "1/1" in text, text
    assert "0:00:0" in text and "eta" in text, text  # elapsed, then the time remaining
